//===- GraphJSONTest.cpp - the `tosa/graph` result ------------------------===//

#include "TestSupport.h"

#include "GraphJSON.h"

#include <gtest/gtest.h>

#include <set>

using namespace tosa_lsp;
using namespace llvm;

namespace {

// Both branches define %2 (each region is a scope of its own); the
// argument attribute puts non-ASCII text before %b on its line.
const char *kFile =
    R"(func.func @f(%a: tensor<2x3xf32> {tosa.n = "é😀"}, %b: tensor<1x3xf32>, %c: tensor<i1>) -> tensor<?x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3xf32>}> : () -> tensor<1x3xf32>
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %1 = tosa.cond_if %c : tensor<i1> -> tensor<?x3xf32> {
    %2 = tosa.abs %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
    tosa.yield %2 : tensor<?x3xf32>
  } else {
    %2 = tosa.negate %w : (tensor<1x3xf32>) -> tensor<?x3xf32>
    tosa.yield %2 : tensor<?x3xf32>
  }
  return %1 : tensor<?x3xf32>
}
)";

/// The graph of @f as sent, without expanding it.
json::Object wireOf(const std::string &text, size_t limit = kGraphNodeLimit) {
  FileAnalysis fa = analyzeText(text);
  const SymbolInfo *fn = graphFunctionNamed(fa, "f");
  EXPECT_TRUE(fn);
  if (!fn)
    return {};
  LineTable lines(text, fa.lineIndex);
  return graphToJSON(buildGraph(fa, *fn), lines, limit);
}

json::Object graphOf(const std::string &text, size_t limit = kGraphNodeLimit) {
  json::Object wire = wireOf(text, limit);
  return wire.empty() ? wire : expandGraphJSON(std::move(wire));
}

const json::Object *nodeWithId(const json::Object &g, StringRef id) {
  for (const json::Value &n : *g.getArray("nodes"))
    if (n.getAsObject()->getString("id") == id)
      return n.getAsObject();
  return nullptr;
}

std::set<std::string> edgeSet(const json::Object &g) {
  std::set<std::string> s;
  for (const json::Value &e : *g.getArray("edges")) {
    const json::Object &o = *e.getAsObject();
    s.insert((*o.getString("from") + "->" + *o.getString("to") + " " +
              *o.getString("value"))
                 .str());
  }
  return s;
}

std::string str(const json::Value &v) {
  std::string s;
  raw_string_ostream(s) << v;
  return s;
}

TEST(GraphJSON, TheContract) {
  json::Object g = graphOf(kFile);
  EXPECT_EQ(g.getString("function"), "f");
  EXPECT_EQ(g.getBoolean("truncated"), false);
  EXPECT_EQ(g.get("omitted"), nullptr);
  EXPECT_EQ(
      str(*g.get("range")),
      R"({"end":{"character":1,"line":11},"start":{"character":0,"line":0}})");

  const json::Object *b = nodeWithId(g, "%b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->getString("kind"), "argument");
  // UTF-16 columns: "é" is one unit (two bytes), "😀" two (four bytes).
  size_t bytes = std::string(kFile).find("%b");
  EXPECT_EQ(str(*b->get("range")),
            "{\"end\":{\"character\":" + std::to_string(bytes - 3 + 2) +
                ",\"line\":0},\"start\":{\"character\":" +
                std::to_string(bytes - 3) + ",\"line\":0}}");
  EXPECT_EQ(str(*b->get("parent")), "null");

  const json::Object *add = nodeWithId(g, "%0");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->getString("kind"), "op");
  EXPECT_EQ(add->getString("label"), "tosa.add");
  EXPECT_EQ(str(*add->get("results")), R"(["%0"])");
  EXPECT_EQ(str(*add->get("types")), R"(["tensor<?x3xf32>"])");
  EXPECT_EQ(str(*add->get("inferred")), R"(["tensor<2x3xf32>"])");
  EXPECT_EQ(str(*add->get("errors")), "[]");
  EXPECT_EQ(add->getString("broadcast"), "refinable");
  EXPECT_EQ(add->getBoolean("constant"), false);
  EXPECT_EQ(
      str(*add->get("range")),
      R"({"end":{"character":15,"line":2},"start":{"character":7,"line":2}})");

  const json::Object *w = nodeWithId(g, "%w");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->getBoolean("constant"), true)
      << str(json::Value(json::Object(*w)));
  EXPECT_GT(*w->getInteger("constantBytes"), 0);

  // Regions: ops under their parent by id; sibling regions' %2 made unique.
  const json::Object *abs = nodeWithId(g, "%2"), *neg = nodeWithId(g, "%2#2");
  ASSERT_TRUE(abs && neg);
  EXPECT_EQ(abs->getString("label"), "tosa.abs");
  EXPECT_EQ(neg->getString("label"), "tosa.negate");
  EXPECT_EQ(abs->getString("parent"), "%1");
  EXPECT_EQ(nodeWithId(g, "return#0")->getString("kind"), "return");

  std::set<std::string> edges = edgeSet(g);
  for (const char *e : {"%a->%0 %a", "%0->%2 %0", "%w->%2#2 %w", "%c->%1 %c",
                        "%1->return#0 %1"})
    EXPECT_TRUE(edges.count(e)) << e;
  for (const json::Value &e : *g.getArray("edges")) {
    const json::Object &o = *e.getAsObject();
    if (o.getString("value") == "%0") {
      EXPECT_EQ(o.getString("type"), "tensor<?x3xf32>");
      EXPECT_EQ(o.getBoolean("dynamic"), true);
      EXPECT_EQ(o.getBoolean("refinable"), true);
    }
    if (o.getString("value") == "%a")
      EXPECT_EQ(o.getBoolean("dynamic"), false);
  }
}

// What is sent: defaults left out, types by their index in one table,
// ranges and edges as arrays, parents by index.
TEST(GraphJSON, TheWireFormIsCompact) {
  json::Object g = wireOf(kFile);
  EXPECT_EQ(str(*g.get("range")), "[0,0,11,1]");
  const json::Array *types = g.getArray("types");
  ASSERT_TRUE(types);
  EXPECT_EQ((*types)[0], json::Value(""));
  auto typeAt = [&](const json::Value &i) {
    return (*types)[*i.getAsInteger()].getAsString().value_or("<bad>").str();
  };
  std::set<std::string> distinct;
  for (const json::Value &t : *types)
    distinct.insert(t.getAsString()->str());
  EXPECT_EQ(distinct.size(), types->size()); // each type once

  const json::Array &nodes = *g.getArray("nodes");
  // An argument: named by its label, no results, no inferred type.
  const json::Object &a = *nodes[0].getAsObject();
  EXPECT_EQ(str(json::Value(json::Object(a))),
            R"({"kind":"argument","label":"%a","range":[0,13,0,15],)"
            R"("types":[)" +
                std::to_string(*(*a.getArray("types"))[0].getAsInteger()) +
                "]}");
  EXPECT_EQ(typeAt((*a.getArray("types"))[0]), "tensor<2x3xf32>");
  // tosa.add: named by its result; "kind", "errors", "constant",
  // "constantBytes", "parent" left out.
  const json::Object *add = nullptr, *abs = nullptr, *cond = nullptr;
  size_t condAt = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json::Object &n = *nodes[i].getAsObject();
    if (n.getString("label") == "tosa.add")
      add = &n;
    if (n.getString("label") == "tosa.abs")
      abs = &n;
    if (n.getString("label") == "tosa.cond_if")
      cond = &n, condAt = i;
  }
  ASSERT_TRUE(add && abs && cond);
  for (const char *k : {"id", "kind", "errors", "constant", "constantBytes",
                        "parent", "collapsed"})
    EXPECT_EQ(add->get(k), nullptr) << k;
  EXPECT_EQ(str(*add->get("range")), "[2,7,2,15]");
  EXPECT_EQ(typeAt((*add->getArray("types"))[0]), "tensor<?x3xf32>");
  EXPECT_EQ(typeAt((*add->getArray("inferred"))[0]), "tensor<2x3xf32>");
  EXPECT_EQ(add->getString("broadcast"), "refinable");
  EXPECT_EQ(abs->getInteger("parent"), static_cast<int64_t>(condAt));
  EXPECT_EQ(abs->get("inferred"), nullptr); // the same as declared
  // A second %2 in the sibling region says its id.
  bool renamed = false;
  for (const json::Value &v : nodes)
    renamed |= v.getAsObject()->getString("id") == "%2#2";
  EXPECT_TRUE(renamed);

  // Edges: [from, to, value, type, flags].
  bool seen = false;
  for (const json::Value &v : *g.getArray("edges")) {
    const json::Array &e = *v.getAsArray();
    ASSERT_EQ(e.size(), 5u);
    if (e[2] != json::Value("%0"))
      continue;
    seen = true;
    EXPECT_EQ(nodes[*e[0].getAsInteger()].getAsObject(), add);
    EXPECT_EQ(typeAt(e[3]), "tensor<?x3xf32>");
    EXPECT_EQ(e[4], json::Value(3)); // dynamic | refinable
  }
  EXPECT_TRUE(seen);
}

TEST(GraphJSON, IdsSurviveAnEditElsewhereInTheFunction) {
  json::Object before = graphOf(kFile);
  std::string edited = kFile;
  size_t at = edited.find("  %0 = tosa.add");
  edited.insert(at, "  %n = tosa.abs %a : (tensor<2x3xf32>) -> "
                    "tensor<2x3xf32>\n");
  json::Object after = graphOf(edited);
  std::set<std::string> idsBefore, idsAfter;
  for (const json::Value &n : *before.getArray("nodes"))
    idsBefore.insert(n.getAsObject()->getString("id")->str());
  for (const json::Value &n : *after.getArray("nodes"))
    idsAfter.insert(n.getAsObject()->getString("id")->str());
  idsBefore.insert("%n");
  EXPECT_EQ(idsBefore, idsAfter);
  // The same node under the same id, now a line further down.
  EXPECT_EQ(
      str(*nodeWithId(after, "%0")->get("range")),
      R"({"end":{"character":15,"line":3},"start":{"character":7,"line":3}})");
  std::set<std::string> edgesBefore = edgeSet(before),
                        edgesAfter = edgeSet(after);
  edgesBefore.insert("%a->%n %a");
  EXPECT_EQ(edgesBefore, edgesAfter);
}

TEST(GraphJSON, AboveTheLimitRegionsAreLeftOut) {
  json::Object all = graphOf(kFile);
  size_t n = all.getArray("nodes")->size();
  json::Object g = graphOf(kFile, n - 1);
  EXPECT_EQ(g.getBoolean("truncated"), true);
  EXPECT_FALSE(nodeWithId(g, "%2"));
  EXPECT_FALSE(nodeWithId(g, "tosa.yield#0"));
  const json::Object *cond = nodeWithId(g, "%1");
  ASSERT_TRUE(cond);
  EXPECT_EQ(cond->getBoolean("collapsed"), true);
  EXPECT_EQ(nodeWithId(g, "%0")->get("collapsed"), nullptr);
  // Values used inside the regions now enter the region op, once each.
  std::set<std::string> edges = edgeSet(g);
  EXPECT_TRUE(edges.count("%0->%1 %0"));
  EXPECT_TRUE(edges.count("%w->%1 %w"));
  EXPECT_EQ(g.getArray("edges")->size(), edges.size());
  for (const json::Value &e : *g.getArray("edges")) {
    const json::Object &o = *e.getAsObject();
    EXPECT_TRUE(nodeWithId(g, *o.getString("from")) &&
                nodeWithId(g, *o.getString("to")))
        << str(e);
  }
  // Fewer still: the first nodes in text order, the rest counted.
  json::Object few = graphOf(kFile, 4);
  EXPECT_EQ(few.getArray("nodes")->size(), 4u);
  EXPECT_TRUE(nodeWithId(few, "%a") && nodeWithId(few, "%w"));
  EXPECT_GT(*few.getInteger("omitted"), 0);
  for (const json::Value &e : *few.getArray("edges")) {
    const json::Object &o = *e.getAsObject();
    EXPECT_TRUE(nodeWithId(few, *o.getString("from")) &&
                nodeWithId(few, *o.getString("to")));
  }
}

// A region defines %5 and the function after it again; the region holds
// an error.
const char *kCut =
    R"(func.func @f(%a: tensor<2x3xf32>, %c: tensor<i1>, %d: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %1 = tosa.cond_if %c : tensor<i1> -> tensor<2x3xf32> {
    %5 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %6 = tosa.sub %5, %d : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    tosa.yield %5 : tensor<2x3xf32>
  } else {
    tosa.yield %a : tensor<2x3xf32>
  }
  %5 = tosa.exp %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = tosa.add %5, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %7 : tensor<2x3xf32>
}
)";

std::vector<std::string> idsOf(const json::Object &g) {
  std::vector<std::string> ids;
  for (const json::Value &n : *g.getArray("nodes"))
    ids.push_back(
        n.getAsObject()->getString("id")->str() +
        (n.getAsObject()->getBoolean("collapsed") ? " collapsed" : ""));
  return ids;
}

// The server builds the model cut to the node limit (a 50k-op function's
// model is not made whole first): what it sends is the whole model cut.
TEST(GraphJSON, AModelBuiltCutIsTheWholeModelCut) {
  const std::string text = kCut;
  FileAnalysis fa = analyzeText(text);
  const SymbolInfo *fn = graphFunctionNamed(fa, "f");
  ASSERT_TRUE(fn);
  LineTable lines(text, fa.lineIndex);
  FunctionGraph whole = buildGraph(fa, *fn);
  size_t n = whole.nodes.size();
  ASSERT_EQ(n, 11u);
  EXPECT_FALSE(whole.truncated);
  // Under the limit: the same model.
  EXPECT_EQ(str(graphToJSON(buildGraph(fa, *fn, nullptr, n), lines, n)),
            str(graphToJSON(whole, lines, n)));
  for (size_t limit : {n - 1, size_t(6), size_t(3), size_t(1)}) {
    FunctionGraph cut = buildGraph(fa, *fn, nullptr, limit);
    EXPECT_TRUE(cut.truncated) << limit;
    EXPECT_LE(cut.nodes.size(), limit);
    json::Object a = expandGraphJSON(graphToJSON(cut, lines, limit)),
                 b = expandGraphJSON(graphToJSON(whole, lines, limit));
    EXPECT_EQ(idsOf(a), idsOf(b)) << limit;
    EXPECT_EQ(edgeSet(a), edgeSet(b)) << limit;
    EXPECT_EQ(a.getBoolean("truncated"), true);
    EXPECT_EQ(a.getInteger("omitted"), b.getInteger("omitted")) << limit;
  }
  // Ids are counted over every op, sent or not: the function's own %5
  // comes second in text order.
  json::Object top = expandGraphJSON(
      graphToJSON(buildGraph(fa, *fn, nullptr, n - 1), lines, n - 1));
  EXPECT_EQ(idsOf(top),
            (std::vector<std::string>{"%a", "%c", "%d", "%1 collapsed", "%5#2",
                                      "%7", "return#0"}));
  // An error inside a collapsed region shows on the region op.
  const json::Array *errors = nodeWithId(top, "%1")->getArray("errors");
  ASSERT_TRUE(errors);
  EXPECT_EQ(errors->size(), 1u);
  EXPECT_EQ(nodeWithId(top, "%5#2")->getArray("errors")->size(), 0u);
}

} // namespace

namespace {

TEST(GraphJSON, TheStreamedFormIsTheSameObject) {
  const std::string text = kFile; // LineTable keeps a reference
  FileAnalysis fa = analyzeText(text);
  LineTable lines(text, fa.lineIndex);
  FunctionGraph g = buildGraph(fa, *graphFunctionNamed(fa, "f"));
  for (size_t limit : {kGraphNodeLimit, g.nodes.size() - 1, size_t(4)}) {
    std::string wire;
    raw_string_ostream ts(wire);
    json::Object extra{{"uri", "file:///x.mlir"}, {"version", 3}};
    writeGraphJSON(ts, g, lines, limit, &extra);
    Expected<json::Value> parsed = json::parse(wire);
    ASSERT_TRUE(bool(parsed)) << toString(parsed.takeError());
    json::Object expected = graphToJSON(g, lines, limit);
    expected["uri"] = "file:///x.mlir";
    expected["version"] = 3;
    EXPECT_EQ(*parsed, json::Value(std::move(expected))) << wire;
    EXPECT_EQ(
        wire.rfind(R"({"uri":"file:///x.mlir","version":3,"function")", 0), 0u);
  }
}

TEST(GraphJSON, TheStreamedFormEscapesAsJSONDoes) {
  // Quotes, backslashes, control characters and bad UTF-8 in what the
  // file wrote (an error message quotes it).
  const std::string text = "func.func @f() {\n  return\n}\n";
  FileAnalysis fa = analyzeText(text);
  LineTable lines(text, fa.lineIndex);
  FunctionGraph g;
  g.function = "f";
  GraphNode n;
  n.id = "%0";
  n.label = "tosa.\"odd\\op\"\n\t\x01";
  n.errors = {"bad \xff byte", "tab\there"};
  n.types = {"tensor<2x\"3xf32>"};
  n.inferred = {""};
  g.nodes.push_back(n);
  std::string out;
  raw_string_ostream os(out);
  writeGraphJSON(os, g, lines);
  Expected<json::Value> parsed = json::parse(out);
  ASSERT_TRUE(bool(parsed)) << toString(parsed.takeError()) << out;
  EXPECT_EQ(*parsed, json::Value(graphToJSON(g, lines))) << out;
}

} // namespace
