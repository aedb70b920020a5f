//===- AllocatorTest.cpp - releaseFreeMemory under mimalloc ---------------===//
//
// Linked with mimalloc like the tosa-lsp binary. When the last document
// closes, each pool thread hands back its free memory at the same moment:
// releaseFreeMemory on several threads at once, in a process whose malloc
// is mimalloc's. It used to call glibc's malloc_trim too, which sets up
// glibc's (unused) arena without a lock on first use: the server died in
// mtrim after 8 closes of 40. Each trial is a fresh process (the race is
// in that first use).
//
//===----------------------------------------------------------------------===//

#include "TaskThread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tosa_lsp;

namespace {

TEST(Allocator, FreeMemoryIsReleasedOnManyThreadsAtOnce) {
  constexpr int kTrials = 40, kThreads = 4;
  int crashed = 0, failed = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::atomic<int> ready{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
          std::vector<std::unique_ptr<char[]>> garbage;
          for (int i = 0; i < 1000; ++i)
            garbage.emplace_back(new char[64 + i]);
          garbage.clear();
          ++ready;
          while (ready.load() < kThreads) {
          }
          releaseFreeMemory();
        });
      for (std::thread &t : threads)
        t.join();
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    crashed += WIFSIGNALED(status);
    failed += WIFEXITED(status) && WEXITSTATUS(status) != 0;
  }
  EXPECT_EQ(crashed, 0) << "of " << kTrials << " processes";
  EXPECT_EQ(failed, 0);
}

} // namespace
