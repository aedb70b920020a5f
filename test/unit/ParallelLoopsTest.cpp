//===- ParallelLoopsTest.cpp - which kernel loops run on threads ----------===//
//
// tosa-lsp-parallel-loops on hand-written bufferized IR: a tagged loop
// whose loop-carried buffer is passed through and whose writes go into it
// or into buffers of its own becomes an scf.parallel; a write into a buffer
// allocated outside, a call, or a loop-carried value that changes keeps it
// serial. chooseParallelLoops on tensor-level loops: which of the two
// tagged loops is kept, and the empty tensors it moves. The numbers of the
// threaded kernels are checked by kernels-numeric.test.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

struct Parsed {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::string text() {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    return s;
  }
  unsigned count(StringRef needle) {
    std::string t = text();
    unsigned n = 0;
    for (size_t at = t.find(needle); at != std::string::npos;
         at = t.find(needle, at + 1))
      ++n;
    return n;
  }
};

Parsed parse(const std::string &body) {
  tosa_lsp::detail::registerPassesOnce();
  Parsed p;
  p.ctx = std::make_unique<MLIRContext>(tosa_lsp::detail::loweringRegistry());
  p.ctx->loadAllAvailableDialects();
  p.module = parseSourceString<ModuleOp>(body, p.ctx.get());
  EXPECT_TRUE(p.module) << body;
  return p;
}

Parsed runPass(const std::string &body) {
  Parsed p = parse(body);
  if (!p.module)
    return p;
  PassManager pm(p.ctx.get());
  std::string errors;
  llvm::raw_string_ostream es(errors);
  EXPECT_TRUE(succeeded(
      parsePassPipeline("func.func(tosa-lsp-parallel-loops)", pm, es)))
      << errors;
  EXPECT_TRUE(succeeded(pm.run(*p.module))) << p.text();
  return p;
}

/// A function with a loop over 16 rows of %out (memref<16x32xf32>) carrying
/// it, whose body is `body` (%i the row, %acc the carried buffer).
std::string rows(const std::string &body) {
  return R"mlir(
func.func private @peek(memref<32xf32>)
func.func @k(%out: memref<16x32xf32>, %scratch: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %v = arith.constant dense<1.0> : vector<32xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %out) -> (memref<16x32xf32>) {
)mlir" + body +
         R"mlir(    scf.yield %acc : memref<16x32xf32>
  } {tosa_lsp.parallel}
  return
}
)mlir";
}

const char *kWriteRow = R"mlir(
    %row = memref.subview %acc[%i, 0] [1, 32] [1, 1] : memref<16x32xf32> to memref<32xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32, strided<[1], offset: ?>>
)mlir";

TEST(ParallelLoops, PassThroughBufferWrittenByRows) {
  Parsed p = runPass(rows(kWriteRow));
  EXPECT_EQ(p.count("scf.parallel"), 1u) << p.text();
  EXPECT_EQ(p.count("scf.for"), 0u) << p.text();
  EXPECT_EQ(p.count("tosa_lsp.parallel"), 0u) << p.text();
}

TEST(ParallelLoops, ScratchOfItsOwn) {
  Parsed p = runPass(rows(std::string(kWriteRow) + R"mlir(
    %own = memref.alloc() : memref<32xf32>
    vector.transfer_write %v, %own[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32>
    memref.dealloc %own : memref<32xf32>
)mlir"));
  EXPECT_EQ(p.count("scf.parallel"), 1u) << p.text();
}

TEST(ParallelLoops, SharedScratchStaysSerial) {
  // One buffer for every iteration: threads would overwrite each other's.
  Parsed p = runPass(rows(std::string(kWriteRow) + R"mlir(
    vector.transfer_write %v, %scratch[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32>
)mlir"));
  EXPECT_EQ(p.count("scf.parallel"), 0u) << p.text();
  EXPECT_EQ(p.count("scf.for"), 1u) << p.text();
  EXPECT_EQ(p.count("tosa_lsp.parallel"), 0u) << p.text();
}

TEST(ParallelLoops, InnerLoopOverSharedScratchStaysSerial) {
  // The write into the shared buffer goes through an inner loop's carried
  // value.
  Parsed p = runPass(rows(std::string(kWriteRow) + R"mlir(
    %s = scf.for %j = %c0 to %c1 step %c1 iter_args(%b = %scratch) -> (memref<32xf32>) {
      vector.transfer_write %v, %b[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32>
      scf.yield %b : memref<32xf32>
    }
)mlir"));
  EXPECT_EQ(p.count("scf.parallel"), 0u) << p.text();
}

TEST(ParallelLoops, CallStaysSerial) {
  // What the callee does is unknown.
  Parsed p = runPass(rows(std::string(kWriteRow) + R"mlir(
    func.call @peek(%scratch) : (memref<32xf32>) -> ()
)mlir"));
  EXPECT_EQ(p.count("scf.parallel"), 0u) << p.text();
}

TEST(ParallelLoops, ChangedCarriedBufferStaysSerial) {
  // Each iteration hands the next a different buffer.
  Parsed q = runPass(R"mlir(
func.func @k(%out: memref<16x32xf32>, %other: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %out) -> (memref<16x32xf32>) {
    scf.yield %other : memref<16x32xf32>
  } {tosa_lsp.parallel}
  return
}
)mlir");
  EXPECT_EQ(q.count("scf.parallel"), 0u) << q.text();
}

TEST(ParallelLoops, InnerLoopSwappingBuffersStaysSerial) {
  // The inner loop's first iteration writes the carried buffer, the next
  // ones the argument it hands on: shared by every row.
  Parsed p = runPass(R"mlir(
func.func @k(%out: memref<16x32xf32>, %other: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %f = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %out) -> (memref<16x32xf32>) {
    %s = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %acc) -> (memref<16x32xf32>) {
      memref.store %f, %b[%c0, %j] : memref<16x32xf32>
      scf.yield %other : memref<16x32xf32>
    }
    scf.yield %acc : memref<16x32xf32>
  } {tosa_lsp.parallel}
  return
}
)mlir");
  EXPECT_EQ(p.count("scf.parallel"), 0u) << p.text();
}

TEST(ParallelLoops, NestedTaggedLoopsOneTeam) {
  Parsed p = runPass(R"mlir(
func.func @k(%out: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %out) -> (memref<16x32xf32>) {
    %s = scf.for %j = %c0 to %c32 step %c1 iter_args(%b = %a) -> (memref<16x32xf32>) {
      memref.store %f, %b[%i, %j] : memref<16x32xf32>
      scf.yield %b : memref<16x32xf32>
    } {tosa_lsp.parallel}
    scf.yield %s : memref<16x32xf32>
  } {tosa_lsp.parallel}
  return
}
)mlir");
  // The outer loop's threads; the inner loop stays a loop of each (no
  // nested thread teams), untagged.
  EXPECT_EQ(p.count("scf.parallel"), 1u) << p.text();
  EXPECT_EQ(p.count("scf.for"), 1u) << p.text();
  EXPECT_EQ(p.count("tosa_lsp.parallel"), 0u) << p.text();
  bool innerInside = false;
  p.module->walk([&](scf::ForOp l) {
    innerInside = isa<scf::ParallelOp>(l->getParentOp());
  });
  EXPECT_TRUE(innerInside) << p.text();
}

TEST(ParallelLoops, StoreIntoAnArgumentStaysSerial) {
  // The function's own buffer, not carried by the loop: nothing says the
  // iterations' stores are disjoint.
  Parsed p = runPass(R"mlir(
func.func @k(%out: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %f, %out[%c0, %c0] : memref<16x32xf32>
  } {tosa_lsp.parallel}
  return
}
)mlir");
  EXPECT_EQ(p.count("scf.parallel"), 0u) << p.text();
}

/// Tensor-level loops: outer over `outer` blocks, inner over `inner` rows,
/// packing into an empty tensor made outside both.
std::string tensorNest(int outer, int inner, bool outerTagged = true) {
  return llvm::formatv(R"mlir(
func.func @k(%t: tensor<64xf32>) -> tensor<64xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %co = arith.constant {0} : index
  %ci = arith.constant {1} : index
  %e = tensor.empty() : tensor<8xf32>
  %r = scf.for %i = %c0 to %co step %c1 iter_args(%a = %t) -> (tensor<64xf32>) {{
    %p = scf.for %k = %c0 to %c1 step %c1 iter_args(%b = %e) -> (tensor<8xf32>) {{
      scf.yield %b : tensor<8xf32>
    }
    %s = scf.for %j = %c0 to %ci step %c1 iter_args(%c = %a) -> (tensor<64xf32>) {{
      scf.yield %c : tensor<64xf32>
    } {{tosa_lsp.parallel_inner}
    scf.yield %s : tensor<64xf32>
  } {2}
  return %r : tensor<64xf32>
}
)mlir",
                       outer, inner,
                       outerTagged ? "{tosa_lsp.parallel_outer}" : "")
      .str();
}

/// The loop chooseParallelLoops kept: "outer", "inner" or "".
std::string chosen(Parsed &p) {
  std::string which;
  p.module->walk([&](scf::ForOp l) {
    if (!l->hasAttr(tosa_lsp::detail::kParallelTag))
      return;
    bool outer = isa<func::FuncOp>(l->getParentOp());
    which = outer ? "outer" : "inner";
  });
  return which;
}

TEST(ChooseParallelLoops, OuterWhenItSharesEvenly) {
  Parsed p = parse(tensorNest(16, 56));
  tosa_lsp::detail::chooseParallelLoops(*p.module, 2, {});
  EXPECT_EQ(chosen(p), "outer") << p.text();
  // The packing's empty tensor now comes from inside the chosen loop:
  // bufferized, one buffer per iteration (per thread).
  unsigned inside = 0;
  p.module->walk([&](tensor::EmptyOp e) {
    inside += e->getParentOfType<scf::ForOp>() != nullptr;
  });
  EXPECT_EQ(inside, 1u) << p.text();
  EXPECT_EQ(p.count("parallel_outer") + p.count("parallel_inner"), 0u);
}

TEST(ChooseParallelLoops, InnerWhenTheOuterIsUneven) {
  // 3 blocks on 2 threads keep one idle a third of the time; 56 rows do
  // not.
  Parsed p = parse(tensorNest(3, 56));
  tosa_lsp::detail::chooseParallelLoops(*p.module, 2, {});
  EXPECT_EQ(chosen(p), "inner") << p.text();
}

TEST(ChooseParallelLoops, InnerWhenTheOuterHasOneIteration) {
  Parsed p = parse(tensorNest(1, 56));
  tosa_lsp::detail::chooseParallelLoops(*p.module, 2, {});
  EXPECT_EQ(chosen(p), "inner") << p.text();
  // One N panel or channel block: the schedule's canonicalisation folded
  // the outer loop, and its tag with it; the rows are still there.
  Parsed q = parse(tensorNest(3, 56, /*outerTagged=*/false));
  tosa_lsp::detail::chooseParallelLoops(*q.module, 2, {});
  EXPECT_EQ(chosen(q), "inner") << q.text();
  // Nothing to share: one iteration stays a loop.
  Parsed r = parse(tensorNest(1, 1));
  tosa_lsp::detail::chooseParallelLoops(*r.module, 2, {});
  EXPECT_EQ(chosen(r), "") << r.text();
}

TEST(ChooseParallelLoops, NoneForOneThreadOrASmallKernel) {
  Parsed p = parse(tensorNest(16, 56));
  tosa_lsp::detail::chooseParallelLoops(*p.module, 1, {});
  EXPECT_EQ(chosen(p), "") << p.text();
  EXPECT_EQ(p.count("tosa_lsp.parallel"), 0u) << p.text();
  Parsed q = parse(tensorNest(16, 56));
  SmallVector<func::FuncOp> serial(q.module->getOps<func::FuncOp>());
  tosa_lsp::detail::chooseParallelLoops(*q.module, 2, serial);
  EXPECT_EQ(chosen(q), "") << q.text();
}

} // namespace
