//===- SchedulingTest.cpp - the threads' time slices ----------------------===//
//
// What requestSlices / ScopedSlices ask for is what the kernel then
// schedules the thread with (sched_getattr), and the default comes back
// after a ScopedSlices. Skipped where the kernel has no custom slices
// (before Linux 6.12 a fair thread's runtime reads back as 0).
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace tosa_lsp;

namespace {

/// The calling thread's slice in ns, or 0 where it cannot be read.
uint64_t sliceNs() {
#if defined(__linux__) && defined(SYS_sched_getattr)
  struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0)
    return 0;
  return attr.runtime;
#else
  return 0;
#endif
}

} // namespace

TEST(Scheduling, TheSliceAskedForIsTheThreadsAndTheDefaultComesBack) {
  // On a thread of its own: the test process' main thread keeps its own.
  std::thread([] {
    uint64_t initial = sliceNs();
    if (!requestSlices(kRequestSlice) || sliceNs() == 0)
      GTEST_SKIP() << "no custom time slices on this kernel";
    EXPECT_EQ(sliceNs(), 100'000u);
    {
      ScopedSlices background(kBackgroundSlice);
      EXPECT_EQ(sliceNs(), 20'000'000u);
    }
    EXPECT_EQ(sliceNs(), initial); // the kernel's default
  }).join();
}
