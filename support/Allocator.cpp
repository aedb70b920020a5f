//===- Allocator.cpp - the allocator's policy for a long-running server ---===//

#include "Allocator.h"

#include <atomic>
#include <cstdint>
#include <mutex>

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
#else
extern "C" void mi_collect(bool force) __attribute__((weak));
#endif

namespace tosa_lsp {

namespace {
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
} // namespace

void configureAllocator() {
#ifdef TOSA_LSP_MIMALLOC_H
  // Whole free segments go back to the OS at once, not after mimalloc's
  // delay (which only runs on later allocations): a closed 200k-line
  // document stayed ~75 MiB higher.
  if (mi_option_set)
    mi_option_set(mi_option_segment_decommit_delay, 0);
#endif
  decommitFreePagesByDefault(true);
}

void releaseFreeMemory() {
  if (mi_collect) {
    // Under the delay, a forced collect only schedules the decommit of the
    // pages it frees, for when this thread allocates again: a pool thread
    // idle after the last close never did, and its heap kept 15-42 MiB of
    // a 200k-line file's inference (the "RSS after close" that stayed
    // 118-143 MiB against a baseline of 92).
    GiveBackFreePages now;
    mi_collect(true);
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
