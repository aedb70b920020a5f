//===- InferenceCacheTests.cpp - shape inference kept across versions -----===//
//
// The cache's keys change exactly when a function's inference may (its
// text, its section's aliases, an error inside it), and what it hands out
// for a function an edit moved reads like a fresh inference of the new
// text.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "InferenceCache.h"
#include "ShapeInference.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

const char *kTwo = "!t = tensor<2x3xf32>\n"
                   "func.func @a(%x: !t) -> tensor<?x?xf32> {\n"
                   "  %0 = tosa.abs %x : (!t) -> tensor<?x?xf32>\n"
                   "  return %0 : tensor<?x?xf32>\n"
                   "}\n"
                   "func.func @b(%x: tensor<4x3xf32>) -> tensor<?x?xf32> {\n"
                   "  %0 = tosa.abs %x : (tensor<4x3xf32>) -> tensor<?x?xf32>\n"
                   "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> "
                   "tensor<?x?xf32>\n"
                   "  return %1 : tensor<?x?xf32>\n"
                   "}\n";

std::vector<FunctionKey> keysOf(const std::string &text) {
  FileAnalysis fa = analyzeText(text);
  return functionKeys(text, LineIndex(text), fa);
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(InferenceCache, KeysFollowWhatDecidesTheInference) {
  std::vector<FunctionKey> base = keysOf(kTwo);
  ASSERT_EQ(base.size(), 2u);
  EXPECT_EQ(base[0].firstLine, 2u);
  EXPECT_EQ(base[0].lastLine, 5u);
  EXPECT_EQ(base[1].firstLine, 6u);
  EXPECT_NE(base[0].hash, base[1].hash);
  // An edit in @a: @a's key changes, @b's stays though @b moved.
  std::vector<FunctionKey> edited = keysOf(
      replaced(kTwo, "  return %0 : tensor<?x?xf32>\n}\nfunc.func @b",
               "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
               "  return %0 : tensor<?x?xf32>\n}\nfunc.func @b"));
  ASSERT_EQ(edited.size(), 2u);
  EXPECT_NE(edited[0].hash, base[0].hash);
  EXPECT_EQ(edited[1].hash, base[1].hash);
  EXPECT_EQ(edited[1].firstLine, 7u);
  // The alias @a's types name: every function of the section.
  std::vector<FunctionKey> alias =
      keysOf(replaced(kTwo, "!t = tensor<2x3xf32>", "!t = tensor<5x3xf32>"));
  ASSERT_EQ(alias.size(), 2u);
  EXPECT_NE(alias[0].hash, base[0].hash);
  EXPECT_NE(alias[1].hash, base[1].hash);
  // An error inside a function whose text did not change: @c calls @d,
  // whose argument type changed.
  std::string call = std::string(kTwo) +
                     "func.func @d(%y: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
                     "  %0 = tosa.abs %y : (tensor<2x3xf32>) -> "
                     "tensor<?x?xf32>\n"
                     "  return %0 : tensor<?x?xf32>\n"
                     "}\n"
                     "func.func @c(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
                     "  %0 = func.call @d(%x) : (tensor<2x3xf32>) -> "
                     "tensor<?x?xf32>\n"
                     "  return %0 : tensor<?x?xf32>\n"
                     "}\n";
  std::string broken = replaced(
      replaced(call, "@d(%y: tensor<2x3xf32>)", "@d(%y: tensor<7x3xf32>)"),
      "%y : (tensor<2x3xf32>)", "%y : (tensor<7x3xf32>)");
  ASSERT_TRUE(
      llvm::any_of(analyzeText(broken).diagnostics, [](const Diagnostic &d) {
        return d.severity == Severity::Error && d.range.begin.line == 16;
      }));
  std::vector<FunctionKey> ok = keysOf(call), bad = keysOf(broken);
  ASSERT_EQ(ok.size(), 4u);
  ASSERT_EQ(bad.size(), 4u);
  EXPECT_EQ(bad[1].hash, ok[1].hash);
  EXPECT_NE(bad[3].hash, ok[3].hash);
  // A function moved sideways: its columns differ.
  std::vector<FunctionKey> indented =
      keysOf(replaced(kTwo, "func.func @b", " func.func @b"));
  EXPECT_NE(indented.at(1).hash, base[1].hash);
  // Lines on the bisection.
  EXPECT_EQ(keysOnLines(base, 1, 1).size(), 0u);
  EXPECT_EQ(keysOnLines(base, 3, 3).size(), 1u);
  EXPECT_EQ(keysOnLines(base, 5, 6).size(), 2u);
  EXPECT_EQ(keysOnLines(base, 7, 100).front().firstLine, 6u);
}

/// Every op's place and rendering, one line each.
std::string describe(const ShapeInference &si) {
  std::string out;
  for (const FunctionInference &f : si.functions) {
    out += f.name + " " + std::to_string(f.scope.begin.line) + "-" +
           std::to_string(f.scope.end.line) + " s" + std::to_string(f.section) +
           "\n";
    for (const InferredOp &op : f.ops)
      out += "  " + std::to_string(op.range.begin.line) + ":" +
             std::to_string(op.range.begin.column) + " " +
             std::to_string(op.resultTypeRange.end.line) + ":" +
             std::to_string(op.resultTypeRange.end.column) + " s" +
             std::to_string(op.section) + " " + inferredSummary(op) + "\n";
    for (const InferredOp *op :
         si.opsOnLines(f.scope.begin.line, f.scope.end.line))
      out += "  on its lines: " + std::to_string(op->range.begin.line) + "\n";
  }
  return out;
}

TEST(InferenceCache, MovedFunctionsReadLikeAFreshInference) {
  ShapeInferrer inferrer;
  InferenceCache cache;
  auto inferMissing = [&](const std::string &text, const FileAnalysis &fa,
                          const std::vector<FunctionKey> &keys) {
    std::vector<FunctionKey> missing;
    (void)cache.lookup(keys, &missing);
    for (const FunctionKey &k : missing)
      (void)cache.store({k}, inferrer.infer(text, LineIndex(text), fa,
                                            k.firstLine, k.lastLine, nullptr,
                                            /*withRefineEdits=*/false));
    return missing.size();
  };
  std::string v1 = std::string(kTwo) + "// -----\n" + kTwo;
  FileAnalysis fa1 = analyzeText(v1);
  std::vector<FunctionKey> k1 = functionKeys(v1, LineIndex(v1), fa1);
  ASSERT_EQ(k1.size(), 4u);
  EXPECT_EQ(inferMissing(v1, fa1, k1), 4u);
  EXPECT_EQ(inferMissing(v1, fa1, k1), 0u);
  // Two lines more in the first @a, and a new section before the last
  // one: the first @b moves down, the second pair into section 2.
  std::string v2 =
      replaced(v1, "  return %0 : tensor<?x?xf32>\n}\nfunc.func @b",
               "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
               "  %2 = tosa.abs %1 : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
               "  return %0 : tensor<?x?xf32>\n}\nfunc.func @b");
  v2 = replaced(v2, "// -----\n",
                "// -----\nfunc.func private @p()\n// -----\n");
  FileAnalysis fa2 = analyzeText(v2);
  std::vector<FunctionKey> k2 = functionKeys(v2, LineIndex(v2), fa2);
  ASSERT_EQ(k2.size(), 5u);
  EXPECT_EQ(k2[3].section, 2u);
  EXPECT_EQ(inferMissing(v2, fa2, k2), 2u); // the first @a, and @p
  ShapeInference fresh = inferrer.infer(v2, fa2);
  ShapeInference cached = cache.lookup(k2);
  ASSERT_EQ(cached.functions.size(), 5u);
  EXPECT_EQ(describe(cached), describe(fresh));
  EXPECT_NE(describe(cached).find("inferred 4x3"), std::string::npos)
      << describe(cached);
  // Shape errors are kept with the function and placed where it is now.
  EXPECT_TRUE(cache.shapeErrors(k2, nullptr).empty());
  // A new version's functions replace the old ones.
  cache.retain({k2[1]});
  EXPECT_EQ(cache.size(), 1u);
  std::vector<FunctionKey> missing;
  (void)cache.lookup(k2, &missing);
  EXPECT_EQ(missing.size(), 4u);
  std::vector<FunctionKey> unknown = cache.unknown(k2);
  ASSERT_EQ(unknown.size(), 4u);
  EXPECT_EQ(unknown[0].firstLine, k2[0].firstLine);
  EXPECT_EQ(unknown[1].firstLine, k2[2].firstLine);
}

TEST(InferenceCache, ShapeErrorsMoveWithTheirFunction) {
  // @g's abs is declared 3x5 where propagation gives 3x2.
  std::string g = "func.func @g(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {\n"
                  "  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
                  "(tensor<2x3xf32>) -> tensor<?x?xf32>\n"
                  "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>\n"
                  "  return %1 : tensor<3x5xf32>\n"
                  "}\n";
  ShapeInferrer inferrer;
  InferenceCache cache;
  FileAnalysis fa = analyzeText(g);
  std::vector<FunctionKey> keys = functionKeys(g, LineIndex(g), fa);
  std::vector<FunctionKey> unchecked;
  EXPECT_TRUE(cache.shapeErrors(keys, &unchecked).empty());
  ASSERT_EQ(unchecked.size(), 1u);
  EXPECT_TRUE(cache.store(keys, inferrer.infer(g, fa)));
  EXPECT_FALSE(cache.store(keys, inferrer.infer(g, fa))); // known already
  std::string moved = "// a comment\n// and another\n" + g;
  FileAnalysis fa2 = analyzeText(moved);
  std::vector<FunctionKey> keys2 = functionKeys(moved, LineIndex(moved), fa2);
  ASSERT_EQ(keys2.size(), 1u);
  EXPECT_NE(keys2[0].hash, keys[0].hash); // the section's text around it
  EXPECT_TRUE(cache.store(keys2, inferrer.infer(moved, fa2)));
  std::vector<Diagnostic> errors = cache.shapeErrors(keys2, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code, "shape-contradiction");
  EXPECT_EQ(errors[0].range.begin.line, 5u);
  EXPECT_EQ(errors[0].range.begin.column, 8u);
}

} // namespace
