//===- QueryTests.cpp - position lookups ----------------------------------===//
//
// On annotated snippets (`[[range]]`, `$$` points; see Annotations.h).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Query.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

TEST(Query, FunctionAtIsTheEnclosingFunc) {
  Annotations a(R"($$
func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.a$$bs %x : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @b() {
  ret$$urn
}
)");
  FileAnalysis fa = analyzeText(a.text);
  EXPECT_EQ(functionAt(fa, a.point(0)), nullptr);
  const SymbolInfo *fa1 = functionAt(fa, a.point(1));
  ASSERT_NE(fa1, nullptr);
  EXPECT_EQ(fa1->name, "a");
  const SymbolInfo *fb = functionAt(fa, a.point(2));
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(fb->name, "b");
}

TEST(Query, LookupFindsTheOpNameAndValues) {
  Annotations a(R"(
func.func @f(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = [[tosa.a$$dd]] [[%$$a]], %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)");
  FileAnalysis fa = analyzeText(a.text);
  Lookup op = lookup(fa, a.point(0));
  ASSERT_NE(op.op, nullptr);
  EXPECT_EQ(op.op->name, "tosa.add");
  EXPECT_EQ(op.range, a.range(0));
  Lookup value = lookup(fa, a.point(1));
  ASSERT_NE(value.value, nullptr);
  EXPECT_FALSE(value.onValueDef);
  EXPECT_EQ(value.range, a.range(1));
  EXPECT_EQ(enclosingOp(fa, a.point(1)), op.op);
}

} // namespace
