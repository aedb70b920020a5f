//===- WindowPrefetch.cpp - software prefetch of a window's new rows ------===//
//
// A window op unrolled into an element-wise generic (WindowOps.cpp) reads,
// for each output pixel, the taps' input rows: all but the newest were read
// for the previous output row and are in L2, the newest come from memory,
// and the hardware prefetcher, tracking 3-9 streams 256 KB apart, does not
// keep up (a depthwise 3x3 of 1x256x256x256 at 1.7x the copy time; in C,
// the same loop with a prefetch of the newest row 4 KB ahead: 1.3x). The
// generic is marked before bufferization; after it, the marked generic
// becomes loops here and the pixel loop prefetches the newest rows' lines
// a few pixels ahead.
//
// At stride 1, adjacent output columns read overlapping taps, and one
// column an iteration loads 9 input lines and 9 weight lines per 3x3
// output line: the loads, not memory, bound it (a depthwise 3x3 of
// 1x256x256x256 at 2.6x the copy into the caller's buffer on a Zen 5
// core). The pixel loop is unrolled by 4 and jammed into the channel loop,
// and the jammed body loads each input and weight line once for the 4
// columns (18 input lines, not 36): 1.3x. Its 4 output streams still get
// non-temporal stores (StreamingStores.cpp). A depthwise conv at stride 2
// computes 2 columns an iteration: they share one tap column of three but
// all nine weight lines (1x256x256x256: 1.9x -> 1.0-1.1x the memory floor;
// WindowOps.cpp's jamColumns has the figures).
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <map>

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr llvm::StringLiteral kPrefetchTag = "tosa_lsp.prefetch_window";

/// Bytes ahead of the pixel being computed that the prefetches reach
/// (measured in C: 2, 4 and 8 KB ahead gave 1.42x, 1.32x, 1.40x the copy).
constexpr int64_t kAheadBytes = 4096;

/// `v` as a sum of coefficient x value plus a constant, seen through the
/// index arithmetic loops and the unroll-jam make (addi, subi, muli by a
/// constant, affine.apply of sums and constant multiples).
struct Linear {
  std::map<const void *, int64_t> terms;
  int64_t constant = 0;
  bool operator<(const Linear &o) const {
    return std::tie(terms, constant) < std::tie(o.terms, o.constant);
  }
};

void addLinear(Value v, int64_t scale, Linear &out, unsigned depth = 0);

/// Whether `e` is a sum of constant multiples of dims, symbols and
/// constants (added to `out`).
bool addAffine(AffineExpr e, ValueRange dims, ValueRange syms, int64_t scale,
               Linear &out, unsigned depth) {
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    out.constant += scale * c.getValue();
    return true;
  }
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    addLinear(dims[d.getPosition()], scale, out, depth + 1);
    return true;
  }
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    addLinear(syms[s.getPosition()], scale, out, depth + 1);
    return true;
  }
  auto b = dyn_cast<AffineBinaryOpExpr>(e);
  if (b && b.getKind() == AffineExprKind::Add)
    return addAffine(b.getLHS(), dims, syms, scale, out, depth) &&
           addAffine(b.getRHS(), dims, syms, scale, out, depth);
  auto c = b ? dyn_cast<AffineConstantExpr>(b.getRHS()) : AffineConstantExpr();
  if (b && b.getKind() == AffineExprKind::Mul && c)
    return addAffine(b.getLHS(), dims, syms, scale * c.getValue(), out, depth);
  return false;
}

void addLinear(Value v, int64_t scale, Linear &out, unsigned depth) {
  APInt c;
  Operation *def = v.getDefiningOp();
  if (depth < 16 && def) {
    if (matchPattern(v, m_ConstantInt(&c))) {
      out.constant += scale * c.getSExtValue();
      return;
    }
    if (auto add = dyn_cast<arith::AddIOp>(def)) {
      addLinear(add.getLhs(), scale, out, depth + 1);
      addLinear(add.getRhs(), scale, out, depth + 1);
      return;
    }
    if (auto sub = dyn_cast<arith::SubIOp>(def)) {
      addLinear(sub.getLhs(), scale, out, depth + 1);
      addLinear(sub.getRhs(), -scale, out, depth + 1);
      return;
    }
    if (auto mul = dyn_cast<arith::MulIOp>(def);
        mul && matchPattern(mul.getRhs(), m_ConstantInt(&c))) {
      addLinear(mul.getLhs(), scale * c.getSExtValue(), out, depth + 1);
      return;
    }
    // Anything else (floordiv, mod, ...) is the value itself, opaque.
    Linear sum;
    if (auto apply = dyn_cast<affine::AffineApplyOp>(def);
        apply &&
        addAffine(apply.getAffineMap().getResult(0), apply.getDimOperands(),
                  apply.getSymbolOperands(), scale, sum, depth)) {
      for (auto [term, coefficient] : sum.terms)
        out.terms[term] += coefficient;
      out.constant += sum.constant;
      return;
    }
  }
  out.terms[v.getAsOpaquePointer()] += scale;
}

/// The element a load reads, as an offset from its root buffer's start
/// (static strides and offset only).
std::optional<std::pair<Value, Linear>> addressOf(memref::LoadOp load) {
  auto type = load.getMemRefType();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  Linear a;
  a.constant = offset;
  for (auto [index, stride] : llvm::zip(load.getIndices(), strides))
    addLinear(index, stride, a);
  for (auto it = a.terms.begin(); it != a.terms.end();)
    it = it->second ? std::next(it) : a.terms.erase(it);
  return std::make_pair(subviewRoot(load.getMemRef()), a);
}

/// In a jammed body, a load of an element an earlier load of the body read
/// takes its value, for the buffers the body never stores into (the inputs:
/// a window op's result never overlaps its input, as F_into's contract
/// says and bufferization guarantees within a function).
void shareLoads(Block &block) {
  llvm::SmallPtrSet<const void *, 4> stored;
  block.walk([&](memref::StoreOp s) {
    stored.insert(subviewRoot(s.getMemRef()).getAsOpaquePointer());
  });
  std::map<std::tuple<const void *, const void *, Linear>, Value> seen;
  for (Operation &o : llvm::make_early_inc_range(block)) {
    auto load = dyn_cast<memref::LoadOp>(o);
    if (!load)
      continue;
    std::optional<std::pair<Value, Linear>> a = addressOf(load);
    if (!a || stored.contains(a->first.getAsOpaquePointer()))
      continue;
    auto [it, inserted] =
        seen.try_emplace({a->first.getAsOpaquePointer(),
                          load.getType().getAsOpaquePointer(), a->second},
                         load.getResult());
    if (!inserted) {
      load.replaceAllUsesWith(it->second);
      load.erase();
    }
  }
}

/// `cols` (static bounds, step 1) unrolled by `columns` and jammed into
/// the loop inside it, the columns left over in a loop of their own
/// (`rest`, else null). Returns whether it was jammed.
bool jamColumns(RewriterBase &rewriter, scf::ForOp &cols, scf::ForOp &rest,
                int64_t columns) {
  std::optional<int64_t> lb = getConstantIntValue(cols.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(cols.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(cols.getStep());
  if (columns < 2 || !lb || !ub || !step || *step != 1 ||
      *ub - *lb < 2 * columns)
    return false;
  int64_t main = (*ub - *lb) / columns * columns;
  if (main < *ub - *lb) {
    rewriter.setInsertionPoint(cols);
    Value split =
        arith::ConstantIndexOp::create(rewriter, cols.getLoc(), *lb + main);
    rewriter.setInsertionPointAfter(cols);
    rest = cast<scf::ForOp>(rewriter.clone(*cols));
    rewriter.modifyOpInPlace(rest, [&] { rest.setLowerBound(split); });
    rewriter.modifyOpInPlace(cols, [&] { cols.setUpperBound(split); });
  }
  // The jam replaces the loops it jams (with new ones in their place).
  Operation *next = cols->getNextNode();
  if (failed(loopUnrollJamByFactor(cols, columns)))
    return false;
  cols = cast<scf::ForOp>(next->getPrevNode());
  return true;
}

/// The channel loop of a window nest (n, oh, ow, c) as lines of vectors,
/// each line prefetching the newest rows' same line a few pixels ahead for
/// each of the `columns` output columns an iteration of `ow` computes;
/// `v` is the mark (ahead, channels, stride, jam, inputs...).
void finishNest(RewriterBase &rewriter, MutableArrayRef<scf::ForOp> fors,
                int64_t columns, int64_t perLine, ArrayRef<int64_t> v,
                ArrayRef<Value> reads) {
  scf::ForOp inner = stripMine(rewriter, fors[3], perLine);
  if (columns > 1)
    shareLoads(*inner.getBody()); // the line's body holds every column's
  vectorizeAsOne(inner, perLine);
  // Each line of channels prefetches the same line `ahead` pixels on
  // (one line per 64 bytes computed: spread out, not a burst per pixel).
  rewriter.setInsertionPoint(inner);
  Location loc = inner.getLoc();
  for (int64_t q = 0; q < columns; ++q) {
    Value ahead = arith::AddIOp::create(
        rewriter, loc, fors[2].getInductionVar(),
        arith::ConstantIndexOp::create(rewriter, loc, v[0] + q));
    for (Value read : reads)
      for (int64_t s = 0; s < v[2]; ++s) {
        Value c = fors[3].getInductionVar();
        if (s)
          c = arith::AddIOp::create(
              rewriter, loc, c,
              arith::ConstantIndexOp::create(rewriter, loc, s * v[1]));
        memref::PrefetchOp::create(
            rewriter, loc, read,
            ValueRange{fors[0].getInductionVar(), fors[1].getInductionVar(),
                       ahead, c},
            /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
      }
  }
}

} // namespace

/// The buffer a view is of, through subviews and casts (whose types'
/// offsets count from that buffer's start; not memref.view's byte shift).
Value subviewRoot(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<memref::SubViewOp>(def))
      memref = view.getSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      memref = cast.getSource();
    else
      break;
  }
  return memref;
}

/// `loop` (from 0, step 1, a multiple of `step` iterations) as a loop of
/// step `step` around a loop of `step` iterations running its body;
/// returns the inner loop.
scf::ForOp stripMine(RewriterBase &rewriter, scf::ForOp loop, int64_t step) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPointToStart(loop.getBody());
  Value iv = loop.getInductionVar();
  Value end = arith::AddIOp::create(
      rewriter, loc, iv, arith::ConstantIndexOp::create(rewriter, loc, step));
  auto inner = scf::ForOp::create(
      rewriter, loc, iv, end, arith::ConstantIndexOp::create(rewriter, loc, 1));
  Block *body = inner.getBody();
  // Everything after the inner loop, but the yield, moves into it.
  while (&*std::next(inner->getIterator()) != loop.getBody()->getTerminator())
    rewriter.moveOpBefore(&*std::next(inner->getIterator()),
                          body->getTerminator());
  rewriter.replaceUsesWithIf(iv, inner.getInductionVar(), [&](OpOperand &u) {
    return inner->isProperAncestor(u.getOwner());
  });
  rewriter.setInsertionPoint(loop);
  Value newStep = arith::ConstantIndexOp::create(rewriter, loc, step);
  rewriter.modifyOpInPlace(loop, [&] { loop.setStep(newStep); });
  return inner;
}

/// One line, one vector: LLVM would pick 256-bit vectors (its default on
/// this CPU), two per line (measured with 512: depthwise F_into -11%,
/// max pool -17%). Not unrolled before: LLVM unrolls a small body's 16
/// iterations fully before its loop vectoriser runs, and its SLP vectoriser
/// left them scalar (max pool 2x2 stride 2 of 1x256x256x256: 5.2x the
/// memory floor).
void vectorizeAsOne(scf::ForOp line, int64_t width) {
  MLIRContext *ctx = line.getContext();
  Builder b(ctx);
  auto vectorize = LLVM::LoopVectorizeAttr::get(
      ctx, {}, {}, {}, b.getI32IntegerAttr(width), {}, {}, {});
  auto unroll = LLVM::LoopUnrollAttr::get(ctx, b.getBoolAttr(true), {}, {}, {},
                                          {}, {}, {});
  line->setAttr("llvm.loop_annotation",
                LLVM::LoopAnnotationAttr::get(ctx, {}, vectorize, {}, unroll,
                                              {}, {}, {}, {}, {}, {}, {}, {},
                                              {}, {}, {}));
}

void markWindowPrefetch(linalg::GenericOp generic, ArrayRef<int64_t> inputs,
                        int64_t channels, int64_t stride, int64_t elemBytes,
                        int64_t jam) {
  int64_t bytes = channels * stride * elemBytes;
  if (inputs.empty() || bytes <= 0 || (channels * elemBytes) % 64 ||
      generic.getNumLoops() != 4)
    return;
  SmallVector<int64_t> attr = {std::max<int64_t>(1, kAheadBytes / bytes),
                               channels, stride, jam};
  attr.append(inputs.begin(), inputs.end());
  generic->setAttr(kPrefetchTag,
                   DenseI64ArrayAttr::get(generic.getContext(), attr));
}

void prefetchWindows(Operation *root) {
  SmallVector<linalg::GenericOp> marked;
  root->walk([&](linalg::GenericOp g) {
    if (g->hasAttr(kPrefetchTag))
      marked.push_back(g);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::GenericOp g : marked) {
    auto attr = g->getAttrOfType<DenseI64ArrayAttr>(kPrefetchTag);
    ArrayRef<int64_t> v = attr.asArrayRef();
    g->removeAttr(kPrefetchTag);
    if (!g.hasPureBufferSemantics())
      continue;
    // The inputs, before the generic's operands go with it. A pass between
    // the mark and here may have dropped an operand (an unused one): then
    // an index is out of range or names another input, which only makes
    // a prefetch useless.
    SmallVector<Value> reads;
    for (int64_t i : v.drop_front(4)) {
      auto type = i < g.getNumDpsInputs()
                      ? dyn_cast<MemRefType>(g.getDpsInputs()[i].getType())
                      : MemRefType();
      if (type && type.getRank() == 4)
        reads.push_back(g.getDpsInputs()[i]);
    }
    if (reads.empty())
      continue;
    auto elemBits = cast<MemRefType>(reads.front().getType())
                        .getElementType()
                        .getIntOrFloatBitWidth();
    // At stride 1, rows as line-aligned streams where the run time allows
    // (WindowStreams.cpp); this nest in the other branch.
    if (v[2] == 1) {
      SmallVector<unsigned> readInputs;
      for (int64_t i : v.drop_front(4))
        readInputs.push_back(i);
      (void)streamWindowRows(rewriter, g, v[0], readInputs);
    }
    rewriter.setInsertionPoint(g);
    FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, g);
    if (failed(loops) || loops->size() != 4)
      continue;
    rewriter.eraseOp(g);
    SmallVector<scf::ForOp> fors;
    for (Operation *l : *loops)
      fors.push_back(dyn_cast<scf::ForOp>(l));
    if (llvm::is_contained(fors, nullptr))
      continue;
    int64_t perLine = 512 / elemBits;
    scf::ForOp rest;
    int64_t columns = jamColumns(rewriter, fors[2], rest, v[3]) ? v[3] : 1;
    fors[3] = *fors[2].getBody()->getOps<scf::ForOp>().begin();
    finishNest(rewriter, fors, columns, perLine, v, reads);
    if (rest) {
      SmallVector<scf::ForOp> restNest(fors.begin(), fors.begin() + 2);
      restNest.push_back(rest);
      restNest.push_back(*rest.getBody()->getOps<scf::ForOp>().begin());
      finishNest(rewriter, restNest, 1, perLine, v, reads);
    }
  }
}

} // namespace tosa_lsp::detail
