//===- GraphTests.cpp - a function as nodes and edges ---------------------===//

#include "TestSupport.h"

#include "Graph.h"
#include "ShapeInference.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

const char *kFile =
    R"(func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %c: tensor<i1>, %d: tensor<3x2xf32>) -> tensor<?x3xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %bad = tosa.sub %a, %d : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3xf32>}> : () -> tensor<1x3xf32>
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %1 = tosa.cond_if %c : tensor<i1> -> tensor<?x3xf32> {
    %2 = tosa.mul %0, %w, %s : (tensor<?x3xf32>, tensor<1x3xf32>, tensor<1xi8>) -> tensor<?x3xf32>
    tosa.yield %2 : tensor<?x3xf32>
  } else {
    tosa.yield %0 : tensor<?x3xf32>
  }
  return %1 : tensor<?x3xf32>
}
)";

int find(const FunctionGraph &g, const std::string &label, unsigned nth = 0) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].label == label && nth-- == 0)
      return static_cast<int>(i);
  return -1;
}

bool edge(const FunctionGraph &g, int from, int to, const std::string &v) {
  for (const GraphEdge &e : g.edges)
    if (int(e.from) == from && int(e.to) == to && e.value == v)
      return true;
  return false;
}

TEST(Graph, NodesEdgesRegionsAndErrors) {
  FileAnalysis fa = analyzeText(kFile);
  const SymbolInfo *fn = graphFunctionAt(fa, {5, 5});
  ASSERT_TRUE(fn);
  EXPECT_EQ(graphFunctionNamed(fa, "@f"), fn);
  FunctionGraph g = buildGraph(fa, *fn);
  EXPECT_EQ(g.function, "f");
  int a = find(g, "%a"), c = find(g, "%c"), w = find(g, "tosa.const", 1),
      add = find(g, "tosa.add"), cond = find(g, "tosa.cond_if"),
      mul = find(g, "tosa.mul"), yield = find(g, "tosa.yield"),
      ret = find(g, "return");
  for (int n : {a, c, w, add, cond, mul, yield, ret})
    ASSERT_GE(n, 0);
  EXPECT_EQ(g.nodes[a].kind, GraphNode::Argument);
  EXPECT_EQ(g.nodes[a].types[0], "tensor<2x3xf32>");
  EXPECT_TRUE(g.nodes[w].constant);
  // Declared types also of ops that are neither Broadcastable nor inferred.
  EXPECT_EQ(g.nodes[w].types, std::vector<std::string>{"tensor<1x3xf32>"});
  EXPECT_EQ(g.nodes[w].inferred, std::vector<std::string>{""});
  EXPECT_EQ(g.nodes[cond].types, std::vector<std::string>{"tensor<?x3xf32>"});
  EXPECT_EQ(g.nodes[add].broadcast, "refinable");
  EXPECT_EQ(g.nodes[add].inferred[0], "tensor<2x3xf32>");
  // The first op's result is not an argument (its name precedes the op's).
  EXPECT_EQ(find(g, "%s"), -1);
  EXPECT_EQ(g.nodes[find(g, "tosa.const", 0)].id, "%s");
  EXPECT_EQ(g.nodes[mul].parent, cond);
  EXPECT_EQ(g.nodes[ret].kind, GraphNode::Return);
  EXPECT_EQ(g.nodes[add].id, "%0");
  EXPECT_EQ(g.nodes[yield].id, "tosa.yield#0");
  EXPECT_EQ(g.nodes[a].id, "%a");
  EXPECT_EQ(g.nodes[ret].id, "return#0");
  EXPECT_TRUE(edge(g, a, add, "%a"));
  EXPECT_TRUE(edge(g, add, mul, "%0"));
  EXPECT_TRUE(edge(g, w, mul, "%w"));
  EXPECT_TRUE(edge(g, c, cond, "%c"));
  EXPECT_TRUE(edge(g, cond, ret, "%1"));
  for (const GraphEdge &e : g.edges)
    if (e.value == "%0")
      EXPECT_TRUE(e.dynamic && e.refinable);
  // The function has an error: drawn, the op marked.
  int bad = find(g, "tosa.sub");
  ASSERT_GE(bad, 0);
  EXPECT_FALSE(g.nodes[bad].errors.empty());
  EXPECT_EQ(g.nodes[bad].broadcast, "incompatible");
  EXPECT_TRUE(g.nodes[add].errors.empty());
}

TEST(Graph, ShapeInferenceTypes) {
  std::string text = absChain(3);
  FileAnalysis fa = analyzeText(text);
  ShapeInferrer inferrer;
  ShapeInference si = inferrer.infer(text, fa);
  FunctionGraph g = buildGraph(fa, *graphFunctionNamed(fa, "f"), &si);
  int abs = find(g, "tosa.abs", 1);
  ASSERT_GE(abs, 0);
  EXPECT_EQ(g.nodes[abs].types[0], "tensor<?x?xf32>");
  EXPECT_EQ(g.nodes[abs].inferred[0], "tensor<3x2xf32>");
}

} // namespace
