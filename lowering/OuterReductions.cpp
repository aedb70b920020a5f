//===- OuterReductions.cpp - reductions over an outer dim, 4 rows a pass --===//
//
// tosa.reduce_max over H of an NHWC tensor reduces a dim that is not the
// innermost: convert-linalg-to-loops gives, per input row, a pass over the
// whole result (load, combine, store: a 256 KB result in L2 for a
// 1x256x256x256 input), 1.5x the memory floor and slower than numpy. Here,
// after bufferization, the reduction loop is unrolled by 4 and jammed into
// the loops inside it, and within the innermost body each result element
// is loaded once and stored once for the 4 rows (the loads of the other
// rows' elements in between only read; a destination that aliases the
// input was already wrong: the result's fill is written before it is read).
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// Rows of the reduced dim per pass over the result: 8 where they divide
/// it (reduce_max over H of 1x256x256x256: 1.41-1.70x the memory floor
/// with 4 a pass, 1.30-1.38x with 8, 3 interleaved runs), else 4.
constexpr int64_t kJam = 8, kJamLess = 4;
constexpr llvm::StringLiteral kJammed = "tosa_lsp.jammed";
/// Iterations from which the rewrite pays (smaller: left to LLVM).
constexpr int64_t kMinIterations = 1 << 16;

/// The position of the one reduction loop of a static f32 `out = f(in,
/// out)` generic (add, max, min) on buffers, when it is not the innermost
/// loop and its trip count is a multiple of kJamLess.
std::optional<unsigned> outerReduction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics() || op.getNumReductionLoops() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  Operation &f = body.front();
  if (body.getOperations().size() != 2 ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(f) ||
      body.getTerminator()->getOperand(0) != f.getResult(0) ||
      !llvm::is_contained(f.getOperands(), body.getArgument(1)))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t total = 1;
  for (int64_t r : ranges)
    total = ShapedType::isDynamic(r) ? -1 : total * r;
  unsigned red =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  if (total < kMinIterations || red + 1 == iters.size() ||
      ranges[red] % kJamLess)
    return std::nullopt;
  return red;
}

/// Whether two indices are the same value, seen through the affine.apply
/// ops convert-to-loops makes per access (the same map of the same
/// operands).
bool sameIndex(Value a, Value b) {
  if (a == b)
    return true;
  auto x = a.getDefiningOp<affine::AffineApplyOp>();
  auto y = b.getDefiningOp<affine::AffineApplyOp>();
  if (x && x.getAffineMap().isIdentity() && sameIndex(x.getOperand(0), b))
    return true;
  if (y && y.getAffineMap().isIdentity() && sameIndex(a, y.getOperand(0)))
    return true;
  return x && y && x.getAffineMap() == y.getAffineMap() &&
         llvm::equal(x.getOperands(), y.getOperands());
}

/// In `block`, a load of what a store before it (same buffer and indices)
/// wrote takes the stored value, and a store followed by another to the
/// same place goes. Only loads come between them here (see above).
void forwardStores(Block &block) {
  auto same = [](memref::StoreOp s, ValueRange idx, Value mem) {
    return s.getMemRef() == mem && s.getIndices().size() == idx.size() &&
           llvm::all_of(llvm::zip(s.getIndices(), idx), [](auto p) {
             return sameIndex(std::get<0>(p), std::get<1>(p));
           });
  };
  memref::StoreOp last;
  for (Operation &o : llvm::make_early_inc_range(block)) {
    if (auto load = dyn_cast<memref::LoadOp>(o)) {
      if (last && same(last, load.getIndices(), load.getMemRef())) {
        load.replaceAllUsesWith(last.getValueToStore());
        load.erase();
      }
    } else if (auto store = dyn_cast<memref::StoreOp>(o)) {
      if (last && same(last, store.getIndices(), store.getMemRef()))
        last.erase();
      last = store;
    } else if (o.hasTrait<OpTrait::IsTerminator>() || isMemoryEffectFree(&o)) {
      continue;
    } else {
      last = nullptr; // anything else may write
    }
  }
}

} // namespace

void jamOuterReductions(Operation *root) {
  SmallVector<std::pair<linalg::GenericOp, unsigned>> found;
  root->walk([&](linalg::GenericOp g) {
    if (std::optional<unsigned> red = outerReduction(g))
      found.push_back({g, *red});
  });
  IRRewriter rewriter(root->getContext());
  for (auto [g, red] : found) {
    rewriter.setInsertionPoint(g);
    FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, g);
    if (failed(loops))
      continue;
    rewriter.eraseOp(g);
    auto loop = dyn_cast<scf::ForOp>((*loops)[red]);
    // Marked before the jam, which clones the innermost loop per row.
    loops->back()->setAttr(kJammed, rewriter.getUnitAttr());
    // Not jammed: the loops stay as convert-linalg-to-loops made them.
    if (loop) {
      std::optional<int64_t> rows = getConstantIntValue(loop.getUpperBound());
      (void)loopUnrollJamByFactor(loop,
                                  rows && *rows % kJam == 0 ? kJam : kJamLess);
    }
  }
  root->walk([](scf::ForOp inner) {
    if (inner->removeAttr(kJammed))
      forwardStores(*inner.getBody());
  });
}

} // namespace tosa_lsp::detail
