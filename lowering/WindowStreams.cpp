//===- WindowStreams.cpp - stride-1 window rows as aligned streams --------===//
//
// A window op at stride 1 (depthwise conv, max pool) reads, for one output
// row, each tap row as one contiguous stream of W x C elements: tap (i, j)
// of output element k of the row is element k + j * C of input row i. With
// the channels a multiple of a cache line, every tap stream has the output
// row's alignment when the input and the output start at the same offset
// in a 64-byte line, as numpy's arrays do (16 bytes past a page). The
// pixel-by-pixel nest (WindowPrefetch.cpp) starts each pixel's channel
// vectors at the pixel, so at numpy's offset every 64-byte load of the
// input spans two lines (a depthwise 3x3 of 1x256x256x256 into the caller's
// buffer: 1.55x the copy there, 1.16x with 64-byte aligned arrays).
//
// Here the marked generic's rows become streams of line-aligned vectors
// when the run time finds the offsets equal: the elements before the first
// line boundary and after the last one (fewer than a vector each) as masked
// vectors, the channel-indexed operands (weights, bias) read from a copy
// holding them twice, so that a vector that starts in one pixel and ends
// in the next reads its channels contiguously. Otherwise the pixel nest.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <map>
#include <tuple>

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr int64_t kLineBytes = 64;
/// Pixels an iteration computes: a 3x3 tap row's 3 lines serve 3 outputs,
/// so 4 pixels load 6 lines of each input row, not 12 (WindowPrefetch.cpp
/// jams 4 columns for the same reason).
constexpr int64_t kJam = 4;

/// A stream operand (read or written at (n, oh, ow, c)) or a channel one
/// (read at c, the rest of its indices constant).
struct Operand {
  Value memref;
  bool stream = true;
  int64_t offset = 0;               // of element (0, 0, 0, 0) / channel 0
  int64_t strideN = 0, strideH = 0; // stream operands
  int64_t extent = 0;               // elements of the flat view it needs
};

/// `type`'s static strides and offset, if it has them.
std::optional<std::pair<SmallVector<int64_t>, int64_t>>
staticLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return std::make_pair(strides, offset);
}

/// `v` read through `map` as a stream or channel operand of a loop nest
/// over (n, oh, ow, c) with `channels` channels, rows of whole lines.
std::optional<Operand> classify(Value v, AffineMap map, int64_t channels,
                                int64_t elemBytes) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type)
    return std::nullopt;
  auto layout = staticLayout(type);
  if (!layout)
    return std::nullopt;
  auto &[strides, offset] = *layout;
  Operand op;
  op.memref = v;
  op.offset = offset;
  op.extent = offset + 1;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides))
    op.extent += (size - 1) * stride;
  if (map.isIdentity() && map.getNumDims() == 4) {
    // Rows of contiguous pixels of contiguous channels, each row starting
    // at the same offset in a line as the first.
    if (strides[3] != 1 || strides[2] != channels ||
        (strides[1] * elemBytes) % kLineBytes ||
        (strides[0] * elemBytes) % kLineBytes)
      return std::nullopt;
    op.strideN = strides[0];
    op.strideH = strides[1];
    return op;
  }
  // Channel-indexed: d3 once, with unit stride, the rest constants.
  op.stream = false;
  bool seen = false;
  for (auto [pos, e] : llvm::enumerate(map.getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      op.offset += c.getValue() * strides[pos];
      continue;
    }
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || d.getPosition() != 3 || seen || strides[pos] != 1 ||
        type.getDimSize(pos) != channels)
      return std::nullopt;
    seen = true;
  }
  if (!seen)
    return std::nullopt;
  return op;
}

/// Whether the body's ops apply lane by lane to vectors (the arith ops the
/// window's body and its finish are made of).
bool elementwiseBody(Block &body) {
  for (Operation &o : body.without_terminator()) {
    if (o.getNumRegions() || !isPure(&o))
      return false;
    if (!isa<arith::ConstantOp>(o) && !o.hasTrait<OpTrait::Elementwise>())
      return false;
    for (Type t :
         llvm::concat<const Type>(o.getOperandTypes(), o.getResultTypes()))
      if (!t.isIntOrFloat())
        return false;
  }
  return true;
}

/// The body of `g` applied to vectors of `lanes` (its arguments' values in
/// `args`); returns the yielded vector. Values from outside are splat.
Value vectorBody(OpBuilder &b, Location loc, linalg::GenericOp g,
                 ArrayRef<Value> args, int64_t lanes) {
  Block &body = g->getRegion(0).front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    map.map(arg, v);
  auto vec = [&](Type t) { return VectorType::get({lanes}, t); };
  auto lookup = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
    Value splat = vector::BroadcastOp::create(b, loc, vec(v.getType()), v);
    map.map(v, splat);
    return splat;
  };
  for (Operation &o : body.without_terminator()) {
    if (auto c = dyn_cast<arith::ConstantOp>(o)) {
      auto attr = DenseElementsAttr::get(cast<ShapedType>(vec(c.getType())),
                                         c.getValue());
      map.map(c.getResult(), arith::ConstantOp::create(b, loc, attr));
      continue;
    }
    OperationState state(loc, o.getName());
    for (Value v : o.getOperands())
      state.operands.push_back(lookup(v));
    for (Type t : o.getResultTypes())
      state.types.push_back(vec(t));
    state.addAttributes(o.getAttrs());
    Operation *made = b.create(state);
    map.map(o.getResults(), made->getResults());
  }
  return lookup(body.getTerminator()->getOperand(0));
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `m` as a flat 1-D view of `extent` elements from its buffer's start.
Value flatView(OpBuilder &b, Location loc, Value m, int64_t extent) {
  auto type = cast<MemRefType>(m.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
  auto flat = MemRefType::get({extent}, type.getElementType());
  return memref::ReinterpretCastOp::create(b, loc, flat, meta.getBaseBuffer(),
                                           /*offset=*/0, {extent}, {1});
}

/// The byte address of `m`'s element at `offset` elements from its buffer.
Value addressOf(OpBuilder &b, Location loc, Value m, int64_t offsetBytes) {
  Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
  return arith::AddIOp::create(b, loc, p, cIndex(b, loc, offsetBytes));
}

struct Stream {
  linalg::GenericOp g;
  SmallVector<Operand> inputs; // the generic's inputs, in order
  Operand output;
  int64_t n, oh, ow, channels, lanes, elemBytes;
  int64_t aheadElems;          // prefetch distance
  SmallVector<unsigned> reads; // inputs prefetched ahead
};

/// Flat views of `inputs`' stream (or channel) operands, one per buffer
/// they view (the taps are views of one input), null for the others.
SmallVector<Value> flatViews(OpBuilder &b, Location loc,
                             ArrayRef<Operand> inputs, bool streams) {
  llvm::DenseMap<Value, int64_t> extents;
  for (const Operand &o : inputs)
    if (o.stream == streams) {
      int64_t &e = extents[subviewRoot(o.memref)];
      e = std::max(e, o.extent);
    }
  llvm::DenseMap<Value, Value> views;
  SmallVector<Value> flats;
  for (const Operand &o : inputs) {
    if (o.stream != streams) {
      flats.push_back(nullptr);
      continue;
    }
    Value root = subviewRoot(o.memref);
    Value &view = views[root];
    if (!view)
      view = flatView(b, loc, root, extents[root]);
    flats.push_back(view);
  }
  return flats;
}

/// The row loops of the stream path, in the then-branch being built.
void buildStreams(OpBuilder &b, Location loc, const Stream &s, Value head,
                  Value doubled) {
  Type elem = cast<MemRefType>(s.output.memref.getType()).getElementType();
  auto vecType = VectorType::get({s.lanes}, elem);
  auto maskType = VectorType::get({s.lanes}, b.getI1Type());
  SmallVector<Value> flats = flatViews(b, loc, s.inputs, /*streams=*/true);
  Value outFlat = flatView(b, loc, s.output.memref, s.output.extent);
  int64_t rowLen = s.ow * s.channels;
  Value zero = cIndex(b, loc, 0), one = cIndex(b, loc, 1);
  Value lanes = cIndex(b, loc, s.lanes);
  Value channels = cIndex(b, loc, s.channels);
  Value pass = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vecType, b.getZeroAttr(elem)));
  // From `head` on: blocks of kJam pixels' worth of whole vectors, then
  // single vectors, then the elements after the last line boundary.
  Value rest = arith::SubIOp::create(b, loc, cIndex(b, loc, rowLen), head);
  Value blockLen = cIndex(b, loc, kJam * s.channels);
  Value blocksEnd = arith::AddIOp::create(
      b, loc, head,
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, rest, blockLen), blockLen));
  Value mainEnd = arith::AddIOp::create(
      b, loc, head,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, rest, lanes),
                            lanes));
  Value tail = arith::SubIOp::create(b, loc, cIndex(b, loc, rowLen), mainEnd);
  Value tailChannel = arith::RemUIOp::create(b, loc, mainEnd, channels);
  auto align = llvm::MaybeAlign(kLineBytes);

  auto rows = scf::ForOp::create(b, loc, zero, cIndex(b, loc, s.n), one);
  b.setInsertionPointToStart(rows.getBody());
  auto cols = scf::ForOp::create(b, loc, zero, cIndex(b, loc, s.oh), one);
  b.setInsertionPointToStart(cols.getBody());
  Value n = rows.getInductionVar(), h = cols.getInductionVar();
  std::map<std::pair<int64_t, int64_t>, Value> rowBases;
  auto rowStart = [&](const Operand &o) {
    Value &at = rowBases[{o.strideN, o.strideH}];
    if (!at)
      at = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, n, cIndex(b, loc, o.strideN)),
          arith::MulIOp::create(b, loc, h, cIndex(b, loc, o.strideH)));
    return arith::AddIOp::create(b, loc, at, cIndex(b, loc, o.offset))
        .getResult();
  };
  SmallVector<Value> starts;
  for (const Operand &o : s.inputs)
    starts.push_back(o.stream ? rowStart(o) : Value());
  Value outStart = rowStart(s.output);

  // `copies` vectors at elements j, j + C, ... of the row (channel `c` for
  // all), masked (one copy) or not. A tap line several outputs read
  // (adjacent taps of one input row) is loaded once.
  auto compute = [&](Value j, Value c, Value mask, int64_t copies) {
    std::map<std::tuple<const void *, int64_t, int64_t, int64_t>, Value> loaded;
    SmallVector<Value> channelArgs;
    unsigned channelOperand = 0;
    for (const Operand &o : s.inputs) {
      if (o.stream) {
        channelArgs.push_back(nullptr);
        continue;
      }
      Value row = cIndex(b, loc, channelOperand++);
      channelArgs.push_back(
          mask ? vector::MaskedLoadOp::create(b, loc, vecType, doubled,
                                              ValueRange{row, c}, mask, pass)
                     .getResult()
               : vector::LoadOp::create(b, loc, vecType, doubled,
                                        ValueRange{row, c})
                     .getResult());
    }
    for (int64_t q = 0; q < copies; ++q) {
      SmallVector<Value> args;
      for (auto [k, o] : llvm::enumerate(s.inputs)) {
        if (!o.stream) {
          args.push_back(channelArgs[k]);
          continue;
        }
        auto key =
            std::make_tuple(subviewRoot(o.memref).getAsOpaquePointer(),
                            o.strideN, o.strideH, o.offset + q * s.channels);
        Value &v = loaded[key];
        if (!v) {
          Value at = arith::AddIOp::create(b, loc, starts[k], j);
          if (q)
            at = arith::AddIOp::create(b, loc, at,
                                       cIndex(b, loc, q * s.channels));
          v = mask ? vector::MaskedLoadOp::create(b, loc, vecType, flats[k], at,
                                                  mask, pass)
                         .getResult()
                   : vector::LoadOp::create(b, loc, vecType, flats[k], at,
                                            false, align)
                         .getResult();
        }
        args.push_back(v);
      }
      // The output's block argument (unused by a window's body).
      args.push_back(pass);
      Value result = vectorBody(b, loc, s.g, args, s.lanes);
      Value at = arith::AddIOp::create(b, loc, outStart, j);
      if (q)
        at = arith::AddIOp::create(b, loc, at, cIndex(b, loc, q * s.channels));
      if (mask)
        vector::MaskedStoreOp::create(b, loc, outFlat, at, mask, result);
      else
        vector::StoreOp::create(b, loc, result, outFlat, at, false, align);
    }
  };
  auto prefetch = [&](Value j, int64_t copies) {
    for (unsigned k : s.reads)
      for (int64_t q = 0; q < copies; ++q) {
        Value at = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, starts[k], j),
            cIndex(b, loc, s.aheadElems + q * s.channels));
        memref::PrefetchOp::create(b, loc, flats[k], at, /*isWrite=*/false,
                                   /*localityHint=*/3, /*isDataCache=*/true);
      }
  };
  // A loop of whole vectors over [from, to), `copies` pixels apart each
  // iteration, the channel of the first element carried from `c0`.
  auto lines = [&](Value from, Value to, Value c0, int64_t copies) {
    auto loop = scf::ForOp::create(b, loc, from, to, lanes, c0);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar(), c = loop.getRegionIterArg(0);
    prefetch(j, copies);
    compute(j, c, nullptr, copies);
    Value next = arith::AddIOp::create(b, loc, c, lanes);
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, next,
                                        channels);
    Value wrapped = arith::SubIOp::create(b, loc, next, channels);
    scf::YieldOp::create(
        b, loc,
        arith::SelectOp::create(b, loc, wraps, wrapped, next).getResult());
    return loop;
  };

  // The elements before the first line boundary.
  compute(zero, zero, vector::CreateMaskOp::create(b, loc, maskType, head), 1);
  // Blocks of kJam pixels: the first pixel's vectors, each computing the
  // same vector of the next kJam - 1 pixels with it (their taps overlap).
  auto blocks = scf::ForOp::create(b, loc, head, blocksEnd, blockLen);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(blocks.getBody());
    Value first = blocks.getInductionVar();
    lines(first, arith::AddIOp::create(b, loc, first, channels), head, kJam);
  }
  // Single vectors up to the last boundary (a block starts at channel
  // `head`: kJam * C elements on).
  lines(blocksEnd, mainEnd, head, 1);
  // The elements after the last boundary.
  compute(mainEnd, tailChannel,
          vector::CreateMaskOp::create(b, loc, maskType, tail), 1);
  b.setInsertionPointAfter(rows);
}

/// The channel operands, each twice in a row of `doubled` (2C elements).
void fillDoubled(OpBuilder &b, Location loc, const Stream &s, Value doubled) {
  Type elem = cast<MemRefType>(doubled.getType()).getElementType();
  auto vecType = VectorType::get({s.lanes}, elem);
  Value channels = cIndex(b, loc, s.channels);
  SmallVector<Value> flats = flatViews(b, loc, s.inputs, /*streams=*/false);
  auto loop = scf::ForOp::create(b, loc, cIndex(b, loc, 0), channels,
                                 cIndex(b, loc, s.lanes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value c = loop.getInductionVar();
  Value again = arith::AddIOp::create(b, loc, c, channels);
  unsigned row = 0;
  for (auto [o, flat] : llvm::zip(s.inputs, flats)) {
    if (o.stream)
      continue;
    Value v = vector::LoadOp::create(
        b, loc, vecType, flat,
        arith::AddIOp::create(b, loc, c, cIndex(b, loc, o.offset)).getResult());
    Value r = cIndex(b, loc, row++);
    vector::StoreOp::create(b, loc, v, doubled, ValueRange{r, c});
    vector::StoreOp::create(b, loc, v, doubled, ValueRange{r, again});
  }
}

} // namespace

bool streamWindowRows(RewriterBase &rewriter, linalg::GenericOp g,
                      int64_t aheadPixels, ArrayRef<unsigned> reads) {
  if (!g.hasPureBufferSemantics() || g.getNumLoops() != 4 ||
      g.getNumDpsInits() != 1 || !elementwiseBody(g->getRegion(0).front()) ||
      !g->getRegion(0).front().getArguments().back().use_empty())
    return false;
  auto outType = dyn_cast<MemRefType>(g.getDpsInits()[0].getType());
  if (!outType || outType.getRank() != 4 || !outType.hasStaticShape() ||
      !outType.getElementType().isIntOrFloat())
    return false;
  Stream s;
  s.g = g;
  Type elem = outType.getElementType();
  s.elemBytes = elem.getIntOrFloatBitWidth() / 8;
  if (s.elemBytes == 0 || kLineBytes % s.elemBytes)
    return false;
  s.n = outType.getDimSize(0);
  s.oh = outType.getDimSize(1);
  s.ow = outType.getDimSize(2);
  s.channels = outType.getDimSize(3);
  s.lanes = kLineBytes / s.elemBytes;
  if ((s.channels * s.elemBytes) % kLineBytes || s.n * s.oh * s.ow == 0)
    return false;
  s.aheadElems = aheadPixels * s.channels;
  auto maps = g.getIndexingMapsArray();
  unsigned channelOperands = 0;
  for (auto [k, in] : llvm::enumerate(g.getDpsInputs())) {
    std::optional<Operand> o = classify(in, maps[k], s.channels, s.elemBytes);
    if (!o || cast<MemRefType>(in.getType()).getElementType() != elem)
      return false;
    channelOperands += !o->stream;
    s.inputs.push_back(*o);
  }
  std::optional<Operand> out =
      classify(g.getDpsInits()[0], maps.back(), s.channels, s.elemBytes);
  if (!out || !out->stream)
    return false;
  s.output = *out;
  for (unsigned k : reads)
    if (k < s.inputs.size() && s.inputs[k].stream)
      s.reads.push_back(k);

  Location loc = g.getLoc();
  rewriter.setInsertionPoint(g);
  // The doubled channel operands, on the function's stack (static size).
  Value doubled;
  if (channelOperands) {
    auto fn = g->getParentOfType<func::FuncOp>();
    if (!fn)
      return false;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&fn.getBody().front());
    doubled = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({channelOperands, 2 * s.channels}, elem),
        ValueRange{}, rewriter.getI64IntegerAttr(kLineBytes));
  }
  // Every stream at the output's offset in a line (and on an element).
  Value out0 =
      addressOf(rewriter, loc, s.output.memref, s.output.offset * s.elemBytes);
  Value line = cIndex(rewriter, loc, kLineBytes);
  Value zero = cIndex(rewriter, loc, 0);
  Value outInLine = arith::RemUIOp::create(rewriter, loc, out0, line);
  // Not when the output is line-aligned: the pixel nest's lines are then
  // aligned too, and it was as fast or faster (5.0-5.7 against 5.6-6.0 ms
  // for a depthwise 3x3 of 1x256x256x256 into a 64-byte aligned buffer).
  Value ok = arith::AndIOp::create(
      rewriter, loc,
      arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(rewriter, loc, out0,
                                 cIndex(rewriter, loc, s.elemBytes)),
          zero),
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, outInLine,
                            zero));
  for (const Operand &o : s.inputs) {
    if (!o.stream)
      continue;
    Value at = addressOf(rewriter, loc, o.memref, o.offset * s.elemBytes);
    Value same = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(rewriter, loc, at, line), outInLine);
    ok = arith::AndIOp::create(rewriter, loc, ok, same);
  }
  auto branch = scf::IfOp::create(rewriter, loc, TypeRange{}, ok,
                                  /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(branch.thenBlock());
  // Elements before the output row's first line boundary (rows start at
  // the same offset in a line: their strides are whole lines).
  Value head = arith::DivUIOp::create(
      rewriter, loc,
      arith::RemUIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, line, outInLine),
          line),
      cIndex(rewriter, loc, s.elemBytes));
  if (doubled)
    fillDoubled(rewriter, loc, s, doubled);
  buildStreams(rewriter, loc, s, head, doubled);
  rewriter.moveOpBefore(g, branch.elseBlock()->getTerminator());
  return true;
}

} // namespace tosa_lsp::detail
