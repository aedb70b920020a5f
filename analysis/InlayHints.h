//===- InlayHints.h - inferred shapes after declared types ------*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_INLAYHINTS_H
#define TOSA_LSP_ANALYSIS_INLAYHINTS_H

#include "Analysis.h"
#include "Config.h"
#include "ShapeInference.h"

namespace tosa_lsp {

struct InlayHintData {
  enum Kind { InferredShape, RuntimeCheck };
  Kind kind;
  Position position; // the hint goes before this position
  std::string label;
  std::string tooltip;
};

/// For Broadcastable ops overlapping `range`: the inferred shape after the
/// declared result type where they differ, and a marker after results that
/// need a runtime broadcast check. With `shapes` (MLIR's shape inference,
/// propagated through the function), the inferred type of every op it
/// refines (or whose declared type it contradicts). Sorted by position.
std::vector<InlayHintData> inlayHints(const FileAnalysis &fa, Range range,
                                      const Config::Hints &options,
                                      const ShapeInference *shapes = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_INLAYHINTS_H
