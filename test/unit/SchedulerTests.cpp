//===- SchedulerTests.cpp - analysis off the main loop --------------------===//

#include "Scheduler.h"

#include "Allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

using namespace tosa_lsp;

namespace {

const char *kText = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  return %a : tensor<2xf32>\n}\n";

TEST(Scheduler, SyncAnalysesInlineAndPublishes) {
  std::vector<int64_t> published;
  Scheduler s(
      /*sync=*/true, std::chrono::milliseconds(0),
      [&](Scheduler::SnapshotPtr snap) { published.push_back(snap->version); });
  s.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  ASSERT_NE(s.latest("test:///a.mlir"), nullptr);
  EXPECT_EQ(s.latest("test:///a.mlir")->version, 1);
  EXPECT_EQ(published, std::vector<int64_t>{1});
  EXPECT_EQ(s.latest("test:///other.mlir"), nullptr);
  EXPECT_FALSE(s.withCurrentSnapshot("test:///other.mlir", [](auto) {}));
}

/// The versions a Scheduler published, in order.
struct PublishedVersions {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> published;
  Scheduler::Ready callback() {
    return [this](Scheduler::SnapshotPtr snap) {
      std::lock_guard<std::mutex> lock(mu);
      published.push_back(snap->version);
      cv.notify_all();
    };
  }
  /// Waits (up to 30 s) for version `v` to be the last one published.
  bool waitFor(int64_t v) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] {
      return !published.empty() && published.back() == v;
    });
  }
};

/// A function of `n` ops, its first line naming `version`: each version
/// is analysed afresh (no section is reused), and one analysis of a few
/// thousand ops takes far longer than a burst of edits takes to send.
static std::string versionText(int64_t version, int n = 3000) {
  std::string out = "// version " + std::to_string(version) +
                    "\nfunc.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n";
  std::string prev = "%a";
  for (int i = 0; i < n; ++i) {
    out += "  %v" + std::to_string(i) + " = tosa.abs " + prev +
           " : (tensor<2xf32>) -> tensor<2xf32>\n";
    prev = "%v" + std::to_string(i);
  }
  return out + "  return " + prev + " : tensor<2xf32>\n}\n";
}

TEST(Scheduler, OpenIsImmediateAndABurstOfEditsCoalesces) {
  PublishedVersions rec;
  // A debounce far longer than this test takes: an open waiting for it
  // would not be published before the burst below.
  Scheduler s(/*sync=*/false, std::chrono::seconds(2), rec.callback());
  s.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  std::promise<int64_t> first;
  ASSERT_TRUE(
      s.withCurrentSnapshot("test:///a.mlir", [&](Scheduler::SnapshotPtr p) {
        first.set_value(p ? p->version : -1);
      }));
  std::future<int64_t> f = first.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::milliseconds(1500)),
            std::future_status::ready);
  EXPECT_EQ(f.get(), 1);
  // A burst of edits after it: the first is analysed at once, unless the
  // next arrives before the analysis starts; the rest wait and coalesce.
  // Each a new text: an unchanged one is reused in well under the 2 ms a
  // burst may take, and v2 would be published before v3 came.
  std::vector<std::string> texts;
  for (int64_t v = 2; v <= 5; ++v)
    texts.push_back(versionText(v));
  auto start = std::chrono::steady_clock::now();
  for (int64_t v = 2; v <= 5; ++v)
    s.update("test:///a.mlir", "/a.mlir", v, texts[v - 2], Config());
  // On a loaded machine this thread can be descheduled between two edits
  // for longer than v2's analysis: then each edit comes after the last
  // publish, is not debounced, and every version is published in order.
  bool burst =
      std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2);
  s.waitIdle();
  std::lock_guard<std::mutex> lock(rec.mu);
  const std::vector<int64_t> &published = rec.published;
  if (burst)
    EXPECT_TRUE(published == (std::vector<int64_t>{1, 5}) ||
                published == (std::vector<int64_t>{1, 2, 5}))
        << published.size();
  ASSERT_FALSE(published.empty());
  EXPECT_EQ(published.front(), 1);
  EXPECT_EQ(published.back(), 5);
  EXPECT_TRUE(std::is_sorted(published.begin(), published.end()));
  // v2's analysis may have run and found v3 waiting (not published).
  EXPECT_GE(s.stats().analyses, published.size());
  if (burst)
    EXPECT_LE(s.stats().analyses, 3u);
}

// An edit made after the last one's diagnostics came is analysed at once,
// however soon: the debounce is for edits that arrive while one waits.
TEST(Scheduler, AnEditAfterThePublishIsNotDebounced) {
  PublishedVersions rec;
  Scheduler s(/*sync=*/false, std::chrono::seconds(2), rec.callback());
  auto start = std::chrono::steady_clock::now();
  for (int64_t v = 1; v <= 3; ++v) {
    s.update("test:///a.mlir", "/a.mlir", v, kText, Config());
    ASSERT_TRUE(rec.waitFor(v));
  }
  // Three analyses of a tiny file, none waiting out the 2 s debounce.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Scheduler, RequestsWaitForTheFirstSnapshot) {
  Scheduler s(/*sync=*/false, std::chrono::milliseconds(100), nullptr);
  s.update("test:///a.mlir", "/a.mlir", 7, kText, Config());
  std::promise<int64_t> got;
  ASSERT_TRUE(
      s.withCurrentSnapshot("test:///a.mlir", [&](Scheduler::SnapshotPtr p) {
        got.set_value(p ? p->version : -1);
      }));
  std::future<int64_t> f = got.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(f.get(), 7);
}

TEST(Scheduler, ClosingAnswersEveryWaiter) {
  // The open is analysed at once, so closing races with it: a waiter gets
  // the snapshot or nothing, but always an answer, exactly once.
  for (int i = 0; i < 20; ++i) {
    Scheduler s(/*sync=*/false, std::chrono::seconds(30), nullptr);
    s.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
    std::atomic<int> calls{0};
    bool queued = s.withCurrentSnapshot(
        "test:///a.mlir", [&](Scheduler::SnapshotPtr) { ++calls; });
    ASSERT_TRUE(queued);
    s.remove("test:///a.mlir");
    s.waitIdle();
    EXPECT_EQ(calls.load(), 1);
    EXPECT_LE(s.stats().analyses, 1u);
  }
}

TEST(Scheduler, UnchangedSectionsAreReused) {
  Scheduler s(/*sync=*/true, std::chrono::milliseconds(0), nullptr);
  std::string two = std::string(kText) + "// -----\n" + kText;
  s.update("test:///a.mlir", "/a.mlir", 1, two, Config());
  s.update("test:///a.mlir", "/a.mlir", 2, two + "\n", Config());
  EXPECT_EQ(s.stats().analyses, 2u);
  EXPECT_GE(s.stats().sectionsReused, 1u);
}

} // namespace

namespace {

TEST(Scheduler, ClosingTheLastDocumentReleasesTheAnalyzersMemory) {
  // Its MLIRContext keeps everything it uniqued: a fresh context (and the
  // end of its threads) gives the memory back once nothing is open.
  Scheduler s(/*sync=*/true, std::chrono::milliseconds(0), nullptr);
  s.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  s.update("test:///b.mlir", "/b.mlir", 1, kText, Config());
  s.remove("test:///a.mlir");
  EXPECT_EQ(s.stats().memoryReleases, 0u); // b is still open
  s.remove("test:///b.mlir");
  EXPECT_EQ(s.stats().memoryReleases, 1u);
  s.update("test:///a.mlir", "/a.mlir", 2, kText, Config());
  ASSERT_NE(s.latest("test:///a.mlir"), nullptr); // the new one works
  EXPECT_TRUE(s.latest("test:///a.mlir")->analysis.diagnostics.empty());

  Scheduler async(/*sync=*/false, std::chrono::milliseconds(0), nullptr);
  async.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  async.waitIdle();
  async.remove("test:///a.mlir");
  for (int i = 0; i < 500 && async.stats().memoryReleases == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(async.stats().memoryReleases, 1u);
}

} // namespace

namespace {

// What the Analyzer's contexts uniqued, and the pages freed in its helper
// thread's heap (only that thread can give them back), are released once
// a version is published and the replaced one freed, when idle: not in
// sync mode (no worker to be idle).
TEST(Scheduler, TheAnalyzerReleasesIdleMemoryOncePublished) {
  Scheduler async(/*sync=*/false, std::chrono::milliseconds(0), nullptr);
  async.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  async.waitIdle();
  for (int i = 0; i < 500 && async.stats().idleReleases == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(async.stats().idleReleases, 1u);
  async.update("test:///a.mlir", "/a.mlir", 2, std::string(kText) + "\n",
               Config());
  async.waitIdle();
  for (int i = 0; i < 500 && async.stats().idleReleases < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(async.stats().idleReleases, 2u);

  Scheduler sync(/*sync=*/true, std::chrono::milliseconds(0), nullptr);
  sync.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  EXPECT_EQ(sync.stats().idleReleases, 0u);
}

std::mutex switchMu;
std::vector<bool> switches; // the allocator's switch: true = at once
void recordSwitch(bool atOnce) {
  std::lock_guard<std::mutex> lock(switchMu);
  switches.push_back(atOnce);
}
bool pagesGoBackAtOnce() {
  std::lock_guard<std::mutex> lock(switchMu);
  return switches.empty() || switches.back();
}

// An analysis (and the kept IR's inference after it) keeps the pages it
// frees for what it allocates next: each page given back alone was a
// madvise, a TLB shootdown on every core, and its reuse a fault. They go
// back when the worker is idle (the analyzer's threads release theirs).
TEST(Scheduler, AnAnalysisKeepsTheFreedPagesUntilIdle) {
  setGiveBackFreePagesHook(recordSwitch);
  decommitFreePagesByDefault(true);
  std::atomic<int> atOnceAtPublish{-1};
  {
    Scheduler async(
        /*sync=*/false, std::chrono::milliseconds(0),
        [&](Scheduler::SnapshotPtr) { atOnceAtPublish = pagesGoBackAtOnce(); });
    async.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
    async.waitIdle();
    for (int i = 0; i < 500 && async.stats().idleReleases == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(async.stats().idleReleases, 1u);
    EXPECT_EQ(atOnceAtPublish.load(), 0) << "freed pages went back one by one";
    EXPECT_TRUE(pagesGoBackAtOnce()) << "kept after the analysis";
  }
  decommitFreePagesByDefault(false);
  setGiveBackFreePagesHook(nullptr);
}

// The version a new one replaces goes to the reclaimer before the new one
// is published: the notification's text (~250 bytes a diagnostic) was
// built while both lived, a 10k-line session's peak.
TEST(Scheduler, TheReplacedVersionIsFreedBeforeThePublish) {
  std::weak_ptr<const Snapshot> first;
  std::atomic<bool> freedBeforePublish{false};
  std::promise<void> second;
  Scheduler s(/*sync=*/false, std::chrono::milliseconds(0),
              [&](Scheduler::SnapshotPtr snap) {
                if (snap->version == 1) {
                  first = snap;
                  return;
                }
                // The publish of version 2 waits (at most 5 s) for version
                // 1 to be freed: it never is if that waits for the publish.
                for (int i = 0; i < 500 && !first.expired(); ++i)
                  std::this_thread::sleep_for(std::chrono::milliseconds(10));
                freedBeforePublish = first.expired();
                second.set_value();
              });
  s.update("test:///a.mlir", "/a.mlir", 1, kText, Config());
  s.waitIdle();
  s.update("test:///a.mlir", "/a.mlir", 2, std::string(kText) + "\n", Config());
  second.get_future().wait();
  EXPECT_TRUE(freedBeforePublish);
}

/// A replaced snapshot is freed beside the next analysis (the reclaimer
/// thread), and is gone once waitIdle returns: nothing keeps it.
TEST(Scheduler, AReplacedSnapshotIsFreedByTheTimeItIsIdle) {
  Scheduler s(/*sync=*/false, std::chrono::milliseconds(0), nullptr);
  std::weak_ptr<const Snapshot> first;
  for (int64_t v = 1; v <= 12; ++v) {
    s.update("test:///a.mlir", "/a.mlir", v, kText, Config());
    s.waitIdle();
    Scheduler::SnapshotPtr now = s.latest("test:///a.mlir");
    ASSERT_NE(now, nullptr);
    ASSERT_EQ(now->version, v);
    // The snapshot converts positions with the analysis's line starts.
    EXPECT_EQ(&now->lines.index(), now->analysis.lineIndex.get());
    if (v == 1)
      first = now;
    else
      EXPECT_TRUE(first.expired()) << "version 1 alive at version " << v;
  }
  // The document's versions went one after the other through the
  // reclaimer; each one before the latest is gone.
  std::weak_ptr<const Snapshot> last = s.latest("test:///a.mlir");
  s.remove("test:///a.mlir");
  s.waitIdle();
  EXPECT_TRUE(last.expired());
}

// The Scheduler owns each open document: a close erases it (nothing holds
// it any more), and work that still holds one finds it closed.
TEST(Scheduler, ClosingErasesTheOpenDocument) {
  Scheduler s(/*sync=*/true, std::chrono::milliseconds(0), nullptr);
  const std::string uri = "test:///a.mlir";
  s.update(uri, "/a.mlir", 1, kText, Config());
  std::weak_ptr<OpenDocument> gone = s.document(uri);
  ASSERT_FALSE(gone.expired());
  gone.lock()->setVerdict(1, "", 0, true);
  s.remove(uri);
  EXPECT_EQ(s.document(uri), nullptr);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_TRUE(gone.expired());

  std::shared_ptr<OpenDocument> held = s.open(uri, "/a.mlir", 1, kText);
  EXPECT_FALSE(held->verdict(1, "", 0)); // not the closed one's
  s.update(held, Config());
  ASSERT_NE(held->latest(), nullptr);
  held->setVerdict(1, "", 0, true);
  // Opened again without a close: the first one is closed.
  std::shared_ptr<OpenDocument> again = s.open(uri, "/a.mlir", 1, kText);
  EXPECT_NE(again, held);
  EXPECT_EQ(s.document(uri), again);
  EXPECT_FALSE(held->isOpen());
  EXPECT_FALSE(held->isAt(1));
  EXPECT_EQ(held->current().text, nullptr);
  EXPECT_EQ(held->latest(), nullptr);
  EXPECT_FALSE(held->verdict(1, "", 0));
  EXPECT_TRUE(again->isAt(1));
  EXPECT_EQ(s.latest(uri), nullptr); // not analysed yet
}

} // namespace
