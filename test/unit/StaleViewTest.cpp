//===- StaleViewTest.cpp - an older snapshot under the client's text ------===//

#include "StaleView.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;
namespace lsp = llvm::lsp;

namespace {

// Two functions; @b's `%1` is on line 5 (LSP line 4).
const char *kOld = "func.func @a() {\n"
                   "  %0 = x\n"
                   "}\n"
                   "// between\n"
                   "func.func @b() {\n"
                   "  %1 = y\n"
                   "}\n";

std::shared_ptr<const Snapshot> snapshotOf(const std::string &text) {
  auto fa = std::make_shared<FileAnalysis>();
  SymbolInfo a, b;
  a.name = "a";
  b.name = "b";
  a.opName = b.opName = "func.func";
  a.scope = {{1, 1}, {3, 2}};
  b.scope = {{5, 1}, {7, 2}};
  fa->symbols = {a, b};
  return std::make_shared<const Snapshot>(
      "file:///t.mlir", "/t.mlir", 1, std::make_shared<const std::string>(text),
      Config(), std::move(fa));
}

StaleView viewOf(std::string now) {
  return StaleView(snapshotOf(kOld), std::make_shared<const std::string>(now),
                   2);
}

std::string edited(std::string from, const std::string &what,
                   const std::string &with) {
  from.replace(from.find(what), what.size(), with);
  return from;
}

} // namespace

// A line added inside @a: @b moved down by one; a request in @b is answered
// at its place in the old text, and ranges come back one line lower.
TEST(StaleView, AnEditInAnotherFunctionMovesTheAnswer) {
  StaleView v = viewOf(edited(kOld, "  %0 = x\n", "  %0 = x\n  %z = w\n"));
  std::optional<lsp::Position> at = v.answers(lsp::Position(6, 3));
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, lsp::Position(5, 3));
  std::vector<lsp::Range> rs = {lsp::Range(lsp::Position(5, 2), {5, 4}),
                                lsp::Range(lsp::Position(0, 0), {0, 4})};
  v.forward(rs);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0], lsp::Range(lsp::Position(6, 2), {6, 4}));
  EXPECT_EQ(rs[1], lsp::Range(lsp::Position(0, 0), {0, 4})); // before it
  // The comment between the functions: in no function, not edited.
  EXPECT_EQ(v.answers(lsp::Position(4, 3)), lsp::Position(3, 3));
}

// Within the function the edit touched, or on the edited text, the older
// snapshot does not answer (its types and shapes may no longer hold).
TEST(StaleView, NotInTheEditedFunction) {
  StaleView v = viewOf(edited(kOld, "%0 = x", "%0 = xyz"));
  EXPECT_FALSE(v.answers(lsp::Position(1, 3)));  // the edited line
  EXPECT_FALSE(v.answers(lsp::Position(0, 11))); // @a's name
  EXPECT_TRUE(v.answers(lsp::Position(5, 3)));   // in @b
  // A line inserted right above @b touches it.
  StaleView above = viewOf(edited(kOld, "// between\n", "// between\n\n"));
  EXPECT_FALSE(above.answers(lsp::Position(6, 3)));
  EXPECT_TRUE(above.answers(lsp::Position(1, 3)));
  // Past the end of the text.
  EXPECT_FALSE(v.answers(lsp::Position(40, 0)));
}

// Ranges of text the edit replaced have no place in the new text; targets
// in other documents do not move.
TEST(StaleView, RangesInTheEditAreDroppedOtherDocumentsKept) {
  StaleView v = viewOf(edited(kOld, "  %1 = y\n", "  %1 = w\n  %2 = q\n"));
  std::vector<DefinitionTarget> ts = {
      {"", lsp::Range(lsp::Position(5, 7), {5, 8})}, // `y`: replaced
      {"file:///other.mlir", lsp::Range(lsp::Position(5, 7), {5, 8})},
      {"file:///t.mlir", lsp::Range(lsp::Position(1, 2), {1, 4})}};
  v.forward(ts);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].uri, "file:///other.mlir");
  EXPECT_EQ(ts[0].range, lsp::Range(lsp::Position(5, 7), {5, 8}));
  EXPECT_EQ(ts[1].range, lsp::Range(lsp::Position(1, 2), {1, 4}));
  // A hover over replaced text keeps its text, without a range.
  std::optional<lsp::Hover> h(
      lsp::Hover(lsp::Range(lsp::Position(5, 7), {5, 8})));
  h->contents.value = "y";
  v.forward(h);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->range);
  EXPECT_EQ(h->contents.value, "y");
  // The closing brace after the edit moved down a line.
  std::vector<lsp::Range> rs = {lsp::Range(lsp::Position(6, 0), {6, 1})};
  v.forward(rs);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0], lsp::Range(lsp::Position(7, 0), {7, 1}));
}
