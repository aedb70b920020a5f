//===- StreamTranspose.cpp - big transposes into a caller's buffer --------===//
//
// A transpose that moves the innermost dim outwards (NHWC -> NCHW) is, with
// the dims around it collapsed, (B, P, C) -> (B, C, P). Written into the
// caller's buffer (F_into) and bigger than L2, its output is best stored
// non-temporally, but only in whole 64-byte lines: a 16x16 block's row is
// one line when aligned, and numpy's big arrays start 16 bytes into a line.
// Measured in C (NHWC -> NCHW of 64 MiB, numpy's alignment): ordinary
// stores 1.6-1.8x the copy time, non-temporal stores split at 16 bytes
// 9.3x, 16x64 blocks 4.6x, whole-row masked ends 1.6x; the blocks on a grid
// shifted along each channel's plane P (one partial line per plane, stored
// with masks before the streamed body): 1.05x.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"
#include "StreamingStores.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr llvm::StringLiteral kStreamTag = "tosa_lsp.stream_transpose";
constexpr int64_t kBlock = 16;      // lanes of a row = one 64-byte line of f32
constexpr int64_t kLine = 64;       // bytes
constexpr int64_t kChunk = 1 << 16; // input bytes a chunk of P reads per C

/// (B, P, C) -> (B, C, P): the reassociations that collapse the input and
/// the output, B's group absent when B is empty (perm moves the innermost
/// dim to the front).
struct Collapse {
  int64_t p = 1, c = 1;
  SmallVector<ReassociationIndices> in, out;
};

std::optional<Collapse> collapseOf(ArrayRef<int64_t> in,
                                   ArrayRef<int64_t> perm) {
  int64_t n = in.size();
  if (n < 2)
    return std::nullopt;
  int64_t a = llvm::find(perm, n - 1) - perm.begin();
  if (a >= n - 1)
    return std::nullopt; // the innermost dim stays innermost: no transpose
  for (int64_t i = 0; i < n; ++i)
    if (i != a && perm[i] != (i < a ? i : i - 1))
      return std::nullopt;
  Collapse c;
  ReassociationIndices b, p;
  for (int64_t i = 0; i < a; ++i)
    b.push_back(i);
  for (int64_t i = a; i < n - 1; ++i) {
    p.push_back(i);
    c.p *= in[i];
  }
  c.c = in[n - 1];
  ReassociationIndices outP;
  for (int64_t i = a + 1; i < n; ++i)
    outP.push_back(i);
  if (!b.empty()) {
    c.in.push_back(b);
    c.out.push_back(b);
  }
  c.in.push_back(p);
  c.in.push_back({n - 1});
  c.out.push_back({a});
  c.out.push_back(outP);
  return c;
}

/// The nest's builder: collapsed memrefs, the batch index (null without
/// a batch dim) and the 16x16 block moved from (p, cb) to (cb, p).
struct Nest {
  OpBuilder &b;
  Location loc;
  Value in, out, batch;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  SmallVector<Value> at(Value x, Value y) {
    if (batch)
      return {batch, x, y};
    return {x, y};
  }
  /// The block transposed: row j holds channel cb + j of pixels p..p+15.
  SmallVector<Value> block(Value p, Value cb) {
    auto row = VectorType::get({kBlock}, b.getF32Type());
    auto square = VectorType::get({kBlock, kBlock}, b.getF32Type());
    Value m = arith::ConstantOp::create(b, loc, square,
                                        DenseElementsAttr::get(square, 0.0f));
    for (int64_t i = 0; i < kBlock; ++i) {
      Value pi = arith::AddIOp::create(b, loc, p, idx(i));
      Value v = vector::LoadOp::create(b, loc, row, in, at(pi, cb));
      m = vector::InsertOp::create(b, loc, v, m, ArrayRef<int64_t>{i});
    }
    Value t = vector::TransposeOp::create(b, loc, m, ArrayRef<int64_t>{1, 0});
    SmallVector<Value> rows;
    for (int64_t j = 0; j < kBlock; ++j)
      rows.push_back(
          vector::ExtractOp::create(b, loc, t, ArrayRef<int64_t>{j}));
    return rows;
  }
  Value channel(Value cb, int64_t j) {
    return arith::AddIOp::create(b, loc, cb, idx(j));
  }
  /// Whole lines, non-temporal (the caller checked p's alignment).
  void streamed(Value p, Value cb) {
    SmallVector<Value> rows = block(p, cb);
    for (int64_t j = 0; j < kBlock; ++j)
      vector::StoreOp::create(b, loc, rows[j], out, at(channel(cb, j), p),
                              /*nontemporal=*/true, llvm::Align(kLine));
  }
  void masked(Value p, Value cb, Value mask) {
    SmallVector<Value> rows = block(p, cb);
    for (int64_t j = 0; j < kBlock; ++j)
      vector::MaskedStoreOp::create(b, loc, out, at(channel(cb, j), p), mask,
                                    rows[j]);
  }
};

/// For batch `batch`: the plane's ends, then the body from `s` in chunks
/// of P (the chunk's input rows stay in L2 while the channel blocks go by).
void emitBatch(OpBuilder &b, Location loc, Value in, Value out, Value batch,
               Value s, const Collapse &c) {
  Nest n{b, loc, in, out, batch};
  Value zero = n.idx(0), block = n.idx(kBlock), channels = n.idx(c.c);
  Value shifted =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, s, zero);
  // The first s pixels (a partial line before the first aligned one) and
  // the last 16 - s, masked, ordinary stores.
  auto ends = scf::IfOp::create(b, loc, shifted, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ends.thenBlock());
    auto loop = scf::ForOp::create(b, loc, zero, channels, block);
    b.setInsertionPointToStart(loop.getBody());
    auto maskType = VectorType::get({kBlock}, b.getI1Type());
    Value head = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{s});
    Value ones = arith::ConstantOp::create(
        b, loc, maskType, DenseElementsAttr::get(maskType, true));
    Value tail = arith::XOrIOp::create(b, loc, head, ones);
    n.masked(zero, loop.getInductionVar(), head);
    n.masked(n.idx(c.p - kBlock), loop.getInductionVar(), tail);
  }
  // Body: [s, s + P - 16) when shifted, else [0, P).
  Value end = arith::SelectOp::create(
      b, loc, shifted, arith::AddIOp::create(b, loc, s, n.idx(c.p - kBlock)),
      n.idx(c.p));
  int64_t chunk = std::max<int64_t>(kBlock, kChunk / c.c / kBlock * kBlock);
  auto chunks = scf::ForOp::create(b, loc, s, end, n.idx(chunk));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(chunks.getBody());
  Value p0 = chunks.getInductionVar();
  Value p1 = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, p0, n.idx(chunk)), end);
  auto cbs = scf::ForOp::create(b, loc, zero, channels, block);
  b.setInsertionPointToStart(cbs.getBody());
  auto ps = scf::ForOp::create(b, loc, p0, p1, block);
  b.setInsertionPointToStart(ps.getBody());
  n.streamed(ps.getInductionVar(), cbs.getInductionVar());
}

/// Replaces the marked memref transpose `t` with the streamed nest when
/// its buffers are contiguous and the output's address is 4-byte aligned
/// (else the transpose stays, for convert-linalg-to-loops).
void lowerOne(linalg::TransposeOp t) {
  t->removeAttr(kStreamTag);
  auto inType = dyn_cast<MemRefType>(t.getInput().getType());
  auto outType = dyn_cast<MemRefType>(t.getInit().getType());
  if (!inType || !outType)
    return;
  std::optional<Collapse> c = collapseOf(inType.getShape(), t.getPermutation());
  if (!c || !memref::CollapseShapeOp::isGuaranteedCollapsible(inType, c->in) ||
      !memref::CollapseShapeOp::isGuaranteedCollapsible(outType, c->out))
    return;
  OpBuilder b(t);
  Location loc = t.getLoc();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, t.getInit());
  Value aligned4 = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, address, idx(4)), idx(0));
  auto version = scf::IfOp::create(b, loc, aligned4, true);
  b.setInsertionPointToStart(version.thenBlock());
  // s: pixels before the plane's first 64-byte line (planes are P * 4
  // bytes apart, a multiple of 64: the same s for every plane).
  Value lineElems = idx(kLine / 4);
  Value s = arith::RemUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, lineElems,
                            arith::RemUIOp::create(
                                b, loc,
                                arith::DivUIOp::create(b, loc, address, idx(4)),
                                lineElems)),
      lineElems);
  Value in = memref::CollapseShapeOp::create(b, loc, t.getInput(), c->in);
  Value out = memref::CollapseShapeOp::create(b, loc, t.getInit(), c->out);
  if (c->in.size() == 3) {
    int64_t batches = 1;
    for (int64_t d : c->in[0])
      batches *= inType.getDimSize(d);
    auto loop = scf::ForOp::create(b, loc, idx(0), idx(batches), idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    emitBatch(b, loc, in, out, loop.getInductionVar(), s, *c);
  } else {
    emitBatch(b, loc, in, out, nullptr, s, *c);
  }
  // The sfence after the streamed stores: fenceNontemporal (LLVM IR).
  RewritePatternSet patterns(b.getContext());
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::Shuffle16x16);
  (void)applyPatternsGreedily(version, std::move(patterns));
  b.setInsertionPointToStart(version.elseBlock());
  t->moveBefore(version.elseBlock()->getTerminator());
}

} // namespace

bool markStreamTranspose(Operation *transpose, unsigned lanes,
                         uint64_t threshold) {
  auto t = dyn_cast<linalg::TransposeOp>(transpose);
  if (!t)
    return false;
  auto type = dyn_cast<RankedTensorType>(t.getInit().getType());
  auto in = dyn_cast<RankedTensorType>(t.getInput().getType());
  if (lanes != kBlock || !type || !in || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return false;
  std::optional<Collapse> c = collapseOf(in.getShape(), t.getPermutation());
  uint64_t bytes = type.getNumElements() * 4;
  if (!c || c->c % kBlock || c->p % kBlock || c->p < 2 * kBlock ||
      bytes < (threshold ? threshold : defaultStreamThreshold("native")))
    return false;
  t->setAttr(kStreamTag, UnitAttr::get(t->getContext()));
  return true;
}

void lowerStreamTransposes(Operation *root) {
  SmallVector<linalg::TransposeOp> marked;
  root->walk([&](linalg::TransposeOp t) {
    if (t->hasAttr(kStreamTag) && t.hasPureBufferSemantics())
      marked.push_back(t);
  });
  for (linalg::TransposeOp t : marked)
    lowerOne(t);
}

} // namespace tosa_lsp::detail
