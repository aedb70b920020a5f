//===- TaskThread.h - a long-lived thread that runs one task at a time ----===//
//
// The analysis runs on threads with big stacks (the parser and verifier
// recurse per nesting level). A new thread per analysis left its allocator
// heap behind when it exited: with mimalloc, memory freed later by other
// threads (the published analysis, allocated there) stayed in those
// abandoned segments until the process' main thread happened to collect.
// A thread that lives as long as its Analyzer keeps one heap and reuses
// what it freed (the peak of a session of edits is lower); it ends when the
// Analyzer releases its memory (last document closed), so that what it
// holds goes back through the main thread's collection.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TASKTHREAD_H
#define TOSA_LSP_ANALYSIS_TASKTHREAD_H

#include "Allocator.h"

#include "llvm/Support/thread.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace tosa_lsp {

class TaskThread {
public:
  /// The thread starts on the first `start`.
  explicit TaskThread(unsigned stackBytes);
  ~TaskThread();
  TaskThread(const TaskThread &) = delete;
  TaskThread &operator=(const TaskThread &) = delete;

  /// Runs `fn` on the thread; `wait` blocks until it returned. One task
  /// at a time: false (and nothing runs) when one is still running.
  bool start(std::function<void()> fn);
  /// No task running now (start would run one, if no one else starts one
  /// first).
  bool idle();
  void wait();
  /// start + wait.
  void run(std::function<void()> fn);

  /// A task running beside the caller until `join`: on this thread, or on
  /// a new one when this one is busy.
  class Running {
  public:
    Running(Running &&o) : on(o.on), own(std::move(o.own)) { o.on = nullptr; }
    Running &operator=(Running &&) = delete;
    ~Running() { join(); }
    void join();

  private:
    friend class TaskThread;
    Running() = default;
    TaskThread *on = nullptr;
    std::unique_ptr<llvm::thread> own;
  };
  [[nodiscard]] Running beside(std::function<void()> fn);
  /// Ends the thread (after its task); the next `start` begins a new one.
  /// An exiting thread's heap is abandoned, and the main thread's
  /// releaseFreeMemory takes it back: collecting on the live thread left
  /// ~90 MiB more after closing a 50k-line file (measured; memory freed
  /// later by other threads stays with the owner's pages).
  void stop();

private:
  void loop();

  unsigned stackBytes;
  std::unique_ptr<llvm::thread> thread;
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> task;
  bool busy = false, stopping = false;
};

namespace detail {

/// The page-aligned part [first, second) of a thread's stack [low, high)
/// that lies more than `margin` below `frame`: what a task thread gives back
/// between tasks. Empty unless `frame` is on that stack: under ASan
/// (detect_stack_use_after_return) an address-taken local lives on a heap
/// "fake stack", and releasing up to one above the thread's stack zeroed its
/// live frames and TLS (a silent SIGSEGV in the lower fuzzer).
std::pair<uintptr_t, uintptr_t> stackPagesBelow(uintptr_t low, uintptr_t high,
                                                uintptr_t frame,
                                                uintptr_t margin,
                                                uintptr_t page);

} // namespace detail

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TASKTHREAD_H
