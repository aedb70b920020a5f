//===- Broadcast.h - Broadcastable trait shape inference --------*- C++ -*-===//
//
// Implements the `Broadcastable` trait specification (spec 000, with the
// corrections of spec/README.md) on plain shapes: the InferDim table, rank
// expansion, the n-ary fold over ranked operands and Verify. Every decision is
// recorded so that it can be explained (per-dimension rule, source operands,
// flags) and every violated constraint is named (spec 002).
//
// This file knows nothing about MLIR, LSP or I/O.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_BROADCAST_H
#define TOSA_LSP_ANALYSIS_BROADCAST_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

/// Size of a dynamic dimension ("?"); equal to mlir::ShapedType::kDynamic.
constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

using Shape = std::vector<int64_t>;
/// A shape, or std::nullopt for an unranked tensor.
using MaybeShape = std::optional<Shape>;

/// The three categories of the spec's dimension table.
enum class DimClass { Dynamic, One, Greater };
DimClass classifyDim(int64_t size);

/// Rows of the InferDim table, in the order of the spec, with the operand
/// pair normalised (dim0/dim1 are interchangeable in the table).
enum class InferRow {
  DynDyn,        // ? | ?  -> ?
  DynOne,        // ? | 1  -> ?
  DynGreater,    // ? | >1 -> the static size
  OneOne,        // 1 | 1  -> 1
  OneGreater,    // 1 | >1 -> the static size
  GreaterGreater // >1 | >1 -> dim0, error if different
};

/// Short form of a table row, e.g. "1 | >1 -> >1".
const char *inferRowName(InferRow row);

struct InferDimResult {
  int64_t size = 0;
  InferRow row = InferRow::OneOne;
  /// True when the pseudo-code returns dim1 rather than dim0.
  bool tookSecond = false;
  /// (>1, >1) with different sizes: ERROR_IF(dim0 != dim1).
  bool error = false;
};

/// InferDim(dim0, dim1) of the spec.
InferDimResult inferDim(int64_t dim0, int64_t dim1);

/// InferShape(shape0, shape1): rank expansion then InferDim per dimension.
/// Returns std::nullopt when a pair of dimensions is incompatible.
std::optional<Shape> inferShape(const Shape &shape0, const Shape &shape1);

/// InferResultShape over the operand list: unranked operands are discarded;
/// std::nullopt when there is no ranked operand or inference fails.
std::optional<Shape> inferResultShape(const std::vector<MaybeShape> &operands);

/// One InferDim application of the fold for one result dimension.
struct FoldStep {
  int64_t lhs = 0; // accumulated size so far
  int64_t rhs = 0; // size of operand `rhsOperand` (1 if rank-expanded)
  unsigned rhsOperand = 0;
  InferDimResult result;
};

/// Everything decided for one dimension of the (rank-expanded) result.
struct DimReport {
  unsigned index = 0;
  /// Per operand (original operand numbering): its size in this dimension,
  /// std::nullopt when the operand is unranked.
  std::vector<std::optional<int64_t>> operandSizes;
  /// Per operand: true when the size is an implicit 1 from rank expansion.
  std::vector<bool> expanded;
  int64_t inferred = 0;
  /// Declared result size; std::nullopt when the result is unranked or its
  /// rank differs from the inferred rank.
  std::optional<int64_t> declared;
  /// The fold steps; empty when only one operand is ranked.
  std::vector<FoldStep> steps;
  /// Operands the inferred size came from.
  std::vector<unsigned> sources;
  /// Operands whose static 1 (explicit or from rank expansion) is stretched.
  std::vector<unsigned> stretched;

  /// A static 1 is broadcast to a larger or runtime size.
  bool staticBroadcast = false;
  /// A dynamic size may be 1 while another operand's is not: the lowering
  /// needs a runtime broadcast check (scf.if in the RFC).
  bool runtimeCheck = false;
  /// Declared static over an inferred `?`: the runtime size must equal the
  /// declared one, otherwise behaviour is undefined.
  bool dynamicToStatic = false;
  /// Inferred static over a declared `?`: the result type can be refined.
  bool refinable = false;
  /// Two operands disagree statically in this dimension.
  bool operandConflict = false;
  /// The declared size contradicts the inferred one.
  bool resultConflict = false;
};

/// The constraints a Broadcastable op can violate.
enum class ViolationKind {
  NoOperands,             // the trait needs at least one input operand
  IncompatibleOperands,   // (>1, >1) sizes that differ
  ResultRankMismatch,     // Verify: len(inferred) != len(actual)
  ResultDimMismatch,      // static declared != static inferred (> 1)
  ResultBroadcast,        // declared > 1 where every operand is 1
  OperandRanksDiffer,     // TOSA: all operands must have equal rank
  ResultRankDiffers,      // TOSA: result rank must equal operand rank
  BadBroadcastDimensions, // explicit: wrong count, out of range, not increasing
};

const char *violationKindName(ViolationKind kind);

struct Violation {
  ViolationKind kind;
  /// Result dimension involved, if any.
  std::optional<unsigned> dim;
  /// Operands involved.
  std::vector<unsigned> operands;
  /// Names the constraint and the sizes involved.
  std::string message;
  /// How to fix it, when there is an obvious fix.
  std::string fix;
};

struct BroadcastOptions {
  /// TOSA (MLIR 22, TOSA 1.0) requires equal ranks for all operands and the
  /// result; rank expansion is still computed to explain the fix.
  bool requireEqualRanks = false;
};

struct BroadcastAnalysis {
  std::vector<MaybeShape> operands;
  MaybeShape declared;
  /// Rank-expanded inferred shape; std::nullopt when not inferable (no ranked
  /// operand) or when operand dimensions conflict.
  MaybeShape inferred;
  /// True when there is at least one ranked operand.
  bool inferable = false;
  /// Rank of the expanded shape (max operand rank), 0 when not inferable.
  unsigned rank = 0;
  /// Operands that were rank-expanded (had fewer dims than `rank`).
  std::vector<unsigned> rankExpanded;
  std::vector<DimReport> dims;
  std::vector<Violation> violations;

  bool ok() const { return violations.empty(); }
  bool anyRuntimeCheck() const;
  bool anyDynamicToStatic() const;
  bool anyRefinable() const;
  bool anyStaticBroadcast() const;
};

/// Runs InferResultShape and Verify on the given operand and result shapes,
/// recording every decision.
BroadcastAnalysis analyzeBroadcast(const std::vector<MaybeShape> &operands,
                                   const MaybeShape &declared,
                                   const BroadcastOptions &options = {});

/// The verdict of analyzeBroadcast and the flags the findings need, without
/// its records: no allocation for ranks up to 8. The document pipeline asks
/// this of every op and builds the full analysis only where it has
/// something to say (a violation or an enabled finding).
struct BroadcastSummary {
  bool ok = true;               // analyzeBroadcast(...).ok()
  bool anyRefinable = false;    // ... .anyRefinable()
  bool anyRuntimeCheck = false; // ... .anyRuntimeCheck()
  bool anyDynamicToStatic = false;
  /// The inferred shape exists and equals the declared one (nothing for an
  /// inlay hint to show).
  bool inferredIsDeclared = false;
  /// The dimensions that need a runtime check (bit d for dimension d),
  /// for an inlay hint without the full analysis; all of them when the
  /// rank is at most kRuntimeCheckDims (`wideRank` otherwise).
  static constexpr unsigned kRuntimeCheckDims = 16;
  bool wideRank = false;
  uint16_t runtimeCheckDims = 0;
  /// The dimensions of `runtimeCheckDims`, in order.
  std::vector<unsigned> runtimeCheckDimList() const {
    std::vector<unsigned> dims;
    for (unsigned d = 0; d < kRuntimeCheckDims; ++d)
      if ((runtimeCheckDims >> d) & 1)
        dims.push_back(d);
    return dims;
  }
};
/// With `inferred`, also the inferred shape (InferResultShape's fold over
/// the ranked operands; left empty when none is ranked).
BroadcastSummary summarizeBroadcast(const std::vector<MaybeShape> &operands,
                                    const MaybeShape &declared,
                                    const BroadcastOptions &options = {},
                                    Shape *inferred = nullptr);

/// "2x?x4", "*" for unranked, "scalar" for rank 0.
std::string formatShape(const MaybeShape &shape);
/// "4" or "?".
std::string formatDim(int64_t size);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_BROADCAST_H
