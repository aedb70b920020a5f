//===- SelectionRanges.h - expand selection: token to section ---*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_SELECTIONRANGES_H
#define TOSA_LSP_ANALYSIS_SELECTIONRANGES_H

#include "Analysis.h"

#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

/// The ranges around `pos`, innermost first, each containing the one
/// before: the token, the bracket groups (operand lists, types, attribute
/// dictionaries) around it in its op, the op, the region of each enclosing
/// op and that op, the function, the `// -----` section.
std::vector<Range> selectionRanges(const FileAnalysis &fa,
                                   std::string_view text,
                                   const LineIndex &lines, Position pos);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SELECTIONRANGES_H
