//===- AllocatorTest.cpp - releaseFreeMemory under mimalloc ---------------===//
//
// Linked with mimalloc like the tosa-lsp binary. When the last document
// closes, each pool thread hands back its free memory at the same moment:
// releaseAllFreeMemory on several threads at once, in a process whose
// malloc is mimalloc's. It used to call glibc's malloc_trim too, which sets up
// glibc's (unused) arena without a lock on first use: the server died in
// mtrim after 8 closes of 40. Each trial is a fresh process (the race is
// in that first use). And what a thread frees goes back to the system when
// it releases its memory, not after mimalloc's delay.
//
//===----------------------------------------------------------------------===//

#include "Allocator.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tosa_lsp;

namespace {

size_t residentMiB() {
  size_t size = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%zu %zu", &size, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) >> 20;
}

/// On a thread of its own (a pool thread): allocates ~55 MiB in small
/// blocks (a big inference's IR), frees all but a few (so its segments
/// stay), in a GiveBackFreePages scope when `scoped`, then calls `release`
/// (if any). Returns the resident MiB before, with the blocks, and after.
std::array<size_t, 3>
allocateFreeRelease(bool scoped, void (*release)() = releaseFreeMemory) {
  constexpr size_t kBlocks = 600000, kBlock = 96;
  std::array<size_t, 3> rss{};
  std::vector<char *> kept;
  std::thread pool([&] {
    rss[0] = residentMiB();
    std::vector<char *> blocks(kBlocks);
    for (char *&b : blocks) {
      b = new char[kBlock];
      b[0] = 1; // resident
    }
    rss[1] = residentMiB();
    {
      std::optional<GiveBackFreePages> now;
      if (scoped)
        now.emplace();
      for (size_t i = 0; i < kBlocks; ++i) {
        if (i % 4096 == 0)
          kept.push_back(blocks[i]);
        else
          delete[] blocks[i];
      }
    }
    if (release)
      release();
    rss[2] = residentMiB();
  });
  pool.join();
  for (char *b : kept)
    delete[] b;
  return rss;
}

// What a pool thread frees when the last document closes (its inferrer's
// context) goes back at once: under mimalloc's delay the pages were only
// scheduled for decommit, for the thread's next allocation, and an idle
// pool thread never made one. The server's RSS after closing a 200k-line
// file stayed 26-51 MiB above its baseline.
TEST(Allocator, WhatIsFreedInAGiveBackScopeGoesBackAtOnce) {
  configureAllocator();
  auto [before, high, after] = allocateFreeRelease(/*scoped=*/true);
  ASSERT_GT(high, before + 40) << "the blocks were not resident";
  EXPECT_LT(after, before + 20) << "before " << before << " MiB, with the "
                                << "blocks " << high << " MiB";
}

// The server's policy without a huge page heap: what any thread frees goes
// back without a scope or a release (the version an edit replaced, freed
// by the reclaimer, stayed resident beside the next analysis), and a
// request's pages stay.
TEST(Allocator, WhatIsFreedGoesBackAtOnceUnlessARequestKeepsIt) {
  configureAllocator();
  decommitFreePagesByDefault(true);
  {
    auto [before, high, after] =
        allocateFreeRelease(/*scoped=*/false, /*release=*/nullptr);
    ASSERT_GT(high, before + 40) << "the blocks were not resident";
    EXPECT_LT(after, before + 20) << "before " << before << " MiB, with the "
                                  << "blocks " << high << " MiB";
  }
  {
    KeepFreePages request;
    auto [before, high, after] =
        allocateFreeRelease(/*scoped=*/false, /*release=*/nullptr);
    ASSERT_GT(high, before + 40) << "the blocks were not resident";
    EXPECT_GT(after, before + 40) << "a request's pages were given back";
  }
  configureAllocator();
}

// With a huge page heap, freed pages wait for the thread's next analysis
// (given back at once, each split its huge page: 2.6x the system time).
// A release mid-work keeps them too (given back and faulted in again, a
// 50k-line session's CPU was 1.1-1.3x); a release as the thread goes idle
// gives them back, also those freed before it.
TEST(Allocator, WithHugePagesWhatIsFreedWaitsForAnIdleRelease) {
  configureAllocator();
  if (!useHugePages())
    GTEST_SKIP() << "no huge page heap here";
  {
    auto [before, high, after] =
        allocateFreeRelease(/*scoped=*/false, /*release=*/nullptr);
    ASSERT_GT(high, before + 40) << "the blocks were not resident";
    EXPECT_GT(after, before + 40) << "freed pages went back at once";
  }
  {
    auto [before, high, after] =
        allocateFreeRelease(/*scoped=*/false, releaseFreeMemory);
    ASSERT_GT(high, before + 40) << "the blocks were not resident";
    EXPECT_GT(after, before + 40) << "a release mid-work gave them back";
  }
  auto [before, high, after] =
      allocateFreeRelease(/*scoped=*/false, releaseAllFreeMemory);
  ASSERT_GT(high, before + 40) << "the blocks were not resident";
  EXPECT_LT(after, before + 20) << "before " << before << " MiB, with the "
                                << "blocks " << high << " MiB";
}

// Freed in bulk: the pages stay while the scope lives (no madvise per page,
// each a TLB shootdown on every core), and go back together at its end.
TEST(Allocator, WhatIsFreedInBulkGoesBackWhenTheScopeEnds) {
  configureAllocator();
  constexpr size_t kBlocks = 600000, kBlock = 96;
  size_t before = 0, high = 0, inside = 0, after = 0;
  std::thread pool([&] {
    before = residentMiB();
    std::vector<char *> blocks(kBlocks);
    for (char *&b : blocks) {
      b = new char[kBlock];
      b[0] = 1; // resident
    }
    high = residentMiB();
    {
      FreeInBulk bulk;
      for (char *b : blocks)
        delete[] b;
      inside = residentMiB();
    }
    after = residentMiB();
  });
  pool.join();
  ASSERT_GT(high, before + 40) << "the blocks were not resident";
  EXPECT_GT(inside, before + 40) << "pages went back one by one";
  EXPECT_LT(after, before + 20) << "before " << before << " MiB, with the "
                                << "blocks " << high << " MiB";
}

/// The kernel's transparent huge page mode ("always", "madvise", "never"),
/// or "" without THP.
std::string hugePageMode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(f, line);
  size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos)
    return "";
  return line.substr(open + 1, close - open - 1);
}

/// The process' anonymous memory in huge pages, in MiB.
size_t hugeMiB() {
  std::ifstream f("/proc/self/smaps_rollup");
  std::string line;
  size_t kib = 0;
  while (std::getline(f, line))
    if (line.rfind("AnonHugePages:", 0) == 0)
      kib = std::stoul(line.substr(std::strlen("AnonHugePages:")));
  return kib >> 10;
}

// The server's heap lives in a range advised for transparent huge pages:
// with the kernel's default mode (madvise) an analysis' IR was all 4 KiB
// pages, each fault ~10 us on a paravirtualised VM (a fifth of a session's
// CPU). Small blocks on a pool thread, as an analysis allocates them.
TEST(Allocator, TheHeapIsBackedByHugePages) {
  std::string mode = hugePageMode();
  if (mode.empty() || mode == "never")
    GTEST_SKIP() << "no transparent huge pages here (" << mode << ")";
  configureAllocator();
  ASSERT_TRUE(useHugePages());
  ASSERT_TRUE(heapUsesHugePages());
  size_t before = hugeMiB(), during = 0;
  std::thread pool([&] {
    std::vector<char *> blocks(700000);
    for (char *&b : blocks) {
      b = new char[96];
      b[0] = 1;
    }
    during = hugeMiB();
    for (char *b : blocks)
      delete[] b;
  });
  pool.join();
  // ~64 MiB allocated; huge pages may be refused under fragmentation, so
  // a quarter of it.
  EXPECT_GE(during, before + 16)
      << "in huge pages: " << before << " MiB before, " << during << " during";
}

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
          releaseAllFreeMemory(); // what each pool thread does on a close
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
