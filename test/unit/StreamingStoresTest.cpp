//===- StreamingStoresTest.cpp - Non-temporal twins of loop nests ---------===//
//
// Which loop nests streamLargeStores versions, on hand-written optimised IR:
// a contiguous vector write into a caller's buffer does; a buffer the nest
// reads back, a fresh allocation, a strided write, or a call that may read
// the buffer do not. The twin's numbers are checked by the numeric lit tests
// (numeric-fast.test, kernels-smoke.test).
//
//===----------------------------------------------------------------------===//

#include "StreamingStores.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

/// A loop over i < %n (entry branches around it: no preheader, no
/// dedicated exit, as the optimiser may leave them) with `body` inside,
/// where %i is the induction variable.
std::string kernel(const std::string &params, const std::string &body) {
  return "target triple = \"x86_64-pc-linux-gnu\"\n"
         "declare noalias ptr @malloc(i64)\n"
         "declare void @peek(ptr)\n"
         "define void @k(" +
         params +
         ", i64 %n) {\n"
         "entry:\n"
         "  %some = icmp sgt i64 %n, 0\n"
         "  br i1 %some, label %loop, label %exit\n"
         "loop:\n"
         "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]\n" +
         body +
         "  %i.next = add nuw nsw i64 %i, 1\n"
         "  %done = icmp eq i64 %i.next, %n\n"
         "  br i1 %done, label %exit, label %loop\n"
         "exit:\n"
         "  ret void\n"
         "}\n";
}

const char *kAddInto =
    "  %pa = getelementptr inbounds <4 x float>, ptr %a, i64 %i\n"
    "  %v = load <4 x float>, ptr %pa, align 4\n"
    "  %w = fadd <4 x float> %v, %v\n"
    "  %po = getelementptr inbounds <4 x float>, ptr %out, i64 %i\n"
    "  store <4 x float> %w, ptr %po, align 4\n";

struct Versioned {
  unsigned nests = 0;
  unsigned nontemporal = 0; // stores marked in the twin
  unsigned plain = 0;       // vector stores left ordinary
  unsigned aligned = 0;     // non-temporal ones at 16 bytes or more
  bool fenced = false;
  bool broken = false;
  std::string ir;
};

Versioned version(const std::string &text, uint64_t threshold = 1) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, err, ctx);
  if (!m) {
    std::string why;
    llvm::raw_string_ostream os(why);
    err.print("kernel", os);
    ADD_FAILURE() << why << text;
    return {};
  }
  Versioned v;
  v.nests = streamLargeStores(*m, threshold);
  v.broken = llvm::verifyModule(*m, &llvm::errs());
  for (llvm::Function &f : *m)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &i : bb) {
        if (auto *s = llvm::dyn_cast<llvm::StoreInst>(&i))
          if (s->getValueOperand()->getType()->isVectorTy()) {
            bool nt = s->getMetadata(llvm::LLVMContext::MD_nontemporal);
            ++(nt ? v.nontemporal : v.plain);
            v.aligned += nt && s->getAlign().value() >= 16;
          }
        if (auto *c = llvm::dyn_cast<llvm::CallInst>(&i))
          if (c->getCalledFunction() &&
              c->getCalledFunction()->getName() == "llvm.x86.sse.sfence")
            v.fenced = true;
      }
  llvm::raw_string_ostream os(v.ir);
  m->print(os, nullptr);
  return v;
}

TEST(StreamingStores, AContiguousWriteIntoTheCallersBufferGetsATwin) {
  Versioned v = version(kernel("ptr %out, ptr %a", kAddInto), 4096);
  EXPECT_EQ(v.nests, 1u);
  EXPECT_FALSE(v.broken) << v.ir;
  EXPECT_EQ(v.nontemporal, 1u) << v.ir; // the twin's copy
  EXPECT_EQ(v.plain, 1u) << v.ir;       // the original
  EXPECT_TRUE(v.fenced) << v.ir;
  // Chosen on the bytes the nest stores: 16 per iteration, n iterations.
  EXPECT_NE(v.ir.find("icmp uge i64"), std::string::npos) << v.ir;
  EXPECT_NE(v.ir.find(", 4096"), std::string::npos) << v.ir;
  EXPECT_NE(v.ir.find("shl i64 %n, 4"), std::string::npos) << v.ir;
}

TEST(StreamingStores, InterleavedStoresThatFillTheirStepStream) {
  // Two 16-byte stores per iteration of a 32-byte step (the vectoriser's
  // interleaving).
  Versioned v = version(kernel(
      "ptr %out, ptr %a",
      "  %pa = getelementptr inbounds [2 x <4 x float>], ptr %a, i64 %i\n"
      "  %v = load <4 x float>, ptr %pa, align 4\n"
      "  %po = getelementptr inbounds [2 x <4 x float>], ptr %out, i64 %i\n"
      "  %po1 = getelementptr inbounds i8, ptr %po, i64 16\n"
      "  store <4 x float> %v, ptr %po, align 4\n"
      "  store <4 x float> %v, ptr %po1, align 4\n"));
  EXPECT_EQ(v.nests, 1u);
  EXPECT_FALSE(v.broken) << v.ir;
  EXPECT_EQ(v.nontemporal, 2u) << v.ir;
}

TEST(StreamingStores, RowsOfARunTimeLengthAreAlignedByARunTimeTest) {
  // out[r * c + 4k .. +3] = a[...] for %rows rows of %c floats, %c4 vectors
  // each (an NHWC bias's rows: C known at run time only). A row starts
  // 4 * c * r bytes into the buffer: the twin's stores are 16-byte aligned
  // when the buffer and 4 * c are, which the twin's condition tests (at
  // align 4 an x86 non-temporal 64-byte store became 8-byte movntsd).
  Versioned v =
      version("target triple = \"x86_64-pc-linux-gnu\"\n"
              "define void @k(ptr %out, ptr %a, i64 %rows, i64 %c, i64 %c4) {\n"
              "entry:\n"
              "  %some = icmp sgt i64 %rows, 0\n"
              "  %any = icmp sgt i64 %c4, 0\n"
              "  %both = and i1 %some, %any\n"
              "  br i1 %both, label %outer, label %exit\n"
              "outer:\n"
              "  %r = phi i64 [ 0, %entry ], [ %r.next, %latch ]\n"
              "  %row = mul nsw i64 %r, %c\n"
              "  br label %inner\n"
              "inner:\n"
              "  %k = phi i64 [ 0, %outer ], [ %k.next, %inner ]\n"
              "  %k4 = shl nsw i64 %k, 2\n"
              "  %idx = add nsw i64 %row, %k4\n"
              "  %pa = getelementptr inbounds float, ptr %a, i64 %idx\n"
              "  %v = load <4 x float>, ptr %pa, align 4\n"
              "  %po = getelementptr inbounds float, ptr %out, i64 %idx\n"
              "  store <4 x float> %v, ptr %po, align 4\n"
              "  %k.next = add nuw nsw i64 %k, 1\n"
              "  %kdone = icmp eq i64 %k.next, %c4\n"
              "  br i1 %kdone, label %latch, label %inner\n"
              "latch:\n"
              "  %r.next = add nuw nsw i64 %r, 1\n"
              "  %rdone = icmp eq i64 %r.next, %rows\n"
              "  br i1 %rdone, label %exit, label %outer\n"
              "exit:\n"
              "  ret void\n"
              "}\n");
  EXPECT_EQ(v.nests, 1u) << v.ir;
  EXPECT_FALSE(v.broken) << v.ir;
  EXPECT_EQ(v.nontemporal, 1u) << v.ir;
  EXPECT_EQ(v.aligned, 1u) << v.ir;
  EXPECT_NE(v.ir.find("shl i64 %c, 2"), std::string::npos) << v.ir;
  EXPECT_NE(v.ir.find(", 15"), std::string::npos) << v.ir;
}

TEST(StreamingStores, ABufferTheNestReadsBackDoesNot) {
  // out[i] += a[i]: a non-temporal store followed by a load of its line is
  // slow, and the result is needed in the cache anyway.
  Versioned v = version(
      kernel("ptr %out, ptr %a",
             "  %pa = getelementptr inbounds <4 x float>, ptr %a, i64 %i\n"
             "  %v = load <4 x float>, ptr %pa, align 4\n"
             "  %po = getelementptr inbounds <4 x float>, ptr %out, i64 %i\n"
             "  %o = load <4 x float>, ptr %po, align 4\n"
             "  %w = fadd <4 x float> %v, %o\n"
             "  store <4 x float> %w, ptr %po, align 4\n"));
  EXPECT_EQ(v.nests, 0u) << v.ir;
  EXPECT_EQ(v.nontemporal, 0u);
  EXPECT_FALSE(v.fenced);
}

TEST(StreamingStores, AFreshAllocationDoesNot) {
  // The loop writes a malloc'ed buffer whose pointer is aligned the way
  // MLIR's memref lowering does it (ptrtoint, add, and, inttoptr).
  std::string text = kernel("ptr %a", kAddInto);
  text.replace(text.find("entry:\n") + 7, 0,
               "  %raw = call ptr @malloc(i64 4096)\n"
               "  %addr = ptrtoint ptr %raw to i64\n"
               "  %up = add i64 %addr, 63\n"
               "  %al = and i64 %up, -64\n"
               "  %out = inttoptr i64 %al to ptr\n");
  Versioned v = version(text);
  EXPECT_EQ(v.nests, 0u) << v.ir;
}

TEST(StreamingStores, AStridedWriteDoesNot) {
  Versioned v = version(kernel(
      "ptr %out, ptr %a",
      "  %pa = getelementptr inbounds <4 x float>, ptr %a, i64 %i\n"
      "  %v = load <4 x float>, ptr %pa, align 4\n"
      "  %po = getelementptr inbounds [2 x <4 x float>], ptr %out, i64 %i\n"
      "  store <4 x float> %v, ptr %po, align 4\n"));
  EXPECT_EQ(v.nests, 0u) << v.ir;
}

TEST(StreamingStores, ACallThatMayReadTheBufferDoesNot) {
  Versioned v = version(kernel("ptr %out, ptr %a", std::string(kAddInto) +
                                                       "  call void @peek("
                                                       "ptr %out)\n"));
  EXPECT_EQ(v.nests, 0u) << v.ir;
}

TEST(StreamingStores, ScalarStoresAreLeftAlone) {
  Versioned v =
      version(kernel("ptr %out, ptr %a",
                     "  %pa = getelementptr inbounds float, ptr %a, i64 %i\n"
                     "  %v = load float, ptr %pa, align 4\n"
                     "  %po = getelementptr inbounds float, ptr %out, i64 %i\n"
                     "  store float %v, ptr %po, align 4\n"));
  EXPECT_EQ(v.nests, 0u) << v.ir;
}

TEST(StreamingStores, TheDefaultThresholdIsACacheSize) {
  uint64_t host = defaultStreamThreshold("native");
  EXPECT_GE(host, 64u << 10);
  EXPECT_LE(host, 1u << 30);
  EXPECT_EQ(defaultStreamThreshold("x86-64"), 2u << 20);
}

} // namespace
