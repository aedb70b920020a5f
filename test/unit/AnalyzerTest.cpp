//===- AnalyzerTest.cpp - parsing, all-errors verification, op reports ----===//
//
// The analyzer's basics: sections, every error of a file, the index, the
// cache between versions, warm-up and the parser's buffers. Big sections and
// functions analysed in parts, input guards, memory and the corpus sweep
// have files of their own (Analyzer*Test.cpp).
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"
#include "IR.h"
#include "MLIRShared.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

namespace {

FileAnalysis analyze(const std::string &text, const Config &config = {}) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "test.mlir", config);
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
