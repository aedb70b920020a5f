//===- GraphJSON.cpp - a function's graph as the `tosa/graph` result ------===//

#include "GraphJSON.h"

#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace tosa_lsp {

namespace {

const char *kindName(GraphNode::Kind k) {
  switch (k) {
  case GraphNode::Argument:
    return "argument";
  case GraphNode::Return:
    return "return";
  case GraphNode::Op:
    break;
  }
  return "op";
}

json::Array strings(const std::vector<std::string> &v) {
  json::Array a;
  a.reserve(v.size());
  for (const std::string &s : v)
    a.push_back(s);
  return a;
}

/// Node ids made unique: sibling regions may both define `%2` (each region
/// is a scope of its own), so a repeated id gets `#2`, `#3`... in text
/// order, which edits elsewhere in the function do not change.
std::vector<std::string> uniqueIds(const FunctionGraph &g) {
  std::vector<std::string> ids;
  ids.reserve(g.nodes.size());
  std::map<std::string, unsigned> seen;
  for (const GraphNode &n : g.nodes) {
    unsigned k = ++seen[n.id];
    ids.push_back(k == 1 ? n.id : n.id + "#" + std::to_string(k));
  }
  return ids;
}

/// The top-level node each node is drawn as when regions are left out.
int topLevel(const FunctionGraph &g, int i) {
  // Parents come before their children, so this ends; the bound guards
  // against a malformed model anyway.
  for (size_t steps = 0; g.nodes[i].parent >= 0 && steps < g.nodes.size();
       ++steps)
    i = g.nodes[i].parent;
  return i;
}

json::Object nodeJSON(const GraphNode &n, const std::string &id,
                      const std::string *parent, const LineTable &lines) {
  json::Object o{{"id", id},
                 {"kind", kindName(n.kind)},
                 {"label", n.label},
                 {"results", strings(n.results)},
                 {"range", toJSON(lines.toLsp(n.range))},
                 {"types", strings(n.types)},
                 {"inferred", strings(n.inferred)},
                 {"errors", strings(n.errors)},
                 {"broadcast", n.broadcast},
                 {"constant", n.constant},
                 {"constantBytes", static_cast<int64_t>(n.constantBytes)}};
  o["parent"] = parent ? json::Value(*parent) : json::Value(nullptr);
  return o;
}

} // namespace

json::Object graphToJSON(const FunctionGraph &g, const LineTable &lines,
                         size_t nodeLimit) {
  std::vector<std::string> ids = uniqueIds(g);
  bool truncated = g.nodes.size() > nodeLimit;
  // Which nodes are sent, and what each node is drawn as (itself, or its
  // top-level ancestor when regions are left out).
  std::vector<int> drawnAs(g.nodes.size(), -1);
  std::vector<bool> collapsed(g.nodes.size(), false);
  size_t kept = 0, omitted = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int top = truncated ? topLevel(g, static_cast<int>(i)) : static_cast<int>(i);
    if (top != static_cast<int>(i)) {
      drawnAs[i] = drawnAs[top]; // -1 when the ancestor was omitted
      if (drawnAs[top] >= 0)
        collapsed[top] = true;
      continue;
    }
    if (kept < nodeLimit) {
      drawnAs[i] = static_cast<int>(i);
      ++kept;
    } else {
      ++omitted;
    }
  }

  json::Array nodes;
  nodes.reserve(kept);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (drawnAs[i] != static_cast<int>(i))
      continue;
    const GraphNode &n = g.nodes[i];
    const std::string *parent = n.parent >= 0 ? &ids[n.parent] : nullptr;
    json::Object o = nodeJSON(n, ids[i], parent, lines);
    if (collapsed[i])
      o["collapsed"] = true;
    nodes.push_back(std::move(o));
  }

  json::Array edges;
  edges.reserve(g.edges.size());
  std::set<std::tuple<int, int, std::string>> seen; // merged when collapsed
  for (const GraphEdge &e : g.edges) {
    if (e.from >= g.nodes.size() || e.to >= g.nodes.size())
      continue;
    int from = drawnAs[e.from], to = drawnAs[e.to];
    if (from < 0 || to < 0 || from == to)
      continue;
    if (truncated && !seen.insert({from, to, e.value}).second)
      continue;
    edges.push_back(json::Object{{"from", ids[from]},
                                 {"to", ids[to]},
                                 {"value", e.value},
                                 {"type", e.type},
                                 {"dynamic", e.dynamic},
                                 {"refinable", e.refinable}});
  }

  json::Object result{{"function", g.function},
                      {"range", toJSON(lines.toLsp(g.scope))},
                      {"nodes", std::move(nodes)},
                      {"edges", std::move(edges)},
                      {"truncated", truncated}};
  if (omitted)
    result["omitted"] = static_cast<int64_t>(omitted);
  return result;
}

} // namespace tosa_lsp
