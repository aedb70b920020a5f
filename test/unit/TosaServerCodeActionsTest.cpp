//===- TosaServerCodeActionsTest.cpp - code actions and their verdicts
//------===//
//
// Quick fixes, migration, previews offered as actions, and the cache of
// fix verdicts per document version.
//
//===----------------------------------------------------------------------===//

#include "TosaServerTestSupport.h"

namespace {

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

} // namespace
