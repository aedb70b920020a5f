//===- Hover.h - hover contents ---------------------------------*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_HOVER_H
#define TOSA_LSP_ANALYSIS_HOVER_H

#include "Analysis.h"
#include "ShapeInference.h"

#include <optional>

namespace tosa_lsp {

struct HoverResult {
  Range range;
  std::string markdown;
};

/// On a Broadcastable op (its name, its result, an operand inside it or a
/// use of its result): declared vs inferred shape and the per-dimension
/// table. On any other value: its type and where it is defined (what
/// upstream mlir-lsp-server shows). Also symbols and blocks. With `shapes`
/// (MLIR's shape inference of the function), any op it inferred, at its
/// name or result, also shows declared vs inferred result types.
std::optional<HoverResult> hover(const FileAnalysis &fa, Position pos,
                                 const ShapeInference *shapes = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_HOVER_H
