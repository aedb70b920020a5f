//===- HighlightTests.cpp - aliases and document highlight ----------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Aliases.h"
#include "Highlight.h"
#include "LineIndex.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

std::vector<AliasInfo> aliasesOf(const std::string &text) {
  LineIndex lines(text);
  return scanAliases(text, lines, splitSections(text));
}

TEST(Aliases, DefinitionsValuesAndUsesPerSection) {
  Annotations a(R"([[!row]] = tensor<1x4xf32>
#map = affine_map<(d0) -> (d0)>
func.func @f(%a: $$!row) -> [[!row]] {
  return %a : !row // !row in a comment is no use
}
// -----
!row = tensor<2xf32>
func.func @g(%a: !row) -> !row { return %a : !row }
)");
  auto aliases = aliasesOf(a.text);
  ASSERT_EQ(aliases.size(), 3u);
  EXPECT_EQ(aliases[0].name, "!row");
  EXPECT_EQ(aliases[0].def, a.range(0));
  EXPECT_EQ(aliases[0].valueText, "tensor<1x4xf32>");
  EXPECT_EQ(aliases[0].uses.size(), 3u);
  EXPECT_EQ(aliases[0].uses[1], a.range(1));
  EXPECT_EQ(aliases[1].name, "#map");
  EXPECT_EQ(aliases[1].valueText, "affine_map<(d0) -> (d0)>");
  EXPECT_TRUE(aliases[1].uses.empty());
  EXPECT_EQ(aliases[2].section, 1u);
  EXPECT_EQ(aliases[2].uses.size(), 3u);
  bool onDef = true;
  EXPECT_EQ(aliasAt(aliases, a.point(0), &onDef), &aliases[0]);
  EXPECT_FALSE(onDef);
}

TEST(Aliases, AnAliasUsedInAnother) {
  auto aliases = aliasesOf("!a = f32\n!b = tensor<2x!a>\n");
  ASSERT_EQ(aliases.size(), 2u);
  EXPECT_EQ(aliases[0].uses.size(), 1u);
}

TEST(Highlight, ValueDefinitionAndUses) {
  Annotations a(R"(func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  [[%0]] = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
  %1 = tosa.add [[%0]], [[%$$0]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
)");
  FileAnalysis fa = analyzeText(a.text);
  auto hs = documentHighlights(fa, aliasesOf(a.text), a.point(0));
  ASSERT_EQ(hs.size(), 3u);
  EXPECT_EQ(hs[0].range, a.range(0));
  EXPECT_TRUE(hs[0].write);
  EXPECT_EQ(hs[1].range, a.range(1));
  EXPECT_FALSE(hs[1].write);
  EXPECT_EQ(hs[2].range, a.range(2));
}

TEST(Highlight, SymbolsBlocksAliasesAndNothing) {
  Annotations a(R"(!t = tensor<2xf32>
func.func @$$f(%a: !t) -> !t {
  cf.br ^bb1
^b$$b1:
  return %a : !$$t
}
func.func @g(%a: !t) -> !t {
  %r = func.call @f(%a) : (!t) -> !t
  return %$$r : !t
}
)");
  FileAnalysis fa = analyzeText(a.text);
  auto aliases = aliasesOf(a.text);
  EXPECT_EQ(documentHighlights(fa, aliases, a.point(0)).size(), 2u);
  EXPECT_EQ(documentHighlights(fa, aliases, a.point(1)).size(), 2u);
  auto t = documentHighlights(fa, aliases, a.point(2));
  EXPECT_EQ(t.size(), 9u);
  EXPECT_TRUE(t[0].write);
  EXPECT_EQ(documentHighlights(fa, aliases, a.point(3)).size(), 2u);
  EXPECT_TRUE(documentHighlights(fa, aliases, {1, 5}).empty()); // `=`
}

} // namespace
