//===- CodeActionsTests.cpp - quick fixes ---------------------------------===//
//
// On annotated snippets (`[[range]]`, `$$` points; see Annotations.h).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "CodeActions.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

std::vector<FixData> fixesFor(const std::string &text) {
  static Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, "t.mlir", Config());
  return validatedFixes(analyzer, fa, text, Config());
}

/// `text` has one fix, of `kind`, and applying it gives `fixed`.
void expectOneFix(const std::string &text, FixData::Kind kind,
                  const std::string &fixed) {
  auto fixes = fixesFor(text);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].kind, kind);
  EXPECT_EQ(applyEdits(text, fixes[0].edits), fixed);
}

TEST(CodeActions, ResultTypeFixUpdatesReturnAndSignature) {
  std::string text =
      "func.func @f(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
      "  return %0 : tensor<4x3xf32>\n}\n";
  expectOneFix(text, FixData::ResultType,
               "func.func @f(%a: tensor<1x3xf32>) -> tensor<1x3xf32> {\n"
               "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<1x3xf32>\n"
               "  return %0 : tensor<1x3xf32>\n}\n");
}

// The user is an op with a report (and so no span of its own): found, and
// its operand type changed with the result's.
TEST(CodeActions, ResultTypeFixUpdatesAReportedUser) {
  std::string text =
      "func.func @f(%a: tensor<1x3xf32>, %b: tensor<4x3xf32>) -> "
      "tensor<4x3xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
      "  %1 = tosa.add %0, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> "
      "tensor<4x3xf32>\n"
      "  return %1 : tensor<4x3xf32>\n}\n";
  expectOneFix(text, FixData::ResultType,
               "func.func @f(%a: tensor<1x3xf32>, %b: tensor<4x3xf32>) -> "
               "tensor<4x3xf32> {\n"
               "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<1x3xf32>\n"
               "  %1 = tosa.add %0, %b : (tensor<1x3xf32>, tensor<4x3xf32>) -> "
               "tensor<4x3xf32>\n"
               "  return %1 : tensor<4x3xf32>\n}\n");
}

TEST(CodeActions, RefineKeepsUsersThroughACast) {
  std::string text =
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<?x3xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x3xf32>\n"
      "  return %0 : tensor<?x3xf32>\n}\n";
  expectOneFix(
      text, FixData::RefineResult,
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
