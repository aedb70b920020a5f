//===- Allocator.cpp - the allocator's policy for a long-running server ---===//

#include "Allocator.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <sys/mman.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

// mimalloc, when the binary links it (TOSA_LSP_MIMALLOC): weak, so the
// library and its tests work with any allocator (the symbols are null
// then, and the allocator policy below a no-op).
#if __has_include(<mimalloc.h>)
#include <mimalloc.h>
#define TOSA_LSP_MIMALLOC_H 1
#pragma weak mi_collect
#pragma weak mi_option_get
#pragma weak mi_option_set
#pragma weak mi_manage_os_memory
#pragma weak mi_heap_new
#pragma weak mi_heap_malloc
#pragma weak mi_heap_destroy
#else
extern "C" void mi_collect(bool force) __attribute__((weak));
#endif

namespace tosa_lsp {

namespace {
/// The buddy allocator's largest block (MAX_PAGE_ORDER on x86-64 and
/// arm64 with 4 KiB pages): free page reporting covers the orders from its
/// setting up to this one.
constexpr unsigned long long kMaxBuddyOrder = 10;

/// mimalloc's delay before it decommits a free page: 0 while `now`, else
/// its default.
void decommitFreePagesAtOnce(bool now) {
#ifdef TOSA_LSP_MIMALLOC_H
  if (!mi_option_get || !mi_option_set)
    return;
  static const long pageDelay = mi_option_get(mi_option_decommit_delay);
  mi_option_set(mi_option_decommit_delay, now ? 0 : pageDelay);
#else
  (void)now;
#endif
}

/// The range reserved for mimalloc's segments, and whether it is advised
/// for huge pages yet (useHugePages).
void *heapStart = nullptr;
size_t heapSize = 0;
std::atomic<bool> hugePageHeap{false};
bool hugePagesFromTheStart = false;

/// Gives mimalloc one big range of address space for its segments, to be
/// advised for transparent huge pages (Linux's default THP mode is
/// `madvise`, and mimalloc advises only what it maps itself with
/// large_os_pages, not the segments it maps later). Mapped readable and
/// writable from the start: mapped PROT_NONE, mimalloc's commits (mprotect
/// per 64 KiB slice) cut it into pieces no huge page fits in (14 of 48 MiB
/// were huge). Its decommit (MADV_DONTNEED) keeps the advice and gives the
/// memory back. MAP_NORESERVE charges nothing up front, except under
/// strict overcommit (mode 2), where the heap stays mimalloc's own.
void reserveHeap() {
#if defined(TOSA_LSP_MIMALLOC_H) && defined(MADV_HUGEPAGE)
  if (!mi_manage_os_memory)
    return;
  if (const char *env = std::getenv("TOSA_LSP_HUGE_PAGES")) {
    if (std::strcmp(env, "0") == 0)
      return;
    hugePagesFromTheStart = std::strcmp(env, "1") == 0;
  }
  if (FILE *f = std::fopen("/proc/sys/vm/overcommit_memory", "r")) {
    int mode = std::fgetc(f);
    std::fclose(f);
    if (mode == '2')
      return;
  }
  // Address space only; past it mimalloc maps from the OS as before.
  // Aligned for mimalloc's segments (32 MiB).
  constexpr uintptr_t kSize = uintptr_t(4) << 30, kAlign = uintptr_t(64) << 20;
  void *raw = mmap(nullptr, kSize + kAlign, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED)
    return;
  uintptr_t rawStart = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = (rawStart + kAlign - 1) & ~(kAlign - 1);
  uintptr_t end = start + kSize, rawEnd = rawStart + kSize + kAlign;
  if (start > rawStart)
    munmap(raw, start - rawStart);
  if (rawEnd > end)
    munmap(reinterpret_cast<void *>(end), rawEnd - end);
  void *heap = reinterpret_cast<void *>(start);
  if (!mi_manage_os_memory(heap, kSize, /*is_committed=*/false,
                           /*is_large=*/false, /*is_zero=*/true,
                           /*numa_node=*/-1)) {
    munmap(heap, kSize);
    return;
  }
  heapStart = heap;
  heapSize = kSize;
#endif
}
} // namespace

void configureAllocator() {
#ifdef TOSA_LSP_MIMALLOC_H
  // Whole free segments go back to the OS at once, not after mimalloc's
  // delay (which only runs on later allocations): a closed 200k-line
  // document stayed ~75 MiB higher.
  if (mi_option_set)
    mi_option_set(mi_option_segment_decommit_delay, 0);
#endif
  static std::once_flag reserved;
  std::call_once(reserved, reserveHeap);
  decommitFreePagesByDefault(!hugePageHeap);
  if (hugePagesFromTheStart)
    useHugePages();
}

bool useHugePages() {
#ifdef MADV_HUGEPAGE
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (hugePageHeap || !heapStart)
    return hugePageHeap;
  if (madvise(heapStart, heapSize, MADV_HUGEPAGE) != 0)
    return false;
  hugePageHeap = true;
  // In huge pages, a page decommitted at once splits its huge page (and
  // its neighbours fault 4 KiB pages again): mimalloc's own delay. A 50k-
  // line session's system time was 2.6x with the decommits at once (0.30
  // s, 0.12 with the delay), its peak RSS +8 MiB with the delay. Closes
  // and idle threads still give back at once (GiveBackFreePages,
  // releaseAllFreeMemory).
  decommitFreePagesByDefault(false);
#endif
  return hugePageHeap;
}

bool hugePagesPay() {
  static const bool pay = [] {
    std::string order;
    if (const char *env = std::getenv("TOSA_LSP_PAGE_REPORTING_ORDER")) {
      order = env;
    } else if (FILE *f = std::fopen(
                   "/sys/module/page_reporting/parameters/page_reporting_order",
                   "r")) {
      char buf[32] = {0};
      if (std::fgets(buf, sizeof(buf), f))
        order = buf;
      std::fclose(f);
    }
    // Unset until a balloon device registers: -1, read as a huge number.
    char *end = nullptr;
    unsigned long long v = std::strtoull(order.c_str(), &end, 10);
    bool reported = end != order.c_str() && v <= kMaxBuddyOrder;
    return !reported;
  }();
  return pay;
}

bool heapUsesHugePages() { return hugePageHeap; }

namespace {
/// mimalloc 2.0 decommits what it scheduled under its delay only when the
/// thread next takes a page from that segment (mi_collect does not), and
/// then only once the delay ran out, unless the delay is 0 by then: with
/// the delay on by default (the huge page heap), the last analysis' IR
/// stayed resident in an idle thread's heap. So, with the delay at 0, take
/// a page of each of a few sizes in a heap of our own and drop them.
void flushDelayedDecommits() {
#ifdef TOSA_LSP_MIMALLOC_H
  if (!hugePageHeap || !mi_heap_new || !mi_heap_malloc || !mi_heap_destroy)
    return;
  mi_heap_t *heap = mi_heap_new();
  if (!heap)
    return;
  for (size_t size = 16; size <= 64 * 1024; size *= 2)
    (void)mi_heap_malloc(heap, size);
  mi_heap_destroy(heap);
#endif
}

void release(bool delayedToo) {
  if (mi_collect) {
    // Under the delay, a forced collect only schedules the decommit of the
    // pages it frees, for when this thread allocates again: a pool thread
    // idle after the last close never did, and its heap kept 15-42 MiB of
    // a 200k-line file's inference (the "RSS after close" that stayed
    // 118-143 MiB against a baseline of 92).
    GiveBackFreePages now;
    mi_collect(true);
    if (delayedToo)
      flushDelayedDecommits();
    // Not malloc_trim as well: with mimalloc in place of malloc, glibc's
    // arena was never set up, and malloc_trim sets it up without a lock.
    // Two pool threads trimming at once after a close crashed the server
    // in mtrim (8 closes of 40 at 10k lines).
    return;
  }
#ifdef __GLIBC__
  static std::mutex trimMu;
  std::lock_guard<std::mutex> lock(trimMu);
  malloc_trim(0);
#endif
}
} // namespace

void releaseFreeMemory() { release(/*delayedToo=*/false); }

void releaseAllFreeMemory() { release(/*delayedToo=*/true); }

namespace {
std::atomic<uint64_t> freedForOthers{0};
thread_local uint64_t collectedAt = 0;
} // namespace

void noteFreedForOthers() {
  freedForOthers.fetch_add(1, std::memory_order_release);
}

bool collectWhatOthersFreed(bool always) {
  uint64_t now = freedForOthers.load(std::memory_order_acquire);
  if (now == collectedAt && !always)
    return false;
  collectedAt = now;
  if (mi_collect)
    mi_collect(false);
  return true;
}

namespace {
std::mutex policyMu;
unsigned givingBack = 0, keeping = 0;
bool byDefault = false;
bool atOnce = false; // what the switch was last set to (mimalloc's default)
void (*policyHook)(bool) = decommitFreePagesAtOnce;

/// Sets the switch to what the scopes alive now ask for (under policyMu).
void applyPolicy() {
  bool want = givingBack > 0 || (byDefault && keeping == 0);
  if (want == atOnce)
    return;
  atOnce = want;
  policyHook(want);
}

/// One scope of a kind (`count`) more or less.
void changeScopes(unsigned &count, bool enter) {
  std::lock_guard<std::mutex> lock(policyMu);
  enter ? ++count : --count;
  applyPolicy();
}
} // namespace

void setGiveBackFreePagesHook(void (*hook)(bool)) {
  std::lock_guard<std::mutex> lock(policyMu);
  policyHook = hook ? hook : decommitFreePagesAtOnce;
}

void decommitFreePagesByDefault(bool on) {
  std::lock_guard<std::mutex> lock(policyMu);
  byDefault = on;
  applyPolicy();
}

GiveBackFreePages::GiveBackFreePages() { changeScopes(givingBack, true); }
GiveBackFreePages::~GiveBackFreePages() { changeScopes(givingBack, false); }

KeepFreePages::KeepFreePages() { changeScopes(keeping, true); }
KeepFreePages::~KeepFreePages() { changeScopes(keeping, false); }

FreeInBulk::~FreeInBulk() { releaseFreeMemory(); }

} // namespace tosa_lsp
