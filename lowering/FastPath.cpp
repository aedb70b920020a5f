//===- FastPath.cpp - function versions without size-1 tests -------------===//
//
// Spec 004's multi-versioning, hoisted to the function: upstream's lowering
// tests every could-be-1 dynamic size before every element-wise op and
// routes the operand through an scf.if, which splits chains so that
// linalg's element-wise fusion cannot join them. Here a function whose
// arguments have dynamic sizes gets nested scf.if versions: one per such
// size being 1 (the body as upstream lowers it) and, where none is 1, a
// fast version in which
//   - upstream's own tests of the arguments become, after cse, the very
//     conditions of the enclosing versions, so canonicalize folds them
//     (scf.if condition propagation) and no copy block remains;
//   - an operand whose dynamic size is known not to be 1 (an argument's, or
//     one derived from such through element-wise ops) while another operand
//     or the result has a static size S != 1 there is tensor.cast to S: the
//     broadcast rule leaves no other valid size, so the test disappears from
//     the lowering too.
// The fast version is then one fusable chain of linalg.generic ops. Runs
// in every mode but upstream (first in versioned mode, after the
// assertions in safe mode).
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"
#include "MLIRShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

bool isElementwise(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return op->getNumResults() == 1 && name.starts_with("tosa.") &&
         (op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
          name == "tosa.mul");
}

/// (value, dim) pairs whose runtime size is known not to be 1.
using NotOne = llvm::DenseSet<std::pair<Value, int64_t>>;

/// In the fast version: casts operands to the static size the broadcast rule
/// forces, and records which result sizes are known not to be 1.
void refine(Operation *op, NotOne &notOne) {
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    auto src = dyn_cast<RankedTensorType>(cast.getSource().getType());
    auto dst = dyn_cast<RankedTensorType>(cast.getType());
    if (src && dst && src.getRank() == dst.getRank())
      for (int64_t d = 0; d < dst.getRank(); ++d)
        if (dst.isDynamicDim(d) &&
            (notOne.contains({cast.getSource(), d}) ||
             (!src.isDynamicDim(d) && src.getDimSize(d) != 1)))
          notOne.insert({cast.getResult(), d});
    return;
  }
  if (!isElementwise(op))
    return;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  unsigned n = numDataOperands(op);
  if (!result)
    return;
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < n; ++i) {
    auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
    if (!t || t.getRank() != result.getRank())
      return;
    types.push_back(t);
  }
  SmallVector<SmallVector<int64_t>> shapes;
  for (RankedTensorType t : types)
    shapes.emplace_back(t.getShape());
  for (int64_t d = 0; d < result.getRank(); ++d) {
    // The size every operand that is not 1 must have, if static.
    std::optional<int64_t> size;
    if (!result.isDynamicDim(d) && result.getDimSize(d) != 1)
      size = result.getDimSize(d);
    bool someNotOne = false;
    for (unsigned i = 0; i < n; ++i) {
      int64_t s = types[i].getDimSize(d);
      if (!ShapedType::isDynamic(s) && s != 1) {
        size = s;
        someNotOne = true;
      }
      if (ShapedType::isDynamic(s) && notOne.contains({op->getOperand(i), d}))
        someNotOne = true;
    }
    if (size)
      for (unsigned i = 0; i < n; ++i)
        if (types[i].isDynamicDim(d) && notOne.contains({op->getOperand(i), d}))
          shapes[i][d] = *size;
    if (result.isDynamicDim(d) && someNotOne)
      notOne.insert({op->getResult(0), d});
  }
  OpBuilder b(op);
  for (unsigned i = 0; i < n; ++i) {
    if (ArrayRef<int64_t>(shapes[i]) == types[i].getShape())
      continue;
    auto refined = RankedTensorType::get(shapes[i], types[i].getElementType(),
                                         types[i].getEncoding());
    op->setOperand(
        i, tensor::CastOp::create(b, op->getLoc(), refined, op->getOperand(i)));
  }
}

/// Does upstream's lowering test some operand size of `op` for 1?
bool hasSizeTests(Operation *op) {
  if (!isElementwise(op))
    return false;
  unsigned n = numDataOperands(op);
  for (unsigned i = 0; i < n; ++i)
    if (auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType()))
      if (!t.hasStaticShape())
        return n > 1;
  return false;
}

} // namespace

unsigned versionFunctions(ModuleOp module, unsigned maxDims) {
  unsigned versioned = 0;
  module.walk([&](func::FuncOp fn) {
    if (fn.isExternal() || !llvm::hasSingleElement(fn.getBody()))
      return;
    Block &body = fn.front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret || !llvm::any_of(body.without_terminator(),
                              [](Operation &op) { return hasSizeTests(&op); }))
      return;
    SmallVector<std::pair<BlockArgument, int64_t>> dims;
    for (BlockArgument arg : fn.getArguments())
      if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
        for (int64_t d = 0; d < t.getRank(); ++d)
          if (t.isDynamicDim(d))
            dims.push_back({arg, d});
    if (dims.empty() || dims.size() > maxDims)
      return;

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    OpBuilder b(ret);
    Location loc = fn.getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> isOne;
    for (auto [arg, d] : dims) {
      Value size = tensor::DimOp::create(b, loc, arg, d);
      isOne.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one));
    }
    // The body cloned at the builder; `fast` refines it. Yields its results.
    auto cloneBody = [&](OpBuilder &rb, bool fast) {
      IRMapping map;
      NotOne notOne;
      if (fast)
        for (auto [arg, d] : dims)
          notOne.insert({arg, d});
      for (Operation *op : ops) {
        Operation *c = rb.clone(*op, map);
        if (fast)
          refine(c, notOne);
      }
      SmallVector<Value> results;
      for (Value v : ret.getOperands())
        results.push_back(map.lookupOrDefault(v));
      scf::YieldOp::create(rb, loc, results);
    };
    // if (size k is 1) { body } else { ... if (size n-1 is 1) { body }
    // else { fast body } }
    std::function<void(OpBuilder &, size_t)> build = [&](OpBuilder &rb,
                                                         size_t k) {
      if (k == isOne.size())
        return cloneBody(rb, /*fast=*/true);
      auto ifOp = scf::IfOp::create(
          rb, loc, isOne[k],
          [&](OpBuilder &tb, Location) { cloneBody(tb, false); },
          [&](OpBuilder &eb, Location) { build(eb, k + 1); });
      scf::YieldOp::create(rb, loc, ifOp.getResults());
    };
    auto top = scf::IfOp::create(
        b, loc, isOne[0],
        [&](OpBuilder &tb, Location) { cloneBody(tb, false); },
        [&](OpBuilder &eb, Location) { build(eb, 1); });
    ret->setOperands(top.getResults());
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    ++versioned;
  });
  return versioned;
}

} // namespace tosa_lsp::detail
