//===- MemoryKernels.cpp - schedules of memory-bound ops ------------------===//
//
// Reductions over the innermost dim (tosa.reduce_sum over C of an NHWC
// tensor): convert-linalg-to-loops gives a scalar loop per pixel whose
// float sum LLVM may not vectorise (it would reassociate), 2.7x the memory
// floor and slower than numpy. Here each pixel's row is one vector read and
// a vector.reduction, which convert-vector-to-llvm lowers with
// reassociation (a tree of vector adds; float reassociation as in the
// matmul kernels). Applied by KernelsPass (Kernels.cpp) to the op tagged
// `tosa_lsp.kernel`.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// The elements of the innermost dim reduced by one vector.reduction: the
/// whole row up to this many, else a chunk of it (a loop carries the sum).
constexpr int64_t kMaxReductionVector = 1024;

/// The reduction's combiner when the body is `out = f(in, out)` with f an
/// add, max or min.
bool simpleCombiner(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  Operation &f = body.front();
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(f))
    return false;
  Value in = body.getArgument(0), out = body.getArgument(1);
  return ((f.getOperand(0) == in && f.getOperand(1) == out) ||
          (f.getOperand(0) == out && f.getOperand(1) == in)) &&
         body.getTerminator()->getOperand(0) == f.getResult(0);
}

} // namespace

std::optional<std::string> reductionSchedule(Operation *generic,
                                             unsigned lanes) {
  auto op = dyn_cast<linalg::GenericOp>(generic);
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || !simpleCombiner(op))
    return std::nullopt;
  auto in = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  if (!in || !in.hasStaticShape() || !in.getElementType().isF32())
    return std::nullopt;
  // One reduction loop, the last, reading the input's innermost dim.
  unsigned rank = op.getNumLoops();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  AffineMap inMap = op.getIndexingMapsArray()[0];
  if (op.getNumReductionLoops() != 1 ||
      iters.back() != utils::IteratorType::reduction || !inMap.isIdentity() ||
      !op.getIndexingMapsArray()[1].isProjectedPermutation())
    return std::nullopt;
  int64_t c = in.getShape().back();
  if (c < static_cast<int64_t>(lanes) || c % lanes)
    return std::nullopt;
  int64_t chunk = c;
  if (c > kMaxReductionVector) {
    chunk = 0;
    for (int64_t d = 512; d >= static_cast<int64_t>(lanes); d -= lanes)
      if (c % d == 0) {
        chunk = d;
        break;
      }
    if (!chunk)
      return std::nullopt;
  }
  std::string sizes, handles = "!transform.any_op";
  for (unsigned i = 0; i + 1 < rank; ++i) {
    sizes += "1, ";
    handles += ", !transform.any_op";
  }
  sizes += chunk == c ? "0" : std::to_string(chunk);
  unsigned loops = rank - 1 + (chunk != c);
  if (chunk != c)
    handles += ", !transform.any_op";
  return llvm::formatv(R"mlir(
module attributes {{transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}) {
    %op = transform.structured.match attributes{{tosa_lsp.kernel} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:{0} = transform.structured.tile_using_for %op tile_sizes [{1}]
      : (!transform.any_op) -> ({2})
    transform.structured.vectorize %tiled : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.tensor.fold_tensor_subset_ops
      transform.apply_patterns.tensor.merge_consecutive_insert_extract_slice
    } : !transform.any_op
    transform.yield
  }
}
)mlir",
                       loops, sizes, handles)
      .str();
}

} // namespace tosa_lsp::detail
