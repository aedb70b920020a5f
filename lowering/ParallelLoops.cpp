//===- ParallelLoops.cpp - the kernels' independent loops on N threads ----===//
//
// `--threads=N`: each kernel schedule (Kernels.cpp) tags two nested loops
// whose iterations write disjoint parts of the result: the matmul's N
// panels and M panels, the convolution's blocks of output channels and
// their rows. chooseParallelLoops keeps one per kernel of 2^24 FLOP and
// more (the outer, one fork per call, unless the inner shares out more
// evenly) and moves the empty tensors used only inside it into it, so that
// each iteration packs B or the weights into a buffer of its own. After
// bufferization, the kept scf.for becomes an scf.parallel, which MLIR's
// convert-scf-to-openmp turns into omp.parallel + omp.wsloop (dynamic
// schedule, FinishOmpLoopsPass), lowered to libomp's __kmpc_* calls.
//
// A tagged loop is converted only when that is provably race-free at this
// level: its loop-carried values are memrefs passed through unchanged (the
// result buffer threaded through tensor-level loops), and every memref the
// body writes is a view of such a value or of a buffer allocated inside the
// body; a buffer allocated outside and written inside (a hoisted scratch
// buffer) would be shared by the threads, so such a loop stays serial.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Threading.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

Value viewRoot(Value v, const llvm::SmallPtrSetImpl<Value> &stop);

/// Whether `loop` hands its carried buffer `arg` back unchanged (then every
/// iteration sees the initial one).
bool passesThrough(scf::ForOp loop, BlockArgument arg) {
  unsigned i = arg.getArgNumber() - 1;
  llvm::SmallPtrSet<Value, 1> self;
  self.insert(arg);
  return viewRoot(loop.getYieldedValues()[i], self) == arg;
}

/// The buffer a memref value views: through view-like ops (subview,
/// expand/collapse_shape, cast, reinterpret_cast) and the memrefs inner
/// scf.for loops pass along, to an allocation, a block argument or an op
/// that is not a view, or to one of `stop`.
Value viewRoot(Value v, const llvm::SmallPtrSetImpl<Value> &stop) {
  while (!stop.contains(v)) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto inner = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!inner || arg.getArgNumber() == 0 || !passesThrough(inner, arg))
        return v;
      v = inner.getInits()[arg.getArgNumber() - 1];
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (auto inner = dyn_cast<scf::ForOp>(def)) {
      unsigned i = cast<OpResult>(v).getResultNumber();
      if (!passesThrough(inner, inner.getRegionIterArgs()[i]))
        return v;
      v = inner.getInits()[i];
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return v;
    v = view.getViewSource();
  }
  return v;
}

/// Whether `loop` may run its iterations on several threads: pass-through
/// memref iter_args, and writes only into them or into buffers of the body.
bool independentIterations(scf::ForOp loop) {
  llvm::SmallPtrSet<Value, 4> carried;
  for (Value arg : loop.getRegionIterArgs())
    carried.insert(arg);
  for (BlockArgument arg : loop.getRegionIterArgs())
    if (!isa<MemRefType>(arg.getType()) || !passesThrough(loop, arg))
      return false;
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Unknown effects (a call, an op of another dialect): not proven.
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
          !isa<scf::YieldOp, memref::PrefetchOp>(op))
        ok = false;
      return ok ? WalkResult::advance() : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value target = e.getValue();
      if (!target) {
        ok = false; // writes somewhere unnamed
        break;
      }
      Value root = viewRoot(target, carried);
      if (carried.contains(root))
        continue;
      Operation *def = root.getDefiningOp();
      if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def) &&
          loop->isProperAncestor(def))
        continue; // allocated inside the body: one per iteration
      ok = false;
      break;
    }
    return ok ? WalkResult::advance() : WalkResult::interrupt();
  });
  return ok;
}

/// Replaces `loop` by an scf.parallel with its body (moved, so loops
/// nested in it stay valid); its iter_args and results by their initial
/// values (all passed through unchanged).
void toParallel(scf::ForOp loop) {
  IRRewriter rewriter(loop);
  auto par = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *from = loop.getBody();
  rewriter.replaceAllUsesWith(loop.getInductionVar(),
                              par.getInductionVars()[0]);
  for (auto [arg, init] : llvm::zip(loop.getRegionIterArgs(), loop.getInits()))
    rewriter.replaceAllUsesWith(arg, init);
  rewriter.eraseOp(from->getTerminator());
  Block *to = par.getBody();
  to->getOperations().splice(to->getTerminator()->getIterator(),
                             from->getOperations());
  rewriter.replaceOp(loop, loop.getInits());
}

struct ParallelLoopsPass
    : PassWrapper<ParallelLoopsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelLoopsPass)
  StringRef getArgument() const override { return "tosa-lsp-parallel-loops"; }
  StringRef getDescription() const override {
    return "After bufferization: the kernels' loops tagged tosa_lsp.parallel "
           "as scf.parallel, when their iterations are independent";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<scf::SCFDialect>();
  }
  void runOnOperation() override {
    SmallVector<scf::ForOp> tagged;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (loop->hasAttr(kParallelTag))
        tagged.push_back(loop);
    });
    for (scf::ForOp loop : tagged) {
      loop->removeAttr(kParallelTag);
      // The outermost tagged loop only: no nested thread teams.
      if (loop->getParentOfType<scf::ParallelOp>() ||
          !independentIterations(loop))
        continue;
      toParallel(loop);
    }
  }
};

/// After convert-scf-to-openmp. Each omp.wsloop hands out its iterations
/// dynamically (one at a time, an atomic increment each): with the static
/// default, a thread that the host runs late (a woken vCPU, a worker the
/// kernel placed beside the caller) held everyone at the join, and blocks
/// of calls took up to twice the time; dynamically, the threads that run
/// take its share. And each parallel body's memref.alloca_scope, whose
/// region must stay one block (the body's scf.for loops would become
/// several under convert-scf-to-cf), goes when no alloca is inside (the
/// kernels allocate on the heap, convert-vector-to-scf fully unrolled): it
/// is only that wrapper then.
struct FinishOmpLoopsPass
    : PassWrapper<FinishOmpLoopsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FinishOmpLoopsPass)
  StringRef getArgument() const override { return "tosa-lsp-finish-omp-loops"; }
  StringRef getDescription() const override {
    return "After convert-scf-to-openmp: dynamic schedules, and "
           "memref.alloca_scope ops with no memref.alloca inside inlined";
  }
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation().walk([&](omp::WsloopOp loop) {
      if (!loop.getScheduleKind())
        loop.setScheduleKindAttr(omp::ClauseScheduleKindAttr::get(
            ctx, omp::ClauseScheduleKind::Dynamic));
    });
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      bool allocas =
          scope.getBodyRegion()
              .walk([](memref::AllocaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (!allocas && scope->getNumResults() == 0 &&
          scope.getBodyRegion().hasOneBlock())
        scopes.push_back(scope);
    });
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      body.getTerminator()->erase();
      scope->getBlock()->getOperations().splice(scope->getIterator(),
                                                body.getOperations());
      scope->erase();
    }
  }
};

constexpr const char *kOuterTag = "tosa_lsp.parallel_outer";
constexpr const char *kInnerTag = "tosa_lsp.parallel_inner";

/// The share of `threads` busy over a static schedule of `trips`
/// iterations (each thread takes ceil or floor of trips / threads).
double balance(std::optional<llvm::APInt> trips, unsigned threads) {
  if (!trips || trips->isZero())
    return 0;
  uint64_t n = trips->getZExtValue();
  uint64_t rounds = (n + threads - 1) / threads;
  return double(n) / double(rounds * threads);
}

/// Moves the tensor.empty ops used only inside `loop` into its body.
void sinkEmptyTensors(scf::ForOp loop) {
  auto fn = loop->getParentOfType<func::FuncOp>();
  SmallVector<tensor::EmptyOp> empties;
  fn.walk([&](tensor::EmptyOp e) {
    if (!loop->isAncestor(e) && e->getNumOperands() == 0 &&
        llvm::all_of(e->getUsers(),
                     [&](Operation *u) { return loop->isProperAncestor(u); }))
      empties.push_back(e);
  });
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  for (tensor::EmptyOp e : empties) {
    Operation *inside = b.clone(*e);
    e->replaceAllUsesWith(inside);
    e->erase();
  }
}

} // namespace

void chooseParallelLoops(ModuleOp module, unsigned threads,
                         ArrayRef<func::FuncOp> serial) {
  auto dropTags = [&] {
    module.walk([](scf::ForOp l) {
      l->removeAttr(kOuterTag);
      l->removeAttr(kInnerTag);
    });
  };
  if (threads == 1)
    return dropTags();
  // 0: as many as OpenMP finds where the code runs; shared out as if for
  // this machine's.
  if (threads == 0)
    threads = std::max(2u, llvm::hardware_concurrency().compute_thread_count());
  // Each kernel's pair; a loop of one iteration was folded away by the
  // schedule's canonicalisation (one N panel, one channel block): its
  // inner loop stands alone.
  SmallVector<std::pair<scf::ForOp, scf::ForOp>> pairs;
  module.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (llvm::is_contained(serial, loop->getParentOfType<func::FuncOp>()))
      return WalkResult::skip();
    if (loop->hasAttr(kOuterTag)) {
      scf::ForOp inner;
      loop.getBody()->walk([&](scf::ForOp l) {
        if (l->hasAttr(kInnerTag) && !inner)
          inner = l;
      });
      pairs.push_back({loop, inner});
      return WalkResult::skip();
    }
    if (loop->hasAttr(kInnerTag)) {
      pairs.push_back({scf::ForOp(), loop});
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  auto share = [&](scf::ForOp l) {
    return l ? balance(l.getStaticTripCount(), threads) : 0.0;
  };
  for (auto [outer, inner] : pairs) {
    scf::ForOp chosen = share(inner) > share(outer) + 0.05 ? inner : outer;
    std::optional<llvm::APInt> trips =
        chosen ? chosen.getStaticTripCount() : std::nullopt;
    if (trips && trips->getZExtValue() > 1) {
      chosen->setAttr(kParallelTag, UnitAttr::get(module.getContext()));
      sinkEmptyTensors(chosen);
    }
  }
  dropTags();
}

void registerParallelLoopsPass() {
  PassRegistration<ParallelLoopsPass>();
  PassRegistration<FinishOmpLoopsPass>();
}

} // namespace tosa_lsp::detail
