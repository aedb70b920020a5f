//===- TosaServerTest.cpp - the feature layer, without JSON-RPC -----------===//
//
// TosaServer is driven as an editor would (open, change, ask), with plain
// data in and out; no JSON messages are written or parsed.
//
//===----------------------------------------------------------------------===//

#include "TosaServer.h"
#include "ExpectedChecks.h"

#include "Choices.h"
#include "TestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <thread>

using namespace tosa_lsp;
namespace lsp = llvm::lsp;

namespace {

// `%0 = tosa.abs` declared 4x3 where 1x3 is inferred: one error, one fix.
const char *kWrongResult =
    "func.func @f(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {\n"
    "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
    "  return %0 : tensor<4x3xf32>\n}\n";
// Dynamic operands: informational findings only (refinable result,
// runtime check, dynamic-to-static).
const char *kDynamic =
    "func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> "
    "tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n"
    "func.func @h(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<1xf32>, tensor<3xf32>) -> "
    "tensor<?xf32>\n"
    "  return %0 : tensor<?xf32>\n}\n";

struct Recorder : TosaServer::Callbacks {
  std::mutex mu;
  std::vector<Scheduler::SnapshotPtr> published;
  std::vector<std::vector<Diagnostic>> extras; // one per publish
  std::vector<std::string> errors;
  void onDiagnostics(Scheduler::SnapshotPtr s,
                     const std::vector<Diagnostic> &extra) override {
    std::lock_guard<std::mutex> lock(mu);
    published.push_back(std::move(s));
    extras.push_back(extra);
  }
  void onError(const std::string &message) override {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(message);
  }
  std::vector<std::string> codes() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    if (!published.empty())
      for (const Diagnostic &d : published.back()->analysis.diagnostics)
        out.push_back(d.code);
    return out;
  }
};

TosaServer::Options syncOptions() {
  TosaServer::Options o;
  o.sync = true;
  return o;
}

/// Work on a pool of two threads, analysed as soon as it changes.
TosaServer::Options pooledOptions() {
  TosaServer::Options o;
  o.debounce = std::chrono::milliseconds(0);
  o.workers = 2;
  return o;
}

/// pooledOptions without the background inference: every hover in a
/// function not inferred yet infers it.
TosaServer::Options requestsInferOptions() {
  TosaServer::Options o = pooledOptions();
  o.backgroundInference = false;
  return o;
}

/// Calls `fn(callback)` and returns what the callback got (sync or async).
template <typename T, typename Fn> llvm::Expected<T> await(Fn fn) {
  auto promise = std::make_shared<std::promise<llvm::Expected<T>>>();
  std::future<llvm::Expected<T>> future = promise->get_future();
  fn([promise](llvm::Expected<T> r) { promise->set_value(std::move(r)); });
  EXPECT_EQ(future.wait_for(std::chrono::seconds(60)),
            std::future_status::ready);
  return future.get();
}

std::string errorText(llvm::Error e) {
  std::string out;
  llvm::handleAllErrors(
      std::move(e), [&](const lsp::LSPError &l) { out = l.message; },
      [&](const llvm::ErrorInfoBase &b) { out = b.message(); });
  return out;
}

/// A directory with a .tosa-lsp.json, removed afterwards.
struct Project {
  llvm::SmallString<128> dir;
  Project() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tosa-server-test", dir));
  }
  ~Project() { llvm::sys::fs::remove_directories(dir); }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeConfig(const std::string &text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(file(".tosa-lsp.json"), ec);
    os << text;
  }
};

/// The actions that repair something: upstream's "Add expected-*
/// diagnostic checks", offered on every MLIR diagnostic, left out.
size_t repairs(const CodeActions &a) {
  return std::count_if(
      a.items.begin(), a.items.end(),
      [](const CodeActionItem &i) { return i.title != kExpectedChecksTitle; });
}
void dropExpectedChecks(llvm::Expected<CodeActions> &a) {
  if (a)
    llvm::erase_if(a->items, [](const CodeActionItem &i) {
      return i.title == kExpectedChecksTitle;
    });
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

//===----------------------------------------------------------------------===//
// Documents and features
//===----------------------------------------------------------------------===//

TEST(TosaServer, OpenPublishesAndFeaturesAnswerFromTheSnapshot) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  ASSERT_EQ(rec.published.size(), 1u);
  EXPECT_EQ(rec.published[0]->version, 1);
  EXPECT_FALSE(rec.published[0]->analysis.diagnostics.empty());

  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover("test:///a.mlir", lsp::Position(1, 9), std::move(cb));
  });
  ASSERT_TRUE(bool(h));
  ASSERT_TRUE(h->has_value());
  EXPECT_NE((*h)->contents.value.find("tosa.abs"), std::string::npos)
      << (*h)->contents.value;

  auto symbols = await<std::vector<lsp::DocumentSymbol>>([&](auto cb) {
    server.documentSymbols("test:///a.mlir", std::move(cb));
  });
  ASSERT_TRUE(bool(symbols));
  EXPECT_FALSE(symbols->empty());

  auto refs = await<std::vector<lsp::Range>>([&](auto cb) {
    server.references("test:///a.mlir", lsp::Position(1, 3), true,
                      std::move(cb));
  });
  ASSERT_TRUE(bool(refs));
  EXPECT_EQ(refs->size(), 2u); // %0's definition and its use in return
}

TEST(TosaServer, UnknownDocumentIsAnError) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover("test:///none.mlir", lsp::Position(0, 0), std::move(cb));
  });
  ASSERT_FALSE(bool(h));
  EXPECT_EQ(errorText(h.takeError()),
            "unknown document: test:///none.mlir (not opened)");
}

TEST(TosaServer, ChangesApplyInOrderAndBadRangesCloseTheDocument) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  lsp::TextDocumentContentChangeEvent fix;
  fix.range = lsp::Range(lsp::Position(0, 44), lsp::Position(0, 45));
  fix.text = "1";
  EXPECT_FALSE(bool(server.changeDocument("test:///a.mlir", 2, {fix})));
  EXPECT_EQ(server.snapshot("test:///a.mlir")->version, 2);
  EXPECT_EQ(server.snapshot("test:///a.mlir")->text.substr(44, 1), "1");

  lsp::TextDocumentContentChangeEvent bad;
  bad.range = lsp::Range(lsp::Position(99, 0), lsp::Position(99, 1));
  bad.text = "x";
  llvm::Error err = server.changeDocument("test:///a.mlir", 3, {bad});
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(errorText(std::move(err)),
            "change range 99:0-99:1 is outside the document");
  // The texts may differ from now on: nothing answers from ours.
  EXPECT_EQ(server.snapshot("test:///a.mlir"), nullptr);
  EXPECT_EQ(errorText(server.changeDocument("test:///a.mlir", 4, {fix})),
            "didChange for a document that is not open: test:///a.mlir");
}

TEST(TosaServer, SeverityPolicy) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.setSettings({{"info", {{"runtimeChecks", true}}}});
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kDynamic);
  std::map<std::string, lsp::DiagnosticSeverity> by;
  for (const Diagnostic &d : rec.published.back()->analysis.diagnostics)
    by[d.code] = TosaServer::severity(d);
  EXPECT_EQ(by["dynamic-to-static"], lsp::DiagnosticSeverity::Information);
  EXPECT_EQ(by["runtime-broadcast-check"], lsp::DiagnosticSeverity::Hint);
  EXPECT_EQ(by["refinable-result"], lsp::DiagnosticSeverity::Hint);
  Diagnostic error;
  error.severity = Severity::Error;
  EXPECT_EQ(TosaServer::severity(error), lsp::DiagnosticSeverity::Error);
}

//===----------------------------------------------------------------------===//
// Code actions and the validation cache
//===----------------------------------------------------------------------===//

TEST(TosaServer, CodeActionsQuickFixFirstThenPreviewAndCompile) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  auto ask = [&](std::vector<std::string> only) {
    auto a = await<CodeActions>([&](auto cb) {
      server.codeActions("test:///a.mlir",
                         lsp::Range(lsp::Position(1, 0), lsp::Position(1, 10)),
                         only, std::move(cb));
    });
    dropExpectedChecks(a);
    return a;
  };
  // With an error in @f: its fix, but no preview or compile (both fail).
  auto actions = ask({});
  ASSERT_TRUE(bool(actions));
  ASSERT_EQ(actions->items.size(), 1u);
  EXPECT_EQ(actions->items[0].kind, "quickfix");
  ASSERT_NE(actions->items[0].diagnostic, nullptr);
  ASSERT_FALSE(actions->items[0].edits.empty());
  auto onlyFixes = ask({"quickfix"});
  ASSERT_TRUE(bool(onlyFixes));
  ASSERT_EQ(onlyFixes->items.size(), 1u);

  // The fix applied: the preview and compile, and no fix.
  std::vector<lsp::TextDocumentContentChangeEvent> changes;
  for (const lsp::TextEdit &e : actions->items[0].edits) {
    lsp::TextDocumentContentChangeEvent c;
    c.range = e.range;
    c.text = e.newText;
    changes.insert(changes.begin(), c); // last edit first: ranges hold
  }
  ASSERT_FALSE(bool(server.changeDocument("test:///a.mlir", 2, changes)));
  auto fixed = ask({});
  ASSERT_TRUE(bool(fixed));
  ASSERT_EQ(fixed->items.size(), 2u);
  EXPECT_EQ(fixed->items[0].command, "tosa.previewLowering");
  EXPECT_EQ(fixed->items[0].function, "f");
  EXPECT_EQ(fixed->items[1].command, "tosa.compile");
  EXPECT_EQ(fixed->items[1].emit, "shared");
}

// Two pre-MLIR-22 ops: each has its own fix, and migrating the whole file
// is offered as a source action anywhere and as a quick fix on each old
// form (VS Code keeps source actions out of its lightbulb), for review.
const char *kOldForms =
    "func.func @relu6(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int "
    "= 0 : i64, max_int = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n"
    "func.func @mul_shift(%a: tensor<4xi32>, %b: tensor<4xi32>) -> "
    "tensor<4xi32> {\n"
    "  %0 = tosa.mul %a, %b {shift = 1 : i8} : (tensor<4xi32>, "
    "tensor<4xi32>) -> tensor<4xi32>\n"
    "  return %0 : tensor<4xi32>\n}\n";

TEST(TosaServer, MigratingTheFileIsASourceActionAndAQuickFixOnOldForms) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///o.mlir", "/nonexistent/o.mlir", 3, kOldForms);
  auto ask = [&](unsigned line, std::vector<std::string> only) {
    auto a = await<CodeActions>([&](auto cb) {
      server.codeActions(
          "test:///o.mlir",
          lsp::Range(lsp::Position(line, 7), lsp::Position(line, 7)), only,
          std::move(cb));
    });
    dropExpectedChecks(a);
    return a;
  };
  auto onClamp = ask(1, {"quickfix"});
  ASSERT_TRUE(bool(onClamp));
  ASSERT_EQ(onClamp->items.size(), 2u);
  EXPECT_EQ(onClamp->items[0].kind, "quickfix");
  EXPECT_FALSE(onClamp->items[0].review);
  ASSERT_NE(onClamp->items[0].diagnostic, nullptr);
  const CodeActionItem &file = onClamp->items[1];
  EXPECT_EQ(file.kind, "quickfix");
  EXPECT_EQ(file.title, "Migrate this file to MLIR 22 TOSA (2 ops)");
  EXPECT_TRUE(file.review);
  EXPECT_EQ(file.version, 3);
  EXPECT_EQ(file.diagnostic, nullptr);
  EXPECT_GE(file.edits.size(), 2u);
  // On a line without an old form: the source action only.
  auto onReturn = ask(2, {});
  ASSERT_TRUE(bool(onReturn));
  std::vector<std::string> kinds;
  for (const CodeActionItem &a : onReturn->items)
    kinds.push_back(a.kind);
  EXPECT_EQ(kinds, std::vector<std::string>{"source.migrate"});
  EXPECT_TRUE(onReturn->items[0].review);
  auto onlyMigrate = ask(2, {"source.migrate"});
  ASSERT_TRUE(bool(onlyMigrate));
  EXPECT_EQ(onlyMigrate->items.size(), 1u);
  auto onlyRefine = ask(2, {"source.refineShapes"});
  ASSERT_TRUE(bool(onlyRefine));
  EXPECT_TRUE(onlyRefine->items.empty());
}

// Ops of a dialect MLIR lacks parse leniently, but nothing lowers them:
// no preview or compile for their function, and the note is not published
// (hover says it).
TEST(TosaServer, NoLoweringOffersForFunctionsWithLenientOps) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument(
      "test:///l.mlir", "/nonexistent/l.mlir", 1,
      "func.func @f() -> tensor<4xi32> {\n"
      "  %0 = util.unfoldable_constant dense<1> : tensor<4xi32>\n"
      "  return %0 : tensor<4xi32>\n}\n"
      "func.func @g(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  return %a : tensor<4xi32>\n}\n");
  ASSERT_EQ(rec.published.size(), 1u);
  std::vector<std::string> codes = rec.codes();
  EXPECT_TRUE(contains(codes, "lenient-parse"));
  auto ask = [&](unsigned line) {
    return await<CodeActions>([&](auto cb) {
      server.codeActions(
          "test:///l.mlir",
          lsp::Range(lsp::Position(line, 3), lsp::Position(line, 3)), {},
          std::move(cb));
    });
  };
  auto inF = ask(1);
  ASSERT_TRUE(bool(inF));
  EXPECT_TRUE(inF->items.empty());
  auto inG = ask(5);
  ASSERT_TRUE(bool(inG));
  EXPECT_EQ(inG->items.size(), 2u); // preview and compile
  auto h = await<std::optional<lsp::Hover>>([&](auto cb) {
    server.hover("test:///l.mlir", lsp::Position(1, 10), std::move(cb));
  });
  ASSERT_TRUE(bool(h));
  ASSERT_TRUE(h->has_value());
  EXPECT_NE((*h)->contents.value.find("parsed leniently (dialect `util`"),
            std::string::npos)
      << (*h)->contents.value;
}

TEST(TosaServer, FixVerdictsAreCachedPerDocumentVersion) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  auto ask = [&] {
    auto a = await<CodeActions>([&](auto cb) {
      server.codeActions("test:///a.mlir",
                         lsp::Range(lsp::Position(1, 0), lsp::Position(1, 10)),
                         {"quickfix"}, std::move(cb));
    });
    EXPECT_TRUE(bool(a));
    return a ? repairs(*a) : 0;
  };
  EXPECT_EQ(ask(), 1u);
  EXPECT_EQ(server.stats().fixValidations, 1u);
  EXPECT_EQ(ask(), 1u);
  EXPECT_EQ(server.stats().fixValidations, 1u); // cached

  // A new version (same text) is validated afresh.
  lsp::TextDocumentContentChangeEvent same;
  same.text = kWrongResult;
  ASSERT_FALSE(bool(server.changeDocument("test:///a.mlir", 2, {same})));
  EXPECT_EQ(ask(), 1u);
  EXPECT_EQ(server.stats().fixValidations, 2u);
}

TEST(TosaServer, CodeActionsRunConcurrentlyOnThePool) {
  Recorder rec;
  TosaServer::Options o = pooledOptions();
  auto server = std::make_unique<TosaServer>(o, rec);
  for (int i = 0; i < 4; ++i)
    server->addDocument("test:///" + std::to_string(i) + ".mlir",
                        "/nonexistent/a.mlir", 1, kWrongResult);
  std::vector<std::future<size_t>> results;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 4; ++i) {
      auto promise = std::make_shared<std::promise<size_t>>();
      results.push_back(promise->get_future());
      server->codeActions("test:///" + std::to_string(i) + ".mlir",
                          lsp::Range(lsp::Position(1, 0), lsp::Position(1, 10)),
                          {"quickfix"},
                          [promise](llvm::Expected<CodeActions> a) {
                            promise->set_value(a ? repairs(*a) : 99);
                            if (!a)
                              llvm::consumeError(a.takeError());
                          });
    }
  for (auto &f : results) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    EXPECT_EQ(f.get(), 1u);
  }
  server->waitIdle();
  // Four documents validated once each; the second round hits the cache
  // unless it raced the first (then at most one extra per document).
  unsigned n = server->stats().fixValidations;
  EXPECT_GE(n, 4u);
  EXPECT_LE(n, 8u);
  server.reset(); // joins the pool and the scheduler
}

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

// @g's abs is declared 3x5 where propagation gives 3x2: mlir-opt-22
// accepts the file, its --tosa-infer-shapes output fails to verify.
const char *kContradiction =
    "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n"
    "func.func @g(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {\n"
    "  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
    "(tensor<2x3xf32>) -> tensor<?x?xf32>\n"
    "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>\n"
    "  return %1 : tensor<3x5xf32>\n"
    "}\n";

TEST(TosaServer, ShapeContradictionsArePublishedAfterTheAnalysis) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
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

// A read request never publishes: a hover that infers a function with a
// shape error keeps it for the next publish (here the background
// inference, which publishes, is off). It used to re-publish at once.
TEST(TosaServer, AHoverNeverPublishes) {
  Recorder rec;
  TosaServer::Options o = syncOptions();
  o.backgroundInference = false;
  TosaServer server(o, rec);
  const std::string uri = "test:///c.mlir";
  server.addDocument(uri, "/nonexistent/c.mlir", 1, kContradiction);
  ASSERT_EQ(rec.published.size(), 1u);
  auto h = await<std::optional<lsp::Hover>>(
      [&](auto cb) { server.hover(uri, lsp::Position(6, 9), std::move(cb)); });
  ASSERT_TRUE(h && h->has_value());
  EXPECT_NE((*h)->contents.value.find("tosa-infer-shapes"), std::string::npos)
      << (*h)->contents.value;
  EXPECT_EQ(server.stats().requestInferences, 1u);
  auto hints = await<std::vector<lsp::InlayHint>>([&](auto cb) {
    server.inlayHints(uri, lsp::Range(lsp::Position(0, 0), lsp::Position(9, 0)),
                      std::move(cb));
  });
  ASSERT_TRUE(bool(hints));
  auto actions = await<CodeActions>([&](auto cb) {
    server.codeActions(uri,
                       lsp::Range(lsp::Position(6, 9), lsp::Position(6, 9)), {},
                       std::move(cb));
  });
  ASSERT_TRUE(bool(actions));
  EXPECT_EQ(rec.published.size(), 1u);
  // The next version's publish carries the error the hover found (an
  // edit in @f, which moves @g down a line).
  lsp::TextDocumentContentChangeEvent change;
  change.range = lsp::Range(lsp::Position(2, 0), lsp::Position(2, 0));
  change.text = "  %1 = tosa.abs %0 : (tensor<2xf32>) -> tensor<2xf32>\n";
  ASSERT_FALSE(bool(server.changeDocument(uri, 2, {change})));
  ASSERT_EQ(rec.published.size(), 2u);
  ASSERT_EQ(rec.extras[1].size(), 1u);
  EXPECT_EQ(rec.extras[1][0].code, "shape-contradiction");
  EXPECT_EQ(rec.extras[1][0].range.begin.line, 8u);
}

// Closing a document forgets everything about it: opened again under the
// same URI and version, nothing of the first text answers or is reused.
TEST(TosaServer, ClosingForgetsEverythingAboutTheDocument) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  const std::string uri = "test:///a.mlir";
  auto preview = [&] {
    PreviewRequest req;
    req.uri = uri;
    req.function = "f";
    req.writeFile = true;
    auto r = await<PreviewResult>(
        [&](auto cb) { server.previewLowering(req, std::move(cb)); });
    EXPECT_TRUE(bool(r));
    return r ? r->file : std::string();
  };
  auto fixes = [&] {
    auto a = await<CodeActions>([&](auto cb) {
      server.codeActions(uri,
                         lsp::Range(lsp::Position(1, 0), lsp::Position(1, 10)),
                         {"quickfix"}, std::move(cb));
    });
    return a ? repairs(*a) : 0;
  };
  server.addDocument(uri, "/nonexistent/a.mlir", 1, kWrongResult);
  EXPECT_EQ(fixes(), 1u);
  EXPECT_EQ(server.stats().fixValidations, 1u);
  EXPECT_GT(server.stats().functionsKnown, 0u);
  server.removeDocument(uri);
  EXPECT_EQ(server.snapshot(uri), nullptr);
  EXPECT_EQ(server.stats().functionsKnown, 0u);
  auto h = await<std::optional<lsp::Hover>>(
      [&](auto cb) { server.hover(uri, lsp::Position(1, 9), std::move(cb)); });
  ASSERT_FALSE(bool(h));
  EXPECT_EQ(errorText(h.takeError()),
            "unknown document: test:///a.mlir (not opened)");

  // The same version again, another text: its own verdicts and files.
  server.addDocument(uri, "/nonexistent/a.mlir", 1, kDynamic);
  std::string first = preview();
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(preview(), first); // one file per function while open
  server.removeDocument(uri);
  server.addDocument(uri, "/nonexistent/a.mlir", 1, kWrongResult);
  EXPECT_EQ(fixes(), 1u);
  EXPECT_EQ(server.stats().fixValidations, 2u);
  server.removeDocument(uri);
  server.addDocument(uri, "/nonexistent/a.mlir", 1, kDynamic);
  EXPECT_NE(preview(), first);
}

// A function over the background checks' limit is checked when a hover
// infers it: the error then comes in a publish of its own.
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
  TosaServer server(syncOptions(), rec);
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
    TosaServer::Options o = pooledOptions();
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

/// A server on a pool of two threads with one document of `n` small
/// functions (manySmallFunctions), analysed and its background work done.
struct ManyFunctions {
  Recorder rec;
  TosaServer server;
  const std::string uri = "test:///many.mlir";
  const std::string text;
  explicit ManyFunctions(int n, TosaServer::Options o = pooledOptions())
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
  TosaServer::Options o = pooledOptions();
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
TEST(TosaServer, AReplacedVersionIsFreedThoughItsBackgroundInferenceStarted) {
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
  ASSERT_TRUE(rec.waitFor(1));
  // Edits, each after the last one's publish (a comment line more each).
  for (int v = 2; v <= 8; ++v) {
    std::vector<lsp::TextDocumentContentChangeEvent> change(1);
    change[0].range = lsp::Range(lsp::Position(14, 0), lsp::Position(14, 0));
    change[0].text = "// edited\n";
    ASSERT_FALSE(bool(server.changeDocument(uri, v, change)));
    ASSERT_TRUE(rec.waitFor(v));
  }
  // The versions replaced are freed at once, not when the background
  // inference comes round to them.
  std::vector<std::weak_ptr<const Snapshot>> old;
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    old.assign(rec.published.begin(), rec.published.end() - 1);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  auto allFreed = [&] {
    return llvm::all_of(old, [](const auto &w) { return w.expired(); });
  };
  while (!allFreed() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(allFreed());
  server.waitIdle();
}

//===----------------------------------------------------------------------===//
// Configuration: server defaults, project file, editor settings
//===----------------------------------------------------------------------===//

TEST(TosaServer, ProjectFileAppliesUnderPartialEditorSettings) {
  Project p;
  p.writeConfig(R"({"info": {"refinable": false, "runtimeChecks": false}})");
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  // A client that sends only what the user set: hints, nothing on info.
  server.setSettings({{"hints", {{"inferredShapes", false}}}});
  server.addDocument("file:///m.mlir", p.file("m.mlir"), 1, kDynamic);
  std::vector<std::string> codes = rec.codes();
  EXPECT_FALSE(contains(codes, "refinable-result"));
  EXPECT_FALSE(contains(codes, "runtime-broadcast-check"));
  EXPECT_TRUE(contains(codes, "dynamic-to-static"));
  Config c = server.configFor(p.file("m.mlir"));
  EXPECT_FALSE(c.hints.inferredShapes); // the editor's
  EXPECT_FALSE(c.info.refinable);       // the project's
  EXPECT_TRUE(c.hints.runtimeChecks);   // the server's default
}

TEST(TosaServer, NullSettingsAreUnsetNotErrors) {
  Project p;
  p.writeConfig(R"({"info": {"refinable": false}})");
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.setSettings(
      {{"tosaLsp",
        {{"info", {{"refinable", nullptr}, {"dynamicToStatic", false}}},
         {"compile", nullptr}}}});
  EXPECT_TRUE(rec.errors.empty()) << rec.errors[0];
  Config c = server.configFor(p.file("m.mlir"));
  EXPECT_FALSE(c.info.refinable);       // the project's, not reset
  EXPECT_FALSE(c.info.dynamicToStatic); // the editor's
}

TEST(TosaServer, BadSettingsAreReportedOnceAndIgnored) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.setSettings({{"info", {{"dynamicToStatic", "no"}}}});
  server.setSettings({{"info", {{"dynamicToStatic", "no"}}}});
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_EQ(rec.errors[0],
            "editor settings: info.dynamicToStatic must be true or false");
  EXPECT_TRUE(server.configFor("/nonexistent/m.mlir").info.dynamicToStatic);
}

TEST(TosaServer, ProjectFileIsReadOnceNotOnEveryEdit) {
  Project p;
  p.writeConfig(R"({"info": {"refinable": false}})");
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("file:///m.mlir", p.file("m.mlir"), 1, kDynamic);
  for (int v = 2; v < 12; ++v) {
    lsp::TextDocumentContentChangeEvent all;
    all.text = kDynamic;
    ASSERT_FALSE(bool(server.changeDocument("file:///m.mlir", v, {all})));
  }
  EXPECT_EQ(server.stats().configLoads, 1u);

  // A changed file is noticed (size and mtime) without being told...
  p.writeConfig(R"({"info": {"refinable": true, "runtimeChecks": false}})");
  lsp::TextDocumentContentChangeEvent all;
  all.text = kDynamic;
  ASSERT_FALSE(bool(server.changeDocument("file:///m.mlir", 20, {all})));
  EXPECT_EQ(server.stats().configLoads, 2u);
  EXPECT_TRUE(contains(rec.codes(), "refinable-result"));
  EXPECT_FALSE(contains(rec.codes(), "runtime-broadcast-check"));

  // ...and being told re-analyses at once.
  p.writeConfig(R"({"info": {"refinable": false, "runtimeChecks": true}})");
  server.configFilesChanged();
  EXPECT_FALSE(contains(rec.codes(), "refinable-result"));
  EXPECT_TRUE(contains(rec.codes(), "runtime-broadcast-check"));
}

TEST(TosaServer, InvalidProjectFileReportedOncePerVersion) {
  Project p;
  p.writeConfig(R"({"info": {"refinable": 3}})");
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("file:///m.mlir", p.file("m.mlir"), 1, kDynamic);
  lsp::TextDocumentContentChangeEvent all;
  all.text = kDynamic;
  ASSERT_FALSE(bool(server.changeDocument("file:///m.mlir", 2, {all})));
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_NE(rec.errors[0].find("info.refinable must be true or false"),
            std::string::npos);
  EXPECT_TRUE(contains(rec.codes(), "refinable-result")); // defaults

  // Fixed, then broken the same way again: reported again.
  p.writeConfig(R"({"info": {"refinable": true}})");
  ASSERT_FALSE(bool(server.changeDocument("file:///m.mlir", 3, {all})));
  p.writeConfig(R"({"info": {"refinable": 3}})");
  server.configFilesChanged();
  EXPECT_EQ(rec.errors.size(), 2u);
}

//===----------------------------------------------------------------------===//
// Preview and compile requests
//===----------------------------------------------------------------------===//

TEST(TosaServer, PreviewByPositionAndChecksNames) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kDynamic);
  PreviewRequest req;
  req.uri = "test:///a.mlir";
  req.position = lsp::Position(1, 4);
  auto r = await<PreviewResult>(
      [&](auto cb) { server.previewLowering(req, std::move(cb)); });
  ASSERT_TRUE(bool(r)) << errorText(r.takeError());
  EXPECT_NE(r->text.find("linalg.generic"), std::string::npos) << r->text;
  EXPECT_FALSE(r->mappings.empty());
  EXPECT_TRUE(r->file.empty());

  req.stage = "asm";
  auto bad = await<PreviewResult>(
      [&](auto cb) { server.previewLowering(req, std::move(cb)); });
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(errorText(bad.takeError()),
            "unknown stage 'asm' (expected linalg, vector, loops, llvm)");

  req.stage = "linalg";
  req.position = lsp::Position(40, 0);
  auto nowhere = await<PreviewResult>(
      [&](auto cb) { server.previewLowering(req, std::move(cb)); });
  ASSERT_FALSE(bool(nowhere));
  EXPECT_EQ(errorText(nowhere.takeError()), "no function at this position");
}

TEST(TosaServer, CompileChecksEmitAndModeAgainstTheTable) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kDynamic);
  auto run = [&](CompileRequest req) {
    return await<CompileOutputs>([&](auto cb) {
      server.compile(req, [](const CompileProgress &) {}, std::move(cb));
    });
  };
  CompileRequest req;
  req.uri = "test:///a.mlir";
  req.emit = "exe";
  auto r = run(req);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(errorText(r.takeError()),
            "unknown emit kind 'exe' (expected shared, obj, asm, llvm-ir, "
            "mlir-llvm)");
  req.emit = "obj";
  req.mode = "fastest";
  r = run(req);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(errorText(r.takeError()),
            "unknown mode 'fastest' (expected fast, upstream, safe, "
            "versioned)");
  req.uri = "test:///none.mlir";
  r = run(req);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(errorText(r.takeError()),
            "unknown document: test:///none.mlir (not opened)");
  // Every emit kind the table lists is one parseEmit knows (checked at
  // start-up too); the table is what the server advertises.
  EXPECT_EQ(choices().emits.size(), 5u);
  EXPECT_EQ(choices().stages,
            (std::vector<std::string>{"linalg", "vector", "loops", "llvm"}));
}

} // namespace

/// Six small functions, each out of a screen's reach of the others
/// (124 lines apart), @fI's argument `tensor<(I+2)x3xf32>`.
static std::string sixFunctions() {
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
    TosaServer::Options o = syncOptions();
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

namespace {

/// After the last close each pool thread drops its validator and shape
/// inferrer and gives back its heap; the close waits for that (bounded),
/// so that the main thread's collection comes after it: collected before,
/// a 50k-line many-function file kept ~35 MiB resident after the close.
TEST(TosaServer, TheLastCloseWaitsForThePoolToDropItsContexts) {
  Recorder rec;
  TosaServer::Options o = pooledOptions();
  TosaServer server(o, rec);
  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1, kWrongResult);
  server.addDocument("test:///b.mlir", "/nonexistent/b.mlir", 1, kWrongResult);
  server.waitIdle();
  server.removeDocument("test:///a.mlir");
  EXPECT_EQ(server.stats().slotsDropped, 0u); // b is still open
  server.removeDocument("test:///b.mlir");
  // Both workers by the time the close returns. The background inference
  // threads (two) run at SCHED_IDLE: with every core busy (ctest -j2) they
  // may drop their slots only after the close's bounded wait (1 s; seen
  // once), but drop them they must.
  EXPECT_GE(server.stats().slotsDropped, 2u);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.stats().slotsDropped < 4 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server.stats().slotsDropped, 4u);
}

} // namespace

namespace {

/// Requests whose positions are in the text just typed are answered from
/// it, not from the version before the edit (a debounce still running).
TEST(TosaServer, EditingRequestsRightAfterAnEditSeeTheEdit) {
  Recorder rec;
  TosaServer::Options o = pooledOptions();
  o.debounce = std::chrono::milliseconds(300);
  TosaServer server(o, rec);
  server.addDocument("file:///t.mlir", "/t.mlir", 1, kWrongResult);
  server.waitIdle();
  lsp::TextDocumentContentChangeEvent change;
  change.range = lsp::Range(lsp::Position(2, 0), lsp::Position(2, 0));
  change.text = "  %c = tosa.\n";
  ASSERT_FALSE(server.changeDocument("file:///t.mlir", 2, {change}));
  // At once, inside the debounce: completion after `tosa.` on the new line.
  auto list = await<lsp::CompletionList>([&](auto cb) {
    server.completion("file:///t.mlir", lsp::Position(2, 12), false,
                      std::move(cb));
  });
  ASSERT_TRUE(bool(list));
  bool hasAbs = false;
  for (const lsp::CompletionItem &i : list->items)
    hasAbs |= i.label == "abs";
  EXPECT_TRUE(hasAbs);
  // Formatting of the new text refuses: its section does not parse.
  auto fmt = await<DocumentEditLsp>([&](auto cb) {
    server.formatting("file:///t.mlir", std::nullopt, std::move(cb));
  });
  ASSERT_FALSE(bool(fmt));
  EXPECT_NE(errorText(fmt.takeError()).find("does not parse"),
            std::string::npos);
  server.waitIdle();
}

} // namespace
