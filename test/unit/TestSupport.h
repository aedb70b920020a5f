//===- TestSupport.h - helpers shared by the feature test files -*- C++ -*-===//

#ifndef TOSA_LSP_TEST_UNIT_TESTSUPPORT_H
#define TOSA_LSP_TEST_UNIT_TESTSUPPORT_H

#include "Analysis.h"
#include "Config.h"

#include <string>

namespace tosa_lsp {

/// Analyses `text` as t.mlir with the default configuration.
inline FileAnalysis analyzeText(const std::string &text) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "t.mlir", Config());
}

inline bool has(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace tosa_lsp

#endif // TOSA_LSP_TEST_UNIT_TESTSUPPORT_H
