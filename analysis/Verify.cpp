//===- Verify.cpp - report every verifier error ---------------------------===//
//
// mlir::verify stops at the first failure in each isolated-from-above op, so
// mlir-opt shows one error per function. This walks the IR in the same order
// with the same checks (mlir/lib/IR/Verifier.cpp) but keeps going, so the
// first error we report is the one mlir-opt reports and the others follow.
//
//===----------------------------------------------------------------------===//

#include "IR.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/RegionKindInterface.h"

using namespace mlir;

namespace tosa_lsp::detail {
namespace {

class AllErrorsVerifier {
public:
  AllErrorsVerifier(llvm::function_ref<void(Operation *)> current,
                    llvm::DenseSet<Operation *> &failedOps,
                    llvm::DenseSet<Operation *> &visited)
      : current(current), failedOps(failedOps), visited(visited) {}

  /// verifyOpAndDominance, counting the errors emitted meanwhile (passed on
  /// to the analysis' handler) so that a silent failure is noticed.
  bool run(Operation &op) {
    ScopedDiagnosticHandler counter(
        op.getContext(), [&](mlir::Diagnostic &d) -> LogicalResult {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          return failure();
        });
    return verifyOpAndDominance(op);
  }

private:
  bool verifyOpAndDominance(Operation &op) {
    if (!verifyOperation(op))
      return false;
    if (op.getNumRegions() == 0)
      return true;
    // Dominance only on structurally valid IR: malformed CFGs can crash the
    // dominator construction (same reasoning as upstream).
    DominanceInfo domInfo;
    return verifyDominance(op, domInfo);
  }

  bool fail(Operation &op) {
    failedOps.insert(&op);
    return false;
  }

  /// Some MLIR 22 verifiers fail without a diagnostic (tosa.pad whose
  /// padding is not a constant shape: mlir-opt-22 exits 1 saying nothing).
  /// A failure the user cannot see would read as "clean": it becomes an
  /// error at the op.
  bool failSaying(Operation &op, unsigned errorsBefore) {
    if (errors == errorsBefore)
      op.emitOpError("was rejected by MLIR's verifier without a message "
                     "(mlir-opt-22 exits 1 here and prints nothing)");
    return fail(op);
  }

  /// Errors emitted so far (counted by run's handler).
  unsigned errors = 0;

  static bool mayBeValidWithoutTerminator(Block *block) {
    if (!block->getParent())
      return true;
    if (!llvm::hasSingleElement(*block->getParent()))
      return false;
    Operation *op = block->getParentOp();
    return !op || op->mightHaveTrait<OpTrait::NoTerminator>();
  }

  bool blockEntrance(Block &block, Operation &parent) {
    current(&parent);
    for (BlockArgument arg : block.getArguments())
      if (arg.getOwner() != &block) {
        emitError(arg.getLoc(), "block argument not owned by block");
        return fail(parent);
      }
    if (block.empty()) {
      if (mayBeValidWithoutTerminator(&block))
        return true;
      emitError(block.getParent()->getLoc(),
                "empty block: expect at least a terminator");
      return fail(parent);
    }
    bool ok = true;
    for (Operation &op : block) {
      if (op.getNumSuccessors() != 0 && &op != &block.back()) {
        current(&op);
        op.emitError(
            "operation with block successors must terminate its parent block");
        ok = fail(op);
      }
    }
    return ok;
  }

  bool blockExit(Block &block) {
    bool ok = true;
    if (block.empty())
      return ok;
    for (Block *successor : block.getSuccessors())
      if (successor->getParent() != block.getParent()) {
        current(&block.back());
        block.back().emitOpError("branching to block of a different region");
        ok = fail(block.back());
        break;
      }
    if (mayBeValidWithoutTerminator(&block))
      return ok;
    Operation &terminator = block.back();
    if (!terminator.mightHaveTrait<OpTrait::IsTerminator>()) {
      current(&terminator);
      block.back().emitError("block with no terminator, has ") << terminator;
      return fail(terminator);
    }
    return ok;
  }

  /// An op fed (transitively) by an op that failed verification is not
  /// verified: upstream stops before reaching it, and its verifier may read
  /// what the failed op lacks (a null `values` of tosa.const_shape).
  bool fedByFailure(Operation &op) {
    for (Value operand : op.getOperands())
      if (Operation *def = operand ? operand.getDefiningOp() : nullptr)
        if (failedOps.contains(def) || skipped.contains(def))
          return true;
    return false;
  }

  bool opEntrance(Operation &op) {
    current(&op);
    visited.insert(&op);
    for (Value operand : op.getOperands())
      if (!operand) {
        op.emitError("null operand found");
        return fail(op);
      }
    unsigned before = errors;
    for (NamedAttribute attr : op.getDiscardableAttrDictionary())
      if (Dialect *dialect = attr.getNameDialect())
        if (failed(dialect->verifyOperationAttribute(&op, attr)))
          return failSaying(op, before);
    std::optional<RegisteredOperationName> info =
        op.getName().getRegisteredInfo();
    if (info && failed(info->verifyInvariants(&op)))
      return failSaying(op, before);

    auto kindInterface = dyn_cast<RegionKindInterface>(&op);
    for (unsigned i = 0, e = op.getNumRegions(); i < e; ++i) {
      Region &region = op.getRegion(i);
      RegionKind kind =
          kindInterface ? kindInterface.getRegionKind(i) : RegionKind::SSACFG;
      if (op.isRegistered() && kind == RegionKind::Graph && !region.empty() &&
          !region.hasOneBlock()) {
        op.emitOpError("expects graph region #")
            << i << " to have 0 or 1 blocks";
        return fail(op);
      }
      if (!region.empty() && !region.front().hasNoPredecessors()) {
        emitError(op.getLoc(),
                  "entry block of region may not have predecessors");
        return fail(op);
      }
    }
    return true;
  }

  bool opExit(Operation &op, bool childrenOk) {
    // Isolated children are verified (with their own dominance) at the exit
    // of their parent, as upstream does.
    for (Region &region : op.getRegions())
      for (Block &block : region)
        for (Operation &o : block)
          if (o.getNumRegions() != 0 &&
              o.hasTrait<OpTrait::IsIsolatedFromAbove>())
            childrenOk &= verifyOpAndDominance(o);
    if (!childrenOk)
      return false; // Region invariants assume valid contents.
    current(&op);
    std::optional<RegisteredOperationName> info =
        op.getName().getRegisteredInfo();
    unsigned before = errors;
    if (info)
      return succeeded(info->verifyRegionInvariants(&op)) ||
             failSaying(op, before);
    Dialect *dialect = op.getName().getDialect();
    if (!dialect) {
      if (!op.getContext()->allowsUnregisteredDialects()) {
        op.emitOpError()
            << "created with unregistered dialect. If this is intended, "
               "please call allowUnregisteredDialects() on the MLIRContext, "
               "or use -allow-unregistered-dialect with the MLIR opt tool used";
        return fail(op);
      }
      return true;
    }
    if (!dialect->allowsUnknownOperations()) {
      op.emitError("unregistered operation '")
          << op.getName() << "' found in dialect ('" << dialect->getNamespace()
          << "') that does not allow unknown operations";
      return fail(op);
    }
    return true;
  }

  /// Pre-order entrance, children, post-order exit, skipping isolated ops
  /// (handled in opExit of their parent).
  bool verifyOperation(Operation &op) {
    if (fedByFailure(op)) {
      skipped.insert(&op);
      return true; // Not a failure of its own; the producer's error stands.
    }
    if (!opEntrance(op))
      return false;
    bool ok = true;
    for (Region &region : op.getRegions())
      for (Block &block : region) {
        if (!blockEntrance(block, op)) {
          ok = false;
          continue; // Upstream stops here; an empty block has no back().
        }
        for (Operation &child : block)
          if (child.getNumRegions() == 0 ||
              !child.hasTrait<OpTrait::IsIsolatedFromAbove>())
            ok &= verifyOperation(child);
        ok &= blockExit(block);
      }
    return opExit(op, ok);
  }

  bool verifyDominance(Operation &root, DominanceInfo &domInfo) {
    bool ok = true;
    SmallVector<Operation *, 8> worklist{&root};
    while (!worklist.empty()) {
      Operation *parent = worklist.pop_back_val();
      for (Region &region : parent->getRegions())
        for (Block &block : region) {
          bool reachable = domInfo.isReachableFromEntry(&block);
          for (Operation &op : block) {
            if (reachable) {
              for (auto it : llvm::enumerate(op.getOperands())) {
                if (domInfo.properlyDominates(it.value(), &op))
                  continue;
                current(&op);
                diagnoseDominance(op, it.index());
                ok = fail(op);
                break; // One error per op, like upstream's first one.
              }
            }
            if (op.getNumRegions() != 0 &&
                !op.hasTrait<OpTrait::IsIsolatedFromAbove>())
              worklist.push_back(&op);
          }
        }
    }
    return ok;
  }

  /// Where a definition's block sits relative to its use's block.
  enum class Relation { SameBlock, SameRegion, Parent, Child, Neither };
  static Relation relate(Block *use, Block *def) {
    Region *useRegion = use->getParent(), *defRegion = def->getParent();
    if (use == def)
      return Relation::SameBlock;
    if (useRegion == defRegion)
      return Relation::SameRegion;
    if (defRegion->isProperAncestor(useRegion))
      return Relation::Parent;
    if (useRegion->isProperAncestor(defRegion))
      return Relation::Child;
    return Relation::Neither;
  }

  // Same wording as upstream's diagnoseInvalidOperandDominance.
  static void diagnoseDominance(Operation &op, unsigned operandNo) {
    InFlightDiagnostic diag = op.emitError("operand #")
                              << operandNo << " does not dominate this use";
    Value operand = op.getOperand(operandNo);
    if (Operation *def = operand.getDefiningOp()) {
      static const char *const kOp[] = {
          " (op in the same block)", " (op in the same region)",
          " (op in a parent region)", " (op in a child region)",
          " (op is neither in a parent nor in a child region)"};
      diag.attachNote(def->getLoc())
          << "operand defined here"
          << kOp[static_cast<int>(relate(op.getBlock(), def->getBlock()))];
      return;
    }
    Block *owner = cast<BlockArgument>(operand).getOwner();
    Location loc = UnknownLoc::get(op.getContext());
    if (owner->getParentOp())
      loc = owner->getParentOp()->getLoc();
    mlir::Diagnostic &note = diag.attachNote(loc);
    Region *region = owner->getParent();
    if (!region) {
      note << " (block without parent)";
      return;
    }
    static const char *const kArg[] = {
        " in the same region)", " in the same region)", " in a parent region)",
        " in a child region)", " neither in a parent nor in a child region)"};
    note << "operand defined as a block argument (block #"
         << std::distance(region->begin(), owner->getIterator())
         << kArg[static_cast<int>(relate(op.getBlock(), owner))];
  }

  llvm::function_ref<void(Operation *)> current;
  llvm::DenseSet<Operation *> &failedOps;
  llvm::DenseSet<Operation *> &visited;
  llvm::DenseSet<Operation *> skipped;
};

} // namespace

bool verifyAll(Operation *op, llvm::function_ref<void(Operation *)> current,
               llvm::DenseSet<Operation *> &failed,
               llvm::DenseSet<Operation *> &visited) {
  AllErrorsVerifier verifier(current, failed, visited);
  return verifier.run(*op);
}

} // namespace tosa_lsp::detail
