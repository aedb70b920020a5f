//===- TextEdit.h - edits of a file's text as plain data --------*- C++ -*-===//
//
// What every feature that rewrites text hands out (quick fixes, the
// migration, refine-all): ranges and their new text. Its own header so that
// those features depend on it, not on each other.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TEXTEDIT_H
#define TOSA_LSP_ANALYSIS_TEXTEDIT_H

#include "Analysis.h"

#include <string>
#include <vector>

namespace tosa_lsp {

struct TextEditData {
  Range range; // end exclusive; begin == end inserts
  std::string newText;
};

/// Applies edits (non-overlapping, any order) to `text`.
std::string applyEdits(const std::string &text,
                       const std::vector<TextEditData> &edits);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TEXTEDIT_H
