//===- StreamingStores.cpp - Non-temporal stores for big results ----------===//

#include "StreamingStores.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Triple.h"

#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"
#include <map>

#include <cstdlib>

using namespace llvm;

namespace tosa_lsp {

namespace {

constexpr uint64_t kFallbackThreshold = 2u << 20;

/// "2048K" / "2M" as in /sys/devices/system/cpu/cpu0/cache/index*/size.
std::optional<uint64_t> parseCacheSize(StringRef s) {
  s = s.trim();
  uint64_t unit = 1;
  if (s.consume_back("K"))
    unit = 1024;
  else if (s.consume_back("M"))
    unit = 1024 * 1024;
  uint64_t n;
  if (s.getAsInteger(10, n) || n == 0)
    return std::nullopt;
  return n * unit;
}

/// The host's per-core L2 size (the unified level-2 cache of cpu0).
std::optional<uint64_t> hostL2Size() {
  for (int i = 0; i < 8; ++i) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    auto level = MemoryBuffer::getFileAsStream(dir + "level");
    if (!level)
      break;
    auto type = MemoryBuffer::getFileAsStream(dir + "type");
    auto size = MemoryBuffer::getFileAsStream(dir + "size");
    if ((*level)->getBuffer().trim() == "2" && type && size &&
        (*type)->getBuffer().trim() == "Unified")
      return parseCacheSize((*size)->getBuffer());
  }
  return std::nullopt;
}

/// Vector stores that write one buffer contiguously in one innermost loop,
/// which the streaming twin makes non-temporal, and the bytes they write
/// per run of the nest.
struct Stream {
  SmallVector<StoreInst *> stores;
  const SCEV *bytes;
  Value *buffer;
};

/// The buffers `ptr` may point into: its underlying objects (through phis
/// and selects), also through the integer arithmetic MLIR uses to align an
/// allocation (inttoptr of the allocated pointer's ptrtoint, plus or
/// masked). Null constants (the other side of a failed-allocation check)
/// are left out.
SmallVector<const Value *, 2> buffersOf(const Value *ptr, unsigned depth = 0) {
  SmallVector<const Value *, 4> objects;
  getUnderlyingObjects(ptr, objects);
  SmallVector<const Value *, 2> buffers;
  for (const Value *object : objects) {
    if (isa<ConstantPointerNull>(object))
      continue;
    const Value *base = nullptr;
    if (auto *cast = dyn_cast<IntToPtrInst>(object); cast && depth < 4) {
      SmallVector<const Value *, 8> work = {cast->getOperand(0)};
      for (unsigned steps = 0; !work.empty() && steps < 16 && !base; ++steps) {
        const Value *v = work.pop_back_val();
        if (auto *p2i = dyn_cast<PtrToIntInst>(v))
          base = p2i->getOperand(0);
        else if (auto *op = dyn_cast<BinaryOperator>(v))
          work.append({op->getOperand(0), op->getOperand(1)});
      }
    }
    if (base)
      buffers.append(buffersOf(base, depth + 1));
    else
      buffers.push_back(object);
  }
  return buffers;
}

/// The bytes stored per run of `outer` by `size` bytes stored per
/// iteration of `inner`, when the trip counts of every loop from `inner`
/// up to `outer` are known before `outer` runs.
const SCEV *bytesPerRun(Loop *inner, Loop *outer, uint64_t size,
                        ScalarEvolution &se) {
  Type *i64 = Type::getInt64Ty(outer->getHeader()->getContext());
  const SCEV *bytes = se.getConstant(i64, size);
  for (Loop *l = inner;; l = l->getParentLoop()) {
    const SCEV *taken = se.getBackedgeTakenCount(l);
    if (isa<SCEVCouldNotCompute>(taken) || !se.isLoopInvariant(taken, outer))
      return nullptr;
    bytes = se.getMulExpr(
        bytes,
        se.getAddExpr(se.getTruncateOrZeroExtend(taken, i64), se.getOne(i64)));
    if (l == outer)
      return bytes;
  }
}

/// Contiguous writes of one buffer that one loop may stream at once (a
/// depthwise conv's 4 jammed output columns, measured; a vectorised
/// transpose's 16 rows were never measured streamed from here).
constexpr size_t kMaxStreams = 4;

/// Whether `stores` (into one buffer, advancing together by `step` bytes
/// an iteration) write whole steps: grouped by the step their constant
/// offset from the first falls in, each group fills its step exactly (one
/// contiguous write, or interleaved ones; several groups: the columns of
/// a jammed window loop, each its own contiguous write).
bool fillsSteps(ArrayRef<StoreInst *> stores, const APInt &step,
                const DataLayout &dl, ScalarEvolution &se) {
  int64_t s = step.getSExtValue();
  if (s <= 0)
    return false;
  const SCEV *first = se.getSCEV(stores.front()->getPointerOperand());
  SmallVector<std::pair<int64_t, int64_t>> spans; // (offset, bytes)
  int64_t least = 0;
  for (StoreInst *store : stores) {
    auto *offset = dyn_cast<SCEVConstant>(
        se.getMinusSCEV(se.getSCEV(store->getPointerOperand()), first));
    if (!offset)
      return false;
    int64_t o = offset->getAPInt().getSExtValue();
    spans.push_back(
        {o, static_cast<int64_t>(
                dl.getTypeStoreSize(store->getValueOperand()->getType())
                    .getFixedValue())});
    least = std::min(least, o);
  }
  std::map<int64_t, int64_t> filled; // step index -> bytes
  for (auto [o, bytes] : spans) {
    int64_t at = o - least;
    if (at % s + bytes > s)
      return false; // straddles two steps
    filled[at / s] += bytes;
  }
  return filled.size() <= kMaxStreams &&
         llvm::all_of(filled, [&](auto &f) { return f.second == s; });
}

/// The vector stores of `outer` that stream: stores into a buffer the
/// caller allocated (not a fresh allocation, not read by the nest); in each
/// innermost loop, the stores into one buffer advance together by a constant
/// step that they fill exactly (a vectorised, possibly interleaved, contiguous
/// write), and the trip counts of the loops around them are known before
/// `outer` runs.
SmallVector<Stream> findStreams(Loop *outer, LoopInfo &li,
                                ScalarEvolution &se) {
  SmallPtrSet<const Value *, 8> read;
  for (BasicBlock *bb : outer->blocks())
    for (Instruction &i : *bb)
      if (auto *load = dyn_cast<LoadInst>(&i))
        for (const Value *buffer : buffersOf(load->getPointerOperand()))
          read.insert(buffer);
      else if (isa<CallBase>(i) && i.mayReadFromMemory() &&
               !isa<IntrinsicInst>(i))
        return {}; // a call may read anything the nest writes
  const DataLayout &dl = outer->getHeader()->getModule()->getDataLayout();
  // (innermost loop, buffer) -> its stores, their bytes and common step.
  struct Group {
    SmallVector<StoreInst *> stores;
    uint64_t bytes = 0;
    const SCEV *step = nullptr;
    bool ok = true;
  };
  MapVector<std::pair<Loop *, const Value *>, Group> groups;
  for (BasicBlock *bb : outer->blocks())
    for (Instruction &i : *bb) {
      auto *store = dyn_cast<StoreInst>(&i);
      if (!store || !store->isSimple() ||
          !store->getValueOperand()->getType()->isVectorTy() ||
          store->getMetadata(LLVMContext::MD_nontemporal))
        continue;
      Value *ptr = store->getPointerOperand();
      SmallVector<const Value *, 2> buffers = buffersOf(ptr);
      // A fresh allocation is written right after the kernel zeroed its
      // pages, which leaves them cached: ordinary stores are faster there
      // (measured: 15 against 19 ms for a 64 MiB result).
      if (buffers.empty() || llvm::any_of(buffers, [&](const Value *b) {
            return read.count(b) || isNoAliasCall(b);
          }))
        continue;
      const Value *buffer = buffers.front();
      Loop *inner = li.getLoopFor(bb);
      Group &g = groups[{inner, buffer}];
      g.stores.push_back(store);
      g.bytes += dl.getTypeStoreSize(store->getValueOperand()->getType())
                     .getFixedValue();
      auto *rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(ptr));
      if (!rec || rec->getLoop() != inner || !rec->isAffine()) {
        g.ok = false;
        continue;
      }
      const SCEV *step = rec->getStepRecurrence(se);
      if (g.step && g.step != step)
        g.ok = false;
      g.step = step;
    }
  SmallVector<Stream> streams;
  for (auto &[key, g] : groups) {
    auto *step = dyn_cast_or_null<SCEVConstant>(g.step);
    if (!g.ok || !step || !fillsSteps(g.stores, step->getAPInt(), dl, se))
      continue;
    const SCEV *bytes = bytesPerRun(key.first, outer, g.bytes, se);
    if (!bytes)
      continue;
    streams.push_back(
        {std::move(g.stores), bytes, const_cast<Value *>(key.second)});
  }
  return streams;
}

/// The alignment the streaming twin's stores get when their buffer has it
/// at run time (malloc's and numpy's: large numpy arrays start 16 bytes
/// into a page). x86 has no unaligned non-temporal vector store: a 256-bit
/// store at 4-byte alignment became four 8-byte `movnti` of extracted
/// lanes (most of a depthwise conv's time); at 16, two `vmovntps`.
constexpr uint64_t kStreamAlign = 16;

/// Whether `offset` is a multiple of kStreamAlign on every iteration of the
/// loops in `outer` once the loop-invariant `terms` it is built from are:
/// the start and step of each of its add recurrences, the operands of its
/// sums. A dynamic innermost size C (an NHWC bias 1x1x1xC, `?x?` rows) makes
/// a row's start C * 4 * row bytes into the buffer: aligned when C * 4 is,
/// which only the run time knows.
bool alignedWhen(const SCEV *offset, Loop *outer, ScalarEvolution &se,
                 SetVector<const SCEV *> &terms) {
  if (se.getMinTrailingZeros(offset) >= Log2_64(kStreamAlign))
    return true;
  if (se.isLoopInvariant(offset, outer)) {
    terms.insert(offset);
    return true;
  }
  if (auto *rec = dyn_cast<SCEVAddRecExpr>(offset))
    return rec->isAffine() && alignedWhen(rec->getStart(), outer, se, terms) &&
           alignedWhen(rec->getStepRecurrence(se), outer, se, terms);
  if (auto *add = dyn_cast<SCEVAddExpr>(offset))
    return llvm::all_of(add->operands(), [&](const SCEV *op) {
      return alignedWhen(op, outer, se, terms);
    });
  return false;
}

/// The streams' stores below kStreamAlign whose offset from their buffer
/// is a multiple of it on every iteration (SCEV), with the buffer known
/// before the nest: aligned once the buffer is, and once the values in
/// `terms` (loop-invariant, expandable before the nest) are multiples of
/// it too.
SmallVector<StoreInst *> alignableStores(ArrayRef<Stream> streams, Loop *outer,
                                         BasicBlock *check, DominatorTree &dt,
                                         ScalarEvolution &se,
                                         SetVector<const SCEV *> &terms) {
  SmallVector<StoreInst *> aligned;
  SCEVExpander expander(se, "stream.align");
  for (const Stream &s : streams) {
    auto *def = dyn_cast<Instruction>(s.buffer);
    if (!s.buffer->getType()->isPointerTy() ||
        (def && !dt.dominates(def, check->getTerminator())) ||
        (!def && !isa<Argument>(s.buffer)))
      continue;
    for (StoreInst *store : s.stores) {
      if (store->getAlign().value() >= kStreamAlign)
        continue;
      const SCEV *offset = se.getMinusSCEV(
          se.getSCEV(store->getPointerOperand()), se.getSCEV(s.buffer));
      SetVector<const SCEV *> needs;
      if (isa<SCEVCouldNotCompute>(offset) ||
          !alignedWhen(offset, outer, se, needs) ||
          !llvm::all_of(needs, [&](const SCEV *t) {
            return expander.isSafeToExpandAt(t, check->getTerminator());
          }))
        continue;
      aligned.push_back(store);
      terms.insert(needs.begin(), needs.end());
    }
  }
  return aligned;
}

/// Versions `outer` (in loop-simplify and LCSSA form): the preheader
/// branches to a non-temporal copy when the nest stores `threshold` bytes
/// or more. Returns the copy's header, or null when the nest's shape does
/// not allow it.
BasicBlock *version(Loop *outer, ArrayRef<Stream> streams, uint64_t threshold,
                    DominatorTree &dt, LoopInfo &li, ScalarEvolution &se) {
  BasicBlock *check = outer->getLoopPreheader();
  BasicBlock *exit = outer->getUniqueExitBlock();
  if (!check || !exit)
    return nullptr;
  Function &f = *check->getParent();
  Type *i64 = Type::getInt64Ty(f.getContext());
  const SCEV *total = se.getZero(i64);
  for (const Stream &s : streams)
    total = se.getAddExpr(total, s.bytes);
  SCEVExpander expander(se, "stream.bytes");
  if (!expander.isSafeToExpandAt(total, check->getTerminator()))
    return nullptr;
  Value *bytes = expander.expandCodeFor(total, i64, check->getTerminator());
  IRBuilder<> b(check->getTerminator());
  Value *big = b.CreateICmpUGE(bytes, b.getInt64(threshold), "stream.big");
  SetVector<const SCEV *> terms;
  SmallVector<StoreInst *> aligned =
      alignableStores(streams, outer, check, dt, se, terms);
  SmallPtrSet<Value *, 4> bases;
  for (const Stream &s : streams)
    if (llvm::any_of(
            s.stores,
            [&](StoreInst *st) { return llvm::is_contained(aligned, st); }) &&
        bases.insert(s.buffer).second) {
      Value *low = b.CreateAnd(b.CreatePtrToInt(s.buffer, i64),
                               b.getInt64(kStreamAlign - 1));
      big = b.CreateAnd(big, b.CreateICmpEQ(low, b.getInt64(0)));
    }
  if (!terms.empty()) {
    Value *any = nullptr;
    for (const SCEV *t : terms) {
      Value *v = expander.expandCodeFor(t, i64, check->getTerminator());
      any = any ? b.CreateOr(any, v) : v;
    }
    Value *low = b.CreateAnd(any, b.getInt64(kStreamAlign - 1));
    big = b.CreateAnd(big, b.CreateICmpEQ(low, b.getInt64(0)));
  }

  BasicBlock *preheader =
      SplitBlock(check, check->getTerminator(), &dt, &li, nullptr,
                 outer->getHeader()->getName() + ".ph");
  ValueToValueMapTy map;
  SmallVector<BasicBlock *> blocks;
  Loop *twin = cloneLoopWithPreheader(preheader, check, outer, map, ".stream",
                                      &li, &dt, blocks);
  remapInstructionsInBlocks(blocks, map);
  Instruction *oldBranch = check->getTerminator();
  BranchInst::Create(twin->getLoopPreheader(), preheader, big,
                     oldBranch->getIterator());
  oldBranch->eraseFromParent();
  dt.changeImmediateDominator(exit, check);

  // The exit's PHIs (LCSSA: every value the nest defines and the code after
  // it uses) take the twin's values on the twin's edges.
  for (PHINode &phi : exit->phis())
    for (unsigned i = 0, e = phi.getNumIncomingValues(); i != e; ++i) {
      BasicBlock *from = phi.getIncomingBlock(i);
      if (!outer->contains(from))
        continue;
      Value *v = phi.getIncomingValue(i);
      Value *twinValue = map.count(v) ? static_cast<Value *>(map[v]) : v;
      phi.addIncoming(twinValue, cast<BasicBlock>(map[from]));
    }

  LLVMContext &ctx = f.getContext();
  MDNode *nontemporal = MDNode::get(
      ctx, ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1)));
  for (const Stream &s : streams)
    for (StoreInst *store : s.stores) {
      auto *twinStore = cast<StoreInst>(map[store]);
      twinStore->setMetadata(LLVMContext::MD_nontemporal, nontemporal);
      // (A store known to be aligned further keeps it: whole-line
      // `vmovntps` of a 64-byte aligned vector, WindowStreams.cpp.)
      if (llvm::is_contained(aligned, store))
        twinStore->setAlignment(
            std::max(store->getAlign(), Align(kStreamAlign)));
    }

  // A fence on every way out of the nest, so the streamed result is ordered
  // before any later store (such as a flag another thread waits for).
  if (Triple(f.getParent()->getTargetTriple()).isX86()) {
    IRBuilder<> fence(&*exit->getFirstInsertionPt());
    fence.CreateIntrinsic(Intrinsic::x86_sse_sfence, {});
  }
  return twin->getHeader();
}

unsigned streamFunction(Function &f, uint64_t threshold) {
  TargetLibraryInfoImpl tlii(Triple(f.getParent()->getTargetTriple()));
  TargetLibraryInfo tli(tlii);
  SmallPtrSet<BasicBlock *, 8> done;
  unsigned versioned = 0;
  // Analyses are rebuilt after each versioning: functions are small and a
  // kernel has a few nests.
  for (bool changed = true; changed;) {
    changed = false;
    DominatorTree dt(f);
    LoopInfo li(dt);
    AssumptionCache ac(f);
    ScalarEvolution se(f, tli, ac, dt, li);
    for (Loop *outer : li) {
      if (!done.insert(outer->getHeader()).second)
        continue;
      SmallVector<Stream> streams = findStreams(outer, li, se);
      if (streams.empty())
        continue;
      simplifyLoop(outer, &dt, &li, &se, &ac, nullptr, false);
      formLCSSARecursively(*outer, dt, &li, &se);
      BasicBlock *twin = version(outer, streams, threshold, dt, li, se);
      if (!twin)
        continue;
      done.insert(twin);
      ++versioned;
      changed = true;
      break;
    }
  }
  return versioned;
}

/// MLIR's own non-temporal stores (StreamTranspose.cpp; MLIR cannot place
/// a fence: buffer deallocation refuses ops with unknown effects): with
/// `keep`, an sfence before each return of a function that has any, so the
/// result is ordered before any later store (such as a flag another thread
/// waits for); without (--streaming-stores=off), ordinary stores. Returns
/// whether the function had any.
bool settleFunction(Function &f, bool keep) {
  SmallVector<StoreInst *> nt;
  for (Instruction &i : instructions(f))
    if (isa<StoreInst>(i) && i.getMetadata(LLVMContext::MD_nontemporal))
      nt.push_back(cast<StoreInst>(&i));
  if (nt.empty())
    return false;
  if (!keep || !Triple(f.getParent()->getTargetTriple()).isX86()) {
    for (StoreInst *s : nt)
      s->setMetadata(LLVMContext::MD_nontemporal, nullptr);
    return true;
  }
  for (BasicBlock &bb : f)
    if (auto *ret = dyn_cast<ReturnInst>(bb.getTerminator())) {
      IRBuilder<> b(ret);
      b.CreateIntrinsic(Intrinsic::x86_sse_sfence, {});
    }
  return true;
}

} // namespace

uint64_t defaultStreamThreshold(const std::string &cpu) {
  if (cpu == "native")
    if (std::optional<uint64_t> l2 = hostL2Size())
      return *l2;
  return kFallbackThreshold;
}

/// The sum of `each` over the functions `m` defines.
template <typename Each> static unsigned overDefined(Module &m, Each each) {
  unsigned n = 0;
  for (Function &f : m)
    if (!f.isDeclaration())
      n += each(f);
  return n;
}

unsigned settleNontemporalStores(Module &m, bool keep) {
  return overDefined(m, [&](Function &f) { return settleFunction(f, keep); });
}

unsigned streamLargeStores(Module &m, uint64_t threshold) {
  return overDefined(m,
                     [&](Function &f) { return streamFunction(f, threshold); });
}

} // namespace tosa_lsp
