//===- ExplicitBroadcastTest.cpp - spec 003: broadcast_dimensions ---------===//

#include "ExplicitBroadcast.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

constexpr int64_t D = kDynamic;

TEST(InDim, VectorOntoMatrixColumns) {
  // (3) + (2,3) with broadcast_dimensions (1): the vector becomes rows.
  auto a = analyzeBroadcastInDim(Shape{3}, Shape{2, 3}, {1});
  EXPECT_TRUE(a.ok());
  ASSERT_EQ(a.mappings.size(), 1u);
  EXPECT_EQ(a.mappings[0].targetDim, 1);
  EXPECT_EQ(a.addedDims, (std::vector<unsigned>{0}));
}

TEST(InDim, VectorOntoSquareMatrixEitherWay) {
  EXPECT_TRUE(analyzeBroadcastInDim(Shape{3}, Shape{3, 3}, {0}).ok());
  EXPECT_TRUE(analyzeBroadcastInDim(Shape{3}, Shape{3, 3}, {1}).ok());
}

TEST(InDim, MatrixOntoCuboid) {
  // A 3x4 matrix onto a 2x3x4 cuboid with (1, 2).
  auto a = analyzeBroadcastInDim(Shape{3, 4}, Shape{2, 3, 4}, {1, 2});
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.addedDims, (std::vector<unsigned>{0}));
}

TEST(InDim, MustBeStrictlyIncreasing) {
  // "it is illegal to match V to N and T to P".
  auto a = analyzeBroadcastInDim(Shape{3, 4}, Shape{5, 4, 3, 6}, {2, 1});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.violations[0].message.find("strictly increasing"),
            std::string::npos);
  EXPECT_FALSE(analyzeBroadcastInDim(Shape{3, 3}, Shape{3, 3}, {1, 1}).ok());
}

TEST(InDim, SizesMustMatchOrBeDegenerate) {
  EXPECT_FALSE(analyzeBroadcastInDim(Shape{3}, Shape{2, 4}, {1}).ok());
  auto a = analyzeBroadcastInDim(Shape{1}, Shape{2, 4}, {1});
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.mappings[0].degenerate);
  auto d = analyzeBroadcastInDim(Shape{D}, Shape{2, 4}, {1});
  EXPECT_TRUE(d.ok());
  EXPECT_TRUE(d.mappings[0].runtimeCheck);
}

TEST(InDim, WrongCountAndOutOfRange) {
  EXPECT_FALSE(analyzeBroadcastInDim(Shape{3, 4}, Shape{2, 3, 4}, {1}).ok());
  EXPECT_FALSE(analyzeBroadcastInDim(Shape{3}, Shape{2, 3}, {2}).ok());
  EXPECT_FALSE(analyzeBroadcastInDim(Shape{3}, Shape{2, 3}, {-1}).ok());
}

TEST(DegenerateDims, SpecExamples) {
  // Same-rank arrays with degenerate dimensions (spec 003 examples 1-4).
  EXPECT_EQ(inferResultShape({Shape{2, 1}, Shape{2, 3}}), (Shape{2, 3}));
  EXPECT_EQ(inferResultShape({Shape{1, 2, 5}, Shape{7, 2, 5}}),
            (Shape{7, 2, 5}));
  EXPECT_EQ(inferResultShape({Shape{7, 2, 5}, Shape{7, 1, 5}}),
            (Shape{7, 2, 5}));
  EXPECT_EQ(inferResultShape({Shape{7, 2, 5}, Shape{7, 2, 6}}), std::nullopt);
  // The outer operation: (2,1) and (1,3) give (2,3).
  EXPECT_EQ(inferResultShape({Shape{2, 1}, Shape{1, 3}}), (Shape{2, 3}));
}

TEST(Composition, VectorPlusOneByTwoMatrix) {
  // |1 2 3 4| + [5 6] with broadcast_dimensions (0) gives a 4x2 result.
  auto a = analyzeBinaryInDim(Shape{4}, Shape{1, 2}, Shape{4, 2}, {0});
  EXPECT_TRUE(a.ok());
  ASSERT_TRUE(a.composition.has_value());
  EXPECT_EQ(a.composition->inferred, (Shape{4, 2}));
}

TEST(Composition, MatrixOntoFourByThreeByOne) {
  // 1x2 matrix + 4x3x1 array with (1, 2): 4x3x2.
  auto a =
      analyzeBinaryInDim(Shape{4, 3, 1}, Shape{1, 2}, Shape{4, 3, 2}, {1, 2});
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.composition->inferred, (Shape{4, 3, 2}));
  auto bad =
      analyzeBinaryInDim(Shape{4, 3, 1}, Shape{1, 2}, Shape{4, 3, 3}, {1, 2});
  EXPECT_FALSE(bad.ok());
}

TEST(LinalgBroadcast, AddedDimensions) {
  // linalg.broadcast ins(16) outs(16x64) dimensions = [1].
  auto a = analyzeLinalgBroadcast(Shape{16}, Shape{16, 64}, {1});
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.broadcastDimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(a.addedDims, (std::vector<unsigned>{1}));
  // No degenerate stretching in linalg.broadcast.
  EXPECT_FALSE(analyzeLinalgBroadcast(Shape{1}, Shape{16, 64}, {1}).ok());
}

} // namespace
