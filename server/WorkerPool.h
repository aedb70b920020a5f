//===- WorkerPool.h - a bounded pool of big-stack threads -------*- C++ -*-===//
//
// Long requests (fix validation, lowering previews, compile jobs) run here:
// a fixed number of threads with a given stack size (MLIR's parser and
// passes recurse), a FIFO queue, and a destructor that runs what is queued
// and joins every thread. Each task learns the index of its worker, so
// per-worker state (an Analyzer with its own MLIRContext) needs no lock.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_WORKERPOOL_H
#define TOSA_LSP_SERVER_WORKERPOOL_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/thread.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tosa_lsp {

class WorkerPool {
public:
  using Task = llvm::unique_function<void(unsigned worker)>;

  /// `size` threads (at least one), each with `stackBytes` of stack; with
  /// `shortSlices`, threads a user waits on (requestSlices).
  WorkerPool(std::string name, unsigned size, unsigned stackBytes,
             bool shortSlices = false);
  /// Runs the queued tasks, then joins the threads.
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  void run(Task task);
  unsigned size() const { return threads.size(); }
  /// Blocks until the queue is empty and no task runs (tests).
  void waitIdle();
  /// Nothing queued and nothing running, now.
  bool isIdle();
  /// Has every thread run `fn` once, when it has no task left: what a
  /// thread's allocator holds can only be handed back by that thread.
  void runOnEachWhenIdle(std::function<void(unsigned worker)> fn);

private:
  void loop(unsigned worker);

  std::string name;
  bool shortSlices;
  std::mutex mu;
  std::condition_variable wake, idle;
  std::deque<Task> queue;
  unsigned active = 0;
  bool stopping = false;
  std::function<void(unsigned)> each;
  unsigned eachGeneration = 0;
  std::vector<std::unique_ptr<llvm::thread>> threads;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_WORKERPOOL_H
