//===- TosaServerInferenceTest.cpp - shape inference on the pool
//------------===//
//
// Background and request-driven shape inference: warm inferrers, loans,
// pauses, what an edit re-infers, and what a replaced version frees.
//
//===----------------------------------------------------------------------===//

#include "TosaServerTestSupport.h"

#include <condition_variable>

namespace {

constexpr const char *kChain =
    "func.func @f(%in: tensor<1x32x32x8xf32>, %w: tensor<16x3x3x8xf32>, %b: "
    "tensor<16xf32>) -> tensor<1x?x?x16xf32> {\n"
    "  %zp = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf32>}> : () -> "
    "tensor<1xf32>\n"
    "  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = "
    "array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, "
    "1>} : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, "
    "tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>\n"
    "  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : "
    "(tensor<1x?x?x16xf32>) -> tensor<1x?x?x16xf32>\n"
    "  return %1 : tensor<1x?x?x16xf32>\n"
    "}\n";

TEST(TosaServer, ShapeInferenceOnThePoolCachedPerVersion) {
  Recorder rec;
  TosaServer::Options o = pooledOptions();
  auto server = std::make_unique<TosaServer>(o, rec);
  server->addDocument("test:///s.mlir", "/nonexistent/s.mlir", 1, kChain);
  auto hoverAt = [&](unsigned line, unsigned col) {
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server->hover("test:///s.mlir", lsp::Position(line, col), std::move(cb));
    });
    EXPECT_TRUE(bool(h));
    return h && h->has_value() ? (*h)->contents.value : std::string();
  };
  // conv2d is not Broadcastable: only shape inference has something to say.
  std::string md = hoverAt(2, 10);
  EXPECT_NE(md.find("**inferred** `tensor<1x32x32x16xf32>`"), std::string::npos)
      << md;
  auto hints = await<std::vector<lsp::InlayHint>>([&](auto cb) {
    server->inlayHints("test:///s.mlir",
                       lsp::Range(lsp::Position(0, 0), lsp::Position(6, 0)),
                       std::move(cb));
  });
  ASSERT_TRUE(bool(hints));
  ASSERT_EQ(hints->size(), 2u);
  EXPECT_EQ((*hints)[1].label, " inferred: 1x32x32x16");
  auto actions = await<CodeActions>([&](auto cb) {
    server->codeActions("test:///s.mlir",
                        lsp::Range(lsp::Position(3, 9), lsp::Position(3, 9)),
                        {"source.refineShapes"}, std::move(cb));
  });
  ASSERT_TRUE(bool(actions));
  ASSERT_EQ(actions->items.size(), 1u);
  EXPECT_EQ(actions->items[0].title,
            "Refine all shapes in @f (tosa-infer-shapes)");
  EXPECT_TRUE(actions->items[0].review);
  EXPECT_EQ(actions->items[0].edits.size(), 5u);
  // A new version is inferred again: the input's height is now 30.
  std::string text = kChain;
  for (size_t at; (at = text.find("1x32x32x8")) != std::string::npos;)
    text.replace(at, 9, "1x30x32x8");
  lsp::TextDocumentContentChangeEvent change;
  change.text = text;
  ASSERT_FALSE(bool(server->changeDocument("test:///s.mlir", 2, {change})));
  server->waitIdle();
  md = hoverAt(2, 10);
  EXPECT_NE(md.find("**inferred** `tensor<1x30x32x16xf32>`"), std::string::npos)
      << md;
  server.reset();
}

TEST(TosaServer, ShapeContradictionsArePublishedAfterTheAnalysis) {
  Recorder rec;
  TosaServer server(reparsing(syncOptions()), rec);
  server.addDocument("test:///c.mlir", "/nonexistent/c.mlir", 1,
                     kContradiction);
  // The analysis first (MLIR's verifier accepts the file), then the same
  // version again with the error shape inference found.
  ASSERT_EQ(rec.published.size(), 2u);
  EXPECT_TRUE(rec.extras[0].empty());
  EXPECT_EQ(rec.published[1]->version, 1);
  ASSERT_EQ(rec.extras[1].size(), 1u);
  const Diagnostic &d = rec.extras[1][0];
  EXPECT_EQ(d.code, "shape-contradiction");
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.range.begin.line, 7u);
  EXPECT_EQ(d.range.begin.column, 8u);
  EXPECT_NE(d.message.str().find("dimension 1 is 2, not 5"), std::string::npos)
      << d.message;

  // An edit in @f, which moves @g down a line: @g is not inferred again,
  // its error is in the first publish at its new place; @f has none.
  std::string text = kContradiction;
  text.insert(text.find("  return %0"),
              "  %1 = tosa.abs %0 : (tensor<2xf32>) -> tensor<2xf32>\n");
  lsp::TextDocumentContentChangeEvent change;
  change.text = text;
  ASSERT_FALSE(bool(server.changeDocument("test:///c.mlir", 2, {change})));
  // @f was checked too and has nothing: no second publish.
  ASSERT_EQ(rec.published.size(), 3u);
  ASSERT_EQ(rec.published[2]->version, 2);
  ASSERT_EQ(rec.extras[2].size(), 1u);
  EXPECT_EQ(rec.extras[2][0].range.begin.line, 8u);

  // Fixing the declared type clears it; turned off, nothing is inferred.
  for (size_t at; (at = text.find("3x5")) != std::string::npos;)
    text.replace(at, 3, "3x2");
  change.text = text;
  ASSERT_FALSE(bool(server.changeDocument("test:///c.mlir", 3, {change})));
  EXPECT_TRUE(rec.extras.back().empty());
  EXPECT_EQ(rec.published.back()->version, 3);
  server.setSettings({{"shapeChecks", false}});
  size_t before = rec.published.size();
  text = kContradiction;
  change.text = text;
  ASSERT_FALSE(bool(server.changeDocument("test:///c.mlir", 4, {change})));
  ASSERT_EQ(rec.published.size(), before + 1); // no second publish
  EXPECT_TRUE(rec.extras.back().empty());
}

// A function over the background checks' limit is checked when a hover
// infers it: the error then comes in a publish of its own.
/// A big file MLIR accepts is published clean on MLIR's verdict, before
/// the op reports and index; the analysis' own publish follows only when
/// it has more to say (here the shape error the kept IR's inference finds).
TEST(TosaServer, ABigFileIsPublishedCleanOnMLIRsVerdict) {
  std::string many;
  for (int i = 0; i < 1400; ++i) // ~290 KiB: analysed in parts
    many += "func.func @f" + std::to_string(i) +
            "(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
            "  %1 = tosa.exp %0 : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
            "  return %1 : tensor<2x?xf32>\n}\n";
  ASSERT_GE(many.size(), size_t(256) << 10);
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///clean.mlir", "/nonexistent/clean.mlir", 1, many);
  server.waitIdle();
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    ASSERT_EQ(rec.clean.size(), 1u);
    EXPECT_EQ(rec.clean[0].first, "test:///clean.mlir");
    EXPECT_EQ(rec.clean[0].second, 1);
    EXPECT_TRUE(rec.published.empty()); // nothing more to say
  }
  // A verifier error in the last function: no verdict before the analysis.
  std::string wrong = many + "func.func @bad(%a: tensor<2xf32>) -> "
                             "tensor<3xf32> {\n  %0 = tosa.abs %a : "
                             "(tensor<2xf32>) -> tensor<3xf32>\n  return %0 "
                             ": tensor<3xf32>\n}\n";
  server.addDocument("test:///wrong.mlir", "/nonexistent/wrong.mlir", 1, wrong);
  server.waitIdle();
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    EXPECT_EQ(rec.clean.size(), 1u);
    ASSERT_EQ(rec.published.size(), 1u);
    EXPECT_EQ(rec.published[0]->uri, "test:///wrong.mlir");
  }
  // MLIR's verifier accepts @g, its shape inference does not: clean first,
  // then the same version again with the error.
  std::string contradiction = many + kContradiction;
  contradiction.replace(contradiction.find("@f("), 3, "@ff(");
  server.addDocument("test:///c.mlir", "/nonexistent/c.mlir", 1, contradiction);
  server.waitIdle();
  std::lock_guard<std::mutex> lock(rec.mu);
  ASSERT_EQ(rec.clean.size(), 2u);
  EXPECT_EQ(rec.clean[1].first, "test:///c.mlir");
  ASSERT_EQ(rec.published.size(), 2u);
  EXPECT_EQ(rec.published[1]->uri, "test:///c.mlir");
  ASSERT_EQ(rec.extras[1].size(), 1u);
  EXPECT_EQ(rec.extras[1][0].code, "shape-contradiction");
}

TEST(TosaServer, ShapeErrorsOfLongFunctionsComeWithTheirInference) {
  std::string text = "func.func @g(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {\n";
  for (int i = 0; i < 2100; ++i)
    text += "  %f" + std::to_string(i) +
            " = tosa.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf32>\n";
  text += "  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
          "(tensor<2x3xf32>) -> tensor<?x?xf32>\n"
          "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>\n"
          "  return %1 : tensor<3x5xf32>\n}\n";
  Recorder rec;
  TosaServer server(reparsing(syncOptions()), rec);
  server.addDocument("test:///l.mlir", "/nonexistent/l.mlir", 1, text);
  ASSERT_EQ(rec.published.size(), 1u); // not checked in the background
  EXPECT_TRUE(rec.extras[0].empty());
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover("test:///l.mlir", lsp::Position(2102, 9), std::move(cb));
  });
  ASSERT_TRUE(bool(h));
  ASSERT_EQ(rec.published.size(), 2u);
  EXPECT_EQ(rec.published[1]->version, 1);
  ASSERT_EQ(rec.extras[1].size(), 1u);
  EXPECT_EQ(rec.extras[1][0].code, "shape-contradiction");
  EXPECT_EQ(rec.extras[1][0].range.begin.line, 2103u); // 1-based
  // Known from now on: a second hover publishes nothing new.
  (void)await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover("test:///l.mlir", lsp::Position(2102, 9), std::move(cb));
  });
  EXPECT_EQ(rec.published.size(), 2u);
}

/// A server with a pool (not inline) and one document: `func.func @f`, an
/// abs chain of `n` ops (TestSupport absChain), longer than a hover waits
/// to infer.
struct BigFunctionServer {
  static constexpr int n = 2100;
  const std::string uri = "test:///big.mlir";
  Recorder rec;
  std::unique_ptr<TosaServer> server;
  BigFunctionServer() {
    TosaServer::Options o = reparsing(pooledOptions());
    server = std::make_unique<TosaServer>(o, rec);
    server->addDocument(uri, "/nonexistent/big.mlir", 1, absChain(n));
  }
  /// The hover's Markdown at 0-based (line, col), empty when none.
  std::string hoverAt(unsigned line, unsigned col) {
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server->hover(uri, lsp::Position(line, col), std::move(cb));
    });
    EXPECT_TRUE(bool(h));
    return h && h->has_value() ? (*h)->contents.value : std::string();
  }
};

TEST(TosaServer, BigFunctionsAreInferredInTheBackgroundNotWaitedFor) {
  BigFunctionServer big;
  // Answered at once (the value's type and origin), without waiting for
  // the inference of 2100 ops, which starts in the background.
  std::string first = big.hoverAt(1000, 3);
  EXPECT_NE(first.find("`%v999`"), std::string::npos) << first;
  EXPECT_EQ(first.find("tosa-infer-shapes"), std::string::npos) << first;
  big.server->waitIdle();
  std::string second = big.hoverAt(1000, 3);
  EXPECT_NE(second.find("**inferred** `tensor<3x2xf32>`"), std::string::npos)
      << second;
}

// A big function's background inference waits a moment and stops when the
// document changes first: it would hold a second parse of the function
// beside the edit's analysis, for a version nobody reads any more.
TEST(TosaServer, BackgroundInferenceOfAnEditedVersionStops) {
  BigFunctionServer big;
  const int n = BigFunctionServer::n;
  EXPECT_EQ(big.hoverAt(1000, 3).find("**inferred**"), std::string::npos);
  // An edit (a comment line at the end) before the inference started.
  std::vector<lsp::TextDocumentContentChangeEvent> change(1);
  change[0].range =
      lsp::Range(lsp::Position(n + 4, 0), lsp::Position(n + 4, 0));
  change[0].text = "// edited\n";
  ASSERT_FALSE(bool(big.server->changeDocument(big.uri, 2, change)));
  big.server->waitIdle();
  EXPECT_EQ(big.server->stats().inferencesCancelled, 1u);
  // The new version is inferred as usual.
  EXPECT_EQ(big.hoverAt(1000, 3).find("**inferred**"), std::string::npos);
  big.server->waitIdle();
  EXPECT_NE(big.hoverAt(1000, 3).find("**inferred** `tensor<3x2xf32>`"),
            std::string::npos);
  EXPECT_EQ(big.server->stats().inferencesCancelled, 1u);
}

/// `n` functions @f0... of an abs chain of 10 ops each.
static std::string manySmallFunctions(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string chain = absChain(10);
    chain.replace(chain.find("@f"), 2, "@f" + std::to_string(i));
    text += chain;
  }
  return text;
}

/// Hovers near the start, the middle and the end of `text` (made by
/// manySmallFunctions): each shows its chain's inferred type.
static void expectInferredAcross(TosaServer &server, const std::string &uri,
                                 const std::string &text) {
  unsigned lines = static_cast<unsigned>(llvm::count(text, '\n'));
  for (unsigned line : {5u, lines / 2, lines - 5}) {
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server.hover(uri, lsp::Position(line, 3), std::move(cb));
    });
    ASSERT_TRUE(h && h->has_value()) << line;
    EXPECT_NE((*h)->contents.value.find("**inferred** `tensor<3x2xf32>`"),
              std::string::npos)
        << (*h)->contents.value;
  }
}

/// Waits for the first publish.
/// The first publish: the analysis', or a big clean file's on MLIR's
/// verdict (which comes before the analysis ends).
struct FirstPublish : Recorder {
  std::condition_variable cv;
  void onDiagnostics(Scheduler::SnapshotPtr s,
                     const std::vector<Diagnostic> &extra) override {
    Recorder::onDiagnostics(std::move(s), extra);
    cv.notify_all();
  }
  void onCleanDiagnostics(const std::string &uri, int64_t version) override {
    Recorder::onCleanDiagnostics(uri, version);
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !published.empty() || !clean.empty(); });
  }
};

// Inference on the IR the analysis kept (the default): a hover right after
// the open, in the last of many functions, waits for that function, which
// its thread takes next, rather than parsing it again; the answer has its
// inferred type.
TEST(TosaServer, AHoverRightAfterTheOpenWaitsForTheKeptIRsInference) {
  FirstPublish rec;
  TosaServer::Options o = pooledOptions();
  ASSERT_TRUE(o.inferInAnalysis && o.inferAfterPublish);
  TosaServer server(o, rec);
  const std::string uri = "test:///many.mlir";
  std::string text = manySmallFunctions(400);
  server.addDocument(uri, "/nonexistent/many.mlir", 1, text);
  rec.wait();
  unsigned lines = static_cast<unsigned>(llvm::count(text, '\n'));
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover(uri, lsp::Position(lines - 5, 3), std::move(cb));
  });
  ASSERT_TRUE(h && h->has_value());
  EXPECT_NE((*h)->contents.value.find("**inferred** `tensor<3x2xf32>`"),
            std::string::npos)
      << (*h)->contents.value;
  EXPECT_EQ(server.stats().requestInferences, 0u);
  server.waitIdle();
}

/// A server on a pool of two threads with one document of `n` small
/// functions (manySmallFunctions), analysed and its background work done.
struct ManyFunctions {
  Recorder rec;
  TosaServer server;
  const std::string uri = "test:///many.mlir";
  const std::string text;
  explicit ManyFunctions(int n,
                         TosaServer::Options o = reparsing(pooledOptions()))
      : server(o, rec), text(manySmallFunctions(n)) {
    server.addDocument(uri, "/nonexistent/many.mlir", 1, text);
    server.waitIdle();
  }
};

// After the open every small function is inferred in the background: a
// hover anywhere finds its function known and does not wait.
TEST(TosaServer, EveryFunctionIsInferredInTheBackgroundAfterTheOpen) {
  ManyFunctions m(5);
  EXPECT_EQ(m.server.stats().requestInferences, 0u);
  expectInferredAcross(m.server, m.uri, m.text);
  EXPECT_EQ(m.server.stats().requestInferences, 0u); // all from the cache
}

// A hover in a function not inferred yet infers it on an inferrer made
// warm after the publish (dialects loaded, the pass built), not on one it
// makes itself (~5-8 ms more, once per pool thread). A file of one long
// function, whose inference no request waits for, gets none; the last
// close drops it.
TEST(TosaServer, RequestsInferOnAnInferrerMadeWarmAfterThePublish) {
  TosaServer::Options o = requestsInferOptions();
  ManyFunctions m(3, o);
  TosaServer &server = m.server;
  EXPECT_EQ(server.stats().warmInferrersMade, 1u);
  expectInferredAcross(server, m.uri, m.text);
  EXPECT_EQ(server.stats().requestInferences, 3u);
  EXPECT_EQ(server.stats().requestInferrersMade, 0u);

  server.removeDocument(m.uri);
  server.addDocument(m.uri, "/nonexistent/many.mlir", 2, m.text);
  server.waitIdle();
  EXPECT_EQ(server.stats().warmInferrersMade, 2u);

  Recorder rec2;
  TosaServer other(o, rec2);
  other.addDocument("test:///long.mlir", "/nonexistent/long.mlir", 1,
                    absChain(2100));
  other.waitIdle();
  EXPECT_EQ(other.stats().warmInferrersMade, 0u);
}

// A request that finds the warm inferrer lent to the background waits
// for it a while only (kWaitForLentWarm), then infers on a context of its
// own, dropped after; the warm one is still there for the next request.
TEST(TosaServer, ARequestDoesNotWaitLongForTheLentWarmInferrer) {
  ManyFunctions m(2, requestsInferOptions());
  TosaServer &server = m.server;
  ASSERT_EQ(server.stats().warmInferrersMade, 1u);
  auto hoverIn = [&](const char *fn) {
    size_t at = m.text.find("%v1 =", m.text.find(fn));
    int line = static_cast<int>(llvm::count(m.text.substr(0, at), '\n'));
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server.hover(m.uri, lsp::Position(line, 3), std::move(cb));
    });
    ASSERT_TRUE(h && h->has_value());
    EXPECT_NE((*h)->contents.value.find("**inferred**"), std::string::npos)
        << (*h)->contents.value;
  };
  {
    // Lent on a thread of its own (the thread that locks a mutex unlocks
    // it), for at most 3 s: a request that waited for it would still be
    // answered, later and on the warm inferrer.
    std::promise<void> isLent, answered;
    std::thread background([&] {
      std::shared_ptr<void> lent = server.lendWarmInferrerForTest();
      isLent.set_value();
      answered.get_future().wait_for(std::chrono::seconds(3));
    });
    isLent.get_future().wait();
    auto start = std::chrono::steady_clock::now();
    hoverIn("@f0(");
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    answered.set_value();
    background.join();
    EXPECT_LT(took, 2000) << "ms";
    EXPECT_EQ(server.stats().requestInferrersMade, 1u);
  }
  hoverIn("@f1(");
  EXPECT_EQ(server.stats().requestInferrersMade, 1u); // on the warm one
  EXPECT_EQ(server.stats().requestInferences, 2u);
  EXPECT_EQ(server.stats().warmInferrersMade, 1u);
}

// The warm inferrer's context keeps what each inference uniqued (a
// location per op): past Options::renewWarmInferrerLines it is dropped,
// and made again on the next publish.
TEST(TosaServer, TheWarmInferrerIsMadeAfreshAfterEnoughLines) {
  TosaServer::Options o = requestsInferOptions();
  o.renewWarmInferrerLines = 30; // a function of manySmallFunctions: 14
  ManyFunctions m(3, o);
  EXPECT_EQ(m.server.stats().warmInferrersMade, 1u);
  expectInferredAcross(m.server, m.uri, m.text); // 42 lines: dropped
  std::vector<lsp::TextDocumentContentChangeEvent> change(1);
  change[0].range = lsp::Range(lsp::Position(0, 0), lsp::Position(0, 0));
  change[0].text = "// a comment\n";
  ASSERT_FALSE(bool(m.server.changeDocument(m.uri, 2, change)));
  m.server.waitIdle();
  EXPECT_EQ(m.server.stats().warmInferrersMade, 2u);
  EXPECT_EQ(m.server.stats().requestInferrersMade, 0u);
}

// An edit's re-inference in the background runs on the warm request
// inferrer (no context of its own each edit); the open's many functions
// on a context of the background's own.
TEST(TosaServer, AnEditsBackgroundInferenceBorrowsTheWarmInferrer) {
  ManyFunctions m(8);
  TosaServer &server = m.server;
  const std::string &uri = m.uri, &text = m.text;
  EXPECT_EQ(server.stats().fillInferrersMade, 1u); // one thread below 64
  EXPECT_EQ(server.stats().functionsKnown, 8u);
  // One more op at the end of @f3's chain.
  size_t at = text.find("  return", text.find("@f3("));
  lsp::Position pos(static_cast<int>(llvm::count(text.substr(0, at), '\n')), 0);
  std::vector<lsp::TextDocumentContentChangeEvent> change(1);
  change[0].range = lsp::Range(pos, pos);
  change[0].text =
      "  %w = tosa.abs %v10 : (tensor<?x?xf32>) -> tensor<?x?xf32>\n";
  ASSERT_FALSE(bool(server.changeDocument(uri, 2, change)));
  server.waitIdle();
  EXPECT_EQ(server.stats().fillInferrersMade, 1u);
  EXPECT_EQ(server.stats().fillBorrows, 1u);
  EXPECT_EQ(server.stats().requestInferrersMade, 0u);
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover(uri, lsp::Position(pos.line, 3), std::move(cb));
  });
  ASSERT_TRUE(h && h->has_value());
  EXPECT_NE((*h)->contents.value.find("**inferred** `tensor<3x2xf32>`"),
            std::string::npos)
      << (*h)->contents.value;
  EXPECT_EQ(server.stats().requestInferences, 0u); // known from the background
}

// While requests come, the background's second thread pauses (a core left
// for the message loop: with both busy, its wake-up waited up to a
// scheduler tick) and the first goes on: every function becomes known
// though the requests never stop.
TEST(TosaServer, TheBackgroundPausesOneThreadForRequestsAndGoesOnWithTheOther) {
  TosaServer::Options o = reparsing(pooledOptions());
  Recorder rec;
  TosaServer server(o, rec);
  const std::string uri = "test:///many.mlir";
  const size_t functions = 200; // two background threads from 64 on
  server.addDocument(uri, "/nonexistent/many.mlir", 1,
                     manySmallFunctions(static_cast<int>(functions)));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(rec.mu);
      if (!rec.published.empty())
        break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  unsigned hovers = 0;
  while (server.stats().functionsKnown < functions &&
         std::chrono::steady_clock::now() < deadline) {
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server.hover(uri, lsp::Position(5, 3), std::move(cb));
    });
    ASSERT_TRUE(h && h->has_value());
    ++hovers;
  }
  EXPECT_EQ(server.stats().functionsKnown, functions) << hovers << " hovers";
  EXPECT_GT(server.stats().backgroundPauses, 0u);
}

// A version replaced by an edit is freed at once, though the background
// inference was started for it: it holds a version only while inferring
// one function (holding it while waiting kept every version of a burst of
// edits alive, and their item arrays could not be reused).
/// Whether the versions replaced by seven edits are all freed within
/// `window` of the last publish.
bool replacedVersionsFreedWithin(std::chrono::milliseconds window) {
  struct WeakRecorder : TosaServer::Callbacks {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::weak_ptr<const Snapshot>> published;
    void onDiagnostics(Scheduler::SnapshotPtr s,
                       const std::vector<Diagnostic> &) override {
      std::lock_guard<std::mutex> lock(mu);
      published.push_back(s);
      cv.notify_all();
    }
    void onError(const std::string &) override {}
    bool waitFor(size_t n) {
      std::unique_lock<std::mutex> lock(mu);
      return cv.wait_for(lock, std::chrono::seconds(30),
                         [&] { return published.size() >= n; });
    }
  } rec;
  TosaServer::Options o = pooledOptions();
  TosaServer server(o, rec);
  const std::string uri = "test:///w.mlir";
  server.addDocument(uri, "/nonexistent/w.mlir", 1, absChain(10));
  EXPECT_TRUE(rec.waitFor(1));
  // Edits, each after the last one's publish (a comment line more each).
  for (int v = 2; v <= 8; ++v) {
    std::vector<lsp::TextDocumentContentChangeEvent> change(1);
    change[0].range = lsp::Range(lsp::Position(14, 0), lsp::Position(14, 0));
    change[0].text = "// edited\n";
    EXPECT_FALSE(bool(server.changeDocument(uri, v, change)));
    EXPECT_TRUE(rec.waitFor(v));
  }
  // The versions replaced are freed at once, not when the background
  // inference comes round to them.
  std::vector<std::weak_ptr<const Snapshot>> old;
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    old.assign(rec.published.begin(), rec.published.end() - 1);
  }
  auto until = std::chrono::steady_clock::now() + window;
  auto allFreed = [&] {
    return llvm::all_of(old, [](const auto &w) { return w.expired(); });
  };
  while (!allFreed() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  bool freed = allFreed();
  server.waitIdle();
  return freed;
}

TEST(TosaServer, AReplacedVersionIsFreedThoughItsBackgroundInferenceStarted) {
  // One function's inference may hold a version: at nice 19 on a loaded
  // machine that can outlast the 50 ms. A version held while waiting is
  // held in every attempt; a starved one rarely three times running.
  bool freed = false;
  for (int attempt = 0; attempt < 3 && !freed; ++attempt)
    freed = replacedVersionsFreedWithin(std::chrono::milliseconds(50));
  EXPECT_TRUE(freed);
}

/// Six small functions, each out of a screen's reach of the others
/// (124 lines apart), @fI's argument `tensor<(I+2)x3xf32>`.
std::string sixFunctions() {
  std::string text;
  for (int i = 0; i < 6; ++i) {
    std::string n = std::to_string(i + 2);
    text += "func.func @f" + std::to_string(i) + "(%a: tensor<" + n +
            "x3xf32>) -> tensor<?x?xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<" +
            n +
            "x3xf32>) -> tensor<?x?xf32>\n  return %0 : tensor<?x?xf32>\n}\n";
    for (int k = 0; k < 120; ++k)
      text += "// filler\n";
  }
  return text;
}

/// A server that infers only what requests ask for, with sixFunctions().
struct RequestInference {
  Recorder rec;
  std::unique_ptr<TosaServer> server;
  const std::string uri = "test:///m.mlir";
  RequestInference() {
    TosaServer::Options o = reparsing(syncOptions());
    o.backgroundInference = false;
    server = std::make_unique<TosaServer>(o, rec);
    server->addDocument(uri, "/nonexistent/m.mlir", 1, sixFunctions());
  }
  /// Hovers @fI's abs, `shift` lines below where sixFunctions() has it.
  void hoverAt(int i, unsigned shift = 0) {
    unsigned line = static_cast<unsigned>(i * 124 + 1) + shift;
    auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
      server->hover(uri, lsp::Position(line, 9), std::move(cb));
    });
    EXPECT_TRUE(bool(h) && h->has_value());
    std::string md = h && h->has_value() ? (*h)->contents.value : "";
    EXPECT_NE(
        md.find("**inferred** `tensor<" + std::to_string(i + 2) + "x3xf32>`"),
        std::string::npos)
        << i << ": " << md;
  }
  unsigned inferences() { return server->stats().requestInferences; }
};

// A hover infers its own function only (the background does the rest):
// each function once, and hovering it again infers nothing.
// A unary op on a value the function refines: the hover's headline says
// the propagated shape (as the inlay hint does), not the `?x?` the
// broadcast rule gives on the declared operand alone.
TEST(TosaServer, HoverHeadlineIsThePropagatedShape) {
  Recorder rec;
  auto server = std::make_unique<TosaServer>(pooledOptions(), rec);
  server->addDocument(
      "test:///u.mlir", "/nonexistent/u.mlir", 1,
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x?xf32>\n"
      "  %1 = tosa.exp %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
      "  return %1 : tensor<?x?xf32>\n}\n");
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server->hover("test:///u.mlir", lsp::Position(2, 10), std::move(cb));
  });
  ASSERT_TRUE(bool(h));
  ASSERT_TRUE(h->has_value());
  const std::string &md = (*h)->contents.value;
  EXPECT_EQ(md.find("**Inferred** `2x3` vs **declared** `?x?`"), 0u) << md;
  EXPECT_NE(md.find("from the declared operand types alone: `?x?`"),
            std::string::npos)
      << md;
}

TEST(TosaServer, AHoverInfersItsFunctionOnceAndKeepsIt) {
  RequestInference r;
  for (int i = 0; i < 6; ++i) {
    r.hoverAt(i);
    EXPECT_EQ(r.inferences(), unsigned(i + 1));
  }
  for (int i = 0; i < 6; ++i)
    r.hoverAt(i);
  EXPECT_EQ(r.inferences(), 6u);
}

// An edit re-infers only the function it changed; the functions it moved
// are found at their new lines from what was inferred before.
TEST(TosaServer, AnEditReinfersOnlyTheFunctionItChanged) {
  RequestInference r;
  for (int i = 0; i < 6; ++i)
    r.hoverAt(i);
  ASSERT_EQ(r.inferences(), 6u);
  // Two lines more in @f1: @f2..@f5 move down by two.
  std::vector<lsp::TextDocumentContentChangeEvent> change(1);
  change[0].range = lsp::Range(lsp::Position(126, 0), lsp::Position(126, 0));
  change[0].text = "  %x = tosa.abs %a : (tensor<3x3xf32>) -> "
                   "tensor<?x?xf32>\n  %y = tosa.abs %x : (tensor<?x?xf32>) "
                   "-> tensor<?x?xf32>\n";
  ASSERT_FALSE(bool(r.server->changeDocument(r.uri, 2, change)));
  r.hoverAt(0);
  EXPECT_EQ(r.inferences(), 6u);
  r.hoverAt(1, 2); // its abs is now two lines down
  EXPECT_EQ(r.inferences(), 7u);
  for (int i = 2; i < 6; ++i)
    r.hoverAt(i, 2);
  EXPECT_EQ(r.inferences(), 7u);
  // The inlay hint of a moved function sits on its new line.
  auto hints = await<std::vector<lsp::InlayHint>>([&](auto cb) {
    r.server->inlayHints(r.uri,
                         lsp::Range(lsp::Position(4 * 124 + 2, 0),
                                    lsp::Position(4 * 124 + 4, 0)),
                         std::move(cb));
  });
  ASSERT_TRUE(bool(hints));
  ASSERT_FALSE(hints->empty());
  EXPECT_EQ(hints->back().position.line, 4 * 124 + 3);
  EXPECT_EQ(hints->back().label, " inferred: 6x3");
}

} // namespace
