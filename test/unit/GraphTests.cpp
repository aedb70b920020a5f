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

// A lowered function, as lowering/LoweredGraph.cpp walks one: nodes at
// the source ops of their locations, edges by value name, nested ops under
// their parent, arguments at the source's arguments.
TEST(Graph, AGenericWalkWithTheSourceItCameFrom) {
  FileAnalysis fa = analyzeText(kFile);
  FunctionGraph source = buildGraph(fa, *graphFunctionNamed(fa, "f"));
  GenericFunction f;
  f.name = "f";
  f.stage = "linalg";
  f.args = {"%arg0", "%arg1"};
  f.argTypes = {"tensor<2x3xf32>", "tensor<1x3xf32>"};
  auto op = [](std::string name, std::vector<std::string> in,
               std::vector<std::string> out, int parent, Position at) {
    GenericOp o;
    o.name = std::move(name);
    o.operands = std::move(in);
    o.results = out;
    o.types.assign(out.size(), "tensor<?x3xf32>");
    o.parent = parent;
    o.source = at;
    return o;
  };
  // %0 = tosa.add is on line 5 (its result at column 3).
  f.ops = {op("tensor.empty", {}, {"%0"}, -1, {5, 3}),
           op("linalg.generic", {"%arg0", "%arg1", "%0"}, {"%1"}, -1, {5, 3}),
           op("scf.if", {"%1"}, {"%2"}, -1, {}),
           op("arith.negf", {"%1"}, {"%3"}, 2, {}),
           op("func.return", {"%2"}, {}, -1, {12, 3})};
  FunctionGraph g = buildGraph(f, &source);
  ASSERT_EQ(g.nodes.size(), 7u);
  int add = find(source, "tosa.add"), a = find(source, "%a");
  int gen = find(g, "linalg.generic"), neg = find(g, "arith.negf"),
      sif = find(g, "scf.if"), ret = find(g, "return");
  EXPECT_EQ(g.nodes[gen].range.begin.line, source.nodes[add].range.begin.line);
  EXPECT_EQ(g.nodes[gen].range.begin.column,
            source.nodes[add].range.begin.column);
  EXPECT_EQ(g.nodes[0].range.begin.column, source.nodes[a].range.begin.column);
  EXPECT_EQ(g.nodes[neg].parent, sif);
  EXPECT_EQ(g.nodes[ret].kind, GraphNode::Return);
  EXPECT_EQ(g.nodes[gen].id, "%1");
  EXPECT_TRUE(edge(g, 0, gen, "%arg0"));
  EXPECT_TRUE(edge(g, find(g, "tensor.empty"), gen, "%0"));
  EXPECT_TRUE(edge(g, gen, neg, "%1"));
  EXPECT_TRUE(edge(g, sif, ret, "%2"));
  EXPECT_EQ(g.edges.size(), 6u);
  for (const GraphEdge &e : g.edges)
    if (e.value == "%1")
      EXPECT_TRUE(e.dynamic);
}

} // namespace
