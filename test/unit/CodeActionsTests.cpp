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

#include "ExpectedChecks.h"
#include "LineIndex.h"

#include <cstdlib>
#include <fstream>

namespace {

/// The checks inserted make `mlir-opt-22 -verify-diagnostics` pass: the
/// test a test author runs.
TEST(ExpectedChecks, WhatMlirOptVerifiesDiagnosticsWith) {
  std::string text =
      R"(func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
    %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";
  FileAnalysis fa = analyzeText(text);
  LineIndex lines(text);
  std::vector<TextEditData> edits;
  for (const Diagnostic &d : fa.diagnostics)
    if (d.source != DiagSource::Broadcast) {
      auto e = expectedChecks(d, text, lines);
      edits.insert(edits.end(), e.begin(), e.end());
    }
  ASSERT_FALSE(edits.empty());
  EXPECT_EQ(edits[0].newText.substr(0, 27), "    // expected-error @belo");
  std::string checked = applyEdits(text, edits);
  std::string path = ::testing::TempDir() + "expected-checks.mlir";
  std::ofstream(path) << checked;
  std::string cmd = "/usr/lib/llvm-22/bin/mlir-opt -verify-diagnostics " +
                    path + " > /dev/null 2>&1";
  if (std::system("test -x /usr/lib/llvm-22/bin/mlir-opt") != 0)
    GTEST_SKIP() << "no mlir-opt-22";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << checked;
  std::remove(path.c_str());
  Diagnostic info;
  info.severity = Severity::Info;
  EXPECT_TRUE(expectedChecks(info, text, lines).empty());
}

} // namespace
