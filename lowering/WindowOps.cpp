//===- WindowOps.cpp - small windows unrolled into element-wise ops ------===//
//
// A depthwise convolution (linalg.depthwise_conv_2d_nhwc_hwcm, channel
// multiplier 1) or a max pool (linalg.pooling_nhwc_max) with a small static
// window becomes one linalg.generic over the output: each of the KH x KW
// taps is an input of its own, the same tensor read at (oh * sh + kh * dh,
// ow * sw + kw * dw), and the body applies the op's own body once per tap,
// in the loops' order (kh, then kw). The result is element-wise in the
// output: the channels are the innermost loop, which LLVM vectorises, the
// window is in registers, and the bias add fuses into it
// (linalg-fuse-elementwise-ops runs next). Before, the window loops were
// innermost: a scalar 3x3 loop per output element (depthwise 3x3 of
// 1x256x256x256: 5.9x the memory floor; max pool 3x3 s2: 6.1x).
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// Taps from which a window stays a loop (the generic has one input each).
constexpr int64_t kMaxTaps = 16;

struct Window {
  Value input, weights; // weights: null for a pool
  int64_t kh, kw, sh, sw, dh, dw;
};

std::optional<Window> windowOf(linalg::LinalgOp op) {
  auto attrs = [](DenseIntElementsAttr a) {
    return SmallVector<int64_t>(a.getValues<int64_t>());
  };
  Window w;
  SmallVector<int64_t> strides, dilations;
  if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcmOp>(*op)) {
    w.input = dw.getInputs()[0];
    w.weights = dw.getInputs()[1];
    strides = attrs(dw.getStrides());
    dilations = attrs(dw.getDilations());
  } else if (auto pool = dyn_cast<linalg::PoolingNhwcMaxOp>(*op)) {
    w.input = pool.getInputs()[0];
    strides = attrs(pool.getStrides());
    dilations = attrs(pool.getDilations());
  } else {
    return std::nullopt;
  }
  auto window = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto in = dyn_cast<RankedTensorType>(w.input.getType());
  auto out = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!op.hasPureTensorSemantics() || !window || !in || !out ||
      !window.hasStaticShape() || !in.hasStaticShape() ||
      !out.hasStaticShape() || !in.getElementType().isF32() ||
      strides.size() != 2 || dilations.size() != 2)
    return std::nullopt;
  // A multiplier of 1 (hwcm: [KH, KW, C, 1]): every output channel reads
  // its own input channel.
  if (w.weights && window.getDimSize(3) != 1)
    return std::nullopt;
  w.kh = window.getDimSize(0);
  w.kw = window.getDimSize(1);
  w.sh = strides[0];
  w.sw = strides[1];
  w.dh = dilations[0];
  w.dw = dilations[1];
  if (w.kh * w.kw > kMaxTaps)
    return std::nullopt;
  return w;
}

/// The generic replacing `op` (see the file comment).
void unroll(linalg::LinalgOp op, const Window &w) {
  OpBuilder b(op);
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  Value init = op.getDpsInits()[0];
  unsigned rank = cast<RankedTensorType>(init.getType()).getRank();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  auto out = cast<RankedTensorType>(init.getType());
  auto in = cast<RankedTensorType>(w.input.getType());
  auto tapType = RankedTensorType::get({out.getDimSize(0), out.getDimSize(1),
                                        out.getDimSize(2), out.getDimSize(3)},
                                       in.getElementType());
  AffineMap tapMap = AffineMap::get(rank, 0, {d(0), d(1), d(2), d(3)}, ctx);
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      // The tap's input elements for the whole output, a strided view of
      // the input [n, h, w, c]: the output's dims n, oh, ow, c (, m).
      SmallVector<OpFoldResult> offsets = {
          b.getIndexAttr(0), b.getIndexAttr(i * w.dh), b.getIndexAttr(j * w.dw),
          b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes,
          strides = {b.getIndexAttr(1), b.getIndexAttr(w.sh),
                     b.getIndexAttr(w.sw), b.getIndexAttr(1)};
      for (int64_t s : tapType.getShape())
        sizes.push_back(b.getIndexAttr(s));
      inputs.push_back(tensor::ExtractSliceOp::create(b, loc, tapType, w.input,
                                                      offsets, sizes, strides));
      maps.push_back(tapMap);
      if (w.weights) {
        inputs.push_back(w.weights);
        maps.push_back(
            AffineMap::get(rank, 0,
                           {getAffineConstantExpr(i, ctx),
                            getAffineConstantExpr(j, ctx), d(3), d(4)},
                           ctx));
      }
    }
  // The accumulator starts from the fill's constant (the output is then
  // only written, and the bias add that fuses next leaves no second result
  // behind), else from the initial value read as one more input.
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value start, dest;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (fill.getInputs()[0].getDefiningOp<arith::ConstantOp>()) {
      start = fill.getInputs()[0];
      dest = fill.getOutputs()[0];
    }
  unsigned taps = inputs.size();
  if (!start) {
    inputs.push_back(init);
    maps.push_back(identity);
    dest =
        tensor::EmptyOp::create(b, loc, out.getShape(), out.getElementType());
  }
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Block &body = op->getRegion(0).front();
  unsigned perTap = w.weights ? 2 : 1;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{dest}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = start ? start : args[taps];
        for (unsigned t = 0; t < taps; t += perTap) {
          IRMapping map;
          map.map(body.getArgument(0), args[t]);
          if (w.weights)
            map.map(body.getArgument(1), args[t + 1]);
          map.map(body.getArgument(body.getNumArguments() - 1), acc);
          for (Operation &o : body.without_terminator())
            nb.clone(o, map);
          acc = map.lookupOrDefault(body.getTerminator()->getOperand(0));
        }
        linalg::YieldOp::create(nb, l, acc);
      });
  op->replaceAllUsesWith(generic->getResults());
  op->erase();
}

struct UnrollWindowsPass
    : PassWrapper<UnrollWindowsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollWindowsPass)
  StringRef getArgument() const override { return "tosa-lsp-unroll-windows"; }
  StringRef getDescription() const override {
    return "Depthwise convolutions and max pools with small windows as "
           "element-wise generics, one input per tap";
  }
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Window>> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<Window> w = windowOf(op))
        found.push_back({op, *w});
    });
    for (auto &[op, w] : found)
      unroll(op, w);
  }
};

} // namespace

void registerWindowPasses() { PassRegistration<UnrollWindowsPass>(); }

} // namespace tosa_lsp::detail
