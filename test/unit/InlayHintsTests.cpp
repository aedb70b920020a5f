//===- InlayHintsTests.cpp - inlay hints ----------------------------------===//
//
// On annotated snippets (`[[range]]`, `$$` points; see Annotations.h).
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"
#include "TestSupport.h"

#include "InlayHints.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

TEST(InlayHints, InferredShapeAfterTypeAndRuntimeMarker) {
  Annotations a(R"(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %c: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x?xf32>$$
  %1 = tosa.add %c, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>$$
  %2 = tosa.add %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<?x?xf32>
}
)");
  FileAnalysis fa = analyzeText(a.text);
  auto hints = inlayHints(fa, {{1, 1}, {100, 1}}, Config::Hints());
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[0].position, a.point(0));
  EXPECT_EQ(hints[0].label, " inferred: 2x3");
  EXPECT_EQ(hints[1].position, a.point(1));
  EXPECT_EQ(hints[1].label, " runtime-check");
  // After the type, never between the result and `=` (it read like code).
  // Range-restricted, and switchable.
  EXPECT_EQ(inlayHints(fa, {{4, 70}, {4, 80}}, Config::Hints()).size(), 1u);
  EXPECT_TRUE(inlayHints(fa, {{4, 1}, {4, 5}}, Config::Hints()).empty());
  EXPECT_TRUE(inlayHints(fa, {{5, 1}, {7, 1}}, Config::Hints()).empty());
  Config::Hints off;
  off.inferredShapes = false;
  off.runtimeChecks = false;
  EXPECT_TRUE(inlayHints(fa, {{1, 1}, {100, 1}}, off).empty());
}

} // namespace

namespace {

// Ops whose summary says there is nothing to show are skipped without the
// per-dimension records: the hints must be the same as with the records,
// on random shapes (static, 1, `?`, unranked; equal and mixed ranks).
TEST(InlayHints, SummaryShortcutChangesNothing) {
  std::string text = randomBroadcastModel(7, 400);
  FileAnalysis fa = analyzeText(text);
  ASSERT_GE(fa.ops.size(), 400u);
  FileAnalysis full = fa;
  for (OpReport &op : full.ops.mut())
    op.summary.reset();
  auto render = [](const std::vector<InlayHintData> &hs) {
    std::vector<std::string> out;
    for (const InlayHintData &h : hs)
      out.push_back(std::to_string(h.position.line) + ":" +
                    std::to_string(h.position.column) + h.label + " | " +
                    h.tooltip);
    return out;
  };
  for (bool runtime : {true, false}) {
    Config::Hints options;
    options.runtimeChecks = runtime;
    auto fast = render(inlayHints(fa, {{1, 1}, {100000, 1}}, options));
    auto slow = render(inlayHints(full, {{1, 1}, {100000, 1}}, options));
    EXPECT_EQ(fast, slow);
    EXPECT_GE(fast.size(), 100u); // not vacuous
  }
}

} // namespace
