//===- QueryTest.cpp - the position index answers like a full scan --------===//

#include "Analysis.h"
#include "Config.h"
#include "InlayHints.h"
#include "Query.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace tosa_lsp;

namespace {

std::string readExample(const char *name) {
  std::ifstream in(std::string(TOSA_LSP_EXAMPLES_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Values, uses, symbols, blocks and broadcast ops over several sections.
const char *kText =
    R"(func.func @f(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %1 = tosa.sub %0, %0 : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x?xf32>
  cf.br ^bb1(%1 : tensor<?x?xf32>)
^bb1(%x: tensor<?x?xf32>):
  %2 = call @g(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = "tosa.cast"(%2) : (tensor<?x?xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}
func.func @g(%y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %y : tensor<?x?xf32>
}
// -----
func.func @h(%a: tensor<2x1xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  %0 = tosa.maximum %a, %b : (tensor<2x1xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
)";

/// FileAnalysis::findOp's meaning, by a walk over every op.
int findOpScan(const FileAnalysis &fa, Position pos) {
  int lineMatch = -1;
  for (size_t i = 0; i < fa.ops.size(); ++i) {
    const Range &r = fa.ops[i].range;
    if (r.begin.line != pos.line)
      continue;
    if (pos.column == 0 ||
        (pos.column >= r.begin.column &&
         (pos.column <= r.end.column || r.end.line > r.begin.line)))
      return static_cast<int>(i);
    if (lineMatch < 0)
      lineMatch = static_cast<int>(i);
  }
  return lineMatch;
}

void expectSameAtEveryPosition(const std::string &text) {
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, "q.mlir", Config());
  ASSERT_FALSE(fa.values.empty());
  unsigned line = 1, found = 0;
  size_t col = 1;
  for (size_t i = 0; i <= text.size(); ++i) {
    Position p{line, static_cast<unsigned>(col)};
    Lookup fast = lookup(fa, p), slow = lookupScan(fa, p);
    EXPECT_EQ(fa.findOp(p), findOpScan(fa, p)) << p.line << ":" << p.column;
    EXPECT_EQ(fa.findOp({p.line, 0}), findOpScan(fa, {p.line, 0}));
    EXPECT_EQ(fast.op, slow.op) << p.line << ":" << p.column;
    EXPECT_EQ(fast.value, slow.value) << p.line << ":" << p.column;
    EXPECT_EQ(fast.onValueDef, slow.onValueDef);
    EXPECT_EQ(fast.symbol, slow.symbol) << p.line << ":" << p.column;
    EXPECT_EQ(fast.onSymbolDef, slow.onSymbolDef);
    EXPECT_EQ(fast.block, slow.block) << p.line << ":" << p.column;
    found += fast.op || fast.value || fast.symbol || fast.block;
    if (i < text.size() && text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  // The comparison means something only if positions hit things.
  EXPECT_GT(found, 50u);
}

TEST(PositionIndex, AnswersLikeAFullScan) { expectSameAtEveryPosition(kText); }

TEST(PositionIndex, AnswersLikeAFullScanOnTheExample) {
  std::string text = readExample("broadcast.mlir");
  ASSERT_FALSE(text.empty());
  expectSameAtEveryPosition(text);
}

TEST(PositionIndex, InlayHintsOfALineRangeAreThoseOfTheWholeFileThere) {
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(kText, "q.mlir", Config());
  Config::Hints hints;
  Range all{{1, 1}, {100, 1}};
  std::vector<InlayHintData> every = inlayHints(fa, all, hints);
  ASSERT_GE(every.size(), 2u);
  for (unsigned first = 1; first <= 17; ++first)
    for (unsigned last = first; last <= 17; ++last) {
      Range r{{first, 1}, {last, 1000}};
      std::vector<InlayHintData> some = inlayHints(fa, r, hints);
      size_t expected = 0;
      for (const InlayHintData &h : every)
        expected += h.position.line >= first && h.position.line <= last;
      EXPECT_EQ(some.size(), expected) << first << "-" << last;
    }
}

} // namespace
