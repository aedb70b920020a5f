//===- AnalyzerTest.cpp - parsing, all-errors verification, op reports ----===//

#include "Analysis.h"
#include "Config.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

FileAnalysis analyze(const std::string &text, const Config &config = {}) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "test.mlir", config);
}

std::vector<const Diagnostic *> errors(const FileAnalysis &fa) {
  std::vector<const Diagnostic *> out;
  for (const Diagnostic &d : fa.diagnostics)
    if (d.severity == Severity::Error)
      out.push_back(&d);
  return out;
}

TEST(Sections, SplitLikeMlirOpt) {
  auto s = splitSections("a\n// -----\nb\n// -----\nc\n");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].firstLine, 2u);
  EXPECT_EQ(s[1].firstColumn, 9u);
  EXPECT_EQ(s[2].firstLine, 4u);
  std::vector<size_t> near;
  // A marker at the very end has nothing after it: a near miss.
  auto t = splitSections("a\n// -----", &near);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(near.size(), 1u);
}

TEST(Analyzer, ReportsEveryFailingOpNotOnlyTheFirst) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<3xf32>, %b: tensor<2xf32>, %c: tensor<1xf32>) -> tensor<3xf32> {
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %1 = tosa.sub %c, %c : (tensor<1xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<3xf32>
}
)");
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0]->range.begin.line, 3u);
  EXPECT_EQ(errs[0]->range.begin.column, 8u);
  EXPECT_EQ(errs[0]->message,
            "'tosa.add' op operands don't have broadcast-compatible shapes");
  EXPECT_EQ(errs[0]->source, DiagSource::Verifier);
  EXPECT_EQ(errs[1]->range.begin.line, 4u);
  // The op name is the range, like upstream.
  EXPECT_EQ(errs[1]->range.end.column, 16u);
  // MLIR's "see current operation" note is kept.
  ASSERT_FALSE(errs[0]->notes.empty());
  EXPECT_NE(errs[0]->notes[0].message.find("see current operation"),
            std::string::npos);
  ASSERT_EQ(fa.ops.size(), 2u);
  EXPECT_FALSE(fa.ops[0].ok());
  EXPECT_TRUE(fa.ops[0].verifierFailed);
}

TEST(Analyzer, SplitSectionsKeepFileLineNumbers) {
  auto fa = analyze(R"(func.func @ok() { return }
// -----
func.func @bad() {
  %0 = "test.x"() : () -> i32
  %1 = tosa.add %0 %0
}
// -----
func.func @fine(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)");
  ASSERT_EQ(fa.sections.size(), 3u);
  EXPECT_TRUE(fa.sections[0].parsed);
  EXPECT_FALSE(fa.sections[1].parsed);
  EXPECT_TRUE(fa.sections[2].parsed);
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]->source, DiagSource::Parser);
  EXPECT_EQ(errs[0]->range.begin.line, 5u);
  EXPECT_EQ(errs[0]->section, 1u);
  // The op of the third section is still analysed, at its file line.
  ASSERT_EQ(fa.ops.size(), 1u);
  EXPECT_EQ(fa.ops[0].range.begin.line, 9u);
  EXPECT_EQ(fa.ops[0].section, 2u);
}

TEST(Analyzer, UnregisteredBroadcastableOpsAreCheckedByUs) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<3xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "tfl.add"(%a, %b) : (tensor<3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "test.broadcastable"(%a) : (tensor<3xf32>) -> tensor<?xf32>
  return %0 : tensor<2x4xf32>
}
)");
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]->source, DiagSource::Broadcast);
  EXPECT_EQ(errs[0]->code, "incompatible-operands");
  EXPECT_EQ(errs[0]->range.begin.line, 3u);
  ASSERT_EQ(fa.ops.size(), 2u);
  EXPECT_TRUE(fa.ops[1].ok());
  EXPECT_TRUE(fa.ops[1].implicit.dims[0].refinable);
  bool sawRefinable = false;
  for (const Diagnostic &d : fa.diagnostics)
    sawRefinable |= d.code == "refinable-result" && d.severity == Severity::Info;
  EXPECT_TRUE(sawRefinable);

  // The informational findings can be switched off.
  Config quiet;
  quiet.info.refinable = false;
  auto fb = analyze(R"(
func.func @f(%a: tensor<3xf32>) -> tensor<?xf32> {
  %1 = "test.broadcastable"(%a) : (tensor<3xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
)",
                    quiet);
  for (const Diagnostic &d : fb.diagnostics)
    EXPECT_NE(d.code, "refinable-result");
}

TEST(Analyzer, TosaMulShiftIsNotADataOperand) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %a, %b, %s : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xi8>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)");
  EXPECT_FALSE(fa.hasErrors());
  ASSERT_EQ(fa.ops.size(), 1u);
  EXPECT_EQ(fa.ops[0].operandNumbers, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(fa.ops[0].ok());
  EXPECT_EQ(fa.ops[0].inferredShape(), (Shape{2, 3}));
}

TEST(Analyzer, ExplicitBroadcastOps) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<3xf32>, %init: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %2 = linalg.broadcast ins(%a : tensor<3xf32>) outs(%init : tensor<3x4xf32>) dimensions = [1]
  return %0 : tensor<2x3xf32>
}
)");
  ASSERT_EQ(fa.ops.size(), 3u);
  EXPECT_EQ(fa.ops[0].kind, OpKind::BroadcastInDim);
  EXPECT_TRUE(fa.ops[0].ok());
  EXPECT_FALSE(fa.ops[1].ok());
  EXPECT_EQ(fa.ops[2].kind, OpKind::LinalgBroadcast);
  EXPECT_TRUE(fa.ops[2].ok());
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]->range.begin.line, 4u);
}

TEST(Analyzer, ForeignLocationsLandOnTheOp) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32> loc("model.py":10:3)
  return %0 : tensor<3xf32>
}
)");
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]->range.begin.line, 3u);
  EXPECT_EQ(errs[0]->range.begin.column, 8u);
}

TEST(Analyzer, GarbageNeverCrashes) {
  for (const char *text :
       {"", "}", "%0 = ", "func.func @f(", "\"tosa.add\"(", "// -----",
        "// -----\n// -----\n", "module { module {", "tensor<<<<",
        "func.func @f() { ^bb0: ^bb1: }", "%x = \"t.x\"(%x) : (i32) -> i32"}) {
    FileAnalysis fa = analyze(text);
    (void)fa;
  }
  // Dominance errors are reported, not crashed on.
  auto fa = analyze(R"(
func.func @f() -> i32 {
  %0 = "test.use"(%1) : (i32) -> i32
  %1 = "test.def"() : () -> i32
  return %0 : i32
}
)");
  auto errs = errors(fa);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]->message, "operand #0 does not dominate this use");
}

} // namespace
