//===- SafeChecks.cpp - --mode=safe: runtime broadcast checks -------------===//
//
// Spec 002: report statically only the errors that are guaranteed; for the
// ones that are only possible, check at runtime and fail with a message
// naming the violated constraint. Upstream's lowering silently produces
// undefined behaviour when two dynamic sizes disagree (neither is 1) or when
// a dynamic size differs from a static result size; here every such
// dimension gets a `cf.assert` before the op, and the op then lowers as
// upstream lowers it.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"
#include "MLIRShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tosa_lsp::detail {

static bool isElementwise(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
         name == "tosa.mul" || name == "tosa.negate" || name == "tosa.cast";
}

unsigned insertBroadcastAssertions(ModuleOp module, unsigned firstLine) {
  unsigned inserted = 0;
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isElementwise(op) && op->getNumResults() == 1)
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<std::pair<unsigned, RankedTensorType>> operands;
    for (unsigned i = 0, e = numDataOperands(op); i < e; ++i)
      if (auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType()))
        operands.push_back({i, t});
    if (!resultType || operands.empty())
      continue;
    int64_t rank = resultType.getRank();
    bool ranksEqual = llvm::all_of(
        operands, [&](auto &o) { return o.second.getRank() == rank; });
    if (!ranksEqual)
      continue; // TOSA rejects these statically.

    std::string where = op->getName().getStringRef().str();
    if (auto f = fileLocOf(op->getLoc()))
      where += " at " + std::to_string(f->getLine() + firstLine - 1) + ":" +
               std::to_string(f->getColumn());
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value one;
    auto constant = [&](int64_t v) {
      return b.create<arith::ConstantIndexOp>(loc, v).getResult();
    };
    auto dimOf = [&](unsigned operand, int64_t d) {
      return b.create<tensor::DimOp>(loc, op->getOperand(operand), d)
          .getResult();
    };
    auto equalOrOne = [&](Value x, Value y) {
      // x == y || x == 1 || y == 1
      if (!one)
        one = constant(1);
      Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, y);
      Value x1 = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, one);
      Value y1 = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, one);
      return b
          .create<arith::OrIOp>(loc, eq, b.create<arith::OrIOp>(loc, x1, y1))
          .getResult();
    };
    for (int64_t d = 0; d < rank; ++d) {
      SmallVector<unsigned> dynamic;
      std::optional<int64_t> fixed; // a static size other than 1
      for (auto &[i, t] : operands) {
        int64_t s = t.getDimSize(d);
        if (ShapedType::isDynamic(s))
          dynamic.push_back(i);
        else if (s != 1)
          fixed = s;
      }
      if (dynamic.empty())
        continue;
      // Against a static size S: each dynamic size must be S or 1.
      if (fixed) {
        for (unsigned i : dynamic) {
          Value ok = equalOrOne(dimOf(i, d), constant(*fixed));
          b.create<cf::AssertOp>(
              loc, ok,
              where + ": operand #" + std::to_string(i) + " must have size " +
                  std::to_string(*fixed) + " or 1 in dimension " +
                  std::to_string(d) + " (broadcast with a static size)");
          ++inserted;
        }
      } else {
        // Dynamic against dynamic: pairwise equal or 1.
        for (size_t x = 0; x < dynamic.size(); ++x)
          for (size_t y = x + 1; y < dynamic.size(); ++y) {
            Value ok = equalOrOne(dimOf(dynamic[x], d), dimOf(dynamic[y], d));
            b.create<cf::AssertOp>(
                loc, ok,
                where + ": operands #" + std::to_string(dynamic[x]) + " and #" +
                    std::to_string(dynamic[y]) +
                    " have different runtime sizes in dimension " +
                    std::to_string(d) + " and neither is 1");
            ++inserted;
          }
      }
      // A static result size over dynamic operands: the broadcast size
      // must be it (the dynamic-to-static obligation).
      int64_t declared = resultType.getDimSize(d);
      if (!fixed && !ShapedType::isDynamic(declared)) {
        // Some operand must reach the declared size...
        Value any;
        for (unsigned i : dynamic) {
          Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                             dimOf(i, d), constant(declared));
          any = any ? b.create<arith::OrIOp>(loc, any, eq).getResult() : eq;
        }
        bool staticOne = llvm::any_of(
            operands, [&](auto &o) { return o.second.getDimSize(d) == 1; });
        if (!(declared == 1 && staticOne)) {
          b.create<cf::AssertOp>(loc, any,
                                 where + ": the result is declared with size " +
                                     std::to_string(declared) +
                                     " in dimension " + std::to_string(d) +
                                     " but no operand has that runtime size");
          ++inserted;
        }
        // ...and the others must be it or 1.
        for (unsigned i : dynamic) {
          Value size = dimOf(i, d);
          if (!one)
            one = constant(1);
          Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                             size, constant(declared));
          Value isOne =
              b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, size, one);
          Value ok = declared == 1
                         ? eq
                         : b.create<arith::OrIOp>(loc, eq, isOne).getResult();
          b.create<cf::AssertOp>(loc, ok,
                                 where + ": the result is declared with size " +
                                     std::to_string(declared) +
                                     " in dimension " + std::to_string(d) +
                                     " but operand #" + std::to_string(i) +
                                     " has another runtime size");
          ++inserted;
        }
      }
    }
  }
  return inserted;
}

namespace {

/// Builds the checks of one gather, scatter or table op, before it.
struct IndexChecks {
  OpBuilder b;
  Location loc;
  std::string where;

  IndexChecks(Operation *op, unsigned firstLine)
      : b(op), loc(op->getLoc()), where(op->getName().getStringRef().str()) {
    if (auto f = fileLocOf(loc))
      where += " at " + std::to_string(f->getLine() + firstLine - 1) + ":" +
               std::to_string(f->getColumn());
  }
  Value constant(int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  }
  Value dim(Value v, int64_t d) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.isDynamicDim(d))
      return constant(t.getDimSize(d));
    return b.create<tensor::DimOp>(loc, v, d).getResult();
  }
  /// Asserts that dimension `da` of `a` equals dimension `db` of `bv`
  /// (both static: MLIR's verifier compared them already).
  void sameSize(Value a, int64_t da, Value bv, int64_t db,
                const std::string &what) {
    auto ta = cast<RankedTensorType>(a.getType());
    auto tb = cast<RankedTensorType>(bv.getType());
    if (!ta.isDynamicDim(da) && !tb.isDynamicDim(db))
      return;
    Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                       dim(a, da), dim(bv, db));
    b.create<cf::AssertOp>(loc, eq, where + ": " + what);
  }
  /// Every element of the [N, W] `indices` is in [0, `bound`).
  void indicesBelow(Value indices, Value bound) {
    Value zero = constant(0), one = constant(1);
    auto outer = b.create<scf::ForOp>(loc, zero, dim(indices, 0), one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(outer.getBody());
    auto inner = b.create<scf::ForOp>(loc, zero, dim(indices, 1), one);
    b.setInsertionPointToStart(inner.getBody());
    Value raw = b.create<tensor::ExtractOp>(
        loc, indices,
        ValueRange{outer.getInductionVar(), inner.getInductionVar()});
    Value i = b.create<arith::IndexCastOp>(loc, b.getIndexType(), raw);
    Value ok = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, i, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, bound));
    b.create<cf::AssertOp>(loc, ok,
                           where + ": an index is out of range (indices "
                                   "must be in [0, K), K = dimension 1 of "
                                   "the values)");
  }
};

bool hasRank(Value v, int64_t rank) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == rank;
}

/// A table shorter than the input's range is read out of bounds.
bool checkTable(Operation *op, IndexChecks &c) {
  Value table = op->getOperand(1);
  auto t = dyn_cast<RankedTensorType>(table.getType());
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!t || !in || t.getRank() != 1 || !t.isDynamicDim(0))
    return false;
  int64_t want = in.getElementType().isInteger(16) ? 513 : 256;
  Value eq = c.b.create<arith::CmpIOp>(c.loc, arith::CmpIPredicate::eq,
                                       c.dim(table, 0), c.constant(want));
  c.b.create<cf::AssertOp>(c.loc, eq,
                           c.where + ": the table must have " +
                               std::to_string(want) + " entries");
  return true;
}

/// gather(values [N,K,C], indices [N,W]) -> [N,W,C];
/// scatter(values_in [N,K,C], indices [N,W], input [N,W,C]) -> [N,K,C].
bool checkGatherScatter(Operation *op, IndexChecks &c) {
  Value values = op->getOperand(0), indices = op->getOperand(1);
  if (!hasRank(values, 3) || !hasRank(indices, 2) || op->getNumResults() != 1 ||
      !hasRank(op->getResult(0), 3))
    return false;
  c.sameSize(values, 0, indices, 0,
             "the values and the indices have different batch sizes");
  if (op->getName().getStringRef() == "tosa.scatter" &&
      op->getNumOperands() == 3 && hasRank(op->getOperand(2), 3)) {
    Value input = op->getOperand(2);
    c.sameSize(input, 0, indices, 0,
               "the input and the indices have different batch sizes");
    c.sameSize(input, 1, indices, 1,
               "the input and the indices have different widths");
    c.sameSize(input, 2, values, 2,
               "the input and the values have different channel counts");
  }
  c.indicesBelow(indices, c.dim(values, 1));
  return true;
}

} // namespace

unsigned insertIndexAssertions(ModuleOp module, unsigned firstLine) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if ((name == "tosa.gather" || name == "tosa.scatter" ||
         name == "tosa.table") &&
        op->getNumOperands() >= 2)
      ops.push_back(op);
  });
  unsigned checked = 0;
  for (Operation *op : ops) {
    IndexChecks c(op, firstLine);
    if (op->getName().getStringRef() == "tosa.table"
            ? checkTable(op, c)
            : checkGatherScatter(op, c))
      ++checked;
  }
  return checked;
}

void flushBeforeAbort(ModuleOp module) {
  // cf.assert lowers to puts(msg); abort(): without a flush the message is
  // lost whenever stdout is a pipe or a file. Add fflush(NULL) in between.
  SmallVector<LLVM::CallOp> aborts;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() == std::optional<StringRef>("abort"))
      aborts.push_back(call);
  });
  if (aborts.empty())
    return;
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  if (!module.lookupSymbol("fflush")) {
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    b.create<LLVM::LLVMFuncOp>(module.getLoc(), "fflush",
                               LLVM::LLVMFunctionType::get(i32, {ptr}));
  }
  auto fflush = module.lookupSymbol<LLVM::LLVMFuncOp>("fflush");
  if (!fflush)
    return;
  for (LLVM::CallOp call : aborts) {
    OpBuilder b(call);
    Value null = b.create<LLVM::ZeroOp>(call.getLoc(), ptr);
    b.create<LLVM::CallOp>(call.getLoc(), fflush, ValueRange{null});
  }
}

} // namespace tosa_lsp::detail
