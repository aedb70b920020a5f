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

/// Random edits (characters that change how a line lexes: line breaks,
/// quotes, `//`, `<`, `=`), each relexed in place from the last: the same
/// tokens as lexing the edited text from scratch.
TEST(SemanticTokens, RelexingAnEditEqualsLexingAgain) {
  std::string text = R"(#map = affine_map<(d0) -> (d0)>
!t = tensor<2xf32>
func.func @f(%a: tensor<?xf32>, %b: !t) -> tensor<?xf32> {
  %0 = tosa.add %a, %b : (tensor<?xf32>, !t) -> tensor<?xf32>
  %1 = "tosa.const"() {values = dense<"0x0102"> : tensor<2xi8>, name
    = "a // b"} : () -> tensor<2xi8>
  ^bb1: // pred: ^bb0
  return %0 : tensor<?xf32>
}
)";
  const char pieces[][8] = {"\n", "\"",  "//",     "<",    ">",   "=",  " ",
                            "%x", "a.b", "tensor", "\n\n", "^bb", "!t", "#m"};
  uint32_t seed = 12345;
  auto rnd = [&](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
  };
  LexedTokens lexed = lexTokens(text, LineIndex(text));
  for (int step = 0; step < 400; ++step) {
    std::string before = text;
    if (step == 0) {
      // `name` is a property because of the `=` on the next line.
      text.erase(text.find("\n    = ") + 5, 1);
    } else {
      size_t at = rnd(static_cast<uint32_t>(text.size() + 1));
      size_t erase =
          rnd(3) == 0 ? std::min<size_t>(rnd(6), text.size() - at) : 0;
      text.replace(at, erase,
                   rnd(4) == 0 ? "" : pieces[rnd(std::size(pieces))]);
    }
    LineIndex lines(text);
    relexTokens(lexed, before, text, lines);
    LexedTokens fresh = lexTokens(text, lines);
    ASSERT_EQ(lexed.tokens.size(), fresh.tokens.size()) << "step " << step;
    for (size_t i = 0; i < fresh.tokens.size(); ++i) {
      const LexedToken &a = lexed.tokens[i], &b = fresh.tokens[i];
      ASSERT_TRUE(a.offset == b.offset && a.line == b.line &&
                  a.length == b.length && a.type == b.type &&
                  a.flags == b.flags)
          << "step " << step << " token " << i << "\n"
          << text;
    }
  }
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
