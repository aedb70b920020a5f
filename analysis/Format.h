//===- Format.h - indentation and spacing as mlir-opt prints ----*- C++ -*-===//
//
// A formatter that changes only what MLIR's lexer ignores: the indentation
// of each line (two spaces a region, block labels two less), runs of blanks
// between tokens (one space), blanks before a comma (none) and after it
// (one), trailing blanks. Everything the author chose stays: SSA names,
// comments, line breaks, blank lines, `// -----`, custom or generic form.
// Lines that continue a bracket other than a region's `{` keep their own
// indentation, and the body of a dialect attribute or type (`#d.x<...>`,
// `!d.x<...>`, which an unregistered dialect keeps as raw text) is never
// touched. Formatting twice changes nothing the second time.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_FORMAT_H
#define TOSA_LSP_ANALYSIS_FORMAT_H

#include "Analysis.h"
#include "TextEdit.h"

#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct FormatResult {
  /// One edit per changed line (its text without the line break).
  std::vector<TextEditData> edits;
  std::string error; // set when nothing may be formatted
};

/// Formats lines [firstLine, lastLine] (1-based; 0 and 0: all) of `text`,
/// whose analysis is `fa`. Refuses when a section that overlaps them does
/// not parse: formatting text MLIR cannot read could change what it means.
FormatResult formatText(std::string_view text, const LineIndex &lines,
                        const FileAnalysis &fa, unsigned firstLine = 0,
                        unsigned lastLine = 0);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_FORMAT_H
