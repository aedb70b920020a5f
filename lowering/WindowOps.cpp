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

/// Where a generic's accumulator starts: a fill's constant (`start`, the
/// output then only written: the bias add that fuses next leaves no second
/// result behind), else the op's initial value read as one more input.
struct Start {
  Value start, initInput;
};

/// The generic computing `op` over an output of `outType` from `input`,
/// tap (i, j) read at (row0 + i * dh, col0 + j * dw) with the op's strides.
Value tapsGeneric(OpBuilder &b, linalg::LinalgOp op, const Window &w,
                  Value input, int64_t row0, int64_t col0,
                  RankedTensorType outType, const Start &from) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  unsigned rank = outType.getRank();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto tapType = RankedTensorType::get(outType.getShape().take_front(4),
                                       outType.getElementType());
  AffineMap tapMap = AffineMap::get(rank, 0, {d(0), d(1), d(2), d(3)}, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<OpFoldResult> sizes,
      strides = {b.getIndexAttr(1), b.getIndexAttr(w.sh), b.getIndexAttr(w.sw),
                 b.getIndexAttr(1)};
  for (int64_t s : tapType.getShape())
    sizes.push_back(b.getIndexAttr(s));
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      // The tap's input elements for the whole output, a strided view of
      // the input [n, h, w, c]: the output's dims n, oh, ow, c (, m).
      SmallVector<OpFoldResult> offsets = {
          b.getIndexAttr(0), b.getIndexAttr(row0 + i * w.dh),
          b.getIndexAttr(col0 + j * w.dw), b.getIndexAttr(0)};
      inputs.push_back(tensor::ExtractSliceOp::create(b, loc, tapType, input,
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
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  unsigned taps = inputs.size();
  if (!from.start) {
    inputs.push_back(from.initInput);
    maps.push_back(identity);
  }
  maps.push_back(identity);
  Value dest = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Block &body = op->getRegion(0).front();
  unsigned perTap = w.weights ? 2 : 1;
  auto generic = linalg::GenericOp::create(
      b, loc, outType, inputs, ValueRange{dest}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = from.start ? from.start : args[taps];
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
  return generic->getResult(0);
}

/// Output positions [first, end) of a dim whose taps all read the unpadded
/// input (pad p before it, n elements, window k with dilation dl, stride s).
std::pair<int64_t, int64_t> inBounds(int64_t p, int64_t n, int64_t k,
                                     int64_t dl, int64_t s, int64_t out) {
  int64_t first = (p + s - 1) / s;
  int64_t last = n - 1 + p - (k - 1) * dl;
  int64_t end = last < 0 ? 0 : std::min(last / s + 1, out);
  return {first, std::max(first, end)};
}

/// A window op whose input is padded (tensor.pad) and whose accumulator
/// starts from a constant, computed without the padded copy of the whole
/// input (a fresh 64 MiB buffer for a 1x256x256x256 input, whose page
/// faults and copy were most of the time: max pool 3x3 s2 6.0x -> 1.6x the
/// memory floor, depthwise 3x3 4.9x -> 3.5x, its bias add no longer fused):
/// the interior, where every tap is in bounds, straight from the input, the
/// border strips each from a small padded slice; the pieces go into one
/// result (insert_slice). Returns the result, or null when it does not
/// apply.
Value splitPadded(OpBuilder &b, linalg::LinalgOp op, const Window &w,
                  const Start &from) {
  auto pad = w.input.getDefiningOp<tensor::PadOp>();
  if (!pad || !from.start || !pad.getConstantPaddingValue() ||
      (pad.hasZeroLowPad() && pad.hasZeroHighPad()))
    return nullptr;
  SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
  if (llvm::is_contained(low, ShapedType::kDynamic) ||
      llvm::is_contained(high, ShapedType::kDynamic) || low[0] || low[3] ||
      high[0] || high[3])
    return nullptr;
  Location loc = op.getLoc();
  Value src = pad.getSource();
  auto in = cast<RankedTensorType>(src.getType());
  auto out = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  int64_t n = out.getDimSize(0), c = out.getDimSize(3);
  int64_t h = in.getDimSize(1), wd = in.getDimSize(2);
  int64_t oh = out.getDimSize(1), ow = out.getDimSize(2);
  auto [oh0, oh1] = inBounds(low[1], h, w.kh, w.dh, w.sh, oh);
  auto [ow0, ow1] = inBounds(low[2], wd, w.kw, w.dw, w.sw, ow);
  if (oh1 <= oh0 || ow1 <= ow0)
    return nullptr;
  Value result =
      tensor::EmptyOp::create(b, loc, out.getShape(), out.getElementType());
  auto ofr = [&](ArrayRef<int64_t> v) {
    SmallVector<OpFoldResult> r;
    for (int64_t x : v)
      r.push_back(b.getIndexAttr(x));
    return r;
  };
  // (rows [a, b), columns [c0, c1)): the interior first, then the strips.
  int64_t regions[5][4] = {{oh0, oh1, ow0, ow1},
                           {0, oh0, 0, ow},
                           {oh1, oh, 0, ow},
                           {oh0, oh1, 0, ow0},
                           {oh0, oh1, ow1, ow}};
  for (auto [k, r] : llvm::enumerate(regions)) {
    int64_t ra = r[0], rb = r[1], ca = r[2], cb = r[3];
    if (ra >= rb || ca >= cb)
      continue;
    SmallVector<int64_t> shape(out.getShape());
    shape[1] = rb - ra;
    shape[2] = cb - ca;
    auto type = RankedTensorType::get(shape, out.getElementType());
    SmallVector<int64_t> at(out.getRank(), 0), ones(out.getRank(), 1);
    at[1] = ra;
    at[2] = ca;
    Value piece;
    if (k == 0) {
      piece = tapsGeneric(b, op, w, src, ra * w.sh - low[1], ca * w.sw - low[2],
                          type, from);
    } else {
      // The input rows and columns the strip reads, padded where they
      // leave the input.
      int64_t r0 = ra * w.sh - low[1],
              r1 = (rb - 1) * w.sh + (w.kh - 1) * w.dh - low[1];
      int64_t c0 = ca * w.sw - low[2],
              c1 = (cb - 1) * w.sw + (w.kw - 1) * w.dw - low[2];
      int64_t rs = std::max<int64_t>(r0, 0), re = std::min(r1, h - 1);
      int64_t cs = std::max<int64_t>(c0, 0), ce = std::min(c1, wd - 1);
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, src, ofr({0, rs, cs, 0}),
          ofr({n, re - rs + 1, ce - cs + 1, c}), ofr({1, 1, 1, 1}));
      SmallVector<int64_t> lo = {0, rs - r0, cs - c0, 0},
                           hi = {0, r1 - re, c1 - ce, 0};
      auto padType = RankedTensorType::get({n, r1 - r0 + 1, c1 - c0 + 1, c},
                                           out.getElementType());
      Value padded =
          tensor::PadOp::create(b, loc, padType, slice, ofr(lo), ofr(hi),
                                pad.getConstantPaddingValue());
      piece = tapsGeneric(b, op, w, padded, 0, 0, type, from);
    }
    result = tensor::InsertSliceOp::create(b, loc, piece, result, ofr(at),
                                           ofr(shape), ofr(ones));
  }
  return result;
}

/// The generic(s) replacing `op` (see the file comment).
void unroll(linalg::LinalgOp op, const Window &w) {
  OpBuilder b(op);
  Value init = op.getDpsInits()[0];
  Start from;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
      from.start = fill.getInputs()[0];
  if (!from.start)
    from.initInput = init;
  Value result = splitPadded(b, op, w, from);
  if (!result)
    result = tapsGeneric(b, op, w, w.input, 0, 0,
                         cast<RankedTensorType>(init.getType()), from);
  op->getResult(0).replaceAllUsesWith(result);
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
