//===- TosaServerOldSyntaxTest.cpp - old-syntax files before migration ----===//

#include "TosaServerTestSupport.h"

#include "llvm/ADT/ScopeExit.h"

#include "OldSyntax.h"

namespace {

// The custom tosa.fully_connected does not parse in MLIR 22: one error, and
// nothing after it analysed. Four old forms.
const char *kOld =
    "func.func @f(%x: tensor<1x2xf32>, %w: tensor<3x2xf32>, %b: "
    "tensor<3xf32>, %m: tensor<1x3xf32>) -> tensor<1x3xf32> {\n"
    "  %0 = tosa.fully_connected %x, %w, %b : (tensor<1x2xf32>, "
    "tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>\n"
    "  %1 = tosa.mul %0, %m {shift = 0 : i8} : (tensor<1x3xf32>, "
    "tensor<1x3xf32>) -> tensor<1x3xf32>\n"
    "  %2 = tosa.add %1, %m : (tensor<1x3xf32>, tensor<1x3xf32>) -> "
    "tensor<1x3xf32>\n"
    "  return %2 : tensor<1x3xf32>\n}\n";

/// The old-form summaries among the last publish's extra diagnostics.
std::vector<Diagnostic> summaries(Recorder &rec) {
  std::lock_guard<std::mutex> lock(rec.mu);
  std::vector<Diagnostic> out;
  if (!rec.extras.empty())
    for (const Diagnostic &d : rec.extras.back())
      if (d.code == "pre-mlir-22")
        out.push_back(d);
  return out;
}

std::optional<lsp::Hover> hoverAt(TosaServer &server, lsp::Position p) {
  auto h = await<std::optional<lsp::Hover>>(
      [&](auto cb) { server.hover("test:///o.mlir", p, std::move(cb)); });
  EXPECT_TRUE(bool(h));
  if (!h)
    return std::nullopt;
  return std::move(*h);
}

struct RefreshCounter : Recorder {
  std::atomic<unsigned> refreshes{0};
  void onInlayHintsChanged() override { ++refreshes; }
};

TEST(TosaServerOldSyntax, OneSummaryAndHoverFromTheMigratedForm) {
  RefreshCounter rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, kOld);
  std::vector<Diagnostic> s = summaries(rec);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].range.begin.line, 2u);
  EXPECT_NE(s[0].message.str().find("2 ops use pre-MLIR-22 TOSA forms"),
            std::string::npos)
      << s[0].message.str();
  EXPECT_EQ(server.stats().migrations, 1u);
  // Once its shapes are inferred, clients are asked for their hints again.
  EXPECT_EQ(rec.refreshes, 1u);
  // tosa.add, after the parse error: answered, with the note.
  std::optional<lsp::Hover> h = hoverAt(server, lsp::Position(3, 10));
  ASSERT_TRUE(h);
  EXPECT_NE(h->contents.value.find("**`tosa.add`**"), std::string::npos);
  EXPECT_NE(h->contents.value.find(kMigratedFormNote), std::string::npos);
  EXPECT_EQ(h->range->start.line, 3);
  EXPECT_EQ(h->range->start.character, 7);
}

TEST(TosaServerOldSyntax, FilesWithoutOldFormsAreNotMigrated) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  // An error, but not an old form's; and a clean file.
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  server.addDocument("test:///d.mlir", "/nonexistent/d.mlir", 1, kDynamic);
  EXPECT_EQ(server.stats().migrations, 0u);
  EXPECT_EQ(server.stats().migrationsCancelled, 0u);
  EXPECT_TRUE(summaries(rec).empty());
}

/// Holds version `held`'s background migration until released. A test
/// releases it before the server goes, also when a check fails
/// (releasedFirst, declared after the server).
class MigrationGate {
public:
  explicit MigrationGate(int64_t held) : held(held) {}
  void attach(TosaServer::Options &o) {
    o.beforeMigrationForTest = [this](int64_t version) {
      if (version != held)
        return;
      std::unique_lock<std::mutex> lock(mu);
      reached = true;
      cv.notify_all();
      cv.wait(lock, [&] { return go; });
    };
  }
  /// The held migration has started (waits at most a minute).
  bool waitReached() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return reached; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
    cv.notify_all();
  }
  auto releasedFirst() {
    return llvm::scope_exit([this] { release(); });
  }

private:
  int64_t held;
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false, go = false;
};

// A newer version arrives while version 1's migration waits: version 1's is
// dropped (never kept, never published) and version 2's replaces it.
TEST(TosaServerOldSyntax, ANewerVersionCancelsAndReplaces) {
  Recorder rec;
  MigrationGate gate(1);
  TosaServer::Options o = pooledOptions();
  gate.attach(o);
  TosaServer server(o, rec);
  auto released = gate.releasedFirst();
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, kOld);
  ASSERT_TRUE(gate.waitReached());
  // Version 2: the mul made an add, one old form less.
  std::string v2 = kOld;
  size_t at = v2.find("tosa.mul %0, %m {shift = 0 : i8}");
  v2.replace(at, std::string("tosa.mul %0, %m {shift = 0 : i8}").size(),
             "tosa.add %0, %m");
  lsp::TextDocumentContentChangeEvent c;
  c.text = v2;
  ASSERT_FALSE(bool(server.changeDocument("test:///o.mlir", 2, {c})));
  for (int i = 0; i < 6000; ++i) {
    Scheduler::SnapshotPtr s = server.snapshot("test:///o.mlir");
    if (s && s->version == 2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  gate.release();
  server.waitIdle();
  TosaServer::Stats stats = server.stats();
  EXPECT_EQ(stats.migrationsCancelled, 1u);
  EXPECT_EQ(stats.migrations, 1u);
  // Requests answer from version 2's migrated form.
  std::optional<lsp::Hover> h = hoverAt(server, lsp::Position(3, 10));
  ASSERT_TRUE(h);
  EXPECT_NE(h->contents.value.find(kMigratedFormNote), std::string::npos);
  std::lock_guard<std::mutex> lock(rec.mu);
  for (size_t i = 0; i < rec.published.size(); ++i)
    for (const Diagnostic &d : rec.extras[i])
      if (d.code == "pre-mlir-22") {
        EXPECT_EQ(rec.published[i]->version, 2);
        EXPECT_NE(d.message.str().find("1 op uses"), std::string::npos)
            << d.message.str();
      }
  ASSERT_FALSE(rec.extras.empty());
  EXPECT_EQ(rec.published.back()->version, 2);
  bool summarised = false;
  for (const Diagnostic &d : rec.extras.back())
    summarised |= d.code == "pre-mlir-22";
  EXPECT_TRUE(summarised);
}

// An error only the migrated text shows (behind the parse error): the
// whole-file action's title names it, from the checked migration.
TEST(TosaServerOldSyntax, ActionTitleNamesWhatTheMigratedTextStillFails) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  std::string text = kOld;
  text.insert(text.find("  return"),
              "  %3 = tosa.add %m, %b : (tensor<1x3xf32>, tensor<3xf32>) -> "
              "tensor<1x3xf32>\n");
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, text);
  auto a = await<CodeActions>([&](auto cb) {
    server.codeActions("test:///o.mlir",
                       lsp::Range(lsp::Position(0, 0), lsp::Position(0, 0)),
                       {"source.migrate"}, std::move(cb));
  });
  ASSERT_TRUE(bool(a));
  ASSERT_EQ(a->items.size(), 1u);
  EXPECT_NE(a->items[0].title.find("(2 ops) - 1 ops left to edit by hand, "
                                   "first at line 5: still fails after the "
                                   "migration"),
            std::string::npos)
      << a->items[0].title;
}

// Definition and references answer on the old file from the migrated form
// (MLIR 22 parsed none of it): values the migration kept, at the user's
// positions.
TEST(TosaServerOldSyntax, NavigationFromTheMigratedForm) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, kOld);
  // %1, used by the tosa.add on line 3 (0-based), defined on line 2.
  auto def = await<std::vector<DefinitionTarget>>([&](auto cb) {
    server.definition("test:///o.mlir", lsp::Position(3, 17), std::move(cb));
  });
  ASSERT_TRUE(bool(def));
  ASSERT_EQ(def->size(), 1u);
  EXPECT_EQ((*def)[0].range.start, lsp::Position(2, 2));
  EXPECT_EQ((*def)[0].range.end, lsp::Position(2, 4));
  // %0: its definition (the fully_connected the migration rewrote keeps
  // its result name) and its use in the rewritten tosa.mul.
  auto refs = await<std::vector<lsp::Range>>([&](auto cb) {
    server.references("test:///o.mlir", lsp::Position(2, 17), true,
                      std::move(cb));
  });
  ASSERT_TRUE(bool(refs));
  ASSERT_EQ(refs->size(), 2u);
  EXPECT_EQ((*refs)[0].start, lsp::Position(1, 2));
  EXPECT_EQ((*refs)[1].start, lsp::Position(2, 16));
  EXPECT_EQ((*refs)[1].end, lsp::Position(2, 18));
}

// tosa/graph of an old file: the migrated function's graph, marked so, its
// ranges in the user's text.
TEST(TosaServerOldSyntax, GraphFromTheMigratedForm) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, kOld);
  auto g = await<TosaServer::GraphReply>([&](auto cb) {
    server.graph("test:///o.mlir", lsp::Position(3, 10), std::nullopt,
                 std::nullopt, "fast", std::move(cb));
  });
  ASSERT_TRUE(bool(g)) << errorText(g.takeError());
  EXPECT_TRUE(g->migrated);
  EXPECT_EQ(g->snapshot->version, 1);
  EXPECT_EQ(g->graph->function, "f");
  bool add = false, conv = false;
  for (const GraphNode &n : g->graph->nodes) {
    if (n.label == "tosa.add") {
      add = true;
      EXPECT_EQ(n.range.begin.line, 4u); // 1-based: the user's line
      EXPECT_EQ(n.range.begin.column, 8u);
    }
    conv |= n.label == "tosa.conv2d"; // the fully_connected, migrated
  }
  EXPECT_TRUE(add);
  EXPECT_TRUE(conv);
  // After a lowering stage too: lowered from the migrated text.
  auto lowered = await<TosaServer::GraphReply>([&](auto cb) {
    server.graph("test:///o.mlir", lsp::Position(3, 10), std::nullopt,
                 std::string("linalg"), "upstream", std::move(cb));
  });
  ASSERT_TRUE(bool(lowered)) << errorText(lowered.takeError());
  EXPECT_TRUE(lowered->migrated);
  EXPECT_EQ(lowered->snapshot->version, 1);
  EXPECT_EQ(lowered->snapshot->text, std::string(kOld));
  EXPECT_FALSE(lowered->graph->nodes.empty());
}

// While a newer version's migration runs, the last summary stays, moved
// past the edit; a version without old forms drops it.
TEST(TosaServerOldSyntax, SummaryKeptUntilReplaced) {
  Recorder rec;
  TosaServer::Options o = pooledOptions();
  MigrationGate gate(2);
  gate.attach(o);
  TosaServer server(o, rec);
  auto released = gate.releasedFirst();
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 1, kOld);
  server.waitIdle();
  ASSERT_EQ(summaries(rec).size(), 1u);
  lsp::TextDocumentContentChangeEvent c;
  c.text = std::string("// edited\n") + kOld;
  ASSERT_FALSE(bool(server.changeDocument("test:///o.mlir", 2, {c})));
  ASSERT_TRUE(gate.waitReached());
  {
    // Version 2 published, its migration held: version 1's summary, a line
    // lower.
    std::lock_guard<std::mutex> lock(rec.mu);
    ASSERT_EQ(rec.published.back()->version, 2);
  }
  std::vector<Diagnostic> kept = summaries(rec);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].range.begin.line, 3u);
  gate.release();
  server.waitIdle();
  ASSERT_EQ(summaries(rec).size(), 1u);
  // No old form left: nothing carried.
  c.text = kDynamic;
  ASSERT_FALSE(bool(server.changeDocument("test:///o.mlir", 3, {c})));
  server.waitIdle();
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    ASSERT_EQ(rec.published.back()->version, 3);
  }
  EXPECT_TRUE(summaries(rec).empty());
}

// `func @f` from before the func dialect: a parse error that does not
// name TOSA, still an old form worth migrating in the background.
TEST(TosaServerOldSyntax, OldFuncKeywordIsAnOldForm) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument(
      "test:///o.mlir", "/nonexistent/o.mlir", 1,
      "func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"tosa.mul\"(%a, %a) {shift = 0 : i32} : (tensor<2xf32>, "
      "tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n");
  std::vector<Diagnostic> s = summaries(rec);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].message.str().find("2 ops use pre-MLIR-22 TOSA forms (1 "
                                    "func, 1 tosa.mul)"),
            std::string::npos)
      << s[0].message.str();
  std::optional<lsp::Hover> h = hoverAt(server, lsp::Position(1, 10));
  ASSERT_TRUE(h);
  EXPECT_NE(h->contents.value.find(kMigratedFormNote), std::string::npos);
}

} // namespace
