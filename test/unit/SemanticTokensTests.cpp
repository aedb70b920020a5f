//===- SemanticTokensTests.cpp - semantic tokens and workspace symbols ----===//

#include "TestSupport.h"

#include "Aliases.h"
#include "LineIndex.h"
#include "SemanticTokens.h"
#include "WorkspaceSymbols.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

/// "text:type[+mods]" per token.
std::vector<std::string> tokens(const std::string &text) {
  FileAnalysis fa = analyzeText(text);
  LineIndex lines(text);
  auto aliases = scanAliases(text, lines, fa.sections);
  std::vector<std::string> out;
  for (const SemanticToken &t : semanticTokens(fa, aliases, text, lines)) {
    size_t o = *lines.offset({t.line, t.column});
    std::string s =
        text.substr(o, t.length) + ":" + semanticTypeNames()[size_t(t.type)];
    for (size_t b = 0; b < semanticModifierNames().size(); ++b)
      if (t.modifiers & (1u << b))
        s += std::string("+") + semanticModifierNames()[b];
    out.push_back(s);
  }
  return out;
}

TEST(SemanticTokens, NamesTypesAndWhatOnlyTheParserKnows) {
  std::string text = R"(!t = tensor<2xf32>
func.func @f(%a: tensor<?xf32>, %b: !t) -> tensor<?xf32> {
  %0 = tosa.add %a, %b : (tensor<?xf32>, !t) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
)";
  std::vector<std::string> expected = {
      "!t:type+declaration",
      "tensor<2xf32>:type",
      "func:namespace",
      "func:method",
      "@f:function+declaration",
      "%a:parameter+declaration+dynamic",
      "tensor<?xf32>:type",
      "%b:parameter+declaration",
      "!t:type",
      "tensor<?xf32>:type",
      "%0:variable+declaration+dynamic+refinable",
      "tosa:namespace",
      "add:method",
      "%a:parameter+dynamic",
      "%b:parameter",
      "tensor<?xf32>:type",
      "!t:type",
      "tensor<?xf32>:type",
      "return:method",
      "%0:variable+dynamic",
  };
  auto got = tokens(text);
  got.resize(std::min(got.size(), expected.size()));
  EXPECT_EQ(got, expected);
}

TEST(SemanticTokens, AnOpWithAnErrorAndAttributes) {
  std::string text = R"(func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  %1 = tosa.transpose %a {perms = array<i32: 0>} : (tensor<2xf32>) -> tensor<2xf32>
  return
}
)";
  auto got = tokens(text);
  EXPECT_NE(std::find(got.begin(), got.end(), "add:method+error"), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), "transpose:method"), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), "perms:property"), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), "array:keyword"), got.end());
}

TEST(SemanticTokens, DeltaIsOneEdit) {
  std::vector<uint32_t> a = {1, 2, 3, 4, 5}, b = {1, 2, 9, 9, 4, 5};
  IntArrayEdit e = diffIntArrays(a, b);
  EXPECT_EQ(e.start, 2u);
  EXPECT_EQ(e.deleteCount, 1u);
  EXPECT_EQ(e.data, (std::vector<uint32_t>{9, 9}));
  e = diffIntArrays(a, a);
  EXPECT_EQ(e.deleteCount, 0u);
  EXPECT_TRUE(e.data.empty());
  e = diffIntArrays({1, 1}, {1, 1, 1});
  EXPECT_EQ(e.start + e.deleteCount + e.data.size(), 3u);
}

TEST(WorkspaceSymbols, FuzzyMatchOrdersLikeAnEditor) {
  EXPECT_TRUE(fuzzyMatch("", "anything"));
  EXPECT_TRUE(fuzzyMatch("cnv", "conv2d_block"));
  EXPECT_FALSE(fuzzyMatch("vnc", "conv2d_block"));
  EXPECT_TRUE(fuzzyMatch("@MAIN", "main"));
  EXPECT_GT(*fuzzyMatch("cb", "conv_block"), *fuzzyMatch("cb", "acrobat"));
  EXPECT_GT(*fuzzyMatch("main", "main"), *fuzzyMatch("main", "domain_x"));
  EXPECT_GT(*fuzzyMatch("res", "resnet"), *fuzzyMatch("res", "xres"));
}

TEST(WorkspaceSymbols, ScansDefinitionsWithoutParsing) {
  std::string text = "module {\n  func.func private @ext(i32)\n"
                     "  ml_program.global public @w(dense<1> : tensor<i32>) "
                     ": tensor<i32>\n  func.func @\"quoted name\"() {\n"
                     "    func.call @ext(%x) : (i32) -> ()\n";
  LineIndex lines(text);
  auto syms = scanSymbols(text, lines);
  ASSERT_EQ(syms.size(), 3u);
  EXPECT_EQ(syms[0].name, "ext");
  EXPECT_EQ(syms[0].opName, "func.func");
  EXPECT_EQ(syms[0].nameRange.begin.line, 2u);
  EXPECT_EQ(syms[1].name, "w");
  EXPECT_EQ(syms[2].name, "quoted name");
}

} // namespace
