//===- PaddedChannels.cpp - convolutions with output channels padded ------===//
//
// The convolution kernels (Kernels.cpp) tile the output channels F by whole
// vectors. A count that is not a multiple of 8 (YOLO's detection heads:
// 3 x (80 + 5) = 255; 12, 100, 1000) kept MLIR's scalar loops, 10-40x
// slower. Here such a convolution computes F rounded up to a multiple of 8:
// the filter gets zero filters appended (before its FHWC -> HWCF transpose,
// which the kernel then still takes over), the accumulator's initialiser
// (the bias broadcast) is built at the padded size from the bias padded
// with zeros, and the result is the first F channels of the padded one.
// The extra channels cost (F' - F) / F' of the arithmetic and one copy of
// the result.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// `v` with `dim` padded with zeros up to `size`.
Value padDim(OpBuilder &b, Location loc, Value v, unsigned dim, int64_t size) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  SmallVector<OpFoldResult> low(t.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(t.getRank(), b.getIndexAttr(0));
  high[dim] = b.getIndexAttr(size - shape[dim]);
  shape[dim] = size;
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(t.getElementType()));
  return tensor::PadOp::create(b, loc,
                               RankedTensorType::get(shape, t.getElementType()),
                               v, low, high, zero);
}

/// The filter (KH x KW x C x F) at F = `size`: TOSA's FHWC weights padded
/// and transposed when a lone transpose makes it (so the kernel's schedule
/// still fuses that transpose), else the filter itself padded.
Value paddedFilter(OpBuilder &b, Location loc, Value filter, int64_t size) {
  auto t = filter.getDefiningOp<linalg::TransposeOp>();
  if (!t || !filter.hasOneUse() || !t.hasPureTensorSemantics() ||
      !t.getInit().getDefiningOp<tensor::EmptyOp>() ||
      t.getPermutation() != ArrayRef<int64_t>{1, 2, 3, 0})
    return padDim(b, loc, filter, 3, size);
  Value in = padDim(b, loc, t.getInput(), 0, size);
  auto type = cast<RankedTensorType>(filter.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[3] = size;
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, in, empty, t.getPermutation())
      ->getResult(0);
}

/// The accumulator's initialiser at F = `size`: a broadcast (a generic
/// into an empty tensor whose inputs index the channels by d3 alone or not
/// at all) built again from its inputs padded with zeros, else the
/// initialiser padded.
Value paddedInit(OpBuilder &b, Location loc, Value init, int64_t f,
                 int64_t size) {
  auto g = init.getDefiningOp<linalg::GenericOp>();
  auto fallback = [&] { return padDim(b, loc, init, 3, size); };
  if (!g || !init.hasOneUse() || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      g.getNumLoops() != 4)
    return fallback();
  SmallVector<Value> inputs;
  for (OpOperand *in : g.getDpsInputOperands()) {
    Value v = in->get();
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return fallback();
    for (auto [pos, e] :
         llvm::enumerate(g.getMatchingIndexingMap(in).getResults())) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        continue;
      if (d.getPosition() == 3 && t.getDimSize(pos) != f)
        return fallback();
      if (d.getPosition() == 3)
        v = padDim(b, loc, v, pos, size);
    }
    inputs.push_back(v);
  }
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[3] = size;
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  Operation *copy = b.clone(*g);
  copy->setOperands(
      llvm::to_vector(llvm::concat<Value>(inputs, SmallVector<Value>{empty})));
  copy->getResult(0).setType(cast<RankedTensorType>(empty.getType()));
  return copy->getResult(0);
}

/// Multiply-adds x 2 of a static linalg op.
int64_t staticFlops(linalg::LinalgOp op) {
  int64_t n = 2;
  for (int64_t r : op.getStaticLoopRanges())
    n = ShapedType::isDynamic(r) ? 0 : n * r;
  return n;
}

} // namespace

Operation *padOutputChannels(Operation *op, int64_t multiple,
                             int64_t minFlops) {
  auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
  if (!conv || !conv.hasPureTensorSemantics())
    return op;
  auto out = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (!out || !out.hasStaticShape() || !out.getElementType().isF32())
    return op;
  int64_t f = out.getDimSize(3);
  if (f % multiple == 0 || staticFlops(conv) < minFlops)
    return op;
  int64_t size = llvm::alignTo(f, multiple);
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value filter = paddedFilter(b, loc, conv.getInputs()[1], size);
  Value init = paddedInit(b, loc, conv.getOutputs()[0], f, size);
  auto padded = linalg::Conv2DNhwcHwcfOp::create(
      b, loc, TypeRange{init.getType()},
      ValueRange{conv.getInputs()[0], filter}, ValueRange{init},
      conv.getStrides(), conv.getDilations());
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0)),
      ones(4, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : out.getShape())
    sizes.push_back(b.getIndexAttr(d));
  Value result = tensor::ExtractSliceOp::create(
      b, loc, out, padded.getResult(0), zeros, sizes, ones);
  Operation *oldInit = conv.getOutputs()[0].getDefiningOp();
  Operation *oldFilter = conv.getInputs()[1].getDefiningOp();
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  // The unpadded producers, when nothing else uses them.
  for (Operation *dead : {oldInit, oldFilter})
    if (dead && wouldOpBeTriviallyDead(dead))
      dead->erase();
  return padded;
}

} // namespace tosa_lsp::detail
