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
/// first thing. With mimalloc: free segments are decommitted at once, and
/// so are free pages, except while a KeepFreePages lives
/// (decommitFreePagesByDefault).
void configureAllocator();

/// Hands back what the calling thread's allocator holds free (mimalloc
/// when the binary links it, glibc's malloc_trim otherwise), at once. With
/// mimalloc only the thread that owns a heap can return its pages.
void releaseFreeMemory();

/// A thread freed memory that other threads allocated (the reclaimer, a
/// replaced version): each of those threads collects it once, when it next
/// calls collectWhatOthersFreed. With mimalloc only a heap's own thread can
/// give back a page another thread emptied; idle threads (the message
/// loop, the pool, the Scheduler) held a replaced version's text, position
/// index and snapshot parts until their next allocation in the same pages.
void noteFreedForOthers();
/// Cheap when nothing was freed since this thread's last call; whether it
/// collected. `always`: also when nothing was noted (a pool thread after
/// a task: what the task itself freed, pages mimalloc keeps retired for
/// the next allocations, ~0.5-1 MiB a thread that went idle).
bool collectWhatOthersFreed(bool always = false);

/// Whether pages the allocator finds free go back to the system at once
/// (mimalloc's page decommit delay 0) or after mimalloc's delay, which is
/// only honoured when the thread that freed them allocates again in the
/// same segment: pages an analysis freed (the IR, the version a snapshot
/// replaced, freed by the reclaimer) stayed resident beside the next
/// analysis. A 50k-line one-function session peaked at 219 MiB with the
/// delay, 201 without; upstream's server 201. Off by default (the
/// libraries and tests keep mimalloc's own policy); configureAllocator
/// turns it on.
void decommitFreePagesByDefault(bool on);

/// While one lives (any thread), pages the allocator finds free are given
/// back at once even if a KeepFreePages lives too: a closed document's
/// analysis, an inference's scratch parse, a whole-section parse.
/// With mimalloc, the switch sets the page decommit delay to 0 or back to
/// its default. Tests replace that switch (`on`: at once) with a hook;
/// nullptr restores it.
void setGiveBackFreePagesHook(void (*hook)(bool on));
class GiveBackFreePages {
public:
  GiveBackFreePages();
  ~GiveBackFreePages();
  GiveBackFreePages(const GiveBackFreePages &) = delete;
  GiveBackFreePages &operator=(const GiveBackFreePages &) = delete;
};

/// While one lives (and no GiveBackFreePages), free pages keep mimalloc's
/// delay: the server's message loop takes one from a message's first byte
/// until it is answered (not for a document's long text), since a reply
/// frees the pages the next request allocates again (inlay requests at
/// 200k lines faulted ~290 pages each, 0.6 -> 0.9 ms, when they went back
/// at once).
class KeepFreePages {
public:
  KeepFreePages();
  ~KeepFreePages();
  KeepFreePages(const KeepFreePages &) = delete;
  KeepFreePages &operator=(const KeepFreePages &) = delete;
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

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TASKTHREAD_H
