//===- Versioning.cpp - --mode=versioned: copy-free dynamic broadcast -----===//
//
// Spec 004: a dynamic dimension that may be 1 forces upstream's lowering to
// materialise a broadcast copy (scf.if + linalg.generic) whenever it is 1 at
// run time. Here the op is versioned instead: one branch per combination of
// "this could-be-1 dimension is 1 / is not 1"; in a branch where a dimension
// is 1 the operand is tensor.cast to a type with a static 1 there, so the
// lowering uses a projected (constant 0) map and copies nothing; where it is
// not 1, upstream's copy blocks are never taken. Ops with more could-be-1
// dimensions than the bound keep upstream's form.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"
#include "MLIRShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

struct Candidate {
  unsigned operand;
  int64_t dim;
};

/// Builds the nested scf.if for candidates [k, end) and returns the value
/// of the versioned op for the choices made so far.
Value buildVersions(OpBuilder &b, Operation *op, ArrayRef<Candidate> candidates,
                    size_t k, SmallVectorImpl<bool> &isOne) {
  Location loc = op->getLoc();
  if (k == candidates.size()) {
    // Leaf: cast operands whose chosen dims are 1, clone the op on them
    // (per operand position: the same value may appear twice).
    Operation *clone = b.clone(*op);
    for (unsigned i = 0, e = numDataOperands(op); i < e; ++i) {
      auto type = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
      if (!type)
        continue;
      SmallVector<int64_t> shape(type.getShape());
      bool changed = false;
      for (size_t c = 0; c < candidates.size(); ++c)
        if (isOne[c] && candidates[c].operand == i) {
          shape[candidates[c].dim] = 1;
          changed = true;
        }
      if (!changed)
        continue;
      auto castType = RankedTensorType::get(shape, type.getElementType(),
                                            type.getEncoding());
      OpBuilder cb(clone);
      clone->setOperand(
          i, cb.create<tensor::CastOp>(loc, castType, op->getOperand(i)));
    }
    return clone->getResult(0);
  }
  const Candidate &c = candidates[k];
  Value size = b.create<tensor::DimOp>(loc, op->getOperand(c.operand), c.dim);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value cond =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, size, one);
  auto ifOp = b.create<scf::IfOp>(
      loc, cond,
      [&](OpBuilder &tb, Location) {
        isOne.push_back(true);
        Value v = buildVersions(tb, op, candidates, k + 1, isOne);
        isOne.pop_back();
        tb.create<scf::YieldOp>(loc, v);
      },
      [&](OpBuilder &eb, Location) {
        isOne.push_back(false);
        Value v = buildVersions(eb, op, candidates, k + 1, isOne);
        isOne.pop_back();
        eb.create<scf::YieldOp>(loc, v);
      });
  return ifOp.getResult(0);
}

} // namespace

unsigned versionBroadcasts(ModuleOp module, unsigned maxDims) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (op->getNumResults() == 1 && name.starts_with("tosa.") &&
        (op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
         name == "tosa.mul"))
      ops.push_back(op);
  });
  unsigned versioned = 0;
  for (Operation *op : ops) {
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      continue;
    // A dynamic operand dim may be 1 at run time when some other operand's
    // size there is not statically 1: that is where upstream copies.
    SmallVector<Candidate> candidates;
    unsigned n = numDataOperands(op);
    bool ranked = true;
    for (unsigned i = 0; i < n; ++i) {
      auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
      ranked &= t && t.getRank() == result.getRank();
    }
    if (!ranked || n < 2)
      continue;
    for (int64_t d = 0; d < result.getRank(); ++d)
      for (unsigned i = 0; i < n; ++i) {
        auto t = cast<RankedTensorType>(op->getOperand(i).getType());
        if (!ShapedType::isDynamic(t.getDimSize(d)))
          continue;
        bool othersNotOne = false;
        for (unsigned j = 0; j < n; ++j)
          if (j != i && cast<RankedTensorType>(op->getOperand(j).getType())
                                .getDimSize(d) != 1)
            othersNotOne = true;
        if (othersNotOne)
          candidates.push_back({i, d});
      }
    if (candidates.empty() || candidates.size() > maxDims)
      continue; // Nothing to version, or too many versions: upstream form.
    OpBuilder b(op);
    SmallVector<bool> isOne;
    Value v = buildVersions(b, op, candidates, 0, isOne);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
    ++versioned;
  }
  return versioned;
}

} // namespace tosa_lsp::detail
