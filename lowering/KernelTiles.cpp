//===- KernelTiles.cpp - register tiles that start from zero -------------===//
//
// The matmul kernel (Kernels.cpp) keeps an MR x NR tile of C in registers
// across a K block: the tile is loaded from C before the K loop and stored
// after it. C's rows are N floats apart (8 KB for N = 2048), so the 8 rows
// of the next tile are 8 cache misses the K loop waits for at each tile
// (perf on 2048^3: 12% of the kernel's samples on those loads). As BLIS
// does, the tile here starts from zero, C is read after the K loop and
// added (C + AB: float reassociation, like the K blocks themselves), and
// after bufferization C's rows are prefetched before the K loop, so their
// misses overlap the FMAs.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr const char *kKBlocksTag = "tosa_lsp.kblocks";

/// The transfer_read (maybe through a shape_cast) that `v` is.
vector::TransferReadOp readOf(Value v) {
  if (auto cast = v.getDefiningOp<vector::ShapeCastOp>())
    v = cast.getSource();
  return v.getDefiningOp<vector::TransferReadOp>();
}

/// Whether the loop-carried `acc` only accumulates: it (and what derives
/// from it) is extracted, inserted, reshaped, the addend of an FMA, carried
/// by a nested loop or yielded. Then the loop's result is acc + (what the
/// loop adds), and acc can start from zero. (Positions are not matched: the
/// kernels' contractions lowered to FMAs extract and insert row i of the
/// tile at row i.)
bool onlyAccumulates(Value acc) {
  SmallVector<Value> work = {acc};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<vector::ExtractOp, vector::InsertOp, vector::ShapeCastOp>(user) ||
          (isa<vector::FMAOp>(user) && use.getOperandNumber() == 2)) {
        work.push_back(user->getResult(0));
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        BlockArgument arg = loop.getTiedLoopRegionIterArg(&use);
        if (!arg)
          return false;
        work.push_back(arg);
        work.push_back(loop.getTiedLoopResult(arg));
      } else if (!isa<scf::YieldOp>(user)) {
        return false;
      }
    }
  }
  return true;
}

/// The tile read after the loop, its shape_cast (or null) and the sum.
struct TileSum {
  vector::TransferReadOp read;
  Operation *cast = nullptr;
  arith::AddFOp add;
};

/// `loop` carries one vector initialised by a read of the tile: start it
/// from zero and add the read after the loop.
std::optional<TileSum> startFromZero(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return std::nullopt;
  Value init = loop.getInitArgs()[0];
  auto type = dyn_cast<VectorType>(init.getType());
  vector::TransferReadOp read = readOf(init);
  if (!type || !type.getElementType().isF32() || !read ||
      !isa<RankedTensorType>(read.getBase().getType()) ||
      !onlyAccumulates(loop.getRegionIterArgs()[0])) {
    return std::nullopt;
  }
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(0)));
  loop.getInitArgsMutable()[0].set(zero);
  b.setInsertionPointAfter(loop);
  IRMapping map;
  TileSum out;
  out.read = cast<vector::TransferReadOp>(b.clone(*read, map));
  Value c = out.read.getResult();
  if (init != read.getResult()) {
    map.map(read.getResult(), c);
    out.cast = b.clone(*init.getDefiningOp(), map);
    c = out.cast->getResult(0);
  }
  out.add = arith::AddFOp::create(b, loc, c, loop.getResult(0));
  loop.getResult(0).replaceAllUsesExcept(out.add, out.add);
  if (init != read.getResult() && init.use_empty())
    init.getDefiningOp()->erase();
  if (read->use_empty())
    read->erase();
  return out;
}

/// When the tile is read from a zero fill that the loops around carry
/// (C of the packed matmul), the first K block need not read it: the fill
/// goes (its buffer is written whole by the first K block's tiles) and the
/// read and the add run from the second K block on (the K-block loop is
/// tagged by the schedule); without a K-block loop (`singleKBlock`), never.
/// A fresh C costs its page faults only, instead of a zero fill read back.
bool skipFirstRead(scf::ForOp loop, TileSum sum, bool singleKBlock) {
  Value src = sum.read.getBase();
  SmallVector<scf::ForOp> kLoops;
  for (;;) {
    // C's view in tiles (accumulateInPlace) of a K-block loop's C.
    if (auto view = src.getDefiningOp<tensor::ExpandShapeOp>()) {
      src = view.getSrc();
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(src);
    if (!arg)
      break;
    auto outer = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!outer || arg == outer.getInductionVar())
      return false;
    if (outer->hasAttr(kKBlocksTag))
      kLoops.push_back(outer);
    src = outer.getTiedLoopInit(arg)->get();
  }
  auto fill = src.getDefiningOp<linalg::FillOp>();
  auto value =
      fill ? fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() : nullptr;
  auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : nullptr;
  if (!zero || !zero.getValue().isZero() || !fill->hasOneUse() ||
      kLoops.size() > 1 || (kLoops.empty() && !singleKBlock))
    return false;
  Value acc = loop.getResult(0);
  if (kLoops.empty()) {
    sum.add.getResult().replaceAllUsesWith(acc);
    sum.add->erase();
    if (sum.cast)
      sum.cast->erase();
    sum.read->erase();
  } else {
    OpBuilder b(sum.read);
    Location loc = sum.read.getLoc();
    scf::ForOp k = kLoops.front();
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        k.getInductionVar(), k.getLowerBound());
    auto branch = scf::IfOp::create(b, loc, acc.getType(), first, true, true);
    OpBuilder then = OpBuilder::atBlockEnd(branch.thenBlock());
    scf::YieldOp::create(then, loc, acc);
    sum.add.getResult().replaceAllUsesWith(branch.getResult(0));
    Block *other = branch.elseBlock();
    sum.read->moveBefore(other, other->end());
    if (sum.cast)
      sum.cast->moveBefore(other, other->end());
    sum.add->moveBefore(other, other->end());
    OpBuilder end = OpBuilder::atBlockEnd(other);
    scf::YieldOp::create(end, loc, sum.add.getResult());
  }
  fill.getResult(0).replaceAllUsesWith(fill.getOutputs()[0]);
  fill->erase();
  return true;
}

/// Prefetches of the rows a tile read after `loop` touches, one per 64
/// bytes of each row, inserted before the loop; at most `most`.
void prefetchBefore(scf::ForOp loop, vector::TransferReadOp read,
                    DominanceInfo &dom, int64_t most) {
  auto memref = dyn_cast<MemRefType>(read.getBase().getType());
  VectorType type = read.getVectorType();
  AffineMap perm = read.getPermutationMap();
  if (!memref || !perm.isProjectedPermutation() || type.getRank() < 1)
    return;
  for (Value v : read->getOperands())
    if (!dom.properlyDominates(v, loop))
      return;
  int64_t perLine =
      64 / std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  int64_t lines = (shape.back() + perLine - 1) / perLine;
  if (rows * lines > most)
    return;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> base(read.getIndices());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t l = 0; l < lines; ++l) {
      // The offsets of this element, vector dim by vector dim.
      SmallVector<int64_t> pos(shape.size());
      int64_t rest = r;
      for (int64_t d = shape.size() - 2; d >= 0; --d) {
        pos[d] = rest % shape[d];
        rest /= shape[d];
      }
      pos.back() = l * perLine;
      SmallVector<Value> idx(base);
      for (auto [d, p] : llvm::enumerate(pos)) {
        auto dim = dyn_cast<AffineDimExpr>(perm.getResult(d));
        if (!dim || p == 0)
          continue;
        Value off = arith::ConstantIndexOp::create(b, loc, p);
        idx[dim.getPosition()] =
            arith::AddIOp::create(b, loc, idx[dim.getPosition()], off);
      }
      memref::PrefetchOp::create(b, loc, read.getBase(), idx,
                                 /*isWrite=*/true, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    }
  }
}

} // namespace

constexpr uint64_t kKUnroll = 4;

unsigned startTilesFromZero(Operation *root, bool singleKBlock) {
  // A one-part schedule leaves the K loop a dead tensor iter_arg beside
  // the tile.
  RewritePatternSet patterns(root->getContext());
  scf::ForOp::getCanonicalizationPatterns(patterns, root->getContext());
  (void)applyPatternsGreedily(root, std::move(patterns));
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) { loops.push_back(loop); });
  unsigned n = 0;
  for (scf::ForOp loop : loops)
    if (std::optional<TileSum> sum = startFromZero(loop)) {
      ++n;
      skipFirstRead(loop, *sum, singleKBlock);
      // Four k steps per iteration: fewer loop and address updates beside
      // the FMAs, same order of the sums (measured: 1-7% less time on
      // 256^3-2048^3 and 1x128x768 . 1x768x3072, in noisy runs).
      (void)loopUnrollByFactor(loop, kKUnroll);
    }
  root->walk([](scf::ForOp loop) { loop->removeAttr(kKBlocksTag); });
  return n;
}

void prefetchTiles(Operation *root) {
  DominanceInfo dom(root);
  SmallVector<std::pair<scf::ForOp, vector::TransferReadOp>> found;
  root->walk([&](arith::AddFOp add) {
    for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      auto loop = y.getDefiningOp<scf::ForOp>();
      vector::TransferReadOp read = readOf(x);
      Operation *after = loop && read
                             ? loop->getBlock()->findAncestorOpInBlock(*read)
                             : nullptr;
      if (after && loop->isBeforeInBlock(after))
        found.push_back({loop, read});
    }
  });
  for (auto [loop, read] : found)
    prefetchBefore(loop, read, dom, 32);
}

} // namespace tosa_lsp::detail
