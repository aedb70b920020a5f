//===- FloatMaxima.cpp - IEEE maximum/minimum trees on AVX-512 ------------===//

#include "FloatMaxima.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"

#include <optional>

using namespace llvm;

namespace tosa_lsp {

namespace {

/// VRANGE's immediate: bits 1:0 pick min (0) or max (1), bits 3:2 = 01 keep
/// the chosen operand's sign (checked against IEEE maximum/minimum for
/// every pair of zeros, subnormals, infinities and numbers, f32 and f64).
constexpr unsigned kRangeMin = 4, kRangeMax = 5;
/// The rounding operand of the 512-bit forms: the current direction.
constexpr unsigned kCurrentDirection = 4;

struct Range {
  bool f64;
  unsigned lanes;
  Intrinsic::ID id;
  bool needsVL;
  bool hasRounding;
  unsigned maskBits;
};

/// VRANGE's forms: the 512-bit ones take a rounding operand; the narrower
/// need AVX512VL.
constexpr Range kRanges[] = {
    {false, 16, Intrinsic::x86_avx512_mask_range_ps_512, false, true, 16},
    {false, 8, Intrinsic::x86_avx512_mask_range_ps_256, true, false, 8},
    {false, 4, Intrinsic::x86_avx512_mask_range_ps_128, true, false, 8},
    {true, 8, Intrinsic::x86_avx512_mask_range_pd_512, false, true, 8},
    {true, 4, Intrinsic::x86_avx512_mask_range_pd_256, true, false, 8},
    {true, 2, Intrinsic::x86_avx512_mask_range_pd_128, true, false, 8},
};

std::optional<Range> rangeFor(Type *type) {
  auto *v = dyn_cast<FixedVectorType>(type);
  if (!v ||
      !(v->getElementType()->isFloatTy() || v->getElementType()->isDoubleTy()))
    return std::nullopt;
  for (const Range &r : kRanges)
    if (r.f64 == v->getElementType()->isDoubleTy() &&
        r.lanes == v->getNumElements())
      return r;
  return std::nullopt;
}

/// A maximum or minimum call of a vector type VRANGE has.
IntrinsicInst *extremum(Value *v) {
  auto *ii = dyn_cast<IntrinsicInst>(v);
  if (!ii || (ii->getIntrinsicID() != Intrinsic::maximum &&
              ii->getIntrinsicID() != Intrinsic::minimum))
    return nullptr;
  return ii;
}

/// Whether `node` is an inner node of its user's tree: its only use is a
/// call of the same intrinsic and type in the same block.
bool inner(IntrinsicInst *node) {
  if (!node->hasOneUse())
    return false;
  IntrinsicInst *user = extremum(node->user_back());
  return user && user->getIntrinsicID() == node->getIntrinsicID() &&
         user->getType() == node->getType() &&
         user->getParent() == node->getParent();
}

/// The tree of `root`: its nodes (children before parents) and leaves.
void collect(IntrinsicInst *node, SmallVectorImpl<IntrinsicInst *> &nodes,
             SmallVectorImpl<Value *> &leaves) {
  for (Value *operand : node->args()) {
    IntrinsicInst *child = extremum(operand);
    if (child && inner(child))
      collect(child, nodes, leaves);
    else
      leaves.push_back(operand);
  }
  nodes.push_back(node);
}

/// Rewrites the tree of `root` (see the header).
void rewrite(IntrinsicInst *root, const Range &range) {
  SmallVector<IntrinsicInst *> nodes;
  SmallVector<Value *> leaves;
  collect(root, nodes, leaves);
  Module *m = root->getModule();
  Type *type = root->getType();
  Function *fn = Intrinsic::getOrInsertDeclaration(m, range.id);
  unsigned imm =
      root->getIntrinsicID() == Intrinsic::maximum ? kRangeMax : kRangeMin;
  IRBuilder<> b(root);
  Value *allLanes = b.getIntN(range.maskBits, -1);
  Value *result = nullptr;
  for (IntrinsicInst *node : nodes) { // children first
    b.SetInsertPoint(node);
    SmallVector<Value *, 6> args = {node->getArgOperand(0),
                                    node->getArgOperand(1), b.getInt32(imm),
                                    Constant::getNullValue(type), allLanes};
    if (range.hasRounding)
      args.push_back(b.getInt32(kCurrentDirection));
    Value *r = b.CreateCall(fn, args);
    if (node == root) {
      result = r;
      break;
    }
    node->replaceAllUsesWith(r);
    node->eraseFromParent();
  }
  // A NaN leaf (each compare tests two): the result is NaN there.
  b.SetInsertPoint(root);
  Value *nan = nullptr;
  if (!root->hasNoNaNs())
    for (size_t i = 0; i < leaves.size(); i += 2) {
      Value *other = leaves[std::min(i + 1, leaves.size() - 1)];
      Value *u = b.CreateFCmpUNO(leaves[i], other);
      nan = nan ? b.CreateOr(nan, u) : u;
    }
  if (nan)
    result = b.CreateSelect(nan, ConstantFP::getQNaN(type), result);
  root->replaceAllUsesWith(result);
  root->eraseFromParent();
}

} // namespace

unsigned lowerFloatMaxima(Module &m, bool avx512dq, bool avx512vl) {
  if (!avx512dq)
    return 0;
  unsigned trees = 0;
  for (Function &f : m) {
    SmallVector<std::pair<IntrinsicInst *, Range>> roots;
    for (Instruction &i : instructions(f)) {
      IntrinsicInst *ii = extremum(&i);
      std::optional<Range> range = ii ? rangeFor(ii->getType()) : std::nullopt;
      if (range && (!range->needsVL || avx512vl) && !inner(ii))
        roots.push_back({ii, *range});
    }
    for (auto &[root, range] : roots)
      rewrite(root, range);
    trees += roots.size();
  }
  return trees;
}

} // namespace tosa_lsp
