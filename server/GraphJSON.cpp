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

/// Which nodes are sent, and what each node is drawn as: itself, or its
/// top-level ancestor when regions are left out (-1: omitted).
struct Plan {
  std::vector<std::string> ids;
  bool truncated = false;
  std::vector<int> drawnAs;
  std::vector<bool> collapsed;
  /// Each node's index in the reply's "nodes" (-1: not sent).
  std::vector<int> sent;
  size_t kept = 0;
  size_t omitted = 0;

  Plan(const FunctionGraph &g, size_t nodeLimit);
  bool isSent(size_t i) const { return drawnAs[i] == static_cast<int>(i); }
  /// What the reply writes as "parent": the index of a sent parent.
  int parentOf(const GraphNode &n) const {
    return n.parent >= 0 && static_cast<size_t>(n.parent) < sent.size()
               ? sent[n.parent]
               : -1;
  }
  /// Whether node `i`'s id goes without saying: it is its first result's
  /// name, or its label when it has no results.
  bool idImplied(const GraphNode &n, size_t i) const {
    return ids[i] == (n.results.empty() ? n.label : n.results.front());
  }
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
      sent(g.nodes.size(), -1), omitted(g.omitted) {
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
      sent[i] = static_cast<int>(kept++);
    } else {
      ++omitted;
    }
  }
}

/// The reply's table of type strings: a type is sent once and named by
/// its index (a 4,000-op model has ~30 distinct types for ~20,000 uses);
/// 0 is "" (no type).
class TypeTable {
public:
  TypeTable() { index(""); }
  int64_t index(const std::string &t) {
    auto [it, fresh] = at.try_emplace(t, static_cast<int64_t>(all.size()));
    if (fresh)
      all.push_back(&it->first);
    return it->second;
  }
  const std::vector<const std::string *> &strings() const { return all; }

private:
  std::map<std::string, int64_t> at;
  std::vector<const std::string *> all;
};

/// Edge flags: what the edge's type says about the value.
int64_t edgeFlags(const GraphEdge &e) {
  return (e.dynamic ? 1 : 0) | (e.refinable ? 2 : 0);
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
  /// A range as [startLine, startCharacter, endLine, endCharacter].
  void range(StringRef k, const lsp::Range &r) {
    key(k);
    open('[');
    number(r.start.line);
    number(r.start.character);
    number(r.end.line);
    number(r.end.character);
    close(']');
  }
  void numbers(StringRef k, const std::vector<int64_t> &v) {
    key(k);
    open('[');
    for (int64_t x : v)
      number(x);
    close(']');
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

/// One node as the reply sends it: fields at their default are left out.
struct WireNode {
  const std::string *id = nullptr; // null: implied (Plan::idImplied)
  const char *kind = nullptr;      // null: "op"
  const GraphNode *n = nullptr;
  lsp::Range range;
  std::vector<int64_t> types, inferred; // inferred: empty when all 0
  int parent = -1;
  bool collapsed = false;
};

WireNode wireNode(const FunctionGraph &g, const Plan &plan, size_t i,
                  const LineTable &lines, TypeTable &table) {
  const GraphNode &n = g.nodes[i];
  WireNode w;
  w.n = &n;
  if (!plan.idImplied(n, i))
    w.id = &plan.ids[i];
  if (n.kind != GraphNode::Op)
    w.kind = kindName(n.kind);
  w.range = lines.toLsp(n.range);
  for (const std::string &t : n.types)
    w.types.push_back(table.index(t));
  bool refined = false;
  for (const std::string &t : n.inferred) {
    w.inferred.push_back(table.index(t));
    refined |= !t.empty();
  }
  if (!refined)
    w.inferred.clear();
  w.parent = plan.parentOf(n);
  w.collapsed = plan.collapsed[i];
  return w;
}

void writeNode(Writer &w, const WireNode &v) {
  const GraphNode &n = *v.n;
  w.open('{');
  if (v.id) {
    w.key("id");
    w.string(*v.id);
  }
  if (v.kind) {
    w.key("kind");
    w.string(v.kind);
  }
  w.key("label");
  w.string(n.label);
  if (!n.results.empty())
    w.strings("results", n.results);
  w.range("range", v.range);
  if (!v.types.empty())
    w.numbers("types", v.types);
  if (!v.inferred.empty())
    w.numbers("inferred", v.inferred);
  if (!n.errors.empty())
    w.strings("errors", n.errors);
  if (!n.broadcast.empty()) {
    w.key("broadcast");
    w.string(n.broadcast);
  }
  if (n.constant) {
    w.key("constant");
    w.boolean(true);
  }
  if (n.constantBytes) {
    w.key("constantBytes");
    w.number(static_cast<int64_t>(n.constantBytes));
  }
  if (v.parent >= 0) {
    w.key("parent");
    w.number(v.parent);
  }
  if (v.collapsed) {
    w.key("collapsed");
    w.boolean(true);
  }
  w.close('}');
}

json::Array rangeJSON(const lsp::Range &r) {
  return json::Array{r.start.line, r.start.character, r.end.line,
                     r.end.character};
}

json::Array stringsJSON(const std::vector<std::string> &v) {
  return json::Array(v);
}

json::Object nodeJSON(const WireNode &v) {
  const GraphNode &n = *v.n;
  json::Object o{{"label", n.label}, {"range", rangeJSON(v.range)}};
  if (v.id)
    o["id"] = *v.id;
  if (v.kind)
    o["kind"] = v.kind;
  if (!n.results.empty())
    o["results"] = stringsJSON(n.results);
  if (!v.types.empty())
    o["types"] = json::Array(v.types);
  if (!v.inferred.empty())
    o["inferred"] = json::Array(v.inferred);
  if (!n.errors.empty())
    o["errors"] = stringsJSON(n.errors);
  if (!n.broadcast.empty())
    o["broadcast"] = n.broadcast;
  if (n.constant)
    o["constant"] = true;
  if (n.constantBytes)
    o["constantBytes"] = static_cast<int64_t>(n.constantBytes);
  if (v.parent >= 0)
    o["parent"] = v.parent;
  if (v.collapsed)
    o["collapsed"] = true;
  return o;
}

json::Array typesJSON(const TypeTable &table) {
  json::Array a;
  for (const std::string *t : table.strings())
    a.push_back(*t);
  return a;
}

} // namespace

json::Object graphToJSON(const FunctionGraph &g, const LineTable &lines,
                         size_t nodeLimit) {
  Plan plan(g, nodeLimit);
  TypeTable table;
  json::Array nodes;
  nodes.reserve(plan.kept);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (plan.isSent(i))
      nodes.push_back(nodeJSON(wireNode(g, plan, i, lines, table)));

  json::Array edges;
  edges.reserve(g.edges.size());
  plan.forEachEdge(g, [&](int from, int to, const GraphEdge &e) {
    edges.push_back(json::Array{plan.sent[from], plan.sent[to], e.value,
                                table.index(e.type), edgeFlags(e)});
  });

  json::Object result{
      {"function", g.function},    {"range", rangeJSON(lines.toLsp(g.scope))},
      {"nodes", std::move(nodes)}, {"edges", std::move(edges)},
      {"types", typesJSON(table)}, {"truncated", plan.truncated}};
  if (plan.omitted)
    result["omitted"] = static_cast<int64_t>(plan.omitted);
  return result;
}

void writeGraphJSON(raw_ostream &out, const FunctionGraph &g,
                    const LineTable &lines, size_t nodeLimit,
                    const json::Object *extra) {
  Plan plan(g, nodeLimit);
  TypeTable table;
  std::string text;
  text.reserve(100 * g.nodes.size() + 30 * g.edges.size() + 256);
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
    if (plan.isSent(i))
      writeNode(w, wireNode(g, plan, i, lines, table));
  w.close(']');
  w.key("edges");
  w.open('[');
  plan.forEachEdge(g, [&](int from, int to, const GraphEdge &e) {
    w.open('[');
    w.number(plan.sent[from]);
    w.number(plan.sent[to]);
    w.string(e.value);
    w.number(table.index(e.type));
    w.number(edgeFlags(e));
    w.close(']');
  });
  w.close(']');
  // Last: the table is complete once nodes and edges are written.
  w.key("types");
  w.open('[');
  for (const std::string *t : table.strings())
    w.string(*t);
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

namespace {

json::Value rangeObject(const json::Array *r) {
  auto at = [&](size_t k) {
    return r && k < r->size() ? (*r)[k].getAsInteger().value_or(0) : 0;
  };
  auto pos = [&](size_t k) {
    return json::Object{{"line", at(k)}, {"character", at(k + 1)}};
  };
  return json::Object{{"start", pos(0)}, {"end", pos(2)}};
}

/// Type indices as their strings ("" for a bad index).
json::Array typeStrings(const json::Array *indices, const json::Array &types,
                        size_t count) {
  json::Array out;
  for (size_t k = 0; k < count; ++k) {
    int64_t i = indices && k < indices->size()
                    ? (*indices)[k].getAsInteger().value_or(0)
                    : 0;
    bool ok = i >= 0 && static_cast<size_t>(i) < types.size();
    out.push_back(ok ? types[i] : json::Value(""));
  }
  return out;
}

json::Array arrayOr(const json::Object &o, StringRef k) {
  const json::Array *a = o.getArray(k);
  return a ? *a : json::Array();
}

} // namespace

json::Object expandGraphJSON(const json::Object &wire) {
  static const json::Array kNone;
  const json::Array *types = wire.getArray("types");
  const json::Array &table = types ? *types : kNone;
  const json::Array *nodes = wire.getArray("nodes");
  std::vector<std::string> ids;
  json::Array outNodes;
  for (const json::Value &v : nodes ? *nodes : kNone) {
    const json::Object *n = v.getAsObject();
    if (!n)
      continue;
    json::Array results = arrayOr(*n, "results");
    std::string label = n->getString("label").value_or("").str();
    std::optional<StringRef> id = n->getString("id");
    std::string first = results.empty()
                            ? label
                            : results.front().getAsString().value_or("").str();
    ids.push_back(id ? id->str() : first);
    const json::Array *declared = n->getArray("types");
    size_t count = declared ? declared->size() : 0;
    const json::Array *inferred = n->getArray("inferred");
    std::optional<int64_t> parent = n->getInteger("parent");
    json::Object o{
        {"id", ids.back()},
        {"kind", n->getString("kind").value_or("op")},
        {"label", label},
        {"results", std::move(results)},
        {"range", rangeObject(n->getArray("range"))},
        {"types", typeStrings(declared, table, count)},
        {"inferred",
         typeStrings(inferred, table, inferred ? inferred->size() : count)},
        {"errors", arrayOr(*n, "errors")},
        {"broadcast", n->getString("broadcast").value_or("")},
        {"constant", n->getBoolean("constant").value_or(false)},
        {"constantBytes", n->getInteger("constantBytes").value_or(0)},
        {"parent", parent ? json::Value(*parent) : json::Value(nullptr)}};
    if (n->getBoolean("collapsed").value_or(false))
      o["collapsed"] = true;
    outNodes.push_back(std::move(o));
  }
  // Parents by id, now that every id is known.
  for (json::Value &v : outNodes) {
    json::Object &o = *v.getAsObject();
    std::optional<int64_t> p = o.getInteger("parent");
    bool ok = p && *p >= 0 && static_cast<size_t>(*p) < ids.size();
    o["parent"] = ok ? json::Value(ids[*p]) : json::Value(nullptr);
  }
  json::Array outEdges;
  const json::Array *edges = wire.getArray("edges");
  for (const json::Value &v : edges ? *edges : kNone) {
    const json::Array *e = v.getAsArray();
    if (!e || e->size() < 5)
      continue;
    std::optional<int64_t> from = (*e)[0].getAsInteger(),
                           to = (*e)[1].getAsInteger();
    if (!from || !to || *from < 0 || *to < 0 ||
        static_cast<size_t>(std::max(*from, *to)) >= ids.size())
      continue;
    json::Array type{(*e)[3]};
    int64_t flags = (*e)[4].getAsInteger().value_or(0);
    outEdges.push_back(json::Object{{"from", ids[*from]},
                                    {"to", ids[*to]},
                                    {"value", (*e)[2]},
                                    {"type", typeStrings(&type, table, 1)[0]},
                                    {"dynamic", (flags & 1) != 0},
                                    {"refinable", (flags & 2) != 0}});
  }
  json::Object out = wire;
  out.erase("types");
  out["range"] = rangeObject(wire.getArray("range"));
  out["nodes"] = std::move(outNodes);
  out["edges"] = std::move(outEdges);
  return out;
}

std::string graphJSONLines(const json::Object &wire) {
  std::vector<const json::Object::value_type *> kv;
  for (const auto &e : wire)
    kv.push_back(&e);
  llvm::sort(kv, [](auto *a, auto *b) { return a->first < b->first; });
  std::string text;
  raw_string_ostream os(text);
  os << "{";
  for (size_t i = 0; i < kv.size(); ++i) {
    os << (i ? ",\n  " : "\n  ") << json::Value(kv[i]->first) << ": ";
    const json::Array *list = kv[i]->second.getAsArray();
    StringRef k = kv[i]->first;
    if (list && !list->empty() &&
        (k == "nodes" || k == "edges" || k == "types")) {
      os << "[";
      for (size_t j = 0; j < list->size(); ++j)
        os << (j ? ",\n    " : "\n    ") << (*list)[j];
      os << "\n  ]";
    } else {
      os << kv[i]->second;
    }
  }
  os << "\n}\n";
  return text;
}

} // namespace tosa_lsp
