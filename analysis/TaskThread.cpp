//===- TaskThread.cpp - a long-lived thread that runs one task at a time --===//

#include "TaskThread.h"

#include "llvm/Support/thread.h"

#include <atomic>
#include <cstdint>
#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
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

TaskThread::TaskThread(unsigned stackBytes) : stackBytes(stackBytes) {}

TaskThread::~TaskThread() { stop(); }

void TaskThread::stop() {
  std::unique_ptr<llvm::thread> t;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!thread)
      return;
    stopping = true;
    t = std::move(thread);
  }
  cv.notify_all();
  t->join();
  std::lock_guard<std::mutex> lock(mu);
  stopping = false;
}

bool TaskThread::start(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu);
  if (busy)
    return false;
  if (!thread)
    thread = std::make_unique<llvm::thread>(std::optional<unsigned>(stackBytes),
                                            [this] { loop(); });
  task = std::move(fn);
  busy = true;
  cv.notify_all();
  return true;
}

bool TaskThread::idle() {
  std::lock_guard<std::mutex> lock(mu);
  return !busy;
}

void TaskThread::wait() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return !busy; });
}

void TaskThread::run(std::function<void()> fn) {
  if (!start(fn)) {
    // Busy (a nested use): a thread of its own, as before.
    llvm::thread t(std::optional<unsigned>(stackBytes), fn);
    t.join();
    return;
  }
  wait();
}

TaskThread::Running TaskThread::beside(std::function<void()> fn) {
  Running r;
  if (start(fn))
    r.on = this;
  else
    r.own = std::make_unique<llvm::thread>(std::optional<unsigned>(stackBytes),
                                           std::move(fn));
  return r;
}

void TaskThread::Running::join() {
  if (on)
    on->wait();
  else if (own && own->joinable())
    own->join();
  on = nullptr;
  own.reset();
}

namespace {

/// The part of this thread's stack below the caller's frame: a deeply
/// nested file can touch most of the 256 MiB, and a thread that lives on
/// would keep those pages resident (an exiting one gave them back).
struct StackBelow {
  char *lowest = nullptr;
  StackBelow() {
#ifdef __linux__
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
      return;
    void *addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0)
      lowest = static_cast<char *>(addr);
    pthread_attr_destroy(&attr);
#endif
  }
  /// Gives back the pages between the stack's end and `frame`, less a
  /// margin for the frames still to come.
  void release(const void *frame) const {
#ifdef __linux__
    if (!lowest)
      return;
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t top = reinterpret_cast<uintptr_t>(frame) - (1u << 20);
    top &= ~(page - 1);
    uintptr_t bottom = reinterpret_cast<uintptr_t>(lowest);
    bottom = (bottom + page - 1) & ~(page - 1);
    if (top > bottom)
      (void)madvise(reinterpret_cast<void *>(bottom), top - bottom,
                    MADV_DONTNEED);
#else
    (void)frame;
#endif
  }
};

} // namespace

void TaskThread::loop() {
  StackBelow stack;
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    cv.wait(lock, [&] { return stopping || busy; });
    if (!busy) // stopping, and nothing to run
      return;
    std::function<void()> fn = std::move(task);
    lock.unlock();
    fn();
    fn = nullptr; // its captures die here, not under the lock
    int here = 0;
    stack.release(&here);
    lock.lock();
    busy = false;
    cv.notify_all();
  }
}

} // namespace tosa_lsp
