//===- RenderTests.cpp - explanations as text and Markdown ----------------===//

#include "TestSupport.h"

#include "Render.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

const char *kStretch =
    "func.func @f(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> "
    "tensor<2x3xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> "
    "tensor<2x3xf32>\n"
    "  return %0 : tensor<2x3xf32>\n}\n";
const char *kConflict =
    "func.func @f(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> "
    "tensor<3xf32>\n"
    "  return %0 : tensor<3xf32>\n}\n";

TEST(Render, RuleAndNotesPerDimension) {
  FileAnalysis fa = analyzeText(kStretch);
  ASSERT_EQ(fa.ops.size(), 1u);
  const BroadcastAnalysis &a = fa.ops[0].implicit();
  ASSERT_EQ(a.dims.size(), 2u);
  EXPECT_EQ(ruleText(a.dims[0]), "1 | >1 -> >1");
  EXPECT_EQ(dimNotes(a.dims[0], a), "#0 stretched from 1; from #1");
}

TEST(Render, TextAndMarkdownCarryTheSameTable) {
  FileAnalysis fa = analyzeText(kStretch);
  ASSERT_EQ(fa.ops.size(), 1u);
  std::string text = renderExplanation(fa.ops[0], RenderStyle::Text);
  std::string md = renderExplanation(fa.ops[0], RenderStyle::Markdown);
  EXPECT_TRUE(has(text, "  dim  #0  #1  inferred  declared  rule")) << text;
  EXPECT_TRUE(has(md, "| dim | #0 | #1 | inferred | declared | rule | notes |"))
      << md;
  EXPECT_FALSE(has(text, "| dim |")) << text;
  // Markdown escapes the rule's bar inside a table cell.
  EXPECT_TRUE(has(md, "| 1 \\| >1 -> >1 |")) << md;
  EXPECT_TRUE(has(text, "1 | >1 -> >1")) << text;
  EXPECT_TRUE(has(md, "#0 stretched from 1; from #1")) << md;
  EXPECT_TRUE(has(text, "#0 stretched from 1; from #1")) << text;
}

TEST(Render, ViolationsComeWithTheirFix) {
  FileAnalysis fa = analyzeText(kConflict);
  ASSERT_EQ(fa.ops.size(), 1u);
  std::string md = renderExplanation(fa.ops[0], RenderStyle::Markdown);
  EXPECT_TRUE(has(md, "operand #0 has size 3 but operand #1 has size 2")) << md;
  EXPECT_TRUE(has(md, "*Fix:*")) << md;
  EXPECT_TRUE(has(renderExplanation(fa.ops[0], RenderStyle::Text),
                  "operand #0 has size 3 but operand #1 has size 2"));
}

} // namespace
