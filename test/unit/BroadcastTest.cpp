//===- BroadcastTest.cpp - spec 000: InferDim, InferShape, Verify ---------===//

#include "Broadcast.h"

#include <gtest/gtest.h>

#include <random>

using namespace tosa_lsp;

namespace {

constexpr int64_t D = kDynamic;

BroadcastAnalysis run(std::vector<MaybeShape> ops, MaybeShape result,
                      bool tosa = false) {
  BroadcastOptions o;
  o.requireEqualRanks = tosa;
  return analyzeBroadcast(ops, result, o);
}

bool hasViolation(const BroadcastAnalysis &a, ViolationKind k) {
  for (const Violation &v : a.violations)
    if (v.kind == k)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// The InferDim table, every row in both operand orders.
//===----------------------------------------------------------------------===//

struct Row {
  int64_t dim0, dim1, inferred;
  InferRow row;
  bool error;
};

class InferDimTable : public ::testing::TestWithParam<Row> {};

TEST_P(InferDimTable, BothOrders) {
  Row r = GetParam();
  for (bool swap : {false, true}) {
    int64_t a = swap ? r.dim1 : r.dim0, b = swap ? r.dim0 : r.dim1;
    InferDimResult got = inferDim(a, b);
    EXPECT_EQ(got.row, r.row) << formatDim(a) << "," << formatDim(b);
    EXPECT_EQ(got.error, r.error) << formatDim(a) << "," << formatDim(b);
    if (!r.error) {
      EXPECT_EQ(got.size, r.inferred) << formatDim(a) << "," << formatDim(b);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Spec000, InferDimTable,
    ::testing::Values(Row{D, D, D, InferRow::DynDyn, false},
                      Row{D, 1, D, InferRow::DynOne, false},
                      Row{D, 5, 5, InferRow::DynGreater, false},
                      Row{1, 1, 1, InferRow::OneOne, false},
                      Row{1, 7, 7, InferRow::OneGreater, false},
                      Row{3, 3, 3, InferRow::GreaterGreater, false},
                      Row{3, 2, 3, InferRow::GreaterGreater, true},
                      // 0 is static and not 1: it behaves like ">1".
                      Row{0, 1, 0, InferRow::OneGreater, false},
                      Row{0, 4, 0, InferRow::GreaterGreater, true}));

TEST(InferDim, PseudoCodeReturnsDim0OrDim1) {
  // (>1, ?) returns dim0, (?, >1) returns dim1: the static size either way.
  EXPECT_FALSE(inferDim(4, D).tookSecond);
  EXPECT_TRUE(inferDim(D, 4).tookSecond);
  EXPECT_TRUE(inferDim(1, D).tookSecond);
  EXPECT_FALSE(inferDim(D, 1).tookSecond);
  EXPECT_TRUE(inferDim(1, 4).tookSecond);
  EXPECT_FALSE(inferDim(4, 1).tookSecond);
}

//===----------------------------------------------------------------------===//
// InferShape / InferResultShape.
//===----------------------------------------------------------------------===//

TEST(InferShape, RankExpansionPrependsOnes) {
  EXPECT_EQ(inferShape({4}, {2, 3, 4}), (Shape{2, 3, 4}));
  EXPECT_EQ(inferShape({3, 1}, {2, 1, 5}), (Shape{2, 3, 5}));
  EXPECT_EQ(inferShape({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(inferShape({3}, {2, 4}), std::nullopt);
}

TEST(InferResultShape, UnrankedOperandsAreDiscarded) {
  EXPECT_EQ(inferResultShape({std::nullopt, Shape{2, 3}}), (Shape{2, 3}));
  EXPECT_EQ(inferResultShape({std::nullopt, std::nullopt}), std::nullopt);
  EXPECT_EQ(inferResultShape({Shape{4}}), (Shape{4}));
}

TEST(InferResultShape, ThreeOperandFold) {
  EXPECT_EQ(inferResultShape({Shape{1, 3}, Shape{2, 1}, Shape{1, 1}}),
            (Shape{2, 3}));
  EXPECT_EQ(inferResultShape({Shape{D, 1}, Shape{1, 4}, Shape{5, 4}}),
            (Shape{5, 4}));
  // The conflict appears only with the third operand.
  EXPECT_EQ(inferResultShape({Shape{1, 3}, Shape{2, 1}, Shape{4, 3}}),
            std::nullopt);
}

TEST(Analysis, ThreeOperandFoldRecordsStepsAndSources) {
  auto a = run({Shape{1, 3}, Shape{2, 1}, Shape{1, 1}}, Shape{2, 3});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a.dims.size(), 2u);
  EXPECT_EQ(a.dims[0].steps.size(), 2u);
  EXPECT_EQ(a.dims[0].sources, (std::vector<unsigned>{1}));
  EXPECT_EQ(a.dims[0].stretched, (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(a.dims[1].sources, (std::vector<unsigned>{0}));
  EXPECT_EQ(a.dims[1].stretched, (std::vector<unsigned>{1, 2}));

  auto bad = run({Shape{1, 3}, Shape{2, 1}, Shape{4, 3}}, Shape{2, 3});
  ASSERT_EQ(bad.violations.size(), 1u);
  EXPECT_EQ(bad.violations[0].kind, ViolationKind::IncompatibleOperands);
  // The accumulated 2 came from operand #1; the conflict is with #2.
  EXPECT_EQ(bad.violations[0].operands, (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(bad.violations[0].dim, 0u);
}

//===----------------------------------------------------------------------===//
// Spec 000 examples: correct uses.
//===----------------------------------------------------------------------===//

TEST(SpecExamplesValid, ExactMatch) {
  EXPECT_TRUE(run({Shape{1, 2}, Shape{1, 2}}, Shape{1, 2}).ok());
}
TEST(SpecExamplesValid, DynamicSizesMatch) {
  auto a = run({Shape{D}, Shape{D}}, Shape{D});
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.dims[0].runtimeCheck);
}
TEST(SpecExamplesValid, StaticBroadcastOneToFour) {
  auto a = run({Shape{1}, Shape{4}}, Shape{4});
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.dims[0].staticBroadcast);
  EXPECT_EQ(a.dims[0].stretched, (std::vector<unsigned>{0}));
  EXPECT_FALSE(a.dims[0].runtimeCheck);
}
TEST(SpecExamplesValid, InferredStaticDeclaredDynamic) {
  auto a = run({Shape{4}}, Shape{D});
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.dims[0].refinable);
  EXPECT_EQ(a.inferred, (Shape{4}));
}
TEST(SpecExamplesValid, RankExpansion) {
  auto a = run({Shape{4}, Shape{2, 3, 4}}, Shape{2, 3, 4});
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.rankExpanded, (std::vector<unsigned>{0}));
  EXPECT_TRUE(a.dims[0].expanded[0]);
  EXPECT_TRUE(a.dims[1].expanded[0]);
  EXPECT_FALSE(a.dims[2].expanded[0]);
  EXPECT_EQ(a.dims[0].stretched, (std::vector<unsigned>{0}));
}
TEST(SpecExamplesValid, DifferentElementTypes) {
  // Element types are not part of the shape analysis at all.
  EXPECT_TRUE(run({Shape{2}, Shape{2}}, Shape{2}).ok());
}
TEST(SpecExamplesValid, UnrankedResult) {
  EXPECT_TRUE(run({Shape{2}}, std::nullopt).ok());
}
TEST(SpecExamplesValid, AllInputsUnranked) {
  auto a = run({std::nullopt, std::nullopt}, Shape{2});
  EXPECT_TRUE(a.ok());
  EXPECT_FALSE(a.inferable);
}
TEST(SpecExamplesValid, DynamicInferredStaticDeclaredIsAccepted) {
  // Correction in spec/README.md: (?, ?) -> 4 is accepted (MLIR 22 too),
  // with a runtime obligation.
  auto a = run({Shape{D}, Shape{D}}, Shape{4});
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.dims[0].dynamicToStatic);
}

//===----------------------------------------------------------------------===//
// Spec 000 examples: incorrect uses.
//===----------------------------------------------------------------------===//

TEST(SpecExamplesInvalid, StaticSizesNotEqual) {
  auto a = run({Shape{3}, Shape{2}}, Shape{D});
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(hasViolation(a, ViolationKind::IncompatibleOperands));
  EXPECT_EQ(a.inferred, std::nullopt);
  EXPECT_NE(a.violations[0].message.find("dimension 0"), std::string::npos);
  EXPECT_NE(a.violations[0].message.find("size 3"), std::string::npos);
  EXPECT_NE(a.violations[0].message.find("size 2"), std::string::npos);
}
TEST(SpecExamplesInvalid, RankDiffersFromInferred) {
  auto a = run({Shape{3}, Shape{3}}, Shape{1, 3});
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(hasViolation(a, ViolationKind::ResultRankMismatch));
}
TEST(SpecExamplesInvalid, InferredTwoDeclaredFour) {
  auto a = run({Shape{2}, Shape{2}}, Shape{4});
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(hasViolation(a, ViolationKind::ResultDimMismatch));
  EXPECT_TRUE(a.dims[0].resultConflict);
}
TEST(SpecExamplesInvalid, ResultBroadcastingIsAnError) {
  // "Modification 1" (kept): (1, 1) -> 4 is an error.
  auto a = run({Shape{1}, Shape{1}}, Shape{4});
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(hasViolation(a, ViolationKind::ResultBroadcast));
}

//===----------------------------------------------------------------------===//
// Flags and TOSA rank rules.
//===----------------------------------------------------------------------===//

TEST(Flags, RuntimeCheckOnlyWhenADynamicSizeMayBeOne) {
  EXPECT_TRUE(run({Shape{D}, Shape{4}}, Shape{4}).dims[0].runtimeCheck);
  EXPECT_TRUE(run({Shape{D}, Shape{D}}, Shape{D}).dims[0].runtimeCheck);
  // (?, 1): the 1 is stretched statically; nothing to check at runtime.
  auto a = run({Shape{D}, Shape{1}}, Shape{D});
  EXPECT_FALSE(a.dims[0].runtimeCheck);
  EXPECT_TRUE(a.dims[0].staticBroadcast);
  // A single dynamic operand has nothing to disagree with.
  EXPECT_FALSE(run({Shape{D}}, Shape{D}).dims[0].runtimeCheck);
}

TEST(Flags, SourcesNameTheOperandTheSizeCameFrom) {
  auto a = run({Shape{D, 1}, Shape{5, D}}, Shape{5, D});
  EXPECT_EQ(a.dims[0].inferred, 5);
  EXPECT_EQ(a.dims[0].sources, (std::vector<unsigned>{1}));
  EXPECT_EQ(a.dims[1].inferred, D);
  EXPECT_EQ(a.dims[1].sources, (std::vector<unsigned>{1}));
}

TEST(Tosa, UnequalRanksAreAnErrorWithAReshapeFix) {
  auto a = run({Shape{3, 4}, Shape{2, 3, 4}}, Shape{2, 3, 4}, /*tosa=*/true);
  ASSERT_FALSE(a.ok());
  ASSERT_TRUE(hasViolation(a, ViolationKind::OperandRanksDiffer));
  // The rank-expanded inference is still computed for the explanation.
  EXPECT_EQ(a.inferred, (Shape{2, 3, 4}));
  EXPECT_NE(a.violations[0].fix.find("1x3x4"), std::string::npos);
  // Without the TOSA rule the same shapes are fine.
  EXPECT_TRUE(run({Shape{3, 4}, Shape{2, 3, 4}}, Shape{2, 3, 4}).ok());
}

TEST(Tosa, ResultRankMustEqualOperandRank) {
  auto a = run({Shape{D}, Shape{D}}, Shape{4, 4}, /*tosa=*/true);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(hasViolation(a, ViolationKind::ResultRankDiffers));
}

TEST(Tosa, UnrankedOperandIsIgnoredForRanks) {
  EXPECT_TRUE(run({std::nullopt, Shape{2, 3}}, Shape{2, 3}, true).ok());
}

TEST(Format, Shapes) {
  EXPECT_EQ(formatShape(Shape{2, D, 4}), "2x?x4");
  EXPECT_EQ(formatShape(std::nullopt), "*");
  EXPECT_EQ(formatShape(Shape{}), "scalar");
}

} // namespace

namespace {

/// Exhaustive over small cases, then random: the allocation-free summary
/// the document pipeline uses must give analyzeBroadcast's verdict and
/// flags on every input, or diagnostics would silently go missing.
TEST(Summary, AgreesWithTheFullAnalysis) {
  const int64_t sizes[] = {kDynamic, 1, 2, 3};
  std::mt19937 rng(42);
  auto randomShape = [&](bool allowUnranked) -> MaybeShape {
    if (allowUnranked && rng() % 8 == 0)
      return std::nullopt;
    Shape s(rng() % 4); // rank 0-3
    for (int64_t &d : s)
      d = sizes[rng() % 4];
    return s;
  };
  unsigned disagreements = 0, notOk = 0, flagged = 0;
  for (int n = 0; n < 20000; ++n) {
    std::vector<MaybeShape> operands(rng() % 4); // 0-3 operands
    for (MaybeShape &o : operands)
      o = randomShape(true);
    MaybeShape declared = randomShape(true);
    for (bool tosa : {false, true}) {
      BroadcastOptions opts;
      opts.requireEqualRanks = tosa;
      BroadcastAnalysis full = analyzeBroadcast(operands, declared, opts);
      BroadcastSummary quick = summarizeBroadcast(operands, declared, opts);
      bool same = quick.ok == full.ok() &&
                  quick.anyRefinable == full.anyRefinable() &&
                  quick.anyRuntimeCheck == full.anyRuntimeCheck() &&
                  quick.anyDynamicToStatic == full.anyDynamicToStatic() &&
                  quick.inferredIsDeclared ==
                      (full.inferred && full.inferred == full.declared);
      for (const DimReport &d : full.dims)
        same &= d.runtimeCheck == ((quick.runtimeCheckDims >> d.index) & 1);
      if (!same && ++disagreements <= 5) {
        std::string ops;
        for (const MaybeShape &o : operands)
          ops += formatShape(o) + " ";
        ADD_FAILURE() << "operands " << ops << "declared "
                      << formatShape(declared) << (tosa ? " (TOSA)" : "");
      }
      notOk += !full.ok();
      flagged += full.anyRefinable() + full.anyRuntimeCheck() +
                 full.anyDynamicToStatic();
    }
  }
  EXPECT_EQ(disagreements, 0u);
  // Both verdicts and every flag occur, so the comparison is not vacuous.
  EXPECT_GT(notOk, 1000u);
  EXPECT_GT(flagged, 1000u);
  // Beyond the small ranks: a rank-10 operand takes the other buffer.
  Shape big(10, 3);
  big[9] = kDynamic;
  Shape declaredBig(10, 3);
  declaredBig[0] = kDynamic;
  BroadcastSummary b =
      summarizeBroadcast({big, Shape(10, 3)}, declaredBig); // ? with 3
  EXPECT_TRUE(b.ok);
  EXPECT_TRUE(b.anyRuntimeCheck);
  EXPECT_TRUE(b.anyRefinable);
  EXPECT_FALSE(b.anyDynamicToStatic);
}

} // namespace
