//===- TaskThreadTest.cpp - the analysis' long-lived threads --------------===//

#include "TaskThread.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

using namespace tosa_lsp;

namespace {

// Deep enough to overflow a default 8 MiB stack; fine on the 64 MiB one.
unsigned recurse(unsigned depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return depth == 0 ? frame[0] : recurse(depth - 1) + frame[0] % 2;
}

// Thread ids are reused once a thread is joined; a thread-local counter
// tells a long-lived thread from a new one.
thread_local int tasksOnThisThread = 0;

TEST(TaskThread, RunsOnOneLongLivedThreadWithItsStack) {
  TaskThread t(64u << 20);
  int first = 0, second = 0;
  std::thread::id id;
  t.run([&] {
    first = ++tasksOnThisThread;
    id = std::this_thread::get_id();
  });
  t.run([&] {
    second = ++tasksOnThisThread;
    (void)recurse(4000); // ~16 MiB of frames
  });
  EXPECT_NE(id, std::this_thread::get_id());
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2); // the same thread both times
}

TEST(TaskThread, StopEndsTheThreadAndTheNextTaskStartsANewOne) {
  TaskThread t(1u << 20);
  int before = 0, after = 0;
  t.run([&] { before = ++tasksOnThisThread; });
  t.stop();
  t.stop(); // idempotent
  t.run([&] { after = ++tasksOnThisThread; });
  EXPECT_EQ(before, 1);
  EXPECT_EQ(after, 1); // a new thread
}

TEST(TaskThread, BesideRunsConcurrentlyAndFallsBackWhenBusy) {
  TaskThread t(1u << 20);
  std::atomic<int> state{0};
  {
    // The task waits for this thread: only a concurrent run finishes.
    TaskThread::Running r = t.beside([&] {
      while (state.load() != 1)
        std::this_thread::yield();
      state = 2;
    });
    // Busy: the second task gets a thread of its own, also concurrent.
    std::atomic<bool> ran{false};
    TaskThread::Running r2 = t.beside([&] { ran = true; });
    r2.join();
    EXPECT_TRUE(ran);
    state = 1;
    r.join();
    EXPECT_EQ(state.load(), 2);
  }
  // Joined on destruction too.
  int x = 0;
  {
    TaskThread::Running r = t.beside([&] { x = 7; });
  }
  EXPECT_EQ(x, 7);
}

// What a task thread gives back between tasks: the stack's pages more
// than the margin below the frame, never the frame or anything above it.
TEST(TaskThread, GivesBackOnlyStackPagesBelowTheFrame) {
  const uintptr_t page = 4096, margin = 1u << 20;
  const uintptr_t low = 0x7f0000000000 + 100, high = low + (256u << 20);
  const uintptr_t frame = high - 5000;
  auto [first, second] =
      detail::stackPagesBelow(low, high, frame, margin, page);
  EXPECT_EQ(first, 0x7f0000001000u); // the first whole page
  EXPECT_EQ(second, (frame - margin) & ~(page - 1));
  // Too close to the stack's end: nothing.
  EXPECT_EQ(detail::stackPagesBelow(low, high, low + margin, margin, page),
            std::make_pair(uintptr_t(0), uintptr_t(0)));
  // A "frame" that is no frame of this stack (ASan's fake stack, mapped
  // above or below the thread's): nothing. Releasing up to one above the
  // stack zeroed the live frames and TLS of the lower fuzzer's analysis
  // thread (a silent SIGSEGV after ~14,000 executions).
  for (uintptr_t elsewhere : {high, high + (256u << 20), low - 1, uintptr_t(0)})
    EXPECT_EQ(detail::stackPagesBelow(low, high, elsewhere, margin, page),
              std::make_pair(uintptr_t(0), uintptr_t(0)))
        << std::hex << elsewhere;
}

// Deep tasks, then more tasks on the same thread: the pages given back
// between them are only ones no live frame uses.
TEST(TaskThread, TasksAfterAGiveBackSeeIntactFramesAndTLS) {
  TaskThread t(64u << 20);
  for (int i = 0; i < 3; ++i) {
    int depth = -1;
    t.run([&] {
      ++tasksOnThisThread;
      (void)recurse(4000); // touches ~16 MiB that the thread gives back
      depth = tasksOnThisThread;
    });
    EXPECT_EQ(depth, i + 1);
  }
}

} // namespace

namespace {
std::vector<bool> hookCalls;
void recordHook(bool on) { hookCalls.push_back(on); }
} // namespace

// The allocator is switched once for overlapping scopes (an analysis and
// an inference on two threads): on at the first, back at the last.
TEST(GiveBackFreePages, SwitchesOnceForOverlappingScopes) {
  hookCalls.clear();
  setGiveBackFreePagesHook(recordHook);
  {
    GiveBackFreePages outer;
    EXPECT_EQ(hookCalls, std::vector<bool>{true});
    std::thread other([] { GiveBackFreePages inner; });
    other.join();
    EXPECT_EQ(hookCalls, std::vector<bool>{true});
  }
  EXPECT_EQ(hookCalls, (std::vector<bool>{true, false}));
  {
    GiveBackFreePages again;
  }
  EXPECT_EQ(hookCalls, (std::vector<bool>{true, false, true, false}));
  setGiveBackFreePagesHook(nullptr);
  {
    GiveBackFreePages none;
  }
  EXPECT_EQ(hookCalls.size(), 4u);
}

// With the server's policy (configureAllocator), pages go back at once
// unless a request keeps them; a give-back scope inside a request's still
// gives back. Switched only when what the scopes ask for changes.
TEST(GiveBackFreePages, RequestsKeepPagesWhereTheDefaultGivesBack) {
  hookCalls.clear();
  setGiveBackFreePagesHook(recordHook);
  decommitFreePagesByDefault(true);
  EXPECT_EQ(hookCalls, std::vector<bool>{true});
  {
    GiveBackFreePages already; // at once already: no switch
    EXPECT_EQ(hookCalls, std::vector<bool>{true});
  }
  {
    KeepFreePages request;
    EXPECT_EQ(hookCalls, (std::vector<bool>{true, false}));
    {
      std::thread analysis([] { GiveBackFreePages parse; });
      analysis.join();
    }
    EXPECT_EQ(hookCalls, (std::vector<bool>{true, false, true, false}));
    KeepFreePages another;
  }
  EXPECT_EQ(hookCalls, (std::vector<bool>{true, false, true, false, true}));
  decommitFreePagesByDefault(false);
  EXPECT_EQ(hookCalls,
            (std::vector<bool>{true, false, true, false, true, false}));
  {
    KeepFreePages request; // mimalloc's own policy again: no switch
  }
  EXPECT_EQ(hookCalls.size(), 6u);
  setGiveBackFreePagesHook(nullptr);
}

namespace {
// Each thread collects once per note, whichever thread freed: the message
// loop, the pool and the Scheduler call this often (between messages,
// after tasks), and collect only after a replaced version was freed.
TEST(CollectWhatOthersFreed, OncePerNoteOnEachThread) {
  collectWhatOthersFreed(); // whatever notes came before this test
  EXPECT_FALSE(collectWhatOthersFreed());
  noteFreedForOthers();
  EXPECT_TRUE(collectWhatOthersFreed());
  EXPECT_FALSE(collectWhatOthersFreed());
  bool other = false, again = true;
  std::thread t([&] {
    other = collectWhatOthersFreed(); // a thread that never collected
    again = collectWhatOthersFreed();
  });
  t.join();
  EXPECT_TRUE(other);
  EXPECT_FALSE(again);
  noteFreedForOthers();
  noteFreedForOthers();
  EXPECT_TRUE(collectWhatOthersFreed()); // once for both
  EXPECT_FALSE(collectWhatOthersFreed());
}
} // namespace
