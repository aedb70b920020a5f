//===- FeatureTests.cpp - hover, inlay hints, navigation, code actions ----===//
//
// One suite per editor feature, on annotated snippets.
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"

#include "CodeActions.h"
#include "Config.h"
#include "Hover.h"
#include "InlayHints.h"
#include "Navigation.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

FileAnalysis analyzeText(const std::string &text) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "t.mlir", Config());
}

bool has(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// Hover
//===----------------------------------------------------------------------===//

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

TEST(Hover, NothingOnPunctuation) {
  Annotations a("func.func @f() {\n  return$$\n}\n");
  EXPECT_FALSE(hover(analyzeText(a.text), {3, 1}));
}

//===----------------------------------------------------------------------===//
// Inlay hints
//===----------------------------------------------------------------------===//

TEST(InlayHints, InferredShapeAfterTypeAndRuntimeMarker) {
  Annotations a(R"(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %c: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x?xf32>$$
  %1$$ = tosa.add %c, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %2 = tosa.add %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<?x?xf32>
}
)");
  FileAnalysis fa = analyzeText(a.text);
  auto hints = inlayHints(fa, {{1, 1}, {100, 1}}, Config::Hints());
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[0].position, a.point(0));
  EXPECT_EQ(hints[0].label, " inferred: 2x3");
  EXPECT_EQ(hints[1].position, a.point(1));
  EXPECT_EQ(hints[1].label, " runtime-check");
  // Range-restricted, and switchable.
  EXPECT_EQ(inlayHints(fa, {{4, 1}, {4, 5}}, Config::Hints()).size(), 1u);
  EXPECT_TRUE(inlayHints(fa, {{5, 1}, {7, 1}}, Config::Hints()).empty());
  Config::Hints off;
  off.inferredShapes = false;
  off.runtimeChecks = false;
  EXPECT_TRUE(inlayHints(fa, {{1, 1}, {100, 1}}, off).empty());
}

//===----------------------------------------------------------------------===//
// Navigation
//===----------------------------------------------------------------------===//

TEST(Navigation, DefinitionAndReferences) {
  Annotations a(R"(
func.func @[[callee]](%a: tensor<2xf32>) -> tensor<2xf32> {
  [[%0]] = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
  return %$$0 : tensor<2xf32>
}
func.func @caller(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = func.call @cal$$lee(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
)");
  FileAnalysis fa = analyzeText(a.text);
  auto d = definition(fa, a.point(0));
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, a.range(1));
  auto s = definition(fa, a.point(1));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->begin.line, a.range(0).begin.line);
  EXPECT_EQ(s->begin.column, a.range(0).begin.column - 1); // includes '@'
  EXPECT_EQ(references(fa, a.point(0), true).size(), 2u);
  EXPECT_EQ(references(fa, a.point(0), false).size(), 1u);
  EXPECT_EQ(references(fa, a.point(1), false).size(), 1u);
}

TEST(Navigation, DocumentSymbolsPerSection) {
  FileAnalysis fa = analyzeText(
      "func.func @a() { return }\n// -----\nfunc.func @b() { return }\n"
      "func.func @c() { return }\n");
  auto syms = documentSymbols(fa);
  ASSERT_EQ(syms.size(), 2u);
  EXPECT_EQ(syms[0].kind, DocSymbol::Section);
  ASSERT_EQ(syms[1].children.size(), 2u);
  EXPECT_EQ(syms[1].children[1].name, "@c");
}

//===----------------------------------------------------------------------===//
// Code actions
//===----------------------------------------------------------------------===//

std::vector<FixData> fixesFor(const std::string &text) {
  static Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, "t.mlir", Config());
  return validatedFixes(analyzer, fa, text, Config());
}

TEST(CodeActions, ResultTypeFixUpdatesReturnAndSignature) {
  std::string text =
      "func.func @f(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
      "  return %0 : tensor<4x3xf32>\n}\n";
  auto fixes = fixesFor(text);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixData::ResultType);
  EXPECT_EQ(applyEdits(text, fixes[0].edits),
            "func.func @f(%a: tensor<1x3xf32>) -> tensor<1x3xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<1x3xf32>\n"
            "  return %0 : tensor<1x3xf32>\n}\n");
}

TEST(CodeActions, RefineKeepsUsersThroughACast) {
  std::string text =
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<?x3xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x3xf32>\n"
      "  return %0 : tensor<?x3xf32>\n}\n";
  auto fixes = fixesFor(text);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, FixData::RefineResult);
  EXPECT_EQ(applyEdits(text, fixes[0].edits),
            "func.func @f(%a: tensor<2x3xf32>) -> tensor<?x3xf32> {\n"
            "  %refined_0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
            "  %0 = tensor.cast %refined_0 : tensor<2x3xf32> to tensor<?x3xf32>\n"
            "  return %0 : tensor<?x3xf32>\n}\n");
}

TEST(CodeActions, NoFixThatWouldNotVerify) {
  // Operands conflict: no result type makes this op valid.
  EXPECT_TRUE(fixesFor("func.func @f(%a: tensor<3xf32>, %b: tensor<2xf32>) {\n"
                       "  %0 = tosa.add %a, %b : (tensor<3xf32>, "
                       "tensor<2xf32>) -> tensor<3xf32>\n  return\n}\n")
                  .empty());
}

} // namespace
