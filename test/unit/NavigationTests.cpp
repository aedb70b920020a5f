//===- NavigationTests.cpp - definition, references, symbols --------------===//
//
// On annotated snippets (`[[range]]`, `$$` points; see Annotations.h).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Navigation.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

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

} // namespace
