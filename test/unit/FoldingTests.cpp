//===- FoldingTests.cpp - folding ranges and selection ranges -------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Folding.h"
#include "LineIndex.h"
#include "SelectionRanges.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

std::vector<std::tuple<int, unsigned, unsigned>>
folds(const std::string &text) {
  LineIndex lines(text);
  std::vector<std::tuple<int, unsigned, unsigned>> out;
  for (const FoldRange &f : foldingRanges(text, lines))
    out.emplace_back(int(f.kind), f.begin.line, f.end.line);
  return out;
}

TEST(Folding, RegionsLiteralsCommentsSections) {
  std::string text = R"(// A model.
// Two comment lines fold.
func.func @f(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %w = "tosa.const"() <{values = dense<[1.0,
      2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %r = tosa.cond_if %c -> (tensor<2xf32>) {
    tosa.yield %a : tensor<2xf32>
  } else {
    tosa.yield %w : tensor<2xf32>
  }
  return %r : tensor<2xf32> // "}" in a string or comment is no bracket
}
// -----
func.func @g() {
  return
}
)";
  using T = std::tuple<int, unsigned, unsigned>;
  const int R = FoldRange::Region, S = FoldRange::Section;
  std::vector<T> expected = {T{S, 1, 12}, T{R, 3, 12},  T{R, 4, 5},  T{R, 6, 8},
                             T{R, 8, 10}, T{S, 13, 16}, T{R, 14, 16}};
  EXPECT_EQ(folds(text), expected);
}

TEST(Folding, ACommentBlock) {
  auto f = folds("func.func @f() {\n  // one\n  // two\n  return\n}\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[1], std::make_tuple(int(FoldRange::Comment), 2u, 3u));
}

TEST(Folding, UnbalancedTextStillFolds) {
  auto f = folds("func.func @f() {\n  \"x.y\"() ({\n  ^bb0:\n  }\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(std::get<1>(f[0]), 2u);
  EXPECT_EQ(std::get<2>(f[0]), 4u);
}

TEST(SelectionRanges, TokenToSection) {
  Annotations a(R"(func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.add %a, %$$a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @g() {
  return
}
)");
  FileAnalysis fa = analyzeText(a.text);
  LineIndex lines(a.text);
  auto rs = selectionRanges(fa, a.text, lines, a.point(0));
  std::vector<std::string> texts;
  for (const Range &r : rs)
    texts.push_back(a.text.substr(
        *lines.offset(r.begin), *lines.offset(r.end) - *lines.offset(r.begin)));
  ASSERT_GE(texts.size(), 5u);
  EXPECT_EQ(texts[0], "%a");
  EXPECT_EQ(texts[1], "tosa.add %a, %a : (tensor<2xf32>, tensor<2xf32>) "
                      "-> tensor<2xf32>");
  EXPECT_EQ(texts[2], "%0 = tosa.add %a, %a : (tensor<2xf32>, tensor<2xf32>) "
                      "-> tensor<2xf32>");
  EXPECT_EQ(texts[3].substr(0, 3), "%0 ");
  EXPECT_EQ(texts.back().substr(0, 12), "func.func @f");
  // Each range holds the one before.
  for (size_t i = 1; i < rs.size(); ++i) {
    EXPECT_FALSE(before(rs[i - 1].begin, rs[i].begin));
    EXPECT_FALSE(before(rs[i].end, rs[i - 1].end));
  }
  auto inType = selectionRanges(fa, a.text, lines, {2, 36});
  std::vector<std::string> typeTexts;
  for (const Range &r : inType)
    typeTexts.push_back(a.text.substr(
        *lines.offset(r.begin), *lines.offset(r.end) - *lines.offset(r.begin)));
  ASSERT_GE(typeTexts.size(), 6u);
  EXPECT_EQ(typeTexts[0], "2xf32");
  EXPECT_EQ(typeTexts[1], "<2xf32>");
  EXPECT_EQ(typeTexts[2], "tensor<2xf32>, tensor<2xf32>");
  EXPECT_EQ(typeTexts[3], "(tensor<2xf32>, tensor<2xf32>)");
  EXPECT_EQ(typeTexts[4].substr(0, 8), "tosa.add");
}

} // namespace
