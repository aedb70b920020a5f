//===- WorkerPool.cpp - a bounded pool of big-stack threads ---------------===//

#include "WorkerPool.h"

#include "Scheduling.h"
#include "TaskThread.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Threading.h"

#include <algorithm>

namespace tosa_lsp {

WorkerPool::WorkerPool(std::string name, unsigned size, unsigned stackBytes,
                       bool shortSlices)
    : name(std::move(name)), shortSlices(shortSlices) {
  size = std::max(1u, size);
  for (unsigned i = 0; i < size; ++i)
    threads.push_back(std::make_unique<llvm::thread>(
        std::optional<unsigned>(stackBytes), [this, i] { loop(i); }));
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  wake.notify_all();
  for (auto &t : threads)
    t->join();
}

void WorkerPool::run(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(task));
  }
  wake.notify_one();
}

void WorkerPool::waitIdle() {
  std::unique_lock<std::mutex> lock(mu);
  idle.wait(lock, [&] { return queue.empty() && active == 0; });
}

bool WorkerPool::isIdle() {
  std::lock_guard<std::mutex> lock(mu);
  return queue.empty() && active == 0;
}

void WorkerPool::runOnEachWhenIdle(std::function<void(unsigned)> fn) {
  {
    std::lock_guard<std::mutex> lock(mu);
    each = std::move(fn);
    ++eachGeneration;
  }
  wake.notify_all();
}

void WorkerPool::loop(unsigned worker) {
  llvm::set_thread_name(llvm::Twine(name) + "-" + llvm::Twine(worker));
  if (shortSlices)
    (void)requestSlices(kRequestSlice);
  std::unique_lock<std::mutex> lock(mu);
  unsigned eachSeen = 0;
  for (;;) {
    wake.wait(lock, [&] {
      return stopping || !queue.empty() || eachSeen != eachGeneration;
    });
    if (queue.empty() && eachSeen != eachGeneration && !stopping) {
      eachSeen = eachGeneration;
      std::function<void(unsigned)> fn = each;
      lock.unlock();
      fn(worker);
      lock.lock();
      continue;
    }
    if (queue.empty()) // stopping, nothing left to run
      return;
    {
      Task task = std::move(queue.front());
      queue.pop_front();
      ++active;
      lock.unlock();
      task(worker);
    } // destroyed (with what it captured) outside the lock
    collectWhatOthersFreed(/*always=*/true);
    lock.lock();
    --active;
    if (queue.empty() && active == 0)
      idle.notify_all();
  }
}

} // namespace tosa_lsp
