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
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr llvm::StringLiteral kPrefetchTag = "tosa_lsp.prefetch_window";

/// Bytes ahead of the pixel being computed that the prefetches reach
/// (measured in C: 2, 4 and 8 KB ahead gave 1.42x, 1.32x, 1.40x the copy).
constexpr int64_t kAheadBytes = 4096;

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

} // namespace

void markWindowPrefetch(linalg::GenericOp generic, ArrayRef<int64_t> inputs,
                        int64_t channels, int64_t stride, int64_t elemBytes) {
  int64_t bytes = channels * stride * elemBytes;
  if (inputs.empty() || bytes <= 0 || (channels * elemBytes) % 64 ||
      generic.getNumLoops() != 4)
    return;
  SmallVector<int64_t> attr = {std::max<int64_t>(1, kAheadBytes / bytes),
                               channels, stride};
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
    for (int64_t i : v.drop_front(3)) {
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
    scf::ForOp inner = stripMine(rewriter, fors[3], perLine);
    // One line, one vector: LLVM would pick 256-bit vectors (its default on
    // this CPU), two per line (measured with 512: depthwise F_into -11%,
    // max pool -17%).
    MLIRContext *ctx = rewriter.getContext();
    auto vectorize = LLVM::LoopVectorizeAttr::get(
        ctx, {}, {}, {}, rewriter.getI32IntegerAttr(perLine), {}, {}, {});
    inner->setAttr("llvm.loop_annotation",
                   LLVM::LoopAnnotationAttr::get(ctx, {}, vectorize, {}, {}, {},
                                                 {}, {}, {}, {}, {}, {}, {}, {},
                                                 {}, {}));
    // Each line of channels prefetches the same line `ahead` pixels on
    // (one line per 64 bytes computed: spread out, not a burst per pixel).
    rewriter.setInsertionPoint(inner);
    Location loc = inner.getLoc();
    Value ahead = arith::AddIOp::create(
        rewriter, loc, fors[2].getInductionVar(),
        arith::ConstantIndexOp::create(rewriter, loc, v[0]));
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

} // namespace tosa_lsp::detail
