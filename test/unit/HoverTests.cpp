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

#include "Aliases.h"
#include "LineIndex.h"
#include "OpGenericForm.h"

namespace {

std::optional<OpGenericForm> genericAt(const std::string &text,
                                       const std::string &opName,
                                       unsigned skip = 0) {
  FileAnalysis fa = analyzeText(text);
  LineIndex lines(text);
  auto aliases = scanAliases(text, lines, fa.sections);
  size_t at = text.find(opName);
  for (unsigned i = 0; i < skip; ++i)
    at = text.find(opName, at + 1);
  Position p = lines.position(at);
  for (const OpReport &op : fa.ops)
    if (op.range.begin.line == p.line)
      return opGenericForm(text, lines, fa, aliases, op.scope, op.section);
  for (const OpSpan &op : fa.opSpans)
    if (op.nameRange.begin.line == p.line)
      return opGenericForm(text, lines, fa, aliases, op.scope, op.section);
  return std::nullopt;
}

TEST(OpGenericForm, EveryOpAloneEvenBesideAnError) {
  std::string text = R"(!t = tensor<2xf32>
func.func private @ext(%a: !t) -> !t
func.func @f(%a: !t, %b: tensor<3xf32>) -> !t {
  %w = "tosa.const"() <{values = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> !t
  %p:2 = "test.two"(%a) : (!t) -> (!t, !t)
  %0 = tosa.add %p#1, %w : (!t, !t) -> !t
  %bad = tosa.add %a, %b : (!t, tensor<3xf32>) -> !t
  %t = tosa.transpose %0 {perms = array<i32: 0>} : (!t) -> !t
  return %t : !t
}
)";
  auto add = genericAt(text, "tosa.add");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->name, "tosa.add");
  EXPECT_NE(add->genericForm.find("%0 = \"tosa.add\"(%p#1, %w)"),
            std::string::npos)
      << add->genericForm;
  ASSERT_EQ(add->resultTypes.size(), 1u);
  EXPECT_EQ(add->resultTypes[0], "tensor<2xf32>");
  auto tr = genericAt(text, "tosa.transpose");
  ASSERT_TRUE(tr);
  EXPECT_NE(tr->genericForm.find("perms = array<i32: 0>"), std::string::npos)
      << tr->genericForm;
  auto cst = genericAt(text, "tosa.const");
  ASSERT_TRUE(cst);
  EXPECT_NE(cst->genericForm.find("dense<[1.000000e+00, 2.000000e+00]>"),
            std::string::npos)
      << cst->genericForm;
  auto fn = genericAt(text, "func.func", 1);
  ASSERT_TRUE(fn);
  EXPECT_EQ(fn->symbol, "public @f");
  EXPECT_EQ(fn->genericForm.find("tosa.add"), std::string::npos); // no body
  auto ext = genericAt(text, "func.func");
  ASSERT_TRUE(ext);
  EXPECT_EQ(ext->symbol, "private @ext");
}

} // namespace
