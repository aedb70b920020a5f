//===- FindingsTests.cpp - broadcast reports become diagnostics -----------===//

#include "TestSupport.h"

#include "Findings.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

using namespace tosa_lsp;

namespace {

std::vector<std::string> codes(const OpReport &op, const Config &config) {
  std::vector<Diagnostic> out;
  appendFindings(op, config, out);
  std::vector<std::string> c;
  for (const Diagnostic &d : out)
    c.push_back(d.code);
  return c;
}

const char *kDynamic =
    "func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> "
    "tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";
const char *kRefinable =
    "func.func @h(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<1xf32>, tensor<3xf32>) -> "
    "tensor<?xf32>\n"
    "  return %0 : tensor<?xf32>\n}\n";

TEST(Findings, DynamicOperandsGiveRuntimeCheckAndDynamicToStatic) {
  FileAnalysis fa = analyzeText(kDynamic);
  ASSERT_EQ(fa.ops.size(), 1u);
  Config on;
  on.info.runtimeChecks = true;
  EXPECT_EQ(codes(fa.ops[0], on),
            (std::vector<std::string>{"runtime-broadcast-check",
                                      "dynamic-to-static"}));
  // Runtime checks are off by default (hover and inlay hints show them).
  EXPECT_EQ(codes(fa.ops[0], Config()),
            (std::vector<std::string>{"dynamic-to-static"}));
}

TEST(Findings, InfoSwitchesTurnThemOff) {
  FileAnalysis dyn = analyzeText(kDynamic);
  FileAnalysis ref = analyzeText(kRefinable);
  ASSERT_EQ(dyn.ops.size(), 1u);
  ASSERT_EQ(ref.ops.size(), 1u);
  EXPECT_EQ(codes(ref.ops[0], Config()),
            std::vector<std::string>{"refinable-result"});
  Config off;
  off.info.refinable = false;
  off.info.runtimeChecks = false;
  off.info.dynamicToStatic = false;
  EXPECT_TRUE(codes(dyn.ops[0], off).empty());
  EXPECT_TRUE(codes(ref.ops[0], off).empty());
}

TEST(Findings, FindingsAreInformationalAndOnTheOp) {
  FileAnalysis fa = analyzeText(kRefinable);
  ASSERT_EQ(fa.ops.size(), 1u);
  std::vector<Diagnostic> out;
  appendFindings(fa.ops[0], Config(), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::Info);
  EXPECT_EQ(out[0].range.begin.line, fa.ops[0].range.begin.line);
  EXPECT_EQ(out[0].range.begin.column, fa.ops[0].range.begin.column);
  EXPECT_TRUE(has(out[0].message, "can be refined to 3")) << out[0].message;
}

// A section's findings repeat a few messages: with a pool, equal texts are
// one allocation (2000 hints at 10k lines were ~300 KB a version).
TEST(Findings, EqualMessagesAndCodesAreOneText) {
  FileAnalysis fa = analyzeText(kRefinable);
  ASSERT_EQ(fa.ops.size(), 1u);
  std::vector<Diagnostic> pooled, apart;
  SharedTextPool texts;
  for (int i = 0; i < 2; ++i) {
    appendFindings(fa.ops[0], Config(), pooled, &texts);
    appendFindings(fa.ops[0], Config(), apart);
  }
  ASSERT_EQ(pooled.size(), 2u);
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(&pooled[0].message.str(), &pooled[1].message.str());
  EXPECT_EQ(&pooled[0].code.str(), &pooled[1].code.str());
  EXPECT_NE(&apart[0].message.str(), &apart[1].message.str());
  EXPECT_EQ(pooled[0].message, apart[0].message);
}

} // namespace

namespace {

// An op's shapes are packed in 32-bit words: every size reads back as it
// was, dynamic and unranked ones and sizes beyond 32 bits included, for
// the implicit kind and for an explicit one with its dimension list.
// Ops whose summary says enough (nothing to say, or only which dimensions
// need a runtime check) get their findings without the per-dimension
// records: the same findings as with the records, under every switch.
TEST(Findings, SummaryShortcutChangesNothing) {
  FileAnalysis fa = analyzeText(randomBroadcastModel(11, 400));
  ASSERT_GE(fa.ops.size(), 400u);
  FileAnalysis full = fa;
  for (OpReport &op : full.ops.mut())
    op.summary.reset();
  auto render = [](const FileAnalysis &a, const Config &c) {
    std::vector<Diagnostic> ds;
    for (const OpReport &op : a.ops)
      appendFindings(op, c, ds);
    std::vector<std::string> out;
    for (const Diagnostic &d : ds) {
      std::string notes;
      for (const DiagNote &n : d.notes)
        notes += " | " + n.message;
      out.push_back(test::rng(d.range) + " " + d.code.str() + " " +
                    d.message.str() + notes);
    }
    return out;
  };
  size_t runtimeChecks = 0, refinable = 0, dynamicToStatic = 0;
  for (unsigned switches = 0; switches < 8; ++switches) {
    Config c;
    c.info.refinable = switches & 1;
    c.info.runtimeChecks = switches & 2;
    c.info.dynamicToStatic = switches & 4;
    std::vector<std::string> fast = render(fa, c), slow = render(full, c);
    EXPECT_EQ(fast, slow) << "switches " << switches;
    for (const std::string &l : fast) {
      runtimeChecks += l.find("runtime-broadcast-check") != std::string::npos;
      refinable += l.find("refinable-result") != std::string::npos;
      dynamicToStatic += l.find("dynamic-to-static") != std::string::npos;
    }
  }
  // Not vacuous: each kind of finding is there, many times.
  EXPECT_GE(runtimeChecks, 100u);
  EXPECT_GE(refinable, 100u);
  EXPECT_GE(dynamicToStatic, 20u);
}

// Ops of one signature share their packed shapes: with a memo, what is
// said of the first is said of the others with their own ranges, the same
// as made for each op, under every switch.
TEST(Findings, MemoizedFindingsAreEachOpsOwn) {
  FileAnalysis fa = analyzeText(randomBroadcastModel(5, 400));
  ASSERT_GE(fa.ops.size(), 400u);
  auto render = [](const std::vector<Diagnostic> &ds) {
    std::vector<std::string> out;
    for (const Diagnostic &d : ds) {
      std::string notes;
      for (const DiagNote &n : d.notes)
        notes += " | " + test::rng(n.range) + " " + n.message;
      out.push_back(test::rng(d.range) + " " + std::to_string(d.section) + " " +
                    std::to_string(int(d.severity)) + " " + d.code.str() + " " +
                    d.message.str() + notes);
    }
    return out;
  };
  size_t findings = 0;
  for (unsigned switches = 0; switches < 8; ++switches) {
    Config c;
    c.info.refinable = switches & 1;
    c.info.runtimeChecks = switches & 2;
    c.info.dynamicToStatic = switches & 4;
    std::vector<Diagnostic> each, memoized;
    FindingsMemo memo;
    for (const OpReport &op : fa.ops) {
      appendFindings(op, c, each);
      appendFindings(op, c, memoized, memo);
    }
    EXPECT_EQ(render(memoized), render(each)) << "switches " << switches;
    findings += each.size();
  }
  // Not vacuous: findings were made, and ops with findings share their
  // signature with an earlier op (what the memo says again).
  EXPECT_GE(findings, 400u);
  std::set<const int32_t *> lists;
  size_t repeated = 0;
  for (const OpReport &op : fa.ops) {
    std::vector<Diagnostic> own;
    appendFindings(op, Config(), own);
    if (!lists.insert(op.packedShapes.begin()).second && !own.empty())
      ++repeated;
  }
  EXPECT_GE(repeated, 10u);
}

TEST(Findings, PackedShapesReadBackExactly) {
  const int64_t dyn = tosa_lsp::kDynamic;
  const int64_t big = int64_t(1) << 40;
  const int64_t i32min = std::numeric_limits<int32_t>::min();
  std::vector<MaybeShape> operands = {
      Shape{1, big, dyn},
      Shape{i32min, i32min + 1, i32min + 2,
            std::numeric_limits<int32_t>::max()},
      std::nullopt, Shape{}};
  MaybeShape result = Shape{-big, 7, dyn};
  OpReport op;
  op.kind = OpKind::Implicit;
  op.packedShapes = packShapes(operands, result);
  EXPECT_EQ(op.operandShapes(), operands);
  EXPECT_EQ(op.declaredShape(), result);

  OpReport in;
  in.kind = OpKind::BroadcastInDim;
  std::vector<int64_t> dims = {0, big, 2};
  in.packedShapes = packShapes({Shape{3, big}}, Shape{3, dyn, big}, &dims);
  EXPECT_EQ(in.operandShapes(), (std::vector<MaybeShape>{Shape{3, big}}));
  EXPECT_EQ(in.declaredShape(), (MaybeShape{Shape{3, dyn, big}}));
  EXPECT_EQ(in.explicitBcast().broadcastDimensions, dims);
}

} // namespace
