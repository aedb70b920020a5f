//===- AnalyzerTestSupport.h - what the analyzer tests share ----*- C++ -*-===//
//
// Inputs and checks used by several Analyzer*Test.cpp files: generated
// functions and the errors of an analysis. Each test file gets its own copy
// (an unnamed namespace, as before the split).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TEST_UNIT_ANALYZERTESTSUPPORT_H
#define TOSA_LSP_TEST_UNIT_ANALYZERTESTSUPPORT_H

#include "Analysis.h"
#include "Config.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace tosa_lsp;

namespace {

/// `count` functions @f0, @f1, ... of one broadcasting tosa.add each.
[[maybe_unused]] std::string addFunctions(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "func.func @f" + std::to_string(i) +
            "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
            "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
            "tensor<4x?xf32>\n  return %0 : tensor<4x?xf32>\n}\n";
  return text;
}

[[maybe_unused]] std::vector<const Diagnostic *>
errors(const FileAnalysis &fa) {
  std::vector<const Diagnostic *> out;
  for (const Diagnostic &d : fa.diagnostics)
    if (d.severity == Severity::Error)
      out.push_back(&d);
  return out;
}

/// One function of ~`n` lines: constants at the top used at the end, a
/// chain with dynamic sizes and size-1 broadcasts, and whatever `extra`
/// puts at line `at` (0-based op number).
[[maybe_unused]] std::string oneFunction(
    int n, const std::map<int, std::string> &extra = {},
    const std::string &header = "func.func @main(%a: tensor<4x?xf32>, %b: "
                                "tensor<1x?xf32>) -> tensor<4x?xf32> {\n") {
  std::string text = header;
  text += "  %c = \"tosa.const\"() <{values = dense<1.0> : tensor<1x1xf32>}> "
          ": () -> tensor<1x1xf32>\n";
  text += "  %v0 = tosa.add %a, %b : (tensor<4x?xf32>, tensor<1x?xf32>) -> "
          "tensor<4x?xf32>\n";
  for (int i = 1; i < n; ++i) {
    if (auto it = extra.find(i); it != extra.end())
      text += it->second;
    std::string v = "%v" + std::to_string(i), p = "%v" + std::to_string(i - 1);
    text += i % 3 ? "  " + v + " = tosa.maximum " + p +
                        ", %b : (tensor<4x?xf32>, "
                        "tensor<1x?xf32>) -> tensor<4x?xf32>\n"
                  : "  " + v + " = tosa.abs " + p +
                        " : (tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  }
  text += "  %r = tosa.sub %v" + std::to_string(n - 1) +
          ", %v1 : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  return text + "  return %r : tensor<4x?xf32>\n}\n";
}

} // namespace

#endif // TOSA_LSP_TEST_UNIT_ANALYZERTESTSUPPORT_H
