//===- FastPath.cpp - function versions without size-1 tests -------------===//
//
// Spec 004's multi-versioning, hoisted to the function: upstream's lowering
// tests every could-be-1 dynamic size before every element-wise op and
// routes the operand through an scf.if, which splits chains so that
// linalg's element-wise fusion cannot join them, and copies the operand
// when the size is 1. Here a function whose arguments have dynamic sizes
// gets a decision tree of nested scf.if on those sizes being 1, tested once
// at its entry, whose leaves are versions of the body that know every size:
//   - a size that is 1 is tensor.cast to a static 1, so the operand is read
//     in place (a projected map), in one loop nest with the others;
//   - upstream's own tests of the other sizes become, after cse, the very
//     conditions of the enclosing scf.if, so canonicalize folds them
//     (scf.if condition propagation) and no copy block remains;
//   - an operand whose dynamic size is known not to be 1 (an argument's, or
//     one derived from such through element-wise ops) while another operand
//     or the result has a static size S != 1 there is tensor.cast to S: the
//     broadcast rule leaves no other valid size, so the test disappears from
//     the lowering too.
// Any pattern of 1s in one argument gets its version (`?x?` + `?x?` whose
// second operand is 1x4096 or 4096x1 at run time, an NHWC bias 1x1x1xC);
// where a second argument also has a 1, the leaf calls a private copy of
// the function as upstream lowers it. Functions whose tree would exceed a
// budget of body copies keep the earlier chain (a version per size being 1
// with upstream's body, then the fast one), up to `maxDims` sizes. Runs in
// every mode but upstream (first in versioned mode, after the assertions in
// safe mode).
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"
#include "MLIRShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

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

namespace {

/// The function's body ops and return, and how to clone them.
struct Body {
  Block *entry = nullptr;
  SmallVector<Operation *> ops;
  func::ReturnOp ret;

  /// The ops cloned at `rb` with `map`; with `fast` each clone is refined
  /// from `notOne`. Returns the values F returns.
  SmallVector<Value> clone(OpBuilder &rb, IRMapping &map, NotOne *fast) const {
    for (Operation *op : ops) {
      Operation *c = rb.clone(*op, map);
      if (fast)
        refine(c, *fast);
    }
    SmallVector<Value> results;
    for (Value v : ret->getOperands())
      results.push_back(map.lookupOrDefault(v));
    return results;
  }
};

struct SizeTest {
  BlockArgument arg;
  int64_t dim;
  Value isOne;
};

enum class Size : uint8_t { Unknown, One, NotOne };

/// Spec 004's multi-versioning on every dynamic argument size, for a
/// runtime broadcast of fully dynamic operands (`?x?` + `?x?` where one is
/// 1x4096 at run time): a decision tree on the size-1 tests, made once at
/// the function's entry, whose leaves know every size: the sizes that are 1
/// cast to a static 1 (the lowering reads that operand in place, a
/// projected map), the others known not to be 1 (upstream's tests of them
/// fold, being the tree's own conditions after cse). One argument may
/// broadcast (any pattern of its sizes); when a second one also has a size
/// 1, the leaf calls the function as upstream lowers it (`fallback`).
class VersionTree {
public:
  /// With `only`, that argument alone may broadcast: a 1 elsewhere calls
  /// the fallback.
  VersionTree(const Body &body, ArrayRef<SizeTest> tests, func::FuncOp fallback,
              BlockArgument only, bool outline, Location loc)
      : body(body), tests(tests), fallback(fallback), only(only),
        outline(outline), loc(loc), decided(tests.size(), Size::Unknown) {}

  SmallVector<Value> build(OpBuilder &b, size_t k = 0,
                           BlockArgument broadcasting = nullptr) {
    if (k == tests.size())
      return leaf(b);
    const SizeTest &t = tests[k];
    bool second =
        (broadcasting && broadcasting != t.arg) || (only && only != t.arg);
    auto branch = [&](Size s) {
      return [&, s](OpBuilder &rb, Location) {
        SmallVector<Value> v;
        decided[k] = s;
        if (s == Size::One && second)
          v = func::CallOp::create(rb, loc, fallback,
                                   body.entry->getArguments())
                  .getResults();
        else
          v = build(rb, k + 1, s == Size::One ? t.arg : broadcasting);
        decided[k] = Size::Unknown;
        scf::YieldOp::create(rb, loc, v);
      };
    };
    return scf::IfOp::create(b, loc, t.isOne, branch(Size::One),
                             branch(Size::NotOne))
        .getResults();
  }

  /// Versions (leaves with a body) the tree of `tests` has.
  static unsigned leaves(ArrayRef<SizeTest> tests, BlockArgument only) {
    unsigned n = 1;
    for (size_t i = 0; i < tests.size();) {
      size_t j = i;
      while (j < tests.size() && tests[j].arg == tests[i].arg)
        ++j;
      if (!only || tests[i].arg == only)
        n += (1u << (j - i)) - 1;
      i = j;
    }
    return n;
  }

private:
  /// The casts of the sizes the leaf knows are 1, at `b`, into `map`
  /// (from `args`, the arguments there); the sizes it knows are not 1.
  NotOne specialise(OpBuilder &b, ValueRange args, IRMapping &map) {
    NotOne notOne;
    for (auto [arg, inner] : llvm::zip(body.entry->getArguments(), args)) {
      map.map(arg, inner);
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      SmallVector<int64_t> shape(type.getShape());
      for (auto [t, s] : llvm::zip(tests, decided))
        if (t.arg == arg && s == Size::One)
          shape[t.dim] = 1;
      if (ArrayRef<int64_t>(shape) != type.getShape())
        map.map(arg, tensor::CastOp::create(
                         b, loc,
                         RankedTensorType::get(shape, type.getElementType(),
                                               type.getEncoding()),
                         inner));
    }
    for (auto [t, s] : llvm::zip(tests, decided))
      if (s == Size::NotOne)
        notOne.insert({map.lookupOrDefault(t.arg), t.dim});
    return notOne;
  }

  SmallVector<Value> inlineLeaf(OpBuilder &b) {
    IRMapping map;
    NotOne notOne = specialise(b, body.entry->getArguments(), map);
    return body.clone(b, map, &notOne);
  }

  /// With `outline`, a leaf's body is a private function of F's type,
  /// called here: one-shot bufferization's analysis of 31 versions nested 8
  /// scf.if deep (NHWC `?x?x?x?` + `?x?x?x?`) took 9 s; per function it is
  /// linear. LLVM inlines each back (one call site each).
  SmallVector<Value> leaf(OpBuilder &b) {
    if (!outline)
      return inlineLeaf(b);
    auto fn = cast<func::FuncOp>(body.entry->getParentOp());
    OpBuilder mb(fn);
    auto version = func::FuncOp::create(
        mb, loc, (fn.getSymName() + "__v").str(), fn.getFunctionType());
    version.setPrivate();
    SymbolTable(fn->getParentOfType<ModuleOp>())
        .insert(version, ++Block::iterator(fn));
    Block *entry = version.addEntryBlock();
    OpBuilder vb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    NotOne notOne = specialise(vb, entry->getArguments(), map);
    func::ReturnOp::create(vb, loc,
                           guarded(vb, entry->getArguments(), map, notOne, 0));
    return func::CallOp::create(b, loc, version, body.entry->getArguments())
        .getResults();
  }

  /// In an outlined leaf, the sizes known not to be 1 are tested again, in
  /// nested scf.if whose `then` (never taken: the caller tested them) yields
  /// empty tensors: upstream's tests of them fold there as in the tree.
  SmallVector<Value> guarded(OpBuilder &b, ValueRange args, IRMapping &map,
                             NotOne &notOne, size_t k) {
    while (k < tests.size() && decided[k] != Size::NotOne)
      ++k;
    if (k == tests.size())
      return body.clone(b, map, &notOne);
    unsigned argNo = tests[k].arg.getArgNumber();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value size = tensor::DimOp::create(b, loc, args[argNo], tests[k].dim);
    Value isOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
    auto ifOp = scf::IfOp::create(
        b, loc, isOne,
        [&](OpBuilder &tb, Location) {
          // F_into's results are its destinations (else the result would
          // not be computed in place); F's, empty tensors.
          SmallVector<Value> never;
          Value zero = arith::ConstantIndexOp::create(tb, loc, 0);
          for (Value v : body.ret->getOperands()) {
            auto into =
                v.getDefiningOp<bufferization::MaterializeInDestinationOp>();
            auto dest =
                into ? dyn_cast<BlockArgument>(into.getDest()) : nullptr;
            if (dest && dest.getOwner() == body.entry) {
              never.push_back(args[dest.getArgNumber()]);
              continue;
            }
            auto type = cast<RankedTensorType>(v.getType());
            SmallVector<Value> sizes(type.getNumDynamicDims(), zero);
            never.push_back(tensor::EmptyOp::create(
                tb, loc, type.getShape(), type.getElementType(), sizes));
          }
          scf::YieldOp::create(tb, loc, never);
        },
        [&](OpBuilder &eb, Location) {
          scf::YieldOp::create(eb, loc, guarded(eb, args, map, notOne, k + 1));
        });
    return ifOp.getResults();
  }

  const Body &body;
  ArrayRef<SizeTest> tests;
  func::FuncOp fallback;
  BlockArgument only;
  bool outline;
  Location loc;
  SmallVector<Size> decided;
};

/// The function as upstream lowers it, private, beside `fn` (once).
func::FuncOp genericTwin(func::FuncOp fn) {
  auto twin = cast<func::FuncOp>(fn->clone());
  twin.setSymName((fn.getSymName() + "__generic").str());
  twin.setPrivate();
  twin->removeAttr("llvm.emit_c_interface");
  SymbolTable(fn->getParentOfType<ModuleOp>())
      .insert(twin, ++Block::iterator(fn));
  return twin;
}

/// Before the tree (more versions than its budget of body copies): if
/// (size k is 1) { body } else { ... if (size n-1 is 1) { body } else {
/// fast body } }.
SmallVector<Value> buildChain(OpBuilder &b, const Body &body,
                              ArrayRef<SizeTest> tests, size_t k,
                              Location loc) {
  IRMapping map;
  if (k == tests.size()) {
    NotOne notOne;
    for (const SizeTest &t : tests)
      notOne.insert({t.arg, t.dim});
    return body.clone(b, map, &notOne);
  }
  auto ifOp = scf::IfOp::create(
      b, loc, tests[k].isOne,
      [&](OpBuilder &tb, Location) {
        IRMapping m;
        scf::YieldOp::create(tb, loc, body.clone(tb, m, nullptr));
      },
      [&](OpBuilder &eb, Location) {
        scf::YieldOp::create(eb, loc, buildChain(eb, body, tests, k + 1, loc));
      });
  return ifOp.getResults();
}

/// Body copies a function may get from the tree (versions x TOSA ops), and
/// versions: a one-op function of two `?x?` operands gets its 7, of two
/// `?x?x?x?` operands 16 (its second operand's patterns).
constexpr unsigned kTreeBudget = 256;
constexpr unsigned kMaxLeaves = 16;

bool versionFunction(func::FuncOp fn, unsigned maxDims) {
  if (fn.isExternal() || !llvm::hasSingleElement(fn.getBody()))
    return false;
  Body body;
  body.entry = &fn.front();
  body.ret = dyn_cast<func::ReturnOp>(body.entry->getTerminator());
  if (!body.ret ||
      !llvm::any_of(body.entry->without_terminator(),
                    [](Operation &op) { return hasSizeTests(&op); }))
    return false;
  for (Operation &op : body.entry->without_terminator())
    body.ops.push_back(&op);
  SmallVector<SizeTest> tests;
  llvm::SmallPtrSet<void *, 4> dynamicArgs;
  for (BlockArgument arg : fn.getArguments()) {
    // `F_into`'s destinations: their sizes are the results', and their
    // type is the result's.
    if (llvm::any_of(arg.getUsers(), [](Operation *u) {
          return isa<bufferization::MaterializeInDestinationOp>(u);
        }))
      continue;
    if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.isDynamicDim(d)) {
          tests.push_back({arg, d, nullptr});
          dynamicArgs.insert(arg.getAsOpaquePointer());
        }
  }
  if (tests.empty())
    return false;
  // The budget counts TOSA ops: safe mode's size checks (tensor.dim,
  // arith.cmpi, cf.assert) fold or cost nothing after lowering.
  unsigned tosaOps = llvm::count_if(body.ops, [](Operation *op) {
    return op->getName().getStringRef().starts_with("tosa.");
  });
  // Beyond 16 versions (two NHWC `?x?x?x?` operands: 31), the last
  // dynamic argument alone may broadcast (a bias, a scale, a mask): the
  // versions' bufferization (F_into's most of all) grows faster than their
  // number (31 versions: 8 s of compile time; 15: 2 s).
  BlockArgument only;
  if (VersionTree::leaves(tests, nullptr) > kMaxLeaves)
    only = tests.back().arg;
  unsigned leaves = VersionTree::leaves(tests, only);
  bool tree = leaves <= kMaxLeaves && leaves * tosaOps <= kTreeBudget;
  if (!tree && tests.size() > maxDims)
    return false;
  // F_into's versions stay inline: in a function of their own, one-shot
  // bufferization copied each destination (3x the copy floor).
  bool into = llvm::any_of(body.ops, [](Operation *op) {
    return isa<bufferization::MaterializeInDestinationOp>(op);
  });
  // Cloned before the body changes: a leaf where two arguments broadcast
  // calls it.
  func::FuncOp generic =
      tree && dynamicArgs.size() > 1 ? genericTwin(fn) : nullptr;
  OpBuilder b(body.ret);
  Location loc = fn.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (SizeTest &t : tests)
    t.isOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              tensor::DimOp::create(b, loc, t.arg, t.dim), one);
  SmallVector<Value> results =
      tree ? VersionTree(body, tests, generic, only, leaves > 8 && !into, loc)
                 .build(b)
           : buildChain(b, body, tests, 0, loc);
  body.ret->setOperands(results);
  for (Operation *op : llvm::reverse(body.ops))
    op->erase();
  return true;
}

} // namespace

unsigned versionFunctions(ModuleOp module, unsigned maxDims) {
  SmallVector<func::FuncOp> fns;
  module.walk([&](func::FuncOp fn) { fns.push_back(fn); });
  unsigned versioned = 0;
  for (func::FuncOp fn : fns)
    versioned += versionFunction(fn, maxDims);
  return versioned;
}

} // namespace tosa_lsp::detail
