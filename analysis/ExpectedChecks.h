//===- ExpectedChecks.h - `// expected-error @below {{...}}` ----*- C++ -*-===//
//
// How MLIR's tests are written (`mlir-opt -verify-diagnostics`): a comment
// above the line of each diagnostic. The quick fix mlir-lsp-server offers,
// with its title and text, so test authors can switch.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_EXPECTEDCHECKS_H
#define TOSA_LSP_ANALYSIS_EXPECTEDCHECKS_H

#include "Analysis.h"
#include "TextEdit.h"

#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

/// Upstream's title for the action.
constexpr const char *kExpectedChecksTitle = "Add expected-* diagnostic checks";

/// The insertions for `d` (an error or warning) and its notes in the file:
/// `// expected-<severity> @below {{<first line of the message>}}` before
/// each line, indented as it; none for other severities.
std::vector<TextEditData> expectedChecks(const Diagnostic &d,
                                         std::string_view text,
                                         const LineIndex &lines);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_EXPECTEDCHECKS_H
