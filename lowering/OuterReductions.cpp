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
// The innermost loop then runs by lines of one vector, each prefetching its
// rows' line a little ahead.
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
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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
/// How far ahead of the line being combined each row's line is prefetched
/// (reduce_max over H of 1x256x256x256 in C, 8 rows a pass: 1.26-1.63x the
/// memory floor without, 0.93-1.26x with 128 B to 2 KB ahead).
constexpr int64_t kAheadBytes = 2048;

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

/// `v` as computed at the start of a line (inside `line`, whose induction
/// variable becomes `at`): the index arithmetic inside `line` is cloned
/// before it.
Value atLineStart(RewriterBase &rewriter, Value v, scf::ForOp line,
                  IRMapping &map) {
  if (Value known = map.lookupOrNull(v))
    return known;
  Operation *def = v.getDefiningOp();
  if (!def || !line->isProperAncestor(def))
    return v;
  if (!isPure(def) || def->getNumRegions())
    return nullptr;
  for (Value operand : def->getOperands())
    if (!atLineStart(rewriter, operand, line, map))
      return nullptr;
  Operation *copy = rewriter.clone(*def, map);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

/// The jammed loop `inner` (over the result's innermost dim) as lines of
/// one vector, each prefetching the same rows' line kAheadBytes on: the
/// hardware prefetcher keeps up with one stream, not with a row per jammed
/// row 256 KB apart. Rows are the loads of buffers the body does not store
/// to.
void prefetchRows(RewriterBase &rewriter, scf::ForOp inner) {
  std::optional<int64_t> lb = getConstantIntValue(inner.getLowerBound()),
                         ub = getConstantIntValue(inner.getUpperBound()),
                         step = getConstantIntValue(inner.getStep());
  SmallVector<memref::LoadOp> loads;
  llvm::SmallPtrSet<Value, 4> stored;
  for (Operation &o : *inner.getBody()) {
    if (auto load = dyn_cast<memref::LoadOp>(o))
      loads.push_back(load);
    else if (auto store = dyn_cast<memref::StoreOp>(o))
      stored.insert(store.getMemRef());
  }
  llvm::erase_if(loads, [&](memref::LoadOp l) {
    return stored.count(l.getMemRef()) ||
           !l.getMemRefType().getElementType().isIntOrFloat();
  });
  if (loads.empty() || !lb || *lb != 0 || !step || *step != 1 || !ub)
    return;
  int64_t bits =
      loads.front().getMemRefType().getElementType().getIntOrFloatBitWidth();
  int64_t perLine = 512 / bits;
  if (bits % 8 || perLine < 2 || *ub % perLine)
    return;
  scf::ForOp line = stripMine(rewriter, inner, perLine);
  vectorizeAsOne(line, perLine);
  rewriter.setInsertionPoint(line);
  Location loc = line.getLoc();
  IRMapping map;
  map.map(line.getInductionVar(),
          arith::AddIOp::create(rewriter, loc, inner.getInductionVar(),
                                arith::ConstantIndexOp::create(
                                    rewriter, loc, kAheadBytes * 8 / bits)));
  for (Operation &o : *line.getBody()) {
    auto load = dyn_cast<memref::LoadOp>(o);
    if (!load || !llvm::is_contained(loads, load))
      continue;
    SmallVector<Value> indices;
    for (Value i : load.getIndices())
      indices.push_back(atLineStart(rewriter, i, line, map));
    // Past the row's end it reaches the next row's start (or nothing:
    // a prefetch never faults).
    if (!llvm::is_contained(indices, Value()))
      memref::PrefetchOp::create(rewriter, loc, load.getMemRef(), indices,
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
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
  SmallVector<scf::ForOp> jammed;
  root->walk([&](scf::ForOp inner) {
    if (inner->removeAttr(kJammed)) {
      forwardStores(*inner.getBody());
      jammed.push_back(inner);
    }
  });
  for (scf::ForOp inner : jammed)
    prefetchRows(rewriter, inner);
}

} // namespace tosa_lsp::detail
