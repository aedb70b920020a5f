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

/// Which nodes are sent, and what each node is drawn as: itself, or its
/// top-level ancestor when regions are left out (-1: omitted).
struct Plan {
  std::vector<std::string> ids;
  bool truncated = false;
  std::vector<int> drawnAs;
  std::vector<bool> collapsed;
  size_t kept = 0, omitted = 0;

  Plan(const FunctionGraph &g, size_t nodeLimit);
  /// Calls `f(from, to, edge)` for each edge sent.
  template <typename F> void forEachEdge(const FunctionGraph &g, F f) const {
    std::set<std::tuple<int, int, std::string>> seen; // merged if collapsed
    for (const GraphEdge &e : g.edges) {
      if (e.from >= g.nodes.size() || e.to >= g.nodes.size())
        continue;
      int from = drawnAs[e.from], to = drawnAs[e.to];
      if (from < 0 || to < 0 || from == to)
        continue;
      if (truncated && !seen.insert({from, to, e.value}).second)
        continue;
      f(from, to, e);
    }
  }
};

Plan::Plan(const FunctionGraph &g, size_t nodeLimit)
    : ids(uniqueIds(g)), truncated(g.nodes.size() > nodeLimit),
      drawnAs(g.nodes.size(), -1), collapsed(g.nodes.size(), false) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int top =
        truncated ? topLevel(g, static_cast<int>(i)) : static_cast<int>(i);
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
}

void writeRange(json::OStream &os, const lsp::Range &r) {
  auto pos = [&](const lsp::Position &p) {
    os.object([&] {
      os.attribute("line", p.line);
      os.attribute("character", p.character);
    });
  };
  os.object([&] {
    os.attributeBegin("start");
    pos(r.start);
    os.attributeEnd();
    os.attributeBegin("end");
    pos(r.end);
    os.attributeEnd();
  });
}

void writeStrings(json::OStream &os, const char *key,
                  const std::vector<std::string> &v) {
  os.attributeArray(key, [&] {
    for (const std::string &s : v)
      os.value(s);
  });
}

} // namespace

json::Object graphToJSON(const FunctionGraph &g, const LineTable &lines,
                         size_t nodeLimit) {
  Plan plan(g, nodeLimit);
  const std::vector<std::string> &ids = plan.ids;
  const std::vector<int> &drawnAs = plan.drawnAs;

  json::Array nodes;
  nodes.reserve(plan.kept);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (drawnAs[i] != static_cast<int>(i))
      continue;
    const GraphNode &n = g.nodes[i];
    const std::string *parent = n.parent >= 0 ? &ids[n.parent] : nullptr;
    json::Object o = nodeJSON(n, ids[i], parent, lines);
    if (plan.collapsed[i])
      o["collapsed"] = true;
    nodes.push_back(std::move(o));
  }

  json::Array edges;
  edges.reserve(g.edges.size());
  plan.forEachEdge(g, [&](int from, int to, const GraphEdge &e) {
    edges.push_back(json::Object{{"from", ids[from]},
                                 {"to", ids[to]},
                                 {"value", e.value},
                                 {"type", e.type},
                                 {"dynamic", e.dynamic},
                                 {"refinable", e.refinable}});
  });

  json::Object result{{"function", g.function},
                      {"range", toJSON(lines.toLsp(g.scope))},
                      {"nodes", std::move(nodes)},
                      {"edges", std::move(edges)},
                      {"truncated", plan.truncated}};
  if (plan.omitted)
    result["omitted"] = static_cast<int64_t>(plan.omitted);
  return result;
}

void writeGraphJSON(json::OStream &os, const FunctionGraph &g,
                    const LineTable &lines, size_t nodeLimit,
                    function_ref<void(json::OStream &)> extra) {
  Plan plan(g, nodeLimit);
  os.object([&] {
    if (extra)
      extra(os);
    os.attribute("function", g.function);
    os.attributeBegin("range");
    writeRange(os, lines.toLsp(g.scope));
    os.attributeEnd();
    os.attributeArray("nodes", [&] {
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (plan.drawnAs[i] != static_cast<int>(i))
          continue;
        const GraphNode &n = g.nodes[i];
        os.object([&] {
          os.attribute("id", plan.ids[i]);
          os.attribute("kind", kindName(n.kind));
          os.attribute("label", n.label);
          writeStrings(os, "results", n.results);
          os.attributeBegin("range");
          writeRange(os, lines.toLsp(n.range));
          os.attributeEnd();
          writeStrings(os, "types", n.types);
          writeStrings(os, "inferred", n.inferred);
          writeStrings(os, "errors", n.errors);
          os.attribute("broadcast", n.broadcast);
          os.attribute("constant", n.constant);
          os.attribute("constantBytes", static_cast<int64_t>(n.constantBytes));
          if (n.parent >= 0)
            os.attribute("parent", plan.ids[n.parent]);
          else
            os.attribute("parent", nullptr);
          if (plan.collapsed[i])
            os.attribute("collapsed", true);
        });
      }
    });
    os.attributeArray("edges", [&] {
      plan.forEachEdge(g, [&](int from, int to, const GraphEdge &e) {
        os.object([&] {
          os.attribute("from", plan.ids[from]);
          os.attribute("to", plan.ids[to]);
          os.attribute("value", e.value);
          os.attribute("type", e.type);
          os.attribute("dynamic", e.dynamic);
          os.attribute("refinable", e.refinable);
        });
      });
    });
    os.attribute("truncated", plan.truncated);
    if (plan.omitted)
      os.attribute("omitted", static_cast<int64_t>(plan.omitted));
  });
}

} // namespace tosa_lsp
