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

#include "Aliases.h"
#include "LineIndex.h"
#include "SourceLocations.h"

namespace {

TEST(Navigation, SourceLocationsOfAnOp) {
  std::string text = R"(func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32> loc("model.py":12:3)
  %1 = tosa.abs %0 : (tensor<2xf32>) -> tensor<2xf32> loc(#loc1)
  %2 = tosa.abs %1 : (tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
#loc1 = loc(fused["a.py":1:2, callsite("b.py":3:4 at "c.py":5:6)])
)";
  FileAnalysis fa = analyzeText(text);
  LineIndex lines(text);
  auto aliases = scanAliases(text, lines, fa.sections);
  auto at = [&](unsigned line) {
    for (const OpReport &op : fa.ops)
      if (op.range.begin.line == line)
        return opSourceLocations(text, lines, aliases, op.scope, 0);
    return std::vector<FileLineCol>();
  };
  auto l2 = at(2);
  ASSERT_EQ(l2.size(), 1u);
  EXPECT_EQ(l2[0].file, "model.py");
  EXPECT_EQ(l2[0].line, 12u);
  EXPECT_EQ(l2[0].column, 3u);
  auto l3 = at(3);
  ASSERT_EQ(l3.size(), 3u);
  EXPECT_EQ(l3[1].file, "b.py");
  EXPECT_EQ(l3[2].line, 5u);
  EXPECT_TRUE(at(4).empty());
}

} // namespace
