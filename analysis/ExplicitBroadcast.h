//===- ExplicitBroadcast.h - broadcast_dimensions mappings ------*- C++ -*-===//
//
// Explicit ("InDim") broadcasts of spec 003: an operand of rank r is mapped
// onto r dimensions of a higher-rank shape by a strictly increasing tuple of
// dimension indices; the remaining dimensions are added. Mapped sizes must be
// equal or degenerate (1). Used for stablehlo/mhlo `broadcast_in_dim`,
// `linalg.broadcast` and chlo-style binary ops with `broadcast_dimensions`.
//
// Plain shapes in, plain data out; no MLIR, no I/O.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_EXPLICITBROADCAST_H
#define TOSA_LSP_ANALYSIS_EXPLICITBROADCAST_H

#include "Broadcast.h"

namespace tosa_lsp {

/// One operand dimension and the target dimension it maps to.
struct DimMapping {
  unsigned operandDim = 0;
  int64_t targetDim = 0; // As written; may be out of range.
  int64_t operandSize = 0;
  std::optional<int64_t> targetSize; // std::nullopt when out of range.
  /// A size-1 operand dimension stretched to a larger or dynamic size.
  bool degenerate = false;
  /// A dynamic size on either side: equality is a runtime obligation.
  bool runtimeCheck = false;
  bool error = false;
};

struct ExplicitBroadcastAnalysis {
  MaybeShape operand;
  /// The shape the operand is mapped onto (result, or the other operand).
  MaybeShape target;
  std::vector<int64_t> broadcastDimensions;
  std::vector<DimMapping> mappings;
  /// Target dimensions no operand dimension maps to (pure broadcast).
  std::vector<unsigned> addedDims;
  std::vector<Violation> violations;
  /// For binary ops (spec 003 "broadcast composition"): the degenerate
  /// broadcast applied after the InDim expansion.
  std::optional<BroadcastAnalysis> composition;

  bool ok() const {
    return violations.empty() && (!composition || composition->ok());
  }
};

struct ExplicitOptions {
  /// XLA allows size-1 operand dims to be stretched; linalg.broadcast does
  /// not.
  bool allowDegenerate = true;
};

/// Checks `dims` maps `operand` onto `target`: one entry per operand
/// dimension, in range, strictly increasing, sizes equal or degenerate.
ExplicitBroadcastAnalysis
analyzeBroadcastInDim(const MaybeShape &operand, const MaybeShape &target,
                      const std::vector<int64_t> &dims,
                      const ExplicitOptions &options = {});

/// `linalg.broadcast`: `addedDims` are the init dimensions that are added;
/// the operand's dimensions map to the others in order, with equal sizes.
ExplicitBroadcastAnalysis
analyzeLinalgBroadcast(const MaybeShape &input, const MaybeShape &init,
                       const std::vector<int64_t> &addedDims);

/// Binary op with `broadcast_dimensions` (spec 003 composition): the
/// lower-rank operand is mapped into the higher rank with the tuple, then
/// both are broadcast with degenerate-dimension rules, and the result is
/// verified like a Broadcastable op.
ExplicitBroadcastAnalysis analyzeBinaryInDim(const MaybeShape &lhs,
                                             const MaybeShape &rhs,
                                             const MaybeShape &result,
                                             const std::vector<int64_t> &dims);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_EXPLICITBROADCAST_H
