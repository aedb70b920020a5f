//===- TosaServerEditingTest.cpp - editing features over versions --------===//
//
// The editing features that keep state between requests of one document:
// semantic token deltas against the tokens last sent.
//
//===----------------------------------------------------------------------===//

#include "TosaServerTestSupport.h"

namespace {

std::vector<uint32_t> fullTokens(TosaServer &server, const std::string &uri) {
  auto t = await<SemanticTokensLsp>([&](auto cb) {
    server.semanticTokens(uri, std::nullopt, std::move(cb));
  });
  EXPECT_TRUE(bool(t));
  if (!t || !t->data)
    return {};
  EXPECT_FALSE(t->isDelta);
  return *t->data;
}

/// Each edit changes what the analysis knows beyond the edited line (a
/// type made static takes `dynamic` off the value's later uses; a line
/// added or removed moves every token after it): the delta, applied to
/// what was sent, equals the full tokens a fresh server gives the text.
TEST(TosaServer, SemanticTokenDeltasAddUpToTheFullTokens) {
  Recorder rec;
  TosaServer server(syncOptions(), rec);
  const std::string uri = "test:///t.mlir";
  std::string text = kDynamic;
  server.addDocument(uri, "/nonexistent/t.mlir", 1, text);
  std::vector<uint32_t> sent = fullTokens(server, uri);
  auto first = await<SemanticTokensLsp>(
      [&](auto cb) { server.semanticTokens(uri, std::nullopt, cb); });
  ASSERT_TRUE(bool(first));
  std::string resultId = first->resultId;

  struct Edit {
    unsigned line, from, to;
    std::string with;
  };
  std::vector<Edit> edits = {
      {0, 17, 30, "tensor<4xf32>"}, // %a: static
      {1, 0, 0, "  %z = tosa.abs %b : (tensor<?xf32>) -> tensor<?xf32>\n"},
      {6, 0, 0, "\n// a comment\n"},
      {1, 0, 0, ""}, // nothing
  };
  int64_t version = 1;
  for (const Edit &e : edits) {
    lsp::TextDocumentContentChangeEvent change;
    change.range =
        lsp::Range(lsp::Position(e.line, e.from), lsp::Position(e.line, e.to));
    change.text = e.with;
    ASSERT_FALSE(server.changeDocument(uri, ++version, {change}));
    LineIndex lines(text);
    size_t at = *lines.offset({e.line + 1, e.from + 1});
    text.replace(at, e.to - e.from, e.with);

    auto delta = await<SemanticTokensLsp>(
        [&](auto cb) { server.semanticTokens(uri, resultId, cb); });
    ASSERT_TRUE(bool(delta));
    ASSERT_TRUE(delta->isDelta);
    ASSERT_LE(delta->start + delta->deleteCount, sent.size());
    sent.erase(sent.begin() + delta->start,
               sent.begin() + delta->start + delta->deleteCount);
    sent.insert(sent.begin() + delta->start, delta->inserted.begin(),
                delta->inserted.end());
    resultId = delta->resultId;

    Recorder freshRec;
    TosaServer fresh(syncOptions(), freshRec);
    fresh.addDocument(uri, "/nonexistent/t.mlir", 1, text);
    EXPECT_EQ(sent, fullTokens(fresh, uri)) << text;
  }
  // A result id that is not the last one sent gets the full tokens.
  auto stale = await<SemanticTokensLsp>(
      [&](auto cb) { server.semanticTokens(uri, std::string("0.0"), cb); });
  ASSERT_TRUE(bool(stale));
  EXPECT_FALSE(stale->isDelta);
  EXPECT_EQ(*stale->data, sent);
}

} // namespace
