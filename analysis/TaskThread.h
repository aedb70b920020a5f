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

#include "llvm/Support/thread.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace tosa_lsp {

/// The allocator's policy for a long-running server; the binary sets it
/// first thing (with mimalloc: free segments are decommitted at once).
void configureAllocator();

/// Hands back what the calling thread's allocator holds free (mimalloc
/// when the binary links it, glibc's malloc_trim otherwise), at once. With
/// mimalloc only the thread that owns a heap can return its pages.
void releaseFreeMemory();

/// While one lives (any thread), pages the allocator finds free are given
/// back at once instead of after mimalloc's delay, which is only honoured
/// when the thread that freed them allocates again: an analysis thread
/// gone idle kept the previous version's parse beside the next one's, and
/// a pool thread its scratch parse for shape inference (a session at 10k
/// lines peaked at 169 MiB, now ~150; 200k, one function: 966 -> ~870).
/// Taken around whole-section parses and the end of an inference only:
/// light requests keep the delay (re-faulting their pages made inlay hints
/// 2-3x slower), and so does a one-function re-analysis (25% slower).
/// With mimalloc, it sets the page decommit delay to 0; a no-op otherwise.
/// Tests replace that switch (`on` at the first scope, `!on` after the
/// last); nullptr restores it.
void setGiveBackFreePagesHook(void (*hook)(bool on));
class GiveBackFreePages {
public:
  GiveBackFreePages();
  ~GiveBackFreePages();
  GiveBackFreePages(const GiveBackFreePages &) = delete;
  GiveBackFreePages &operator=(const GiveBackFreePages &) = delete;
};

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

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TASKTHREAD_H
