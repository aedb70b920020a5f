//===- HoverTests.cpp - hover contents ------------------------------------===//
//
// On annotated snippets (`[[range]]`, `$$` points; see Annotations.h).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Hover.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

TEST(Hover, OpNameShowsDeclaredVsInferredAndTable) {
  Annotations a(R"(
func.func @f(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = [[tosa.a$$dd]] %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)");
  auto h = hover(analyzeText(a.text), a.point());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, a.range());
  EXPECT_TRUE(has(h->markdown, "**Inferred** `2x3` vs **declared** `2x3`"))
      << h->markdown;
  EXPECT_TRUE(has(h->markdown, "| 0 | 1 | 2 | 2 | 2 | 1 \\| >1 -> >1 | #0 "
                               "stretched from 1; from #1 |"))
      << h->markdown;
}

TEST(Hover, ErrorShowsTheViolatedConstraintAndFix) {
  Annotations a(R"(
func.func @f(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  %0 = tosa.a$$dd %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
)");
  auto h = hover(analyzeText(a.text), a.point());
  ASSERT_TRUE(h);
  EXPECT_TRUE(has(h->markdown, "broadcast error")) << h->markdown;
  EXPECT_TRUE(has(h->markdown, "operand #0 has size 3 but operand #1 has "
                               "size 2"))
      << h->markdown;
  EXPECT_TRUE(has(h->markdown, "*Fix:*")) << h->markdown;
}

TEST(Hover, PlainValueShowsTypeAndOrigin) {
  Annotations a(R"(
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = "test.const"() : () -> tensor<2xf32>
  return [[%$$c]] : tensor<2xf32>
}
)");
  auto h = hover(analyzeText(a.text), a.point());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, a.range());
  EXPECT_EQ(h->markdown,
            "`%c`: `tensor<2xf32>`\n\nresult #0 of `test.const` (line 3)");
}

// A block argument of a block of its own: the line is its label's, not
// the function's.
TEST(Hover, BlockArgumentOfALabelledBlockNamesItsLine) {
  Annotations a(R"(
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  cf.br ^bb1(%a : tensor<2xf32>)
^bb1(%b: tensor<2xf32>):
  return [[%$$b]] : tensor<2xf32>
}
)");
  auto h = hover(analyzeText(a.text), a.point());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->markdown,
            "`%b`: `tensor<2xf32>`\n\nargument #0 of ^bb1 (line 4)");
}

TEST(Hover, NothingOnPunctuation) {
  Annotations a("func.func @f() {\n  return$$\n}\n");
  EXPECT_FALSE(hover(analyzeText(a.text), {3, 1}));
}

} // namespace
