//===- TaskThread.cpp - a long-lived thread that runs one task at a time --===//

#include "TaskThread.h"

#include "llvm/Support/thread.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#ifdef __linux__
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace tosa_lsp {

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

std::pair<uintptr_t, uintptr_t>
detail::stackPagesBelow(uintptr_t low, uintptr_t high, uintptr_t frame,
                        uintptr_t margin, uintptr_t page) {
  if (frame < low || frame >= high || frame - low <= margin)
    return {0, 0};
  uintptr_t first = (low + page - 1) & ~(page - 1);
  uintptr_t second = (frame - margin) & ~(page - 1);
  return first < second ? std::make_pair(first, second)
                        : std::make_pair(uintptr_t(0), uintptr_t(0));
}

namespace {

/// The part of this thread's stack below the caller's frame: a deeply
/// nested file can touch most of the 256 MiB, and a thread that lives on
/// would keep those pages resident (an exiting one gave them back).
struct StackBelow {
  uintptr_t low = 0, high = 0;
  StackBelow() {
#ifdef __linux__
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
      return;
    void *addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      low = reinterpret_cast<uintptr_t>(addr);
      high = low + size;
    }
    pthread_attr_destroy(&attr);
#endif
  }
  /// Gives back the pages between the stack's end and `frame`, less a
  /// margin for the frames still to come.
  void release(const void *frame) const {
#ifdef __linux__
    auto [first, second] = detail::stackPagesBelow(
        low, high, reinterpret_cast<uintptr_t>(frame), 1u << 20,
        static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)));
    if (first < second)
      (void)madvise(reinterpret_cast<void *>(first), second - first,
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
    // The frame itself, not a local's address (ASan may move that to its
    // fake stack).
    stack.release(__builtin_frame_address(0));
    lock.lock();
    busy = false;
    cv.notify_all();
  }
}

} // namespace tosa_lsp
