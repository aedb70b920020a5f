//===- InlayHintsJSONTest.cpp - an inlay hint reply as text ---------------===//

#include "InlayHintsJSON.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace llvm;
using namespace tosa_lsp;

namespace {

/// What JSONTransport sends for the reply built as a json::Value.
std::string viaJsonValue(const json::Value &id,
                         const std::vector<lsp::InlayHint> &hints,
                         bool pretty) {
  json::Array result;
  for (const lsp::InlayHint &h : hints)
    result.push_back(toJSON(h));
  json::Value msg = json::Object{
      {"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  return pretty ? formatv("{0:2}\n", msg).str() : formatv("{0}", msg).str();
}

TEST(InlayHintsJSON, TheSameTextAsTheJsonValueReply) {
  std::vector<lsp::InlayHint> hints;
  lsp::InlayHint a(lsp::InlayHintKind::Type, lsp::Position(3, 17));
  a.label = " inferred: 2x3";
  hints.push_back(a);
  lsp::InlayHint b(lsp::InlayHintKind::Parameter, lsp::Position(0, 0));
  b.label = "quote \" backslash \\ tab \t and \xC3\xA9";
  b.paddingLeft = true;
  hints.push_back(b);
  for (bool pretty : {false, true})
    for (const json::Value &id : {json::Value(7), json::Value("req-1")}) {
      EXPECT_EQ(inlayHintsReplyMessage(id, hints, pretty),
                viaJsonValue(id, hints, pretty))
          << pretty;
      EXPECT_EQ(inlayHintsReplyMessage(id, {}, pretty),
                viaJsonValue(id, {}, pretty));
    }
}

} // namespace
