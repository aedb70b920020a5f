//===- GraphJSON.cpp - a function's graph as the `tosa/graph` result ------===//

#include "GraphJSON.h"

#include <charconv>
#include <cstdio>
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
  size_t kept = 0;
  size_t omitted = 0;

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

// A graph built cut (buildGraph's nodeLimit) is sent as it is, with what
// it says was cut; one built whole is cut here.
Plan::Plan(const FunctionGraph &g, size_t nodeLimit)
    : ids(uniqueIds(g)), truncated(g.truncated || g.nodes.size() > nodeLimit),
      drawnAs(g.nodes.size(), -1), collapsed(g.nodes.size(), false),
      omitted(g.omitted) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    collapsed[i] = g.nodes[i].collapsed;
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

/// The reply's text, written by hand into one string: json::OStream spends
/// ~0.5 us a token on indentation and escaping bookkeeping, and a
/// 4,000-op graph is ~200k tokens (2 MB); this writes them in a few ms.
class Writer {
public:
  explicit Writer(std::string &out) : out(out) {}

  void raw(StringRef s) { out.append(s.data(), s.size()); }
  void key(StringRef k) {
    comma();
    out += '"';
    raw(k); // our own keys: nothing to escape
    raw("\":");
    first = true; // the value follows without a comma
  }
  void string(StringRef s) {
    comma();
    if (!json::isUTF8(s)) {
      std::string fixed = json::fixUTF8(s);
      return quoted(fixed);
    }
    quoted(s);
  }
  void number(int64_t v) {
    comma();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
  void boolean(bool v) {
    comma();
    raw(v ? "true" : "false");
  }
  void null() {
    comma();
    raw("null");
  }
  void open(char c) {
    comma();
    out += c;
    first = true;
  }
  void close(char c) {
    out += c;
    first = false;
  }
  void strings(StringRef k, const std::vector<std::string> &v) {
    key(k);
    open('[');
    for (const std::string &s : v)
      string(s);
    close(']');
  }
  void range(StringRef k, const lsp::Range &r) {
    key(k);
    open('{');
    position("start", r.start);
    position("end", r.end);
    close('}');
  }
  /// A value of another kind (the server's "uri" and "version").
  void value(const json::Value &v) {
    comma();
    raw_string_ostream os(out);
    os << v;
  }

private:
  std::string &out;
  bool first = true;

  void comma() {
    if (!first)
      out += ',';
    first = false;
  }
  void position(StringRef k, const lsp::Position &p) {
    key(k);
    open('{');
    key("line");
    number(p.line);
    key("character");
    number(p.character);
    close('}');
  }
  void quoted(StringRef s) {
    out += '"';
    size_t plain = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      unsigned char c = s[i];
      if (c >= 0x20 && c != '"' && c != '\\')
        continue;
      raw(s.slice(plain, i));
      plain = i + 1;
      switch (c) {
      case '"':
        raw("\\\"");
        break;
      case '\\':
        raw("\\\\");
        break;
      case '\n':
        raw("\\n");
        break;
      case '\t':
        raw("\\t");
        break;
      case '\r':
        raw("\\r");
        break;
      default: {
        char buf[8];
        snprintf(buf, sizeof buf, "\\u%04x", c);
        raw(buf);
      }
      }
    }
    raw(s.substr(plain));
    out += '"';
  }
};

void writeNode(Writer &w, const GraphNode &n, const Plan &plan, size_t i,
               const LineTable &lines) {
  w.open('{');
  w.key("id");
  w.string(plan.ids[i]);
  w.key("kind");
  w.string(kindName(n.kind));
  w.key("label");
  w.string(n.label);
  w.strings("results", n.results);
  w.range("range", lines.toLsp(n.range));
  w.strings("types", n.types);
  w.strings("inferred", n.inferred);
  w.strings("errors", n.errors);
  w.key("broadcast");
  w.string(n.broadcast);
  w.key("constant");
  w.boolean(n.constant);
  w.key("constantBytes");
  w.number(static_cast<int64_t>(n.constantBytes));
  w.key("parent");
  if (n.parent >= 0)
    w.string(plan.ids[n.parent]);
  else
    w.null();
  if (plan.collapsed[i]) {
    w.key("collapsed");
    w.boolean(true);
  }
  w.close('}');
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

void writeGraphJSON(raw_ostream &out, const FunctionGraph &g,
                    const LineTable &lines, size_t nodeLimit,
                    const json::Object *extra) {
  Plan plan(g, nodeLimit);
  std::string text;
  text.reserve(300 * g.nodes.size() + 150 * g.edges.size() + 256);
  Writer w(text);
  w.open('{');
  if (extra) {
    // Sorted, as json::Object prints them.
    std::vector<const json::Object::value_type *> kv;
    for (const auto &e : *extra)
      kv.push_back(&e);
    llvm::sort(kv, [](auto *a, auto *b) { return a->first < b->first; });
    for (const auto *e : kv) {
      w.key(e->first);
      w.value(e->second);
    }
  }
  w.key("function");
  w.string(g.function);
  w.range("range", lines.toLsp(g.scope));
  w.key("nodes");
  w.open('[');
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (plan.drawnAs[i] == static_cast<int>(i))
      writeNode(w, g.nodes[i], plan, i, lines);
  w.close(']');
  w.key("edges");
  w.open('[');
  plan.forEachEdge(g, [&](int from, int to, const GraphEdge &e) {
    w.open('{');
    w.key("from");
    w.string(plan.ids[from]);
    w.key("to");
    w.string(plan.ids[to]);
    w.key("value");
    w.string(e.value);
    w.key("type");
    w.string(e.type);
    w.key("dynamic");
    w.boolean(e.dynamic);
    w.key("refinable");
    w.boolean(e.refinable);
    w.close('}');
  });
  w.close(']');
  w.key("truncated");
  w.boolean(plan.truncated);
  if (plan.omitted) {
    w.key("omitted");
    w.number(static_cast<int64_t>(plan.omitted));
  }
  w.close('}');
  out << text;
}

} // namespace tosa_lsp
