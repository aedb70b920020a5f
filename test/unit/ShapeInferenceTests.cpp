//===- ShapeInferenceTests.cpp - MLIR's shape inference, per function -----===//
//
// Declared vs inferred types of every op MLIR can infer (tosa-infer-shapes,
// propagated through the function), and how hover and inlay hints show
// them. Expected types are those `mlir-opt-22 --tosa-infer-shapes` prints
// for the same snippets (test/lit/cli/explain-infer.mlir checks that
// agreement against mlir-opt itself).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "Hover.h"
#include "InlayHints.h"
#include "ShapeInference.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

ShapeInference inferText(const std::string &text, FileAnalysis *out = nullptr) {
  static ShapeInferrer inferrer;
  FileAnalysis fa = analyzeText(text);
  ShapeInference si = inferrer.infer(text, fa);
  if (out)
    *out = std::move(fa);
  return si;
}

const InferredOp *find(const ShapeInference &si, const std::string &name) {
  for (const InferredOp *op : si.allOps())
    if (op->name() == name)
      return op;
  return nullptr;
}

/// The inferred type of the first `name` op in a one-function snippet.
std::string inferredType(const std::string &text, const std::string &name) {
  ShapeInference si = inferText(text);
  const InferredOp *op = find(si, name);
  if (!op || op->results().empty())
    return "<no " + name + ">";
  return op->results()[0].inferred;
}

TEST(ShapeInference, Conv2dWithDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%in: tensor<1x?x33x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x?x?x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x?x33x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>
  return %0 : tensor<1x?x?x16xf32>
}
)",
                         "tosa.conv2d"),
            "tensor<1x?x16x16xf32>");
}

TEST(ShapeInference, MatmulWithDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x?x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<?x?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x?x8xf32>, tensor<2x8x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
)",
                         "tosa.matmul"),
            "tensor<2x?x5xf32>");
}

TEST(ShapeInference, ReshapeFromConstShape) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = tosa.const_shape {values = dense<[6, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %a, %s : (tensor<2x3x4xf32>, !tosa.shape<2>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)",
                         "tosa.reshape"),
            "tensor<6x4xf32>");
}

TEST(ShapeInference, TransposeWithDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x?x4xf32>) -> tensor<?x?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 2, 0, 1>} : (tensor<2x?x4xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
)",
                         "tosa.transpose"),
            "tensor<4x2x?xf32>");
}

TEST(ShapeInference, ReduceWithDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x?x4xf32>) -> tensor<?x?x?xf32> {
  %0 = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<2x?x4xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
)",
                         "tosa.reduce_sum"),
            "tensor<2x?x1xf32>");
}

TEST(ShapeInference, PadWithDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x?xf32>) -> tensor<?x?xf32> {
  %p = tosa.const_shape {values = dense<[1, 1, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.pad %a, %p, %v : (tensor<2x?xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)",
                         "tosa.pad"),
            "tensor<4x?xf32>");
}

TEST(ShapeInference, ConcatWithDynamicInputs) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>, %c: tensor<4x?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.concat %a, %b, %c {axis = 0 : i32} : (tensor<2x3xf32>, tensor<?x3xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)",
                         "tosa.concat"),
            "tensor<?x3xf32>");
}

TEST(ShapeInference, SliceOfDynamicInput) {
  EXPECT_EQ(inferredType(R"(
func.func @f(%a: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %start = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[3, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %a, %start, %size : (tensor<?x8xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)",
                         "tosa.slice"),
            "tensor<3x4xf32>");
}

const char *kChain = R"(
func.func @f(%in: tensor<1x32x32x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x?x?x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x?x?x16xf32>) -> tensor<1x?x?x16xf32>
  return %1 : tensor<1x?x?x16xf32>
}
)";

TEST(ShapeInference, PropagatesThroughTheFunctionWithSources) {
  ShapeInference si = inferText(kChain);
  const InferredOp *conv = find(si, "tosa.conv2d");
  const InferredOp *clamp = find(si, "tosa.clamp");
  ASSERT_TRUE(conv && clamp);
  EXPECT_EQ(conv->results()[0].declared, "tensor<1x?x?x16xf32>");
  EXPECT_EQ(conv->results()[0].inferred, "tensor<1x32x32x16xf32>");
  ASSERT_EQ(conv->results()[0].dimSources.size(), 4u);
  EXPECT_EQ(conv->results()[0].dimSources[0], ""); // declared static
  EXPECT_TRUE(has(conv->results()[0].dimSources[1], "`%in` (operand #0)"))
      << conv->results()[0].dimSources[1];
  // The clamp is refined only because its operand was.
  EXPECT_EQ(clamp->results()[0].inferred, "tensor<1x32x32x16xf32>");
  ASSERT_EQ(clamp->refinedOperands().size(), 1u);
  EXPECT_TRUE(has(clamp->refinedOperands()[0], "`%0` (operand #0)"));
  EXPECT_TRUE(has(clamp->results()[0].dimSources[1], "itself refined"));
  EXPECT_FALSE(clamp->contradicts());
}

// A size two operands carry (matmul's batch) survives losing either one:
// both are named, as alternatives; the others come from one operand each.
TEST(ShapeInference, SizeEitherOperandGivesNamesBoth) {
  ShapeInference si = inferText(R"(
func.func @m(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<?x?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
)");
  const InferredOp *mm = find(si, "tosa.matmul");
  ASSERT_TRUE(mm);
  std::vector<InferredResult> results = mm->results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].inferredShape, (Shape{2, 3, 5}));
  EXPECT_EQ(results[0].declaredShape, (Shape{kDynamic, kDynamic, kDynamic}));
  EXPECT_EQ(
      results[0].dimSources,
      (std::vector<std::string>{"`%a` (operand #0) or `%b` (operand #1)",
                                "`%a` (operand #0)", "`%b` (operand #1)"}));
  EXPECT_FALSE(mm->hasRefinedOperands());
  EXPECT_TRUE(mm->refinedOperands().empty());
  EXPECT_EQ(mm->function(), "m");
}

// A cond_if's result is the meet of what its branches yield: its operands
// (the condition, the inputs) do not decide it, and making one of them
// unknown changes nothing (they were all named, as alternatives). The size
// is known because both branches yield it: both yielded values are named.
TEST(ShapeInference, CondIfSizeComesFromTheBranchesYields) {
  ShapeInference si = inferText(R"(
func.func @ifop(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<7xf32>) -> tensor<?xf32> {
  %0 = tosa.cond_if %c (%x = %a, %y = %b) : tensor<i1> (tensor<4xf32>, tensor<7xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    tosa.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    %1 = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    tosa.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<?xf32>
}
)");
  const InferredOp *ifOp = find(si, "tosa.cond_if");
  ASSERT_TRUE(ifOp);
  std::vector<InferredResult> results = ifOp->results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].inferred, "tensor<4xf32>");
  EXPECT_EQ(results[0].dimSources,
            (std::vector<std::string>{"`%x` (yielded by the then branch) and "
                                      "`%1` (yielded by the else branch)"}));
  EXPECT_FALSE(ifOp->hasRefinedOperands());
}

// A while_loop's results are what its body yields (refined here by
// propagation from the loop's input): not its counter, not its input
// directly.
TEST(ShapeInference, WhileLoopSizeComesFromTheBodysYields) {
  ShapeInference si = inferText(R"(
func.func @loop(%i0: tensor<i32>, %x: tensor<4xf32>, %limit: tensor<i32>) -> tensor<?xf32> {
  %r:2 = tosa.while_loop (%i = %i0, %v = %x) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<?xf32>) {
    %more = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %more : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %v: tensor<?xf32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = tosa.abs %v : (tensor<?xf32>) -> tensor<?xf32>
    tosa.yield %i1, %v1 : tensor<i32>, tensor<?xf32>
  }
  return %r#1 : tensor<?xf32>
}
)");
  const InferredOp *loop = find(si, "tosa.while_loop");
  ASSERT_TRUE(loop);
  std::vector<InferredResult> results = loop->results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].inferred, "tensor<4xf32>");
  EXPECT_EQ(results[1].dimSources,
            (std::vector<std::string>{
                "`%v1` (yielded by the loop body), itself refined"}));
}

// Ops of one run keep their types and names in one pool: copies of the
// records (the server merges runs) decode the same.
TEST(ShapeInference, RecordsOutliveTheirInferenceAndDecodeTheSame) {
  std::vector<InferredOp> kept;
  {
    ShapeInference si = inferText(kChain);
    for (const InferredOp *op : si.allOps())
      kept.push_back(*op);
  }
  ASSERT_EQ(kept.size(), 3u); // tosa.const, tosa.conv2d, tosa.clamp
  InferredOp none;            // not written by a run: reads as empty
  EXPECT_EQ(none.name(), "");
  EXPECT_TRUE(none.results().empty());
  EXPECT_EQ(kept[2].name(), "tosa.clamp");
  EXPECT_EQ(kept[2].results()[0].declared, "tensor<1x?x?x16xf32>");
  EXPECT_EQ(renderInferred(kept[2], RenderStyle::Text),
            renderInferred(*find(inferText(kChain), "tosa.clamp"),
                           RenderStyle::Text));
}

// The transpose gives 3x2; the abs declares 3x5.
const char *kContradiction = R"(
func.func @f(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
)";

TEST(ShapeInference, DeclaredStaticSizeContradictingPropagation) {
  ShapeInference si = inferText(kContradiction);
  const InferredOp *abs = find(si, "tosa.abs");
  ASSERT_TRUE(abs);
  EXPECT_TRUE(abs->contradicts());
  EXPECT_EQ(abs->results()[0].contradictions, std::vector<unsigned>{1});
  EXPECT_EQ(abs->results()[0].shapeFunction, (Shape{3, 2}));
  EXPECT_TRUE(has(renderInferred(*abs, RenderStyle::Text),
                  "dim 1 is declared 5 but the op's shape function gives 2"));
  EXPECT_FALSE(find(si, "tosa.transpose")->contradicts());
}

TEST(ShapeInference, ContradictionIsAnErrorDiagnosticWithTheInferredSize) {
  ShapeInference si = inferText(kContradiction);
  std::vector<Diagnostic> ds = contradictionDiagnostics(si);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::Error);
  EXPECT_EQ(ds[0].code, "shape-contradiction");
  EXPECT_EQ(ds[0].range.begin, (Position{4, 8}));
  EXPECT_TRUE(has(ds[0].message, "gives 3x2: dimension 1 is 2, not 5"))
      << ds[0].message;
  EXPECT_TRUE(contradictionDiagnostics(inferText(kChain)).empty());
}

// What mlir-opt-22 --tosa-infer-shapes rejects, with its severity: MLIR's
// verifier on the op after the pass. Operands that no longer broadcast
// leave the shape function nothing to compare, yet the op is an error; a
// contradiction tosa.mul's verifier accepts is a warning.
TEST(ShapeInference, VerdictsAreMLIRVerifiersOnTheRefinedOp) {
  FileAnalysis fa;
  ShapeInference si = inferText(R"(
func.func @f(%a: tensor<3xf32>, %c: tensor<4xf32>) -> tensor<?xf32> {
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<?xf32>
  %1 = tosa.add %0, %c : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
)",
                                &fa);
  const InferredOp *add = find(si, "tosa.add");
  ASSERT_TRUE(add);
  EXPECT_TRUE(add->contradicts());
  EXPECT_TRUE(add->results()[0].contradictions.empty());
  EXPECT_TRUE(has(add->rejection(), "broadcast-compatible"))
      << add->rejection();
  std::vector<Diagnostic> ds = contradictionDiagnostics(si);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::Error);
  EXPECT_EQ(ds[0].range.begin, (Position{4, 8}));
  std::vector<InlayHintData> hints =
      inlayHints(fa, {{1, 1}, {100, 1}}, Config::Hints(), &si);
  auto hint = llvm::find_if(hints, [](const InlayHintData &h) {
    return h.kind == InlayHintData::InferredShape && h.position.line == 4;
  });
  ASSERT_NE(hint, hints.end());
  EXPECT_EQ(hint->label, " inferred: error");
  EXPECT_FALSE(find(si, "tosa.abs")->contradicts());

  si = inferText(R"(
func.func @m(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v = tosa.abs %b : (tensor<3xf32>) -> tensor<?xf32>
  %1 = tosa.mul %a, %v, %s : (tensor<1xf32>, tensor<?xf32>, tensor<1xi8>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
)");
  const InferredOp *mul = find(si, "tosa.mul");
  ASSERT_TRUE(mul);
  EXPECT_TRUE(mul->contradicts());
  EXPECT_TRUE(mul->rejection().empty());
  ds = contradictionDiagnostics(si);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::Warning);
  EXPECT_TRUE(has(ds[0].message, "MLIR's verifier accepts the op"));
}

TEST(ShapeInference, NoContradictionWhenConsistent) {
  ShapeInference si = inferText(kChain);
  for (const InferredOp *op : si.allOps())
    EXPECT_FALSE(op->contradicts()) << op->name();
}

TEST(ShapeInference, SkipsFunctionsWithErrorsAndInfersTheOthers) {
  ShapeInference si = inferText(R"(
func.func @bad(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
func.func @good(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)");
  ASSERT_EQ(si.functions.size(), 2u);
  EXPECT_EQ(si.functions[0].name, "bad");
  EXPECT_EQ(si.functions[0].skipped, "the function has errors");
  EXPECT_TRUE(si.functions[0].ops.empty());
  EXPECT_EQ(si.functions[1].skipped, "");
  ASSERT_EQ(si.functions[1].ops.size(), 1u);
  EXPECT_EQ(si.functions[1].ops[0].results()[0].inferred, "tensor<3x2xf32>");
}

TEST(ShapeInference, OnlyTheFunctionsAskedFor) {
  std::string text = R"(
func.func @a(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @b(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)";
  FileAnalysis fa = analyzeText(text);
  ShapeInferrer inferrer;
  ShapeInference si = inferrer.infer(text, fa, 7, 7);
  ASSERT_EQ(si.functions.size(), 1u);
  EXPECT_EQ(si.functions[0].name, "b");
  EXPECT_TRUE(si.opAt({7, 8}));
  EXPECT_FALSE(si.opAt({3, 8}));
}

TEST(ShapeInference, AFunctionUsingAliasesFallsBackToItsSection) {
  std::string text = R"(
!in = tensor<2x3xf32>
func.func @a(%a: !in) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (!in) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @b(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  return %a : tensor<2x3xf32>
}
)";
  FileAnalysis fa = analyzeText(text);
  ShapeInferrer inferrer;
  ShapeInference si = inferrer.infer(text, fa, 4, 4);
  ASSERT_EQ(si.functions.size(), 1u);
  EXPECT_EQ(si.functions[0].name, "a");
  ASSERT_EQ(si.functions[0].ops.size(), 1u);
  EXPECT_EQ(si.functions[0].ops[0].results()[0].inferred, "tensor<3x2xf32>");
  EXPECT_EQ(si.functions[0].ops[0].range.begin, (Position{4, 8}));
}

TEST(ShapeInference, SectionsThatDoNotParseAreSkipped) {
  ShapeInference si = inferText(R"(
func.func @a(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// -----
func.func @b(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0> : (tensor<2x3xf32>) -> tensor<?x?xf32>
}
)");
  ASSERT_EQ(si.functions.size(), 1u);
  EXPECT_EQ(si.functions[0].name, "a");
}

TEST(ShapeInferenceHover, NonBroadcastableOpShowsDeclaredVsInferred) {
  Annotations a(R"(
func.func @f(%in: tensor<1x32x32x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x?x?x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = [[tosa.co$$nv2d]] %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>
  return %0 : tensor<1x?x?x16xf32>
}
)");
  FileAnalysis fa;
  ShapeInference si = inferText(a.text, &fa);
  // Without shape inference there is nothing to say about a conv2d's name.
  EXPECT_FALSE(hover(fa, a.point()));
  auto h = hover(fa, a.point(), &si);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, a.range());
  EXPECT_TRUE(has(h->markdown, "**declared** `tensor<1x?x?x16xf32>`   "
                               "**inferred** `tensor<1x32x32x16xf32>`"))
      << h->markdown;
  EXPECT_TRUE(has(h->markdown, "dim 1: ? -> 32 from `%in` (operand #0)"))
      << h->markdown;
}

TEST(ShapeInferenceHover, ResultUseOfARefinedOpShowsIt) {
  Annotations a(R"(
func.func @f(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %$$0 : tensor<?x?xf32>
}
)");
  FileAnalysis fa;
  ShapeInference si = inferText(a.text, &fa);
  auto h = hover(fa, a.point(), &si);
  ASSERT_TRUE(h);
  EXPECT_TRUE(has(h->markdown, "`%0`: `tensor<?x?xf32>`")) << h->markdown;
  EXPECT_TRUE(has(h->markdown, "**inferred** `tensor<3x2xf32>`"))
      << h->markdown;
}

TEST(ShapeInferenceHover, NothingAddedWhereInferenceAgrees) {
  Annotations a(R"(
func.func @f(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.a$$dd %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)");
  FileAnalysis fa;
  ShapeInference si = inferText(a.text, &fa);
  auto with = hover(fa, a.point(), &si), without = hover(fa, a.point());
  ASSERT_TRUE(with && without);
  EXPECT_EQ(with->markdown, without->markdown);
}

TEST(ShapeInferenceInlayHints, InferredTypeOfEveryRefinedOp) {
  Annotations a(R"(
func.func @f(%in: tensor<1x32x32x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x?x?x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>$$
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x?x?x16xf32>) -> tensor<1x?x?x16xf32>$$
  return %1 : tensor<1x?x?x16xf32>
}
)");
  FileAnalysis fa;
  ShapeInference si = inferText(a.text, &fa);
  // The Broadcastable rule alone knows nothing here.
  EXPECT_TRUE(inlayHints(fa, {{1, 1}, {100, 1}}, Config::Hints()).empty());
  auto hints = inlayHints(fa, {{1, 1}, {100, 1}}, Config::Hints(), &si);
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[0].position, a.point(0));
  EXPECT_EQ(hints[0].label, " inferred: 1x32x32x16");
  EXPECT_EQ(hints[1].position, a.point(1));
  EXPECT_EQ(hints[1].label, " inferred: 1x32x32x16");
  Config::Hints off;
  off.inferredShapes = false;
  EXPECT_TRUE(inlayHints(fa, {{1, 1}, {100, 1}}, off, &si).empty());
}

TEST(ShapeInferenceInlayHints, ContradictionIsMarked) {
  ShapeInference si;
  FileAnalysis fa;
  si = inferText(kContradiction, &fa);
  auto hints = inlayHints(fa, {{4, 1}, {4, 200}}, Config::Hints(), &si);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].label, " inferred: 3x2 (error)");
}

} // namespace

// Lookups bisect: an op is found from any line of its text (an inlay hint
// after a result type written on the op's second line), by its name's line
// for opAt.
TEST(ShapeInference, OpsOnLinesFindsAnOpFromAnyOfItsLines) {
  ShapeInference si = inferText(R"(
func.func @f(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %1 = tosa.abs %0
      : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = tosa.abs %1 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}
)");
  auto lines = [&](unsigned first, unsigned last) {
    std::vector<unsigned> out;
    for (const InferredOp *op : si.opsOnLines(first, last))
      out.push_back(op->range.begin.line);
    return out;
  };
  EXPECT_EQ(lines(5, 5), std::vector<unsigned>{4});
  EXPECT_EQ(lines(4, 6), (std::vector<unsigned>{4, 6}));
  EXPECT_EQ(lines(1, 100), (std::vector<unsigned>{3, 4, 6}));
  EXPECT_TRUE(lines(7, 9).empty());
  ASSERT_TRUE(si.opAt({4, 0}));
  EXPECT_EQ(si.opAt({4, 0})->range.begin.line, 4u);
  EXPECT_EQ(si.opAt({5, 0}), nullptr);
  EXPECT_EQ(si.opAt({6, 8})->name(), "tosa.abs");
}

// A warmed-up inferrer (what each server thread does after the first open)
// infers what a fresh one does: the warm-up's function leaves nothing
// behind that a later inference could see.
TEST(ShapeInference, WarmedUpInferrerInfersTheSame) {
  const std::string text = kContradiction;
  FileAnalysis fa = analyzeText(text);
  ShapeInferrer warm, fresh;
  warm.warmUp();
  warm.warmUp(); // twice: harmless
  ShapeInference a = warm.infer(text, fa), b = fresh.infer(text, fa);
  ASSERT_EQ(a.functions.size(), b.functions.size());
  ASSERT_FALSE(a.allOps().empty());
  std::vector<std::string> sa, sb;
  for (const InferredOp *op : a.allOps())
    for (const InferredResult &r : op->results())
      sa.push_back(op->name() + " " + r.declared + " " + r.inferred);
  for (const InferredOp *op : b.allOps())
    for (const InferredResult &r : op->results())
      sb.push_back(op->name() + " " + r.declared + " " + r.inferred);
  EXPECT_EQ(sa, sb);
  for (const FunctionInference &f : a.functions)
    EXPECT_NE(f.name, "w"); // the warm-up's own function is not reported
}

// A caller's stop condition ends the work between steps: nothing is kept
// once it holds, whenever that is, and a stop that never holds changes
// nothing.
TEST(ShapeInference, StopsWhenTheCallerSaysSo) {
  const int n = 1000;
  std::string text = absChain(n);
  // A second function: a stop while it is inferred drops the first too.
  text += "func.func @g(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
          "  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x?xf32>\n"
          "  return %0 : tensor<?x?xf32>\n}\n";
  FileAnalysis fa = analyzeText(text);
  ShapeInferrer inferrer;
  LineIndex lines(text);

  ShapeInference whole = inferrer.infer(text, lines, fa, 1, ~0u);
  ASSERT_EQ(whole.functions.size(), 2u);
  EXPECT_FALSE(whole.cancelled);
  ASSERT_EQ(whole.functions[0].ops.size(), size_t(n + 1));

  // Asked before, after the parse, after the pass and every 256 ops: a stop
  // after any number of questions leaves nothing.
  unsigned asked = 0;
  ShapeInference never = inferrer.infer(text, lines, fa, 1, ~0u, [&] {
    ++asked;
    return false;
  });
  EXPECT_FALSE(never.cancelled);
  ASSERT_EQ(never.functions.size(), 2u);
  EXPECT_EQ(never.functions[0].ops.size(), whole.functions[0].ops.size());
  // Before, after the parse, and per function before it, after the pass,
  // every 256 ops and before the edits.
  EXPECT_GE(asked, 10u);
  for (unsigned after = 0; after < asked; ++after) {
    unsigned k = 0;
    ShapeInference cut =
        inferrer.infer(text, lines, fa, 1, ~0u, [&] { return k++ >= after; });
    EXPECT_TRUE(cut.cancelled) << "stopped after " << after;
    EXPECT_TRUE(cut.functions.empty()) << "stopped after " << after;
  }
  // The inferrer works as before after being stopped.
  ShapeInference again = inferrer.infer(text, lines, fa, 1, ~0u);
  ASSERT_EQ(again.functions.size(), 2u);
  EXPECT_EQ(again.functions[0].ops.size(), whole.functions[0].ops.size());
}
