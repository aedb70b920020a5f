//===- AnalyzerTest.cpp - parsing, all-errors verification, op reports ----===//

#include "Analysis.h"
#include "Config.h"
#include "IR.h"
#include "MLIRShared.h"
#include "TestSupport.h"
#include "TextScan.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <filesystem>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <fstream>
#include <random>

#include <algorithm>

using namespace tosa_lsp;

namespace {

FileAnalysis analyze(const std::string &text, const Config &config = {}) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "test.mlir", config);
}

/// `count` functions @f0, @f1, ... of one broadcasting tosa.add each.
std::string addFunctions(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "func.func @f" + std::to_string(i) +
            "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
            "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
            "tensor<4x?xf32>\n  return %0 : tensor<4x?xf32>\n}\n";
  return text;
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

TEST(Sections, LinesAndColumnsWithOrWithoutALineTable) {
  // Offsets, first line and column, last line, as mlir-opt's splitting
  // gives them; the analyzer passes its line table, other callers none.
  struct Expected {
    size_t begin, end;
    unsigned firstLine, firstColumn, lastLine;
  };
  struct Case {
    std::string text;
    size_t nearMisses;
    std::vector<Expected> sections;
  };
  std::vector<Case> cases = {
      {"", 0, {{0, 0, 1, 1, 1}}},
      {"a\n// -----\nb\n// -----\nc\n",
       0,
       {{0, 2, 1, 1, 2}, {10, 13, 2, 9, 4}, {21, 24, 4, 9, 6}}},
      {"x // -----\ny\n\n// -----", 1, {{0, 2, 1, 1, 1}, {10, 22, 1, 11, 4}}},
      {"a\r\n// -----\r\nb\r\n", 0, {{0, 3, 1, 1, 2}, {11, 16, 2, 9, 4}}},
      {"a\n// ------\nb\n// -----0\nc\n// -----\n\n\nd",
       1,
       {{0, 2, 1, 1, 2}, {10, 26, 2, 9, 6}, {34, 38, 6, 9, 9}}},
  };
  for (const Case &c : cases) {
    LineIndex lines(c.text);
    const LineIndex *withTable = &lines, *without = nullptr;
    for (const LineIndex *table : {without, withTable}) {
      std::vector<size_t> near;
      std::vector<Section> got = splitSections(c.text, &near, table);
      EXPECT_EQ(near.size(), c.nearMisses) << c.text;
      ASSERT_EQ(got.size(), c.sections.size()) << c.text;
      for (size_t i = 0; i < got.size(); ++i) {
        const Expected &e = c.sections[i];
        EXPECT_EQ(got[i].index, i) << c.text;
        EXPECT_EQ(got[i].beginOffset, e.begin) << c.text << " " << i;
        EXPECT_EQ(got[i].endOffset, e.end) << c.text << " " << i;
        EXPECT_EQ(got[i].firstLine, e.firstLine) << c.text << " " << i;
        EXPECT_EQ(got[i].firstColumn, e.firstColumn) << c.text << " " << i;
        EXPECT_EQ(got[i].lastLine, e.lastLine) << c.text << " " << i;
      }
    }
  }
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
  EXPECT_TRUE(fa.ops[1].implicit().dims[0].refinable);
  bool sawRefinable = false;
  for (const Diagnostic &d : fa.diagnostics)
    sawRefinable |=
        d.code == "refinable-result" && d.severity == Severity::Info;
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
  ASSERT_EQ(fa.ops[0].operandTypes.size(), 2u); // the shift is not data
  EXPECT_EQ(fa.ops[0].operandTypes[1].str(), "tensor<1x3xf32>");
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

TEST(Analyzer, PackedInputsGiveTheSameAnalysesAsTheShapes) {
  // Each op keeps only its shapes, packed; the analyses computed from them
  // on demand must equal the ones computed from the shapes directly.
  auto fa = analyze(R"(
func.func @f(%a: tensor<3xf32>, %u: tensor<*xf32>, %b: tensor<2x1xf32>, %init: tensor<3x4xf32>) {
  %0 = "test.broadcastable"(%a, %u, %b) : (tensor<3xf32>, tensor<*xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %1 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %2 = linalg.broadcast ins(%a : tensor<3xf32>) outs(%init : tensor<3x4xf32>) dimensions = [1]
  %3 = tosa.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32>
  return
}
)");
  ASSERT_EQ(fa.ops.size(), 4u);
  const BroadcastAnalysis &i = fa.ops[0].implicit();
  BroadcastAnalysis direct = analyzeBroadcast(
      {Shape{3}, std::nullopt, Shape{2, 1}}, Shape{2, kDynamic});
  EXPECT_EQ(i.operands, direct.operands);
  EXPECT_EQ(i.declared, direct.declared);
  EXPECT_EQ(i.inferred, direct.inferred);
  EXPECT_EQ(i.ok(), direct.ok());
  // The same object on every call (computed once, shared).
  EXPECT_EQ(&fa.ops[0].implicit(), &i);
  FileAnalysis copy = fa;
  EXPECT_EQ(&copy.ops[0].implicit(), &i);

  ExplicitBroadcastAnalysis inDim =
      analyzeBroadcastInDim(Shape{3}, Shape{2, 3}, {1});
  // One slot per op holds its kind's analysis: asking an explicit op for
  // an implicit one first (nothing to tell) does not spoil it.
  EXPECT_TRUE(fa.ops[1].implicit().dims.empty());
  EXPECT_TRUE(fa.ops[0].explicitBcast().mappings.empty());
  EXPECT_EQ(&fa.ops[0].implicit(), &i);
  EXPECT_EQ(fa.ops[1].explicitBcast().target, inDim.target);
  EXPECT_EQ(fa.ops[1].explicitBcast().operand, inDim.operand);
  EXPECT_EQ(fa.ops[1].ok(), inDim.ok());
  ExplicitBroadcastAnalysis lb =
      analyzeLinalgBroadcast(Shape{3}, Shape{3, 4}, {1});
  EXPECT_EQ(fa.ops[2].explicitBcast().addedDims, lb.addedDims);
  EXPECT_EQ(fa.ops[2].explicitBcast().target, lb.target);
  // An unranked result and TOSA's equal-rank rule survive the packing.
  EXPECT_EQ(fa.ops[3].declaredShape(), std::nullopt);
  EXPECT_TRUE(fa.ops[3].tosa);
  EXPECT_EQ(fa.ops[3].operandShapes(),
            (std::vector<MaybeShape>{Shape{3}, Shape{3}}));
}

// Ops of one signature (kind, operand and result types, dimension list)
// share their inputs: one list of shapes and of types, not one an op.
// Another signature, or the same types under another rule (TOSA's equal
// ranks) or dimension list, has its own.
TEST(Analyzer, OpsOfOneSignatureShareTheirInputs) {
  auto fa = analyze(R"(
func.func @f(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>, %c: tensor<3xf32>) {
  %0 = tosa.add %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.sub %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %2 = "test.broadcastable"(%a, %b) : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %3 = tosa.add %b, %a : (tensor<1x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %4 = "stablehlo.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %5 = "stablehlo.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %6 = "stablehlo.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return
}
)");
  ASSERT_EQ(fa.ops.size(), 7u);
  auto shares = [&](size_t i, size_t j) {
    return fa.ops[i].packedShapes.begin() == fa.ops[j].packedShapes.begin() &&
           fa.ops[i].operandTypes.begin() == fa.ops[j].operandTypes.begin();
  };
  EXPECT_TRUE(shares(0, 1));
  EXPECT_FALSE(shares(0, 2)); // not TOSA: no equal-rank rule
  EXPECT_FALSE(shares(0, 3)); // the operands the other way round
  EXPECT_TRUE(shares(4, 5));
  EXPECT_FALSE(shares(4, 6)); // another dimension list
  // Shared, each still reads as its own.
  EXPECT_TRUE(fa.ops[0].tosa && !fa.ops[2].tosa);
  EXPECT_EQ(fa.ops[3].operandShapes(),
            (std::vector<MaybeShape>{Shape{1, 3}, Shape{2, 1}}));
  EXPECT_TRUE(fa.ops[6].violations().size() > 0);
  EXPECT_TRUE(fa.ops[5].ok());
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
  // Broken input: an error inside the text, no crash.
  for (const char *text :
       {"}", "%0 = ", "func.func @f(", "\"tosa.add\"(", "module { module {",
        "tensor<<<<", "func.func @f() { ^bb0: ^bb1: }"}) {
    SCOPED_TRACE(text);
    FileAnalysis fa = analyze(text);
    auto errs = errors(fa);
    ASSERT_FALSE(errs.empty());
    for (const Diagnostic *d : errs) {
      EXPECT_FALSE(d->message.empty());
      EXPECT_EQ(d->range.begin.line, 1u); // one-line inputs
      EXPECT_GE(d->range.begin.column, 1u);
    }
  }
  EXPECT_TRUE(analyze("").diagnostics.empty());
  // A bare separator: mlir-opt-22's own error, at the same place.
  for (const char *text : {"// -----", "// -----\n// -----\n"}) {
    SCOPED_TRACE(text);
    FileAnalysis fa = analyze(text);
    auto errs = errors(fa);
    ASSERT_FALSE(errs.empty());
    EXPECT_EQ(errs[0]->message, "expected operation name in quotes");
    EXPECT_EQ(errs[0]->range.begin.column, 7u);
  }
  // A value used in its own definition at module level: fine in a graph
  // region (no dominance), and no endless walk.
  EXPECT_TRUE(errors(analyze("%x = \"t.x\"(%x) : (i32) -> i32")).empty());
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

namespace {

const char *kTwoSections = R"(func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.abs %x : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @b(%x: tensor<1x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %x, %y : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)";

TEST(Index, ValuesBlocksAndSymbols) {
  auto fa = analyze(kTwoSections);
  ASSERT_EQ(fa.symbols.size(), 2u);
  EXPECT_EQ(fa.symbols[1].name, "b");
  EXPECT_EQ(fa.symbols[1].nameRange.begin.line, 6u);
  EXPECT_EQ(fa.symbols[1].nameRange.begin.column, 11u);
  const ValueInfo *sum = nullptr, *arg = nullptr;
  for (const ValueInfo &v : fa.values) {
    if (v.section == 1 && v.name == "%0")
      sum = &v;
    if (v.section == 1 && v.name == "%y")
      arg = &v;
  }
  ASSERT_TRUE(sum && arg);
  EXPECT_EQ(sum->type, "tensor<2x3xf32>");
  EXPECT_EQ(sum->def.begin.line, 7u);
  ASSERT_EQ(sum->uses.size(), 1u);
  EXPECT_EQ(sum->uses[0].begin.line, 8u);
  ASSERT_TRUE(fa.opOf(*sum));
  EXPECT_EQ(fa.opOf(*sum)->name, "tosa.add");
  EXPECT_EQ(arg->type, "tensor<2x3xf32>");
  EXPECT_NE(arg->origin.str().find("argument #1"), std::string::npos)
      << arg->origin;
  // The op's declared result type as written, for inlay hints and fixes.
  const OpReport &add = *fa.opOf(*sum);
  EXPECT_EQ(add.resultTypeRange.begin.line, 7u);
  EXPECT_EQ(add.resultTypeRange.begin.column, 64u);
  EXPECT_EQ(add.resultTypeRange.end.column, 79u);
  // Its result name's range (`%0`, line 7 columns 3-5).
  EXPECT_EQ(test::rng(add.resultNameRange), "7:3-7:5");
  // What quick fixes read of an op is in its report; spans are kept only
  // for ops without one (a function, its return), not twice.
  EXPECT_EQ(add.numOperands, 2u);
  EXPECT_FALSE(add.hasRegions);
  std::vector<std::string> spans;
  for (const OpSpan &o : fa.opSpans)
    spans.push_back(o.name.str() + "@" + std::to_string(o.section));
  // (In the parser's order: an op after those nested in it.)
  EXPECT_EQ(spans, (std::vector<std::string>{"func.return@0", "func.func@0",
                                             "func.return@1", "func.func@1"}));
  for (const OpSpan &o : fa.opSpans)
    if (o.name == "func.func")
      EXPECT_TRUE(o.hasRegions);
}

// The cache remembers a shared text by reference (no copy of the file),
// and reuses the unchanged section of the next version all the same.
TEST(Cache, KeepsTheSharedTextNotACopy) {
  Analyzer analyzer;
  AnalysisCache cache;
  Config config;
  auto text = std::make_shared<const std::string>(kTwoSections);
  auto first = analyzer.analyzeShared(text, "t.mlir", config, cache);
  EXPECT_EQ(text.use_count(), 2); // ours and the cache's
  std::string edited = std::string(kTwoSections);
  edited.insert(edited.find("  return %0 : tensor<2xf32>"), "  // one\n");
  auto next = std::make_shared<const std::string>(edited);
  auto second = analyzer.analyzeShared(next, "t.mlir", config, cache);
  EXPECT_EQ(text.use_count(), 1); // the cache moved on to the new one
  EXPECT_EQ(next.use_count(), 2);
  EXPECT_TRUE(second->sections[1].reused);
}

TEST(Cache, UnchangedSectionsAreReusedAndShifted) {
  Analyzer analyzer;
  AnalysisCache cache;
  Config config;
  auto first = analyzer.analyze(kTwoSections, "t.mlir", config, &cache);
  EXPECT_FALSE(first.sections[0].reused);
  // Two lines added to the first section: the second is reused, shifted.
  std::string edited = std::string(kTwoSections);
  edited.insert(edited.find("  return %0 : tensor<2xf32>"),
                "  // one\n  // two\n");
  auto second = analyzer.analyze(edited, "t.mlir", config, &cache);
  EXPECT_FALSE(second.sections[0].reused);
  EXPECT_TRUE(second.sections[1].reused);
  auto fresh = analyze(edited);
  ASSERT_EQ(second.ops.size(), fresh.ops.size());
  for (size_t i = 0; i < fresh.ops.size(); ++i) {
    EXPECT_EQ(second.ops[i].range.begin.line, fresh.ops[i].range.begin.line);
    EXPECT_EQ(second.ops[i].resultTypeRange.end.column,
              fresh.ops[i].resultTypeRange.end.column);
  }
  ASSERT_EQ(second.values.size(), fresh.values.size());
  for (size_t i = 0; i < fresh.values.size(); ++i)
    EXPECT_EQ(second.values[i].def.begin.line, fresh.values[i].def.begin.line);
}

TEST(Cache, BrokenSectionKeepsItsLastGoodAnalysisMarkedStale) {
  Analyzer analyzer;
  AnalysisCache cache;
  Config config;
  analyzer.analyze(kTwoSections, "t.mlir", config, &cache);
  std::string broken = std::string(kTwoSections);
  broken.replace(broken.find("%0 = tosa.add %x, %y"), 20,
                 "%0 = tosa.add %x,, %y");
  auto fa = analyzer.analyze(broken, "t.mlir", config, &cache);
  EXPECT_TRUE(fa.sections[0].parsed);
  EXPECT_FALSE(fa.sections[1].parsed);
  EXPECT_TRUE(fa.sections[1].stale);
  ASSERT_EQ(fa.ops.size(), 2u); // tosa.add from the last good version
  EXPECT_EQ(fa.ops[1].name, "tosa.add");
  EXPECT_EQ(fa.ops[1].section, 1u);
  EXPECT_TRUE(fa.hasErrors());
  // Still stale on the next broken edit; fresh again once it parses.
  auto again = analyzer.analyze(broken + "\n", "t.mlir", config, &cache);
  EXPECT_TRUE(again.sections[1].stale);
  auto fixed = analyzer.analyze(kTwoSections, "t.mlir", config, &cache);
  EXPECT_FALSE(fixed.sections[1].stale);
  EXPECT_TRUE(fixed.sections[1].parsed);
}

// A broken section's last good analysis follows its text: edits that move
// lines or columns inside the section move the stale items with them.
TEST(Cache, StaleItemsFollowTheirText) {
  using test::rng;
  Analyzer analyzer;
  AnalysisCache cache;
  Config config;
  std::string text = kTwoSections;
  (void)analyzer.analyze(text, "t.mlir", config, &cache);
  auto find = [](const FileAnalysis &fa, const std::string &name,
                 unsigned section) -> const ValueInfo * {
    for (const ValueInfo &v : fa.values)
      if (v.name == name && v.section == section)
        return &v;
    return nullptr;
  };
  // Same line: `,,` before %x (line 7, column 17) moves what follows.
  size_t at = text.find("%x, %y : (tensor<1x3xf32>");
  text.insert(at, ",,");
  FileAnalysis fa = analyzer.analyze(text, "t.mlir", config, &cache);
  ASSERT_TRUE(fa.sections[1].stale);
  ASSERT_EQ(fa.ops.size(), 2u);
  EXPECT_EQ(rng(fa.ops[1].range), "7:8-7:16");
  const ValueInfo *x = find(fa, "%x", 1);
  ASSERT_TRUE(x);
  ASSERT_EQ(x->uses.size(), 1u);
  EXPECT_EQ(rng(x->uses[0]), "7:19-7:21");
  // Two lines above the op, the first broken too: lines move down by two,
  // from the last version's places (already moved once).
  at = text.find("  %0 = tosa.add");
  text.insert(at, "  %z = tosa.abs %zz : (tensor<2xf32>) -> tensor<2xf32>\n"
                  "  // pad\n");
  fa = analyzer.analyze(text, "t.mlir", config, &cache);
  ASSERT_TRUE(fa.sections[1].stale);
  EXPECT_EQ(rng(fa.ops[1].range), "9:8-9:16");
  const ValueInfo *zero = find(fa, "%0", 1);
  ASSERT_TRUE(zero);
  EXPECT_EQ(rng(zero->def), "9:3-9:5");
  ASSERT_EQ(zero->uses.size(), 1u);
  EXPECT_EQ(rng(zero->uses[0]), "10:10-10:12");
  x = find(fa, "%x", 1);
  EXPECT_EQ(rng(x->uses[0]), "9:19-9:21");
  // What the edit replaced: the op's text gone, its items sit where the
  // edit ends (never on the text that took its place).
  size_t from = text.find("  %0 = tosa.add");
  size_t to = text.find('\n', from);
  text.replace(from, to - from, "  %0 = bogus");
  fa = analyzer.analyze(text, "t.mlir", config, &cache);
  ASSERT_TRUE(fa.sections[1].stale);
  EXPECT_EQ(rng(fa.ops[1].range), "9:13-9:13");
  EXPECT_EQ(rng(find(fa, "%0", 1)->def), "9:3-9:5");
  // The first section was never touched.
  EXPECT_EQ(rng(fa.ops[0].range), "2:8-2:16");
}

} // namespace

namespace {

TEST(Analyzer, VerifyingBesideTheReportsChangesNothing) {
  // Big enough for the second thread at the default threshold too, with
  // verifier errors, consumers of failed ops and broadcast errors.
  std::string text;
  for (int i = 0; i < 700; ++i) {
    std::string n = std::to_string(i);
    text += "func.func @f" + n +
            "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
            "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
            "tensor<4x?xf32>\n";
    if (i % 7 == 0) // verifier error, and a consumer of the failed op
      text += "  %1 = tosa.sub %0, %b : (tensor<4x?xf32>, tensor<4x1xf32>) "
              "-> tensor<4x?x1xf32>\n"
              "  %2 = tosa.mul %1, %1 : (tensor<4x?x1xf32>, "
              "tensor<4x?x1xf32>) -> tensor<4x?x1xf32>\n";
    if (i % 11 == 0) // a broadcast error: 5 is not 4
      text += "  %3 = tosa.maximum %0, %b : (tensor<4x?xf32>, "
              "tensor<4x1xf32>) -> tensor<5x?xf32>\n";
    text += "  return %0 : tensor<4x?xf32>\n}\n";
  }
  ASSERT_GE(text.size(), size_t(128) << 10);
  // Three paths: the verifier beside the reports (the section is at least
  // the threshold but under twice it), two halves on two threads, and one
  // thread.
  Analyzer parallel, halves, sequential;
  parallel.setParallelSectionBytes(text.size() - 1);
  halves.setParallelSectionBytes(0);
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis a = parallel.analyze(text, "big.mlir", Config());
  FileAnalysis h = halves.analyze(text, "big.mlir", Config());
  FileAnalysis b = sequential.analyze(text, "big.mlir", Config());
  std::vector<std::string> va = observe(a), vh = observe(h), vb = observe(b);
  EXPECT_EQ(firstDifference(va, vb), "");
  EXPECT_EQ(firstDifference(vh, vb), "");
  EXPECT_FALSE(a.sections[0].inParts);
  EXPECT_TRUE(h.sections[0].inParts);
  EXPECT_FALSE(b.sections[0].inParts);
  // The comparison is not vacuous: errors, failed ops and reports exist.
  EXPECT_GE(errors(a).size(), 700u / 7 + 700u / 11);
  EXPECT_GE(std::count_if(a.ops.begin(), a.ops.end(),
                          [](const OpReport &op) { return op.verifierFailed; }),
            700 / 7 + 1);
  EXPECT_GE(a.ops.size(), 700u);
  EXPECT_GE(a.values.size(), 700u);

  // Without the position index (`check`): on every path the same
  // diagnostics and op reports, and no index.
  std::vector<std::string> want;
  for (const std::string &line : vb)
    if (line.rfind("diag ", 0) == 0 || line.rfind("op ", 0) == 0)
      want.push_back(line);
  for (size_t bytes : {text.size() - 1, size_t(0), SIZE_MAX}) {
    Analyzer noIndex;
    noIndex.setParallelSectionBytes(bytes);
    noIndex.setCollectIndex(false);
    FileAnalysis n = noIndex.analyze(text, "big.mlir", Config());
    EXPECT_TRUE(n.values.empty() && n.blocks.empty() && n.symbols.empty() &&
                n.opSpans.empty())
        << bytes;
    EXPECT_EQ(firstDifference(observe(n), want), "") << bytes;
  }
}

/// Functions that call each other, or share a name, cannot be cut apart;
/// those that do not can, and an edit after such an analysis is still
/// re-analysed a function at a time with the same result as a full one.
TEST(Analyzer, HalvesOnlyWhereNothingCrossesTheCut) {
  auto fn = [](int i, const std::string &callee) {
    std::string n = std::to_string(i);
    std::string body =
        "func.func @f" + n +
        "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
        "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
        "tensor<4x?xf32>\n";
    if (!callee.empty())
      body += "  %1 = func.call @" + callee +
              "(%a, %b) : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
              "tensor<4x?xf32>\n";
    return body + "  return %0 : tensor<4x?xf32>\n}\n";
  };
  std::string apart, calling;
  for (int i = 0; i < 40; ++i) {
    apart += fn(i, "");
    calling += fn(i, i == 39 ? "f0" : ""); // the last calls the first
  }
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  FileAnalysis a = analyzer.analyze(apart, "a.mlir", Config());
  EXPECT_TRUE(a.sections[0].inParts);
  EXPECT_TRUE(errors(a).empty());
  FileAnalysis c = analyzer.analyze(calling, "c.mlir", Config());
  EXPECT_FALSE(c.sections[0].inParts);
  EXPECT_TRUE(errors(c).empty());
  // Cut into up to 8 parts: a call between neighbours near a quarter of
  // the file keeps them in one part (else the callee would be missing),
  // and the result is the whole section's.
  std::string neighbours;
  for (int i = 0; i < 40; ++i)
    neighbours += fn(i, i == 11 ? "f10" : i == 29 ? "f30" : "");
  FileAnalysis n = analyzer.analyze(neighbours, "n.mlir", Config());
  EXPECT_TRUE(n.sections[0].inParts);
  EXPECT_TRUE(errors(n).empty());
  Analyzer whole;
  whole.setParallelSectionBytes(SIZE_MAX);
  EXPECT_EQ(firstDifference(observe(n), observe(whole.analyze(
                                            neighbours, "n.mlir", Config()))),
            "");
  // A file wrapped in `module { ... }` has one top-level op.
  FileAnalysis m =
      analyzer.analyze("module {\n" + apart + "}\n", "m.mlir", Config());
  EXPECT_FALSE(m.sections[0].inParts);
  // Aliases and dialect resources are named across any cut.
  for (const std::string &around :
       {"!t = tensor<4x?xf32>\n" + apart, apart + "#a = 1 : i32\n",
        apart + "{-#\n  dialect_resources: {}\n#-}\n"}) {
    FileAnalysis x = analyzer.analyze(around, "x.mlir", Config());
    EXPECT_FALSE(x.sections[0].inParts) << around.substr(0, 30);
    EXPECT_TRUE(errors(x).empty()) << around.substr(0, 30);
  }

  // Edits in either half, after an analysis in halves.
  AnalysisCache cache;
  Analyzer incremental, fresh;
  incremental.setParallelSectionBytes(0);
  fresh.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis first = incremental.analyze(apart, "a.mlir", Config(), &cache);
  ASSERT_TRUE(first.sections[0].inParts);
  std::string text = apart;
  for (const char *name : {"@f3(", "@f35("}) {
    size_t at = text.find("tosa.add", text.find(name));
    text.replace(at, 8, "tosa.sub");
    text.insert(text.find('\n', at) + 1,
                "  %9 = tosa.exp %a : (tensor<1x?xf32>) -> tensor<1x?xf32>\n");
    FileAnalysis inc = incremental.analyze(text, "a.mlir", Config(), &cache);
    EXPECT_TRUE(inc.sections[0].incremental) << name;
    EXPECT_EQ(firstDifference(observe(inc),
                              observe(fresh.analyze(text, "a.mlir", Config()))),
              "")
        << name;
  }
}

} // namespace

/// A server's analyzer keeps each whole parse until after the publish
/// (setDeferIRDestruction): results are the same, whichever way the IR
/// goes — destroyed by destroyRetiredIR, by the next analysis, by
/// releaseMemory (before the contexts it lives in), or after a section
/// that does not parse.
TEST(Analyzer, DeferredIRDestructionChangesNoResult) {
  std::string text = addFunctions(40);
  const std::string versions[] = {
      text,                                      // in halves
      "module {\n" + text + "}\n",               // whole
      text + "func.func @broken(\n",             // does not parse
      text + "// -----\n" + text.substr(0, 400), // two sections
  };
  Analyzer deferred, fresh;
  deferred.setDeferIRDestruction(true);
  deferred.setParallelSectionBytes(0);
  fresh.setParallelSectionBytes(0);
  for (int round = 0; round < 3; ++round)
    for (const std::string &v : versions) {
      EXPECT_EQ(
          firstDifference(observe(deferred.analyze(v, "d.mlir", Config())),
                          observe(fresh.analyze(v, "d.mlir", Config()))),
          "");
      if (round == 1)
        deferred.destroyRetiredIR();
      if (round == 2)
        deferred.releaseMemory();
    }
}

namespace {
/// The nesting scan as first written, a byte at a time: the oracle for the
/// table-driven one.
std::optional<size_t> nestingOracle(std::string_view text, unsigned limit) {
  unsigned depth = 0, minusRun = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-') {
      if (++minusRun > limit)
        return i;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      minusRun = 0;
    if (c == '"') { // stringEnd has its own oracle (TextScanTest)
      i = detail::stringEnd(text, i);
      continue;
    }
    if (detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
      if (i == std::string_view::npos)
        break;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return i;
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      if (depth)
        --depth;
    }
  }
  return std::nullopt;
}
} // namespace

TEST(Nesting, TableDrivenScanAgreesWithTheByteLoop) {
  std::mt19937 rng(11);
  const char alphabet[] = "()[]{}<>-\"\\/\n \ta-/-";
  unsigned refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int i = 0, n = rng() % 48; i < n; ++i)
      text += alphabet[rng() % (sizeof(alphabet) - 1)];
    unsigned limit = 1 + rng() % 4;
    std::optional<size_t> want = nestingOracle(text, limit);
    EXPECT_EQ(findExcessiveNesting(text, limit), want)
        << "limit " << limit << ": " << text;
    refused += want.has_value();
  }
  // Both verdicts occur: the comparison is not vacuous.
  EXPECT_GT(refused, 1000u);
  EXPECT_LT(refused, 19000u);
}

TEST(InputGuards, ResultNumbersBeyondTheTextAreRefused) {
  // The slots a name costs are its highest number + 1; names add up.
  const size_t min = kMinResultSlots;
  EXPECT_EQ(findExcessiveResultNumber("%1#2 %1#0 %x#7", 0), std::nullopt);
  std::string big = "  \"foo.use\"(%1#" + std::to_string(min) + ")";
  EXPECT_EQ(findExcessiveResultNumber(big, 0),
            std::make_optional(std::make_pair(size_t(12), uint64_t(min))));
  // A text as big as the number may define that many results.
  EXPECT_EQ(findExcessiveResultNumber(big, 2 * min), std::nullopt);
  std::string spread;
  for (int i = 0; i < 3; ++i)
    spread += "%v" + std::to_string(i) + "#" + std::to_string(min / 2) + " ";
  EXPECT_TRUE(findExcessiveResultNumber(spread, 0).has_value());
  // The same name again costs nothing more.
  std::string again = "%v#" + std::to_string(min / 2) + " %v#" +
                      std::to_string(min / 2) + " %v#" +
                      std::to_string(min / 2);
  EXPECT_EQ(findExcessiveResultNumber(again, 0), std::nullopt);
  // In a string or a comment it is no reference; `#` alone is an alias.
  EXPECT_EQ(
      findExcessiveResultNumber(
          "\"%1#100000000\" // %2#100000000\n#map = affine_map<() -> ()>", 0),
      std::nullopt);
  EXPECT_EQ(findExcessiveResultNumber("%1#99999999999999999999999", 0)->second,
            UINT64_MAX / 16);
}

TEST(InputGuards, WideIntegerTypesAreCosted) {
  // Types, not names that look like them; widths up to 64 cost nothing.
  EXPECT_EQ(scanWideIntegers("%i100000 = foo.i200000 @i300000 i64 1 2").width,
            0u);
  WideIntegers w = scanWideIntegers(
      "%0 = arith.constant dense<[1, -2, 3]> : tensor<3xi1000>\n"
      "%1 = arith.constant 4 : si128 // i9999999\n\"i8888888\"");
  EXPECT_EQ(w.width, 1000u);
  EXPECT_EQ(w.offset, 49u); // the `i` of `3xi1000`
  EXPECT_EQ(w.numbers, 5u); // 1, -2, 3, the 3 of `3x`, 4 (not %0, %1)
  EXPECT_EQ(w.bytes, w.numbers * 128 * 2);
  EXPECT_EQ(scanWideIntegers("x : ui4096").offset, 4u);
  EXPECT_EQ(scanWideIntegers("x : i16777216").width, 0u); // MLIR refuses it
  // Refused when the estimate exceeds the text's share of the bound.
  std::string consts;
  for (int i = 0; i < 100; ++i)
    consts += "%c" + std::to_string(i) + " = arith.constant " +
              std::to_string(i) + " : i16000000\n";
  EXPECT_TRUE(findExcessiveIntegerWidth(consts, consts.size(), consts.size()));
  // One such number is fine alone, not as one of a thousand such sections.
  std::string one = "%c = arith.constant 1 : i16000000";
  EXPECT_FALSE(findExcessiveIntegerWidth(one, one.size(), one.size()));
  EXPECT_TRUE(findExcessiveIntegerWidth(one, one.size(), 1000 * one.size()));
  // Up to 256 bits nothing is refused, however dense the numbers.
  std::string dense = "dense<[1";
  for (int i = 0; i < 2000000; ++i)
    dense += ",1";
  dense += "]> : tensor<2000001xi256>";
  EXPECT_FALSE(findExcessiveIntegerWidth(dense, dense.size(), dense.size()));
}

/// The server warms its analyzer up before the first document: nothing of
/// the warm-up's function shows in what follows.
TEST(Analyzer, WarmUpLeavesNoTrace) {
  const std::string text =
      "func.func @w(%a: tensor<2x?xf32>, %b: tensor<1x4xf32>) -> "
      "tensor<2x3xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<2x?xf32>, tensor<1x4xf32>) -> "
      "tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n"
      "}\n";
  Analyzer warm, fresh;
  warm.warmUp();
  FileAnalysis a = warm.analyze(text, "w.mlir", Config());
  FileAnalysis b = fresh.analyze(text, "w.mlir", Config());
  EXPECT_EQ(firstDifference(observe(a), observe(b)), "");
  EXPECT_FALSE(errors(a).empty()); // 4 vs 3: not a vacuous comparison
}

// A type's text as ParsedSection::typeName gives it (ranked tensors
// without an encoding are written out here, the rest printed) is MLIR's
// own printing of it.
TEST(Analyzer, TypeNamesAreWhatMLIRPrints) {
  mlir::DialectRegistry registry;
  registerFileDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  detail::ParsedSection ps;
  const char *types[] = {
      "tensor<f32>",
      "tensor<1xf32>",
      "tensor<2x?x16xf32>",
      "tensor<?x?x?x?xi8>",
      "tensor<3x4xi1>",
      "tensor<9223372036854775807xbf16>",
      "tensor<0x5xf16>",
      "tensor<2xui32>",
      "tensor<2xsi4>",
      "tensor<2xindex>",
      "tensor<2xcomplex<f32>>",
      "tensor<2xf8E4M3FN>",
      "tensor<2x!quant.uniform<i8:f32, 1.000000e-01>>",
      "tensor<2xvector<4xf32>>",
      "tensor<2x3xf32, \"enc\">",
      "tensor<*xf32>",
      "vector<4x[8]xf32>",
      "memref<2x?xf32, strided<[?, 1], offset: ?>>",
      "(tensor<2xf32>) -> tensor<?xi32>",
      "i32",
  };
  for (const char *spelled : types) {
    mlir::Type t = mlir::parseType(spelled, &ctx);
    ASSERT_TRUE(t) << spelled;
    std::string printed;
    llvm::raw_string_ostream os(printed);
    t.print(os);
    // Twice: from the cache the second time.
    EXPECT_EQ(ps.typeName(t).str(), printed) << spelled;
    EXPECT_EQ(ps.typeName(t).str(), printed) << spelled;
  }
}

// The parser reads a section that ends where the file ends from the file's
// own text (its terminating null is the lexer's); any other part is copied
// and terminated.
TEST(Analyzer, ParserBufferViewsTheFileEndAndCopiesTheRest) {
  std::string text = "func.func @a() {\n  return\n}\n// -----\n"
                     "func.func @b() {\n  return\n}\n";
  std::string_view whole(text);
  auto all = detail::parserBuffer(whole, text, "t.mlir");
  EXPECT_EQ(all->getBufferStart(), text.data());
  EXPECT_EQ(all->getBufferSize(), text.size());
  auto tail = detail::parserBuffer(whole.substr(37), text, "t.mlir");
  EXPECT_EQ(tail->getBufferStart(), text.data() + 37);
  auto head = detail::parserBuffer(whole.substr(0, 28), text, "t.mlir");
  EXPECT_NE(head->getBufferStart(), text.data());
  EXPECT_EQ(head->getBuffer().str(), text.substr(0, 28));
  EXPECT_EQ(*head->getBufferEnd(), '\0');
  // Both parse as before.
  FileAnalysis fa = analyzeText(text);
  EXPECT_FALSE(fa.hasErrors());
  EXPECT_EQ(fa.sections.size(), 2u);
}

namespace {

/// One function of ~`n` lines: constants at the top used at the end, a
/// chain with dynamic sizes and size-1 broadcasts, and whatever `extra`
/// puts at line `at` (0-based op number).
std::string oneFunction(int n, const std::map<int, std::string> &extra = {},
                        const std::string &header =
                            "func.func @main(%a: tensor<4x?xf32>, %b: "
                            "tensor<1x?xf32>) -> tensor<4x?xf32> {\n") {
  std::string text = header;
  text += "  %c = \"tosa.const\"() <{values = dense<1.0> : tensor<1x1xf32>}> "
          ": () -> tensor<1x1xf32>\n";
  text += "  %v0 = tosa.add %a, %b : (tensor<4x?xf32>, tensor<1x?xf32>) -> "
          "tensor<4x?xf32>\n";
  for (int i = 1; i < n; ++i) {
    if (auto it = extra.find(i); it != extra.end())
      text += it->second;
    std::string v = "%v" + std::to_string(i), p = "%v" + std::to_string(i - 1);
    text += i % 3 ? "  " + v + " = tosa.maximum " + p +
                        ", %b : (tensor<4x?xf32>, "
                        "tensor<1x?xf32>) -> tensor<4x?xf32>\n"
                  : "  " + v + " = tosa.abs " + p +
                        " : (tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  }
  text += "  %r = tosa.sub %v" + std::to_string(n - 1) +
          ", %v1 : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  return text + "  return %r : tensor<4x?xf32>\n}\n";
}

/// `text` analysed with its one function cut in two (if it can be) and
/// whole: everything observable is equal. Returns whether it was cut.
bool cutEqualsWhole(const std::string &text) {
  Analyzer cut, whole;
  cut.setParallelSectionBytes(0);
  whole.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis c = cut.analyze(text, "one.mlir", Config());
  FileAnalysis w = whole.analyze(text, "one.mlir", Config());
  EXPECT_EQ(firstDifference(observe(c), observe(w)), "");
  EXPECT_FALSE(w.sections[0].inParts);
  // The analyzer is usable after either outcome.
  FileAnalysis again = cut.analyze(text, "one.mlir", Config());
  EXPECT_EQ(firstDifference(observe(again), observe(w)), "");
  return c.sections[0].inParts;
}

/// `text` analysed by `analyzer` after its previous versions (`cache`):
/// everything observable equals a fresh whole analysis (`what` says which
/// version failed).
FileAnalysis analyzeAsEdited(Analyzer &analyzer, AnalysisCache &cache,
                             const std::string &text, const std::string &what) {
  FileAnalysis fa = analyzer.analyze(text, "one.mlir", Config(), &cache);
  Analyzer whole;
  whole.setParallelSectionBytes(SIZE_MAX);
  EXPECT_EQ(firstDifference(observe(fa),
                            observe(whole.analyze(text, "one.mlir", Config()))),
            "")
      << what;
  return fa;
}

std::string mul(const std::string &name, const std::string &lhs,
                const std::string &result) {
  return "  " + name + " = tosa.maximum " + lhs +
         ", %c : (tensor<4x?xf32>, tensor<1x1xf32>) -> " + result + "\n";
}

TEST(Analyzer, OneFunctionCutInTwoEqualsTheWhole) {
  // Findings on both sides, verifier errors (and a consumer of a failed
  // op) in the first part: cut, and the same as the whole.
  std::string text =
      oneFunction(60, {{5, mul("%e1", "%v4", "tensor<4x?x1xf32>") +
                               "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                               "tensor<4x?x1xf32>\n"},
                       {10, "  %bad = tosa.add %v9, %b : (tensor<4x?xf32>, "
                            "tensor<1x?xf32>) -> tensor<5x?xf32>\n"}});
  EXPECT_TRUE(cutEqualsWhole(text));
  FileAnalysis fa = analyzeText(text);
  EXPECT_EQ(errors(fa).size(), 2u);
  EXPECT_GT(fa.ops.size(), 60u); // reports on both sides

  // In a module with attributes, locations and trailing location aliases.
  std::string wrapped =
      "module attributes {tosa.x = \"a{\"} {\n" +
      oneFunction(60, {{40, "  %l = tosa.abs %v1 : (tensor<4x?xf32>) -> "
                            "tensor<4x?xf32> loc(#loc1)\n"}}) +
      "} loc(#loc)\n#loc = loc(\"m.py\":1:1)\n#loc1 = loc(\"m.py\":2:1)\n";
  EXPECT_TRUE(cutEqualsWhole(wrapped));
}

// Verifier errors in either part: MLIR prints their ops with the values
// numbered within the part; renamed as the whole function numbers them
// (top-level results after the first part's, nested ones after the whole
// top level's, arguments).
TEST(Analyzer, OneFunctionCutTakesVerifierErrorsInBothParts) {
  auto replaced = [](std::string text, const std::string &from,
                     const std::string &to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    return text;
  };
  std::string condIf =
      "  %k = tosa.cond_if %cond (%in = %v4) : tensor<i1> "
      "(tensor<4x?xf32>) -> tensor<4x?xf32> {\n"
      "  ^bb0(%t: tensor<4x?xf32>):\n"
      "    %t1 = tosa.abs %t : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
      "    %t2 = tosa.abs %t1 : (tensor<4x?xf32>) -> tensor<3x?xf32>\n"
      "    tosa.yield %t1 : tensor<4x?xf32>\n"
      "  } else {\n"
      "  ^bb0(%f: tensor<4x?xf32>):\n"
      "    tosa.yield %f : tensor<4x?xf32>\n"
      "  }\n";
  auto withCond = [&](std::string text) {
    return replaced(text, "%b: tensor<1x?xf32>)",
                    "%b: tensor<1x?xf32>, %cond: tensor<i1>)");
  };
  // In the second part: on its own values, and on the function's argument.
  std::string late = "  %y = tosa.abs %v49 : (tensor<4x?xf32>) -> "
                     "tensor<5x?xf32>\n"
                     "  %z = tosa.abs %a : (tensor<4x?xf32>) -> "
                     "tensor<2x?xf32>\n";
  EXPECT_TRUE(cutEqualsWhole(oneFunction(60, {{50, late}})));
  // Inside a region (nested values are numbered after the whole body's
  // top level), in either part.
  std::string lateIf =
      replaced(replaced(replaced(condIf, "%k", "%k2"), "%v4", "%v49"),
               "tensor<3x?xf32>", "tensor<7x?xf32>");
  EXPECT_TRUE(cutEqualsWhole(withCond(oneFunction(60, {{50, lateIf}}))));
  std::string early = "  %w = tosa.abs %v4 : (tensor<4x?xf32>) -> "
                      "tensor<6x?xf32>\n";
  EXPECT_TRUE(cutEqualsWhole(withCond(oneFunction(60, {{5, early + condIf}}))));
  // In both: the whole function's verification skips what an error of the
  // first part feeds, which the second part cannot tell.
  EXPECT_FALSE(cutEqualsWhole(
      withCond(oneFunction(60, {{5, early + condIf}, {50, late + lateIf}}))));
  FileAnalysis fa = analyzeText(oneFunction(60, {{50, late}}));
  ASSERT_EQ(errors(fa).size(), 2u);
}

// Where the two parts could differ from the whole, the section is analysed
// whole: the result is always the whole's.
TEST(Analyzer, OneFunctionCutFallsBackWhereItCouldDiffer) {
  // An error in the second part on an op that reads a value of the first:
  // an argument there, which a verifier may see otherwise than the
  // defining op (a `tosa.const_shape`).
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{50, mul("%e", "%v49", "tensor<4x?x1xf32>")}})));
  // A value of the first part used before its definition in the second.
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{5, mul("%f", "%late", "tensor<4x?xf32>")},
                       {50, mul("%late", "%v49", "tensor<4x?xf32>")}})));
  // A value defined in a region of the first part, used in the second.
  EXPECT_FALSE(cutEqualsWhole(oneFunction(
      60, {{5, "  %i = scf.execute_region -> tensor<4x?xf32> {\n"
               "  %in = tosa.abs %v4 : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
               "    scf.yield %in : tensor<4x?xf32>\n  }\n"},
           {50, mul("%u", "%in", "tensor<4x?xf32>")}})));
  // The cut in a second block: an argument would dominate the first.
  std::string blocks = oneFunction(60, {{10, "  cf.br ^bb1\n^bb1:\n"}});
  EXPECT_FALSE(cutEqualsWhole(blocks));
  // Two functions of the same signature that call each other (not cut
  // into halves between them): the text looks like one.
  std::string first = oneFunction(30);
  first.insert(first.find("  return"),
               "  %call = func.call @g(%a, %b) : (tensor<4x?xf32>, "
               "tensor<1x?xf32>) -> tensor<4x?xf32>\n");
  std::string second = oneFunction(30);
  second.replace(second.find("@main"), 5, "@g");
  second.insert(second.find("  return"),
                "  %call = func.call @main(%a, %b) : (tensor<4x?xf32>, "
                "tensor<1x?xf32>) -> tensor<4x?xf32>\n");
  EXPECT_FALSE(cutEqualsWhole(first + second));
  // A group's result used across the cut.
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{5, "  %g:2 = \"foo.two\"(%v4) : (tensor<4x?xf32>) -> "
                           "(tensor<4x?xf32>, tensor<4x?xf32>)\n"},
                       {50, mul("%h", "%g#1", "tensor<4x?xf32>")}})));
  // A parse error anywhere.
  EXPECT_FALSE(cutEqualsWhole(oneFunction(60, {{50, "  %p = tosa.abs\n"}})));
}

} // namespace

namespace {

// While an edit leaves errors where the cut cannot take them, the next
// versions are not cut (it would fail and be done again whole) until one
// has no errors; every version equals a fresh whole analysis.
TEST(Analyzer, OneFunctionNotCutAgainWhileItsErrorsLast) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  std::string good = oneFunction(60);
  std::string late =
      oneFunction(60, {{50, mul("%e", "%v49", "tensor<4x?x1xf32>")}});
  std::string early =
      oneFunction(60, {{5, mul("%e", "%v4", "tensor<4x?x1xf32>")}});
  // Each version with a comment line more: no text is the previous one's.
  std::vector<std::pair<std::string, bool>> versions = {
      {good, true},  {late, false}, {early, false},
      {good, false}, {good, true},  {early, true}};
  std::string comments;
  for (auto &[text, cut] : versions) {
    comments += "// edit\n";
    std::string version = std::to_string(comments.size() / 8);
    FileAnalysis fa =
        analyzeAsEdited(analyzer, cache, comments + text, version);
    EXPECT_EQ(fa.sections[0].inParts, cut) << version;
  }
}

} // namespace

namespace {

/// `text` with `from` (first occurrence at or after `after`) replaced.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to, size_t after = 0) {
  size_t at = text.find(from, after);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

// A function analysed in parts and edited in its second half keeps what
// lies before the edit and analyses the rest; every version equals a
// fresh whole analysis, whichever way it went.
TEST(Analyzer, OneFunctionEditedInItsSecondHalfKeepsTheFirst) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  // Findings and a verifier error (with a consumer) in the first half.
  std::string text = oneFunction(
      200, {{10, mul("%e1", "%v9", "tensor<4x?x1xf32>") +
                     "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                     "tensor<4x?x1xf32>\n"}});
  auto lineOf = [&](int op) {
    return text.find("  %v" + std::to_string(op) + " =");
  };
  struct Step {
    const char *what;
    std::string text;
    bool tail, inParts;
  };
  std::vector<Step> steps;
  auto step = [&](const char *what, std::string next, bool tail,
                  bool inParts = true) {
    text = std::move(next);
    steps.push_back({what, text, tail, inParts});
  };
  step("the first version", text, false);
  step("an op renamed in the second half",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(150)), true);
  std::string added = mul("%n", "%v20", "tensor<4x?xf32>") +
                      "  %n2 = tosa.add %n, %v30 : (tensor<4x?xf32>, "
                      "tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  step("lines added, using values of the first half",
       replaced(text, "  %v160 =", added + "  %v160 ="), true);
  step("and removed", replaced(text, added, ""), true);
  // Without the error in the first half: after a version analysed whole
  // with errors, the next is cut again only if it has none.
  step("the error in the first half removed",
       replaced(text,
                mul("%e1", "%v9", "tensor<4x?x1xf32>") +
                    "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                    "tensor<4x?x1xf32>\n",
                ""),
       false);
  // On an op that reads a value of the first half (`%c`): analysed whole.
  step("a verifier error in the second half",
       replaced(text, "  %v180 =",
                mul("%x", "%v179", "tensor<4x?x1xf32>") + "  %v180 ="),
       false, false);
  step("fixed", replaced(text, mul("%x", "%v179", "tensor<4x?x1xf32>"), ""),
       false, true);
  step("an edit after that",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(170)), true);
  // On an op that reads values of the second half only: the tail takes it,
  // its values named as in the whole function.
  std::string late = "  %y = tosa.abs %v179 : (tensor<4x?xf32>) -> "
                     "tensor<5x?xf32>\n";
  step("a verifier error in the tail",
       replaced(text, "  %v180 =", late + "  %v180 ="), true);
  step("an edit after it", replaced(text, "tosa.abs", "tosa.exp", lineOf(185)),
       true);
  step("fixed again", replaced(text, late, ""), true);
  step("an edit after an analysis whole",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(170)), true);
  step("and the next", replaced(text, "tosa.abs", "tosa.exp", lineOf(170)),
       true);
  step("an edit in the first half",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(30)), false);
  step("the last line of the body",
       replaced(text, "  return %r", "  return %v199"), true);
  step("a comment after the function", text + "// the end\n", true);
  // Twice: the second time with fresh contexts between the versions, as
  // the server has when idle (releaseIdleMemory): nothing kept from one
  // version to the next may refer to what a context uniqued.
  for (bool release : {false, true}) {
    AnalysisCache again;
    for (const Step &st : steps) {
      FileAnalysis fa =
          analyzeAsEdited(analyzer, release ? again : cache, st.text, st.what);
      EXPECT_EQ(fa.sections[0].tail, st.tail) << st.what;
      EXPECT_EQ(fa.sections[0].inParts, st.inParts) << st.what;
      if (release)
        analyzer.releaseIdleMemory(/*forgetAll=*/true);
    }
  }
}

#ifdef __GLIBC__
/// Bytes the process' malloc has handed out (every arena, and the chunks
/// it mapped for big requests such as a uniquer's slabs).
size_t mallocInUse() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// An analysis' IR is gone once its results are copied out, but its
// contexts kept every location, type and attribute they uniqued (~100
// bytes an op: ~30 MiB after a 200k-line open) until the server, idle,
// has them forgotten.
TEST(Analyzer, IdleReleaseForgetsWhatTheContextsUniqued) {
  const int ops = 4000;
  std::string text = oneFunction(ops);
  ASSERT_GE(text.size(), kForgetUniquedBytes); // enough to be worth it
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0); // both contexts: in two parts
  FileAnalysis before = analyzer.analyze(text, "one.mlir", Config());
  ASSERT_TRUE(before.sections[0].inParts);
  size_t kept = mallocInUse();
  analyzer.releaseIdleMemory();
  size_t after = mallocInUse();
  EXPECT_GT(kept, after + size_t(ops) * 50)
      << "kept " << kept << " bytes, " << after << " after the release";
  // The fresh contexts analyse as the old ones did.
  EXPECT_EQ(
      firstDifference(observe(analyzer.analyze(text, "one.mlir", Config())),
                      observe(before)),
      "");
}
#endif

} // namespace

namespace {

// Random small edits in the second half of a function analysed in parts
// (lines and columns moved, ops and types changed, bytes removed): whatever the
// incremental analysis does with each, it equals a fresh whole analysis
// of the edited text wherever that parses (where it does not, the last
// good results are kept, stale, by design).
TEST(Analyzer, OneFunctionRandomEditsInItsSecondHalfEqualTheWhole) {
  std::string base = oneFunction(
      160,
      {{20, "  %g:2 = \"foo.two\"(%v19) : (tensor<4x?xf32>) -> "
            "(tensor<4x?xf32>, tensor<4x?xf32>)\n"},
       {40, "  %i = scf.execute_region -> tensor<4x?xf32> {\n"
            "    %in = tosa.abs %v39 : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
            "    scf.yield %in : tensor<4x?xf32>\n  }\n"},
       {50, mul("%m", "%g#1", "tensor<4x?xf32>") +
                "  %k = tosa.add %i, %m : (tensor<4x?xf32>, "
                "tensor<4x?xf32>) -> tensor<4x?xf32>\n"},
       {130, mul("%n", "%k", "tensor<4x?xf32>")}});
  std::mt19937 rng(20261125);
  unsigned compared = 0, tails = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string text = base;
    size_t at = text.size() / 2 + std::uniform_int_distribution<size_t>(
                                      0, text.size() / 2 - 1)(rng);
    size_t lineBegin = text.rfind('\n', at - 1) + 1;
    auto replaceNext = [&](const std::string &from, const std::string &to) {
      size_t k = text.find(from, lineBegin);
      if (k != std::string::npos)
        text.replace(k, from.size(), to);
    };
    switch (trial % 6) {
    case 0: // columns move on one line
      text.insert(lineBegin, " ");
      break;
    case 1: // lines move below
      text.insert(lineBegin, "// an edit\n");
      break;
    case 2: // an operand on a line of its own
      replaceNext(", %", ",\n      %");
      break;
    case 3: // another op
      replaceNext("tosa.maximum", "tosa.minimum");
      break;
    case 4: // a result more static: other findings, or an error
      replaceNext("-> tensor<4x?xf32>", "-> tensor<4x4xf32>");
      break;
    default: // anything: mostly a parse error
      text.erase(at, 1 + rng() % 3);
      break;
    }
    Analyzer analyzer;
    analyzer.setParallelSectionBytes(0);
    AnalysisCache cache;
    ASSERT_TRUE(analyzer.analyze(base, "one.mlir", Config(), &cache)
                    .sections[0]
                    .inParts);
    FileAnalysis fa = analyzer.analyze(text, "one.mlir", Config(), &cache);
    Analyzer whole;
    whole.setParallelSectionBytes(SIZE_MAX);
    FileAnalysis w = whole.analyze(text, "one.mlir", Config());
    tails += fa.sections[0].tail;
    if (!w.sections[0].parsed)
      continue;
    ++compared;
    EXPECT_EQ(firstDifference(observe(fa), observe(w)), "")
        << "trial " << trial << ": " << text.substr(lineBegin, 120);
  }
  // Not vacuous: most edits parse, and some were analysed from the edit on.
  EXPECT_GE(compared, 35u);
  EXPECT_GE(tails, 30u);
}

} // namespace

namespace {

// An error in the first part does not keep a function from being cut:
// after a version analysed whole for an error after the cut, the next
// without one is cut again (it used to wait for a file without errors).
TEST(Analyzer, OneFunctionCutAgainWithErrorsInTheFirstPart) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  std::string early = mul("%e1", "%v9", "tensor<4x?x1xf32>");
  std::string late = mul("%x", "%v179", "tensor<4x?x1xf32>");
  std::string base = oneFunction(200, {{10, early}});
  std::string withLate = replaced(base, "  %v180 =", late + "  %v180 =");
  struct Step {
    const char *what;
    std::string text;
    bool inParts;
  };
  std::vector<Step> steps = {
      {"an error in the first part", base, true},
      // On an op that reads `%c`, a value of the first part.
      {"and one after the cut", withLate, false},
      {"that one fixed", base, true},
      {"the next edit",
       replaced(base, "tosa.abs", "tosa.exp", base.find("  %v150 =")), true},
  };
  for (const Step &st : steps) {
    FileAnalysis fa = analyzeAsEdited(analyzer, cache, st.text, st.what);
    EXPECT_EQ(fa.sections[0].inParts, st.inParts) << st.what;
    EXPECT_FALSE(errors(fa).empty()) << st.what;
  }
}

} // namespace

namespace {

// Every file of the corpus analysed with its sections cut wherever they
// can be (halves, one function in two parts) equals its whole analysis;
// and so does one edited in the second half of such a function.
TEST(Analyzer, CorpusCutEqualsWhole) {
  namespace fs = std::filesystem;
  fs::path corpus = TOSA_LSP_CORPUS_DIR;
  if (!fs::is_directory(corpus))
    GTEST_SKIP() << "no corpus at " << corpus;
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(corpus))
    if (e.is_regular_file() && e.path().extension() == ".mlir")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 10u);
  unsigned cutSections = 0, oneFunctionCuts = 0, tails = 0, splitFiles = 0;
  for (const fs::path &f : files) {
    // Fresh ones: a lenient dialect loaded for one file turns the cuts off
    // for the analyzer's next files.
    Analyzer cut, whole;
    cut.setParallelSectionBytes(0);
    whole.setParallelSectionBytes(SIZE_MAX);
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    FileAnalysis c = cut.analyze(text, f.string(), Config());
    FileAnalysis w = whole.analyze(text, f.string(), Config());
    EXPECT_EQ(firstDifference(observe(c), observe(w)), "") << f;
    if (w.sections.size() >= 2) {
      // Every section small: the sections on two threads.
      size_t biggest = 0;
      for (const Section &s : w.sections)
        biggest = std::max(biggest, s.endOffset - s.beginOffset);
      Analyzer small;
      small.setParallelSectionBytes(biggest + 1);
      EXPECT_EQ(
          firstDifference(observe(small.analyze(text, f.string(), Config())),
                          observe(w)),
          "")
          << f << " (small sections on two threads)";
      ++splitFiles;
    }
    std::optional<size_t> edit;
    for (const Section &s : c.sections) {
      if (!s.inParts)
        continue;
      ++cutSections;
      // One function cut in two, or halves of several?
      bool one = llvm::count_if(c.symbols, [&](const SymbolInfo &sym) {
                   return sym.section == s.index;
                 }) == 1;
      oneFunctionCuts += one;
      // A line at three quarters of the first such function.
      if (one && !edit) {
        size_t at = text.find('\n', (s.beginOffset + 3 * s.endOffset) / 4);
        if (at < s.endOffset)
          edit = at + 1;
      }
    }
    if (!edit)
      continue;
    // Edited in its second half: what an incremental analysis gives
    // (keeping the first part where it can) equals the edited text's whole
    // analysis.
    Analyzer incremental;
    incremental.setParallelSectionBytes(0);
    AnalysisCache cache;
    (void)incremental.analyze(text, f.string(), Config(), &cache);
    std::string edited = text;
    edited.insert(*edit, "// an edit\n");
    FileAnalysis e = incremental.analyze(edited, f.string(), Config(), &cache);
    EXPECT_EQ(firstDifference(observe(e), observe(whole.analyze(
                                              edited, f.string(), Config()))),
              "")
        << f << " edited";
    tails +=
        llvm::count_if(e.sections, [](const Section &s) { return s.tail; });
  }
  // Not vacuous: sections of both kinds were analysed in parts, and edited
  // functions analysed from the edit on.
  EXPECT_GE(cutSections, 40u);
  EXPECT_GE(oneFunctionCuts, 20u);
  EXPECT_GE(tails, 15u);
  EXPECT_GE(splitFiles, 10u);
}

} // namespace

namespace {

/// A split file (`// -----`) whose sections are every kind of part:
/// clean, verifier errors and their consumers, a broadcast error, a parse
/// error, a custom parser failing silently, a lenient dialect, aliases, a
/// module with attributes, an unregistered op; `copies` times over.
std::string splitFile(int copies) {
  static const char *const kParts[] = {
      "func.func @f(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> "
      "tensor<4x?xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
      "tensor<4x?xf32>\n"
      "  return %0 : tensor<4x?xf32>\n}\n",
      "func.func @f(%a: tensor<4x?xf32>, %b: tensor<4x1xf32>) -> "
      "tensor<4x?xf32> {\n"
      "  %1 = tosa.sub %a, %b : (tensor<4x?xf32>, tensor<4x1xf32>) -> "
      "tensor<4x?x1xf32>\n"
      "  %2 = tosa.mul %1, %1 : (tensor<4x?x1xf32>, tensor<4x?x1xf32>) -> "
      "tensor<4x?x1xf32>\n"
      "  %3 = tosa.maximum %a, %b : (tensor<4x?xf32>, tensor<4x1xf32>) -> "
      "tensor<5x?xf32>\n"
      "  return %a : tensor<4x?xf32>\n}\n",
      "func.func @broken(%a: tensor<2xf32>) {\n  %0 = tosa.abs %a :\n",
      "func.func @c(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = tosa.clamp %a {max_val = 6.0 : f32, min_val = 0.0 : f32, } : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n",
      "func.func @l(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = util.optimization_barrier %a : tensor<2xf32>\n"
      "  check.expect_almost_eq(%0, %a) : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n",
      "!t = tensor<2xf32>\n#m = {x = 1 : i32}\n"
      "func.func @g(%a: !t) -> !t attributes {m = #m} {\n"
      "  %0 = tosa.abs %a : (!t) -> !t\n  return %0 : !t\n}\n",
      "module attributes {foo.bar = 1 : i32} {\n"
      "  func.func @h(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"mine.op\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    %1 = tosa.add %0, %a : (tensor<2xf32>, tensor<2xf32>) -> "
      "tensor<?xf32>\n"
      "    return %0 : tensor<2xf32>\n  }\n}\n",
  };
  std::string text;
  for (int i = 0; i < copies; ++i)
    for (const char *part : kParts)
      text += (text.empty() ? "" : "// -----\n") + std::string(part);
  return text;
}

/// An analyzer that takes every section of `text` (at least two) on two
/// threads (see analyzeSmallSections).
void takeAllSmall(Analyzer &a, const FileAnalysis &whole) {
  size_t biggest = 0;
  for (const Section &s : whole.sections)
    biggest = std::max(biggest, s.endOffset - s.beginOffset);
  a.setParallelSectionBytes(biggest + 1);
}

TEST(Analyzer, SmallSectionsOnTwoThreadsEqualOneThread) {
  std::string text = splitFile(8);
  Analyzer sequential, parallel;
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis one = sequential.analyze(text, "s.mlir", Config());
  ASSERT_EQ(one.sections.size(), 56u);
  takeAllSmall(parallel, one);
  parallel.setDeferIRDestruction(true);
  // Again and again (the threads take sections in another order each time;
  // the contexts keep what they loaded, lenient dialects included), the
  // retired IR destroyed one way or another in between.
  for (int round = 0; round < 4; ++round) {
    EXPECT_EQ(
        firstDifference(observe(parallel.analyze(text, "s.mlir", Config())),
                        observe(one)),
        "")
        << "round " << round;
    if (round == 1)
      parallel.destroyRetiredIR();
    if (round == 2)
      parallel.releaseMemory();
  }
  // The helper's context, dropped after the small sections, is made again
  // for a section in parts (an analyzer without lenient dialects: they
  // turn the cuts off).
  std::string small = addFunctions(3), big = addFunctions(40);
  for (int i = 0; i < 6; ++i)
    small += "// -----\n" + addFunctions(3);
  Analyzer again;
  again.setParallelSectionBytes(addFunctions(3).size() + 10);
  for (const std::string *t : {&small, &big, &small, &big}) {
    FileAnalysis fa = again.analyze(*t, "s.mlir", Config());
    EXPECT_EQ(fa.sections[0].inParts, t == &big);
    EXPECT_EQ(firstDifference(observe(fa), observe(sequential.analyze(
                                               *t, "s.mlir", Config()))),
              "");
  }
  // Not vacuous: each kind of part gave what it gives.
  auto has = [&](llvm::StringRef needle) {
    return llvm::count_if(one.diagnostics, [&](const Diagnostic &d) {
      return llvm::StringRef(d.message).contains(needle);
    });
  };
  EXPECT_EQ(has("did not parse and MLIR's parser gave no reason"), 8);
  EXPECT_EQ(has("parsed leniently"), 16);
  EXPECT_EQ(errors(one).size(), 8u * 4);
  EXPECT_EQ(
      llvm::count_if(one.sections, [](const Section &s) { return s.parsed; }),
      8 * 5);
}

TEST(Analyzer, SmallSectionsOnTwoThreadsThenEdits) {
  std::string text = splitFile(6);
  Analyzer parallel, fresh;
  fresh.setParallelSectionBytes(SIZE_MAX);
  takeAllSmall(parallel, fresh.analyze(text, "e.mlir", Config()));
  AnalysisCache cache;
  (void)parallel.analyze(text, "e.mlir", Config(), &cache);
  auto same = [&](const std::string &t, const char *what) {
    FileAnalysis e = parallel.analyze(t, "e.mlir", Config(), &cache);
    EXPECT_EQ(firstDifference(observe(e),
                              observe(fresh.analyze(t, "e.mlir", Config()))),
              "")
        << what;
    return e;
  };
  auto count = [](const FileAnalysis &fa, bool Section::*flag) {
    return llvm::count_if(fa.sections,
                          [&](const Section &s) { return s.*flag; });
  };
  // One function edited: that section alone, the others reused (their
  // entries were kept, whichever thread analysed them).
  size_t at = text.find("tosa.add", text.find("// -----", text.size() / 2));
  text.replace(at, 8, "tosa.sub");
  FileAnalysis e = same(text, "one edit");
  EXPECT_EQ(count(e, &Section::reused), long(e.sections.size()) - 1);
  // Every section but two of each copy changed at once (a replace-all).
  for (size_t p = 0; (p = text.find("tensor<2xf32>", p)) != std::string::npos;
       p += 13)
    text.replace(p, 13, "tensor<3xf32>");
  e = same(text, "replace all");
  EXPECT_EQ(count(e, &Section::reused), 2 * 6);
  // Sections broken at once: each one's last good analysis is served,
  // marked stale (a fresh analysis has none to serve).
  for (size_t p = 0;
       (p = text.find("tosa.abs %a : (!t)", p)) != std::string::npos;)
    text.replace(p, 8, "tosa.abs,");
  e = parallel.analyze(text, "e.mlir", Config(), &cache);
  EXPECT_EQ(count(e, &Section::stale), 6);
  EXPECT_EQ(llvm::count_if(e.ops,
                           [&](const OpReport &op) {
                             return e.sections[op.section].stale;
                           }),
            6); // each one's tosa.abs
  FileAnalysis f = fresh.analyze(text, "e.mlir", Config());
  EXPECT_EQ(e.ops.size(), f.ops.size() + 6);
  EXPECT_EQ(e.diagnostics.size(), f.diagnostics.size());

  // Sections of several functions keep their units, whichever thread
  // analysed them: an edit inside one function analyses it alone.
  std::string fns = addFunctions(4);
  std::string many = fns;
  for (int i = 1; i < 8; ++i)
    many += "// -----\n" + fns;
  AnalysisCache units;
  Analyzer split;
  takeAllSmall(split, fresh.analyze(many, "u.mlir", Config()));
  (void)split.analyze(many, "u.mlir", Config(), &units);
  for (int section : {0, 5}) {
    at = 0;
    for (int i = 0; i < section; ++i)
      at = many.find("// -----", at) + 1;
    at = many.find("tosa.add", many.find("@f2", at));
    many.replace(at, 8, "tosa.sub");
    e = split.analyze(many, "u.mlir", Config(), &units);
    EXPECT_EQ(count(e, &Section::incremental), 1) << section;
    EXPECT_EQ(firstDifference(observe(e),
                              observe(fresh.analyze(many, "u.mlir", Config()))),
              "")
        << section;
  }
}

// A section that crashes MLIR (a million nested aliases, printed, overflow
// even the analysis thread's stack) among small sections on two threads:
// reported on that section like one thread reports it, the others analysed as
// usual, and the next analysis normal.
TEST(Analyzer, SmallSectionsOnTwoThreadsContainACrash) {
  std::string chain = "#a0 = [1]\n";
  for (int i = 1; i < 1000000; ++i)
    chain +=
        "#a" + std::to_string(i) + " = [#a" + std::to_string(i - 1) + "]\n";
  // The crash is in printing the attribute, for the op's error note.
  chain += "func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
           "  %0 = tosa.add %a, %a {x = #a999999} : (tensor<2xf32>, "
           "tensor<2xf32>) -> tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n";
  std::string text =
      splitFile(1) + "// -----\n" + chain + "// -----\n" + splitFile(1);
  Analyzer sequential, parallel;
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis one = sequential.analyze(text, "c.mlir", Config());
  size_t crashed = llvm::count_if(one.diagnostics, [](const Diagnostic &d) {
    return d.code == "internal-crash";
  });
  ASSERT_EQ(crashed, 1u);
  takeAllSmall(parallel, one);
  EXPECT_EQ(firstDifference(observe(parallel.analyze(text, "c.mlir", Config())),
                            observe(one)),
            "");
  std::string after = splitFile(3);
  EXPECT_EQ(
      firstDifference(observe(parallel.analyze(after, "c.mlir", Config())),
                      observe(sequential.analyze(after, "c.mlir", Config()))),
      "");
}

} // namespace
