//===- Folding.h - foldable ranges of MLIR text -----------------*- C++ -*-===//
//
// From the text alone, so that a file that does not parse still folds:
// bracket pairs that span lines (regions, function bodies, long `dense<...>`
// literals and attribute dictionaries), `// -----` sections and runs of
// comment lines.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_FOLDING_H
#define TOSA_LSP_ANALYSIS_FOLDING_H

#include "Analysis.h"

#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct FoldRange {
  enum Kind { Region, Comment, Section } kind = Region;
  /// Just after the opening bracket (or the first comment line's start)
  /// and at the closing bracket (or the last comment line's end).
  Position begin, end;
};

/// Sorted by where they begin; nested ranges follow their parent.
std::vector<FoldRange> foldingRanges(std::string_view text,
                                     const LineIndex &lines);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_FOLDING_H
