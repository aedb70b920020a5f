//===- WindowOps.cpp - small windows unrolled into element-wise ops ------===//
//
// A depthwise convolution (linalg.depthwise_conv_2d_nhwc_hwcm, channel
// multiplier 1), a max pool (linalg.pooling_nhwc_max) or the sum of an
// average pool (linalg.pooling_nhwc_sum) with a small static
// window becomes one linalg.generic over the output: each of the KH x KW
// taps is an input of its own, the same tensor read at (oh * sh + kh * dh,
// ow * sw + kw * dw), and the body applies the op's own body once per tap,
// in the loops' order (kh, then kw). The result is element-wise in the
// output: the channels are the innermost loop, which LLVM vectorises, the
// window is in registers (each tap's multiply and add contracted to an
// FMA). A depthwise conv's output drops TOSA's multiplier dim (1), and the
// bias add after it becomes the accumulator's start: no second pass over
// the output, no collapse between them (which made F_into compute into a
// fresh buffer and copy). Before, the window loops were innermost: a
// scalar 3x3 loop per output element (depthwise 3x3 of 1x256x256x256:
// 5.9x the memory floor; max pool 3x3 s2: 6.1x). A depthwise conv's bigger
// window (7x7) becomes one generic whose window loops are outside the
// channels' (windowLoops), the bias folded in the same way.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// Taps from which a window is not unrolled (the generic has one input
/// each, and one per weight): 5x5 windows (MobileNetV3's and EfficientNet's
/// depthwise convs, YOLO's SPP pools) are unrolled, 1.4-4x faster than the
/// loops (bench/kernels/README.md). A 7x7 one (ConvNeXt's) is not: unrolled
/// (98 inputs) it ran 1.2-1.5x faster than the loops, still 12-14x the
/// memory floor, and compiled in 0.76 s instead of 0.34. A depthwise
/// conv's keeps its window loops, outside the channels' (windowLoops); a
/// pool's stays the named op.
constexpr int64_t kMaxTaps = 25;

struct Window {
  Value input, weights; // weights: null for a pool
  int64_t kh, kw, sh, sw, dh, dw;
  /// More taps than kMaxTaps (a depthwise conv only): one generic whose
  /// window loops are outside the channels' (windowLoops), not one input
  /// per tap.
  bool big = false;
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
  } else if (auto sum = dyn_cast<linalg::PoolingNhwcSumOp>(*op)) {
    // TOSA's average pool: this sum, then an element-wise divide that
    // fuses into the generic (it was a zeroed buffer, a pass per tap).
    w.input = sum.getInputs()[0];
    strides = attrs(sum.getStrides());
    dilations = attrs(sum.getDilations());
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
  w.big = w.kh * w.kw > kMaxTaps;
  // A big pool stays the named op's loops: as windowLoops' generic a max
  // pool 7x7 compiled in 2.1 s at -O3 instead of 0.25 (LLVM's expansion of
  // the vectorised maximum, unrolled).
  if (w.big && !w.weights)
    return std::nullopt;
  return w;
}

/// Where a generic's accumulator starts: a fill's constant (`start`, the
/// output then only written: the bias add that fuses next leaves no second
/// result behind), else the op's initial value read as one more input.
struct Start {
  Value start, initInput;
  /// A bias added to the result (the element-wise add after TOSA's
  /// depthwise conv), folded in as the accumulator's start: no second pass
  /// over the output. `biasMap` reads it in the output's dims.
  Value bias;
  AffineMap biasMap;
  /// An element-wise op applied to the result (foldableFinish), in each
  /// piece at its place in the output.
  linalg::GenericOp finish;
};

/// `finish`'s body applied to `acc` inside a generic over a piece of the
/// output at (outRow, outCol): its indices are the piece's plus those.
Value applyFinish(OpBuilder &b, Location loc, linalg::GenericOp finish,
                  Value acc, int64_t outRow, int64_t outCol) {
  Block &body = finish.getRegion().front();
  IRMapping map;
  map.map(body.getArgument(0), acc);
  for (Operation &o : body.without_terminator()) {
    auto index = dyn_cast<linalg::IndexOp>(o);
    if (!index) {
      // Constants from outside the body (foldableFinish takes no other
      // values) are cloned here: the piece may come before them.
      for (Value v : o.getOperands())
        if (v.getParentBlock() != &body && !map.contains(v))
          map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
      b.clone(o, map);
      continue;
    }
    Value i = linalg::IndexOp::create(b, loc, index.getDim());
    int64_t offset = index.getDim() == 1   ? outRow
                     : index.getDim() == 2 ? outCol
                                           : 0;
    if (offset)
      i = arith::AddIOp::create(b, loc, i,
                                arith::ConstantIndexOp::create(b, loc, offset));
    map.map(index.getResult(), i);
  }
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}

/// The element-wise generic that is `op`'s only use, when it reads nothing
/// but `op`'s result (where it writes) and the output's indices: TOSA's
/// average pool divides its sum there by the count of taps in bounds. It
/// is applied in each piece (tapsGeneric): with padding, the pieces go into
/// one tensor, which the divide read again, a second pass over the output
/// (average pool 3x3 stride 2 of 1x256x256x256: 1.85x the memory floor).
linalg::GenericOp foldableFinish(linalg::LinalgOp op) {
  Value r = op->getResult(0);
  if (!r.hasOneUse())
    return nullptr;
  auto fin = dyn_cast<linalg::GenericOp>(*r.user_begin());
  if (!fin || fin.getNumDpsInputs() != 1 || fin.getNumDpsInits() != 1 ||
      fin.getDpsInputOperand(0)->get() != r ||
      fin.getNumParallelLoops() != fin.getNumLoops() ||
      fin->getResult(0).getType() != r.getType() ||
      !llvm::all_of(fin.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = fin.getRegion().front();
  if (!body.getArgument(1).use_empty())
    return nullptr;
  for (Operation &o : body.without_terminator()) {
    if (o.getNumRegions() || !isPure(&o))
      return nullptr;
    // Values from outside the body: constants only (cloned with it).
    for (Value v : o.getOperands())
      if (v.getParentBlock() != &body && !matchPattern(v, m_Constant()))
        return nullptr;
  }
  return fin;
}

/// The window op's `body` applied once: `in` (and a depthwise conv's
/// `weight`) added to `acc`; the new accumulator.
Value applyTap(OpBuilder &b, Block &body, Value in, Value weight, Value acc) {
  IRMapping map;
  map.map(body.getArgument(0), in);
  if (weight)
    map.map(body.getArgument(1), weight);
  map.map(body.getArgument(body.getNumArguments() - 1), acc);
  for (Operation &o : body.without_terminator()) {
    Operation *c = b.clone(o, map);
    // A tap's multiply and add as one FMA (rounded once: closer to the
    // exact sum, not further).
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(c))
      c->setAttr(fm.getFastMathAttrName(),
                 arith::FastMathFlagsAttr::get(c->getContext(),
                                               arith::FastMathFlags::contract));
  }
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}

/// Output columns computed together (WindowPrefetch.cpp), 1 for none.
/// At stride 1 adjacent columns share taps (a 3x3 window: 4 columns read 6
/// input columns, not 12), and a depthwise conv's columns share all its
/// weight lines at any stride. Measured on 1x256x256x256 (x the memory
/// floor): depthwise 3x3 s1 with 2/4/8 columns 1.9/1.3-1.4/1.7, s2
/// 1.0-1.1/1.1-1.2/1.3-1.4 (1.9 alone), max pool 3x3 s1 1.2-1.3/1.15/1.7;
/// pools at stride 2 are slower jammed (1.25 -> 1.35).
int64_t jamColumns(const Window &w) {
  if (w.kw < 2)
    return 1;
  if (w.sw == 1)
    return 4;
  return w.weights ? 2 : 1;
}

/// The generic computing `op` over an output of `outType` from `input`,
/// tap (i, j) read at (row0 + i * dh, col0 + j * dw) with the op's strides.
/// With `outside`, the taps it names read `padValue` instead (a border
/// piece of a padded input: the padding's constant, as the padded copy
/// held, so NaN/inf weights give what they gave there).
Value tapsGeneric(OpBuilder &b, linalg::LinalgOp op, const Window &w,
                  Value input, int64_t row0, int64_t col0,
                  RankedTensorType outType, const Start &from,
                  Value dest = nullptr, bool prefetch = false,
                  llvm::function_ref<bool(int64_t, int64_t)> outside = {},
                  Value padValue = nullptr, int64_t outRow = 0,
                  int64_t outCol = 0) {
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
  // Per tap: its input's position in `inputs` (-1: the padding value),
  // then its weights' (-1: none).
  SmallVector<std::pair<int, int>> tapArgs;
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      tapArgs.push_back({-1, -1});
      if (!outside || !outside(i, j)) {
        // The tap's input elements for the whole output, a strided view of
        // the input [n, h, w, c]: the output's dims n, oh, ow, c (, m).
        SmallVector<OpFoldResult> offsets = {
            b.getIndexAttr(0), b.getIndexAttr(row0 + i * w.dh),
            b.getIndexAttr(col0 + j * w.dw), b.getIndexAttr(0)};
        tapArgs.back().first = inputs.size();
        inputs.push_back(tensor::ExtractSliceOp::create(
            b, loc, tapType, input, offsets, sizes, strides));
        maps.push_back(tapMap);
      }
      if (w.weights) {
        tapArgs.back().second = inputs.size();
        inputs.push_back(w.weights);
        maps.push_back(AffineMap::get(rank, 0,
                                      {getAffineConstantExpr(i, ctx),
                                       getAffineConstantExpr(j, ctx), d(3),
                                       getAffineConstantExpr(0, ctx)},
                                      ctx));
      }
    }
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  unsigned taps = inputs.size();
  if (!from.start) {
    inputs.push_back(from.initInput);
    maps.push_back(identity);
  }
  if (from.bias) {
    inputs.push_back(from.bias);
    maps.push_back(from.biasMap);
  }
  maps.push_back(identity);
  if (!dest)
    dest = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                   outType.getElementType());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Block &body = op->getRegion(0).front();
  auto generic = linalg::GenericOp::create(
      b, loc, outType, inputs, ValueRange{dest}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = from.bias    ? args[inputs.size() - 1]
                    : from.start ? from.start
                                 : args[taps];
        for (auto [in, weight] : tapArgs) {
          acc = applyTap(nb, body, in < 0 ? padValue : args[in],
                         w.weights ? args[weight] : Value(), acc);
        }
        if (from.finish)
          acc = applyFinish(nb, l, from.finish, acc, outRow, outCol);
        linalg::YieldOp::create(nb, l, acc);
      });
  if (prefetch) {
    // The taps of the last column in rows no earlier output row read.
    SmallVector<int64_t> fresh;
    for (int64_t i = 0; i < w.kh; ++i)
      if (i * w.dh > (w.kh - 1) * w.dh - w.sh &&
          tapArgs[i * w.kw + w.kw - 1].first >= 0)
        fresh.push_back(tapArgs[i * w.kw + w.kw - 1].first);
    markWindowPrefetch(generic, fresh, outType.getDimSize(3), w.sw,
                       outType.getElementTypeBitWidth() / 8, jamColumns(w));
  }
  return generic->getResult(0);
}

/// Taps of all the pieces of a padded window op at most (a piece's taps
/// are its generic's inputs): a 3x3 window in up to 25 pieces (pads of 2,
/// as a dilated 3x3 conv has), a 5x5 one in a 3x3 grid; beyond, the padded
/// input is copied whole. Each piece is a generic, compiled in F and
/// F_into, and compile time grows with their taps more than run time
/// falls: a 1x256x256x256 depthwise 5x5 conv, pad 2, in 25 pieces compiled
/// in 2.35 s at -O3 and ran in 25-29 ms; from the padded copy, 0.41 s and
/// 32-39 ms (as loops: 56-72 ms). A 2x4x9x64 one, 2x8 window, pad 4, in 45
/// pieces: 9.4 s. On a small input (under 1 MiB padded) the copy is cheap:
/// a 3x3 grid at most.
constexpr int64_t kMaxPieceTaps = 9 * 25;
constexpr size_t kMaxPiecesSmall = 9;
constexpr int64_t kSmallPaddedBytes = 1 << 20;

/// Output positions [first, end) of a dim whose taps all read the unpadded
/// input (pad p before it, n elements, window k with dilation dl, stride s).
std::pair<int64_t, int64_t> inBounds(int64_t p, int64_t n, int64_t k,
                                     int64_t dl, int64_t s, int64_t out) {
  int64_t first = (p + s - 1) / s;
  int64_t last = n - 1 + p - (k - 1) * dl;
  int64_t end = last < 0 ? 0 : std::min(last / s + 1, out);
  return {first, std::max(first, end)};
}

/// Static offsets, sizes or strides of a slice.
SmallVector<OpFoldResult> ofr(OpBuilder &b, ArrayRef<int64_t> v) {
  return getAsIndexOpFoldResult(b.getContext(), v);
}

/// `pad`'s constant padding value, usable at `b`'s insertion point (a
/// constant in its region is cloned there).
Value paddingValueHere(OpBuilder &b, tensor::PadOp pad) {
  Value v = pad.getConstantPaddingValue();
  if (auto cst = v ? v.getDefiningOp<arith::ConstantOp>() : nullptr)
    v = b.clone(*cst)->getResult(0);
  return v;
}

/// A window op whose input is padded (tensor.pad) and whose accumulator
/// starts from a constant, computed without the padded copy of the whole
/// input (a fresh 64 MiB buffer for a 1x256x256x256 input, whose page
/// faults and copy were most of the time: max pool 3x3 s2 6.0x -> 1.6x the
/// memory floor, depthwise 3x3 4.9x -> 3.5x, its bias add no longer fused):
/// the interior, where every tap is in bounds, straight from the input, the
/// border pieces too, their taps outside the input reading the padding
/// value; the pieces go into one result (insert_slice). Returns the result,
/// or null when it does not apply.
Value splitPadded(OpBuilder &b, linalg::LinalgOp op, const Window &w,
                  RankedTensorType out, const Start &from, Value into) {
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
  int64_t h = in.getDimSize(1), wd = in.getDimSize(2);
  int64_t oh = out.getDimSize(1), ow = out.getDimSize(2);
  auto [oh0, oh1] = inBounds(low[1], h, w.kh, w.dh, w.sh, oh);
  auto [ow0, ow1] = inBounds(low[2], wd, w.kw, w.dw, w.sw, ow);
  if (oh1 <= oh0 || ow1 <= ow0)
    return nullptr;
  Value result = into ? into
                      : tensor::EmptyOp::create(b, loc, out.getShape(),
                                                out.getElementType())
                            .getResult();
  // Row classes: each border row alone, the interior rows together (the
  // same for columns); in each piece (a row class by a column class) a tap
  // is in bounds for every output position or for none. The interior
  // first; border pieces read the input itself, their taps outside it the
  // padding value (no padded slices: they were four fresh ~800 KB buffers
  // per call of a 1x256x256x256 depthwise conv, page-faulted in again on
  // each call as malloc gave them back: 10% of its time).
  auto classes = [](int64_t first, int64_t end, int64_t n) {
    SmallVector<std::pair<int64_t, int64_t>> c = {{first, end}};
    for (int64_t i = 0; i < first; ++i)
      c.push_back({i, i + 1});
    for (int64_t i = end; i < n; ++i)
      c.push_back({i, i + 1});
    return c;
  };
  auto rows = classes(oh0, oh1, oh), cols = classes(ow0, ow1, ow);
  auto padded = cast<RankedTensorType>(pad.getType());
  bool small = padded.hasStaticShape() &&
               padded.getNumElements() * padded.getElementTypeBitWidth() / 8 <
                   kSmallPaddedBytes;
  size_t pieces = rows.size() * cols.size();
  if (small ? pieces > kMaxPiecesSmall
            : int64_t(pieces) * w.kh * w.kw > kMaxPieceTaps)
    return nullptr;
  Value padValue = paddingValueHere(b, pad);
  for (auto [ra, rb] : rows)
    for (auto [ca, cb] : cols) {
      SmallVector<int64_t> shape(out.getShape());
      shape[1] = rb - ra;
      shape[2] = cb - ca;
      auto type = RankedTensorType::get(shape, out.getElementType());
      SmallVector<int64_t> at(out.getRank(), 0), ones(out.getRank(), 1);
      at[1] = ra;
      at[2] = ca;
      // Each piece is computed in its place in the result (an empty tensor
      // there is turned into the caller's buffer by eliminate-empty-tensors
      // in F_into, but not the pieces' own: each was a copy).
      Value place = tensor::ExtractSliceOp::create(
          b, loc, type, result, ofr(b, at), ofr(b, shape), ofr(b, ones));
      int64_t row0 = ra * w.sh - low[1], col0 = ca * w.sw - low[2];
      bool interior = ra == oh0 && ca == ow0;
      auto outside = [&, row0 = row0, col0 = col0](int64_t i, int64_t j) {
        int64_t r = row0 + i * w.dh, c = col0 + j * w.dw;
        return r < 0 || r >= h || c < 0 || c >= wd;
      };
      Value piece =
          tapsGeneric(b, op, w, src, row0, col0, type, from, place,
                      /*prefetch=*/interior, outside, padValue, ra, ca);
      result = tensor::InsertSliceOp::create(b, loc, piece, result, ofr(b, at),
                                             ofr(b, shape), ofr(b, ones));
    }
  return result;
}

/// Whether `v` can be used at `op`: defined before it, or by an op of its
/// block (TOSA's reshape of the bias) whose operands are, moved before it.
bool availableAt(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return v.getParentRegion()->isAncestor(op->getParentRegion());
  if (def->getBlock() != op->getBlock())
    return false;
  if (def->isBeforeInBlock(op))
    return true;
  for (Value operand : def->getOperands())
    if (Operation *d = operand.getDefiningOp();
        d && d->getBlock() == op->getBlock() && !d->isBeforeInBlock(op))
      return false;
  if (def->getNumRegions())
    return false;
  def->moveBefore(op);
  return true;
}

/// The collapse of [n, oh, ow, c, 1] to [n, oh, ow, c] that is `conv`'s
/// only use, if it is.
tensor::CollapseShapeOp dropsMultiplier(Value conv) {
  if (!conv.hasOneUse())
    return nullptr;
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(*conv.user_begin());
  if (!collapse || collapse.getSrcType().getRank() != 5 ||
      collapse.getResultType().getRank() != 4 ||
      collapse.getSrcType().getDimSize(4) != 1)
    return nullptr;
  return collapse;
}

/// The element-wise add of a bias that is `op`'s only use (through the
/// collapse of the multiplier dim TOSA's lowering puts between them), when
/// the accumulator starts from zero and the bias does not vary along the
/// output's rows and columns (dims 1 and 2: the pieces of splitPadded each
/// cover some of them). Sets `from.bias`; returns the add, or null.
linalg::GenericOp foldableBias(linalg::LinalgOp op, Start &from) {
  auto zero = from.start ? from.start.getDefiningOp<arith::ConstantOp>()
                         : arith::ConstantOp();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
  Value conv = op->getResult(0);
  if (!value || !value.getValue().isZero() || !conv.hasOneUse())
    return nullptr;
  // TOSA's form: the add reads the output without its multiplier dim.
  auto collapse = dropsMultiplier(conv);
  if (!collapse || !collapse->hasOneUse())
    return nullptr;
  conv = collapse.getResult();
  auto add = dyn_cast<linalg::GenericOp>(*conv.user_begin());
  if (!add || add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 ||
      add.getNumParallelLoops() != add.getNumLoops() ||
      add->getResult(0).getType() != conv.getType())
    return nullptr;
  Block &body = add.getRegion().front();
  auto sum = dyn_cast<arith::AddFOp>(&body.front());
  auto args = body.getArguments().take_front(2);
  if (body.getOperations().size() != 2 || !sum ||
      body.getTerminator()->getOperand(0) != sum.getResult() ||
      !llvm::is_contained(args, sum.getLhs()) ||
      !llvm::is_contained(args, sum.getRhs()) || sum.getLhs() == sum.getRhs())
    return nullptr;
  unsigned self = add.getDpsInputOperand(0)->get() == conv ? 0 : 1;
  OpOperand *bias = add.getDpsInputOperand(1 - self);
  AffineMap map = add.getMatchingIndexingMap(bias);
  if (!add.getMatchingIndexingMap(add.getDpsInputOperand(self)).isIdentity() ||
      bias->get() == conv || map.isFunctionOfDim(1) || map.isFunctionOfDim(2) ||
      !availableAt(bias->get(), op))
    return nullptr;
  from.bias = bias->get();
  from.biasMap = map;
  return add;
}

/// The caller's buffer (F_into's destination argument) that `result` is
/// materialized in, if it is its only use. The pieces of splitPadded are
/// inserted into it: eliminate-empty-tensors then computes each in place,
/// whereas from an empty tensor it made the first piece's empty a slice of
/// that tensor before replacing it by the buffer (a 64 MiB alloc + copy).
Value callersBuffer(Value result, RankedTensorType type) {
  if (!result.hasOneUse())
    return nullptr;
  auto into =
      dyn_cast<bufferization::MaterializeInDestinationOp>(*result.user_begin());
  auto dest = into ? dyn_cast<BlockArgument>(into.getDest()) : nullptr;
  if (!dest || dest.getType() != type || !dest.hasOneUse() ||
      dest.getParentBlock() != into->getBlock())
    return nullptr;
  return dest;
}

/// The padded copy a window generic reads, each element written once: the
/// border's slabs filled with the padding value in place, the source
/// copied into the interior. tensor.pad itself bufferizes to a fill of the
/// whole buffer and then the copy over it (69 MB of zeros written first
/// for a 1x256x256x256 f32 input with pads of 2). `pad` unchanged when a
/// size or a pad is dynamic.
Value padOnce(OpBuilder &b, tensor::PadOp pad) {
  auto type = cast<RankedTensorType>(pad.getType());
  auto srcType = cast<RankedTensorType>(pad.getSource().getType());
  SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
  if (!pad.getConstantPaddingValue() || !type.hasStaticShape() ||
      !srcType.hasStaticShape() ||
      llvm::is_contained(low, ShapedType::kDynamic) ||
      llvm::is_contained(high, ShapedType::kDynamic))
    return pad.getResult();
  Location loc = pad.getLoc();
  Value value = paddingValueHere(b, pad);
  ArrayRef<int64_t> shape = type.getShape(), n = srcType.getShape();
  int64_t rank = type.getRank();
  SmallVector<int64_t> ones(rank, 1);
  // The source first: inserted last, a tap at the interior's place would
  // fold to the source (another buffer, of another alignment, for one of
  // the taps: a max pool 5x5 ran 3x slower).
  Value dest = tensor::InsertSliceOp::create(
      b, loc, pad.getSource(),
      tensor::EmptyOp::create(b, loc, shape, type.getElementType()),
      ofr(b, low), ofr(b, n), ofr(b, ones));
  // The border as slabs that do not overlap: those where dim d is the first
  // dim outside the interior.
  for (int64_t d = 0; d < rank; ++d)
    for (bool after : {false, true}) {
      int64_t width = after ? high[d] : low[d];
      if (!width)
        continue;
      SmallVector<int64_t> offsets(rank, 0), sizes(shape);
      for (int64_t e = 0; e < d; ++e) {
        offsets[e] = low[e];
        sizes[e] = n[e];
      }
      offsets[d] = after ? low[d] + n[d] : 0;
      sizes[d] = width;
      Value slab = tensor::ExtractSliceOp::create(b, loc, dest, ofr(b, offsets),
                                                  ofr(b, sizes), ofr(b, ones));
      Value filled = linalg::FillOp::create(b, loc, value, slab).getResult(0);
      dest = tensor::InsertSliceOp::create(
          b, loc, filled, dest, ofr(b, offsets), ofr(b, sizes), ofr(b, ones));
    }
  return dest;
}

/// A depthwise conv's window of more than kMaxTaps taps as one generic over
/// (n, oh, ow, kh, kw, c): the window's loops outside the channels', so the
/// innermost loop runs along the channels (contiguous in the input, weights and
/// output) and LLVM vectorises it; each output element adds its taps in the
/// named op's order (kh, then kw). The output has no multiplier dim and starts
/// from the bias where one is folded (`from`), so no zero-filled
/// accumulator, bias pass or collapse copy: as named ops (loops c, kh, kw
/// innermost, scalar) each call wrote three fresh 64 MiB buffers for a
/// 1x256x256x256 depthwise 7x7.
Value windowLoops(OpBuilder &b, linalg::LinalgOp op, const Window &w,
                  Value input, RankedTensorType outType, const Start &from) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  Value dest = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType());
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  if (from.bias) {
    dest =
        linalg::GenericOp::create(
            b, loc, outType, ValueRange{from.bias}, ValueRange{dest},
            ArrayRef<AffineMap>{from.biasMap, identity},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(nb, l, args[0]);
            })
            ->getResult(0);
  } else if (from.start) {
    dest = linalg::FillOp::create(b, loc, from.start, dest).getResult(0);
  } else {
    dest = from.initInput;
  }
  SmallVector<Value> inputs = {input, w.weights};
  SmallVector<AffineMap> maps = {
      AffineMap::get(
          6, 0,
          {d(0), d(1) * w.sh + d(3) * w.dh, d(2) * w.sw + d(4) * w.dw, d(5)},
          ctx),
      AffineMap::get(6, 0, {d(3), d(4), d(5), getAffineConstantExpr(0, ctx)},
                     ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx)};
  using It = utils::IteratorType;
  SmallVector<It> iters = {It::parallel,  It::parallel,  It::parallel,
                           It::reduction, It::reduction, It::parallel};
  Block &body = op->getRegion(0).front();
  auto generic = linalg::GenericOp::create(
      b, loc, outType, inputs, ValueRange{dest}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l,
                                applyTap(nb, body, args[0], args[1], args[2]));
      });
  return generic->getResult(0);
}

/// The generic(s) replacing `op` (see the file comment). They compute the
/// output without a depthwise conv's multiplier dim (1): then TOSA's
/// collapse of that dim goes away, and `F_into` writes the caller's buffer
/// in place (with it, eliminate-empty-tensors left a copy: 1.4x the time).
void unroll(linalg::LinalgOp op, const Window &w) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value init = op.getDpsInits()[0];
  auto full = cast<RankedTensorType>(init.getType());
  auto out = RankedTensorType::get(full.getShape().take_front(4),
                                   full.getElementType());
  SmallVector<ReassociationIndices> dropM = {{0}, {1}, {2}, {3, 4}};
  Start from;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
      from.start = fill.getInputs()[0];
  if (!from.start)
    from.initInput =
        full.getRank() == 4
            ? init
            : tensor::CollapseShapeOp::create(b, loc, out, init, dropM)
                  .getResult();
  linalg::GenericOp biasAdd = w.weights ? foldableBias(op, from) : nullptr;
  if (!w.weights && full.getRank() == 4)
    from.finish = foldableFinish(op);
  Value conv = op->getResult(0);
  Value final = biasAdd                 ? biasAdd->getResult(0)
                : from.finish           ? from.finish->getResult(0)
                : dropsMultiplier(conv) ? dropsMultiplier(conv).getResult()
                                        : conv;
  Value result =
      w.big ? Value()
            : splitPadded(b, op, w, out, from, callersBuffer(final, out));
  if (!result) {
    Value input = w.input;
    if (auto pad = input.getDefiningOp<tensor::PadOp>())
      input = padOnce(b, pad);
    result = w.big ? windowLoops(b, op, w, input, out, from)
                   : tapsGeneric(b, op, w, input, 0, 0, out, from, nullptr,
                                 /*prefetch=*/true);
  }
  if (linalg::GenericOp folded = biasAdd ? biasAdd : from.finish) {
    folded->getResult(0).replaceAllUsesWith(result);
    folded->erase();
  } else if (tensor::CollapseShapeOp collapse =
                 full.getRank() == 4 ? nullptr : dropsMultiplier(conv)) {
    collapse.getResult().replaceAllUsesWith(result);
  } else if (full.getRank() != 4) {
    result = tensor::ExpandShapeOp::create(b, loc, full, result, dropM);
  }
  if (tensor::CollapseShapeOp collapse = dropsMultiplier(conv);
      collapse && collapse->use_empty())
    collapse->erase();
  conv.replaceAllUsesWith(result);
  op->erase();
}

struct UnrollWindowsPass
    : PassWrapper<UnrollWindowsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollWindowsPass)
  StringRef getArgument() const override { return "tosa-lsp-unroll-windows"; }
  StringRef getDescription() const override {
    return "Depthwise convolutions and pools with small windows as "
           "element-wise generics, one input per tap; a depthwise "
           "convolution's bigger window with its loops outside the "
           "channels'";
  }
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (windowOf(op))
        found.push_back(op);
    });
    // Each window read when its op is unrolled: the one before may have
    // replaced its input (a pool of a pool read the first pool's erased
    // result: "operand is unlinked", or a crash).
    for (linalg::LinalgOp op : found)
      if (std::optional<Window> w = windowOf(op))
        unroll(op, *w);
  }
};

} // namespace

void registerWindowPasses() { PassRegistration<UnrollWindowsPass>(); }

} // namespace tosa_lsp::detail
