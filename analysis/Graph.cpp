//===- Graph.cpp - a function as a graph of ops and values ----------------===//

#include "Graph.h"

#include "Query.h"
#include "ShapeInference.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace tosa_lsp {

namespace {

bool isFunction(const SymbolInfo &s) {
  return s.opName.size() >= 4 && s.opName.substr(s.opName.size() - 4) == "func";
}

bool dynamicType(const std::string &t) {
  return t.find('?') != std::string::npos || t.find('*') != std::string::npos;
}

/// `tensor<?x3xf32>` with shape `2x3`: `tensor<2x3xf32>`, a type as shape
/// inference writes it (one form for every inferred type); the shape alone
/// when `declared` is not a ranked tensor.
std::string withShape(const std::string &declared, const std::string &shape) {
  if (declared.rfind("tensor<", 0) != 0 || declared.back() != '>' ||
      declared.find('*') != std::string::npos)
    return shape;
  // Skip the dimensions (`2x`, `?x`): the rest is the element type (and
  // any encoding), which may itself hold an `x`.
  std::string body = declared.substr(7, declared.size() - 8);
  size_t i = 0;
  for (size_t j = 0; j < body.size();) {
    size_t k = j;
    while (k < body.size() &&
           (isdigit(static_cast<unsigned char>(body[k])) || body[k] == '?'))
      ++k;
    if (k == j || k >= body.size() || body[k] != 'x')
      break;
    i = j = k + 1;
  }
  std::string element = body.substr(i);
  return "tensor<" + (shape.empty() ? "" : shape + "x") + element + ">";
}

/// An op of the function before it is a node: found, sorted and nested
/// without allocating, so that a function over the node limit makes nodes
/// of the ops it sends only.
struct OpEntry {
  Position at; // range().begin, kept here: sorting and bisecting 50k
               // entries would chase a pointer per comparison
  const OpReport *report = nullptr;
  const OpSpan *span = nullptr;
  int parent = -1;     // the entry whose region holds it
  int node = -1;       // its node; -1: drawn as its region op, or omitted
  std::string_view id; // its first result's name ("": none)
  const Range &range() const {
    return report ? report->range : span->nameRange;
  }
  const Range &scope() const { return report ? report->scope : span->scope; }
  const std::string &name() const {
    return report ? report->name.str() : span->name.str();
  }
};

/// The ops of `fn` in text order, with their parents.
std::vector<OpEntry> collectOps(const FileAnalysis &fa, const SymbolInfo &fn) {
  std::vector<OpEntry> found;
  auto inside = [&](const Range &r) {
    return contains(fn.scope, r.begin) &&
           !(r.begin.line == fn.nameRange.begin.line &&
             r.begin.column <= fn.nameRange.begin.column);
  };
  for (const OpReport &op : fa.ops)
    if (op.section == fn.section && inside(op.range))
      found.push_back({op.range.begin, &op, nullptr});
  for (const OpSpan &op : fa.opSpans)
    if (op.section == fn.section && inside(op.nameRange) &&
        op.nameRange.begin.line != fn.nameRange.begin.line)
      found.push_back({op.nameRange.begin, nullptr, &op});
  std::stable_sort(
      found.begin(), found.end(),
      [](const OpEntry &a, const OpEntry &b) { return before(a.at, b.at); });
  // The innermost earlier op whose text holds each op: op texts nest, so a
  // stack of the open ones (a 4,000-op function: one pass, not 10^7
  // comparisons).
  std::vector<int> open;
  for (size_t i = 0; i < found.size(); ++i) {
    const Position at = found[i].range().begin;
    while (!open.empty()) {
      const OpEntry &o = found[open.back()];
      if (contains(o.scope(), at) && !(o.range().begin.line == at.line &&
                                       o.range().begin.column == at.column))
        break;
      open.pop_back();
    }
    found[i].parent = open.empty() ? -1 : open.back();
    if (found[i].scope().begin.valid())
      open.push_back(static_cast<int>(i));
  }
  return found;
}

/// The entry whose op name starts at `p` (entries are sorted by it), or -1.
int entryAt(const std::vector<OpEntry> &ops, Position p) {
  auto it = std::lower_bound(
      ops.begin(), ops.end(), p,
      [](const OpEntry &e, Position q) { return before(e.at, q); });
  if (it == ops.end() || it->at.line != p.line || it->at.column != p.column)
    return -1;
  return static_cast<int>(it - ops.begin());
}

/// Which ops become nodes (the first `nArgs` nodes are the arguments): all
/// of them up to `limit` nodes; above it the top-level ops only, their
/// regions collapsed, and past `limit` top-level nodes the rest omitted.
void planNodes(std::vector<OpEntry> &ops, size_t nArgs, size_t limit,
               FunctionGraph &g) {
  g.truncated = nArgs + ops.size() > limit;
  size_t kept = std::min(nArgs, limit);
  g.omitted = nArgs - kept;
  for (OpEntry &e : ops) {
    if (g.truncated && e.parent >= 0)
      continue; // drawn as its region op
    if (kept < limit)
      e.node = static_cast<int>(kept++);
    else
      ++g.omitted;
  }
}

/// The node of one op (without its results, errors or id).
GraphNode opNode(const OpEntry &e) {
  GraphNode n;
  const std::string &name = e.name();
  bool ret = name == "func.return" || name == "return";
  n.kind = ret ? GraphNode::Return : GraphNode::Op;
  n.label = ret ? "return" : name;
  n.range = e.range();
  n.scope = e.scope();
  if (const OpReport *op = e.report) {
    n.types.push_back(op->resultType.str());
    n.inferred.push_back("");
    if (op->kind == OpKind::Implicit && op->summary) {
      const BroadcastSummary &s = *op->summary;
      n.broadcast = !s.ok               ? "incompatible"
                    : s.anyRuntimeCheck ? "runtime-check"
                    : s.anyRefinable    ? "refinable"
                                        : "";
      if (s.anyRefinable)
        if (MaybeShape inf = op->inferredShape())
          n.inferred[0] = withShape(n.types[0], formatShape(inf));
    }
    return n;
  }
  n.constant = name == "tosa.const" || name == "arith.constant";
  const Range &scope = e.scope();
  if (n.constant && scope.end.valid())
    n.constantBytes = scope.end.line == scope.begin.line
                          ? scope.end.column - scope.begin.column
                          : 80 * (scope.end.line - scope.begin.line + 1);
  return n;
}

/// tosa-infer-shapes' types on the nodes.
void addInferred(const ShapeInference &shapes, FunctionGraph &g) {
  for (GraphNode &n : g.nodes) {
    if (n.kind == GraphNode::Argument)
      continue;
    const InferredOp *op = shapes.opAt(n.range.begin);
    if (!op)
      continue;
    std::vector<InferredResult> rs = op->resultTypes();
    n.types.resize(std::max(n.types.size(), rs.size()));
    n.inferred.resize(n.types.size());
    for (size_t i = 0; i < rs.size(); ++i) {
      if (n.types[i].empty())
        n.types[i] = rs[i].declared;
      if (rs[i].refined())
        n.inferred[i] = rs[i].inferred;
    }
  }
}

/// Ids that survive edits elsewhere: the first result's name, the
/// argument's, or `<label>#<k>` for the k-th op of that label without
/// results; a name repeated (sibling regions may both define `%2`) gets
/// `#2`, `#3`... in text order. Counted over every op, sent or not, so a
/// node has the same id whether its function is cut or not.
void assignIds(const std::vector<OpEntry> &ops, FunctionGraph &g,
               size_t nArgs) {
  // Keyed by views (of the analysis' names, or of `made`): a 50k-op
  // function's ids are counted without a string each.
  std::deque<std::string> made;
  std::unordered_map<std::string_view, unsigned> seen, labels;
  seen.reserve(ops.size() + nArgs);
  auto unique = [&](std::string_view id) {
    unsigned k = ++seen[id];
    return k == 1 ? std::string(id) : std::string(id) + "#" + std::to_string(k);
  };
  for (size_t i = 0; i < nArgs && i < g.nodes.size(); ++i)
    g.nodes[i].id = unique(g.nodes[i].label);
  for (const OpEntry &e : ops) {
    std::string_view raw = e.id;
    if (raw.empty()) {
      const std::string &name = e.name();
      std::string_view label = name;
      if (name == "func.return")
        label = "return";
      raw = made.emplace_back(std::string(label) + "#" +
                              std::to_string(labels[label]++));
    }
    if (e.node >= 0)
      g.nodes[e.node].id = unique(raw);
    else
      ++seen[raw]; // counted, not made
  }
}

/// The innermost node whose text holds a position, by bisection: the last
/// node whose name starts at or before it, then up its parents (op texts
/// nest) to the first that holds it.
class NodeLocator {
public:
  explicit NodeLocator(const FunctionGraph &g) : g(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].kind != GraphNode::Argument &&
          g.nodes[i].scope.begin.valid())
        order.push_back(static_cast<int>(i));
  }
  int at(Position p) const {
    auto it =
        std::upper_bound(order.begin(), order.end(), p, [&](Position q, int i) {
          return before(q, g.nodes[i].range.begin);
        });
    for (int i = it == order.begin() ? -1 : *(it - 1); i >= 0;
         i = g.nodes[i].parent)
      if (contains(g.nodes[i].scope, p) || contains(g.nodes[i].range, p))
        return i;
    return -1;
  }

private:
  const FunctionGraph &g;
  std::vector<int> order; // text order of their names
};

} // namespace

namespace {

/// The arguments: the values defined in the signature (before the first
/// op) that no op defines.
std::vector<const ValueInfo *> argumentsOf(const FileAnalysis &fa,
                                           const SymbolInfo &fn,
                                           const std::vector<OpEntry> &ops) {
  Position firstOp = ops.empty() ? fn.scope.end : ops.front().range().begin;
  std::vector<const ValueInfo *> args;
  // The first op's results are written before its name (`%w = "tosa.const"`)
  // and have no report when it is not Broadcastable: known by their owner.
  for (const ValueInfo &v : fa.values)
    if (v.section == fn.section && contains(fn.scope, v.def.begin) &&
        before(v.def.begin, firstOp) && fa.opOf(v) == nullptr &&
        entryAt(ops, v.ownerRange.begin) < 0)
      args.push_back(&v);
  return args;
}

/// Result names on their ops (the first one is the op's id), declared
/// types where neither a report nor inference gave one.
void addResults(const FileAnalysis &fa, const SymbolInfo &fn,
                std::vector<OpEntry> &ops, FunctionGraph &g) {
  for (const ValueInfo &v : fa.values) {
    if (v.section != fn.section || !contains(fn.scope, v.def.begin) ||
        !v.ownerRange.begin.valid())
      continue;
    int e = entryAt(ops, v.ownerRange.begin);
    if (e < 0)
      continue;
    if (ops[e].id.empty())
      ops[e].id = v.name.view();
    if (ops[e].node < 0)
      continue;
    GraphNode &n = g.nodes[ops[e].node];
    n.results.push_back(v.name.str());
    size_t k = n.results.size() - 1;
    if (n.types.size() <= k)
      n.types.resize(k + 1);
    n.inferred.resize(n.types.size());
    if (n.types[k].empty())
      n.types[k] = v.type.str();
  }
}

/// Each value from its producer's node to the node of each use (a node
/// drawn for a collapsed region stands for what it holds).
void addEdges(const FileAnalysis &fa, const SymbolInfo &fn,
              const std::vector<const ValueInfo *> &args,
              const NodeLocator &locate, FunctionGraph &g) {
  std::unordered_map<const ValueInfo *, unsigned> argNode;
  for (size_t i = 0; i < args.size() && i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == GraphNode::Argument)
      argNode[args[i]] = static_cast<unsigned>(i);
  for (const ValueInfo &v : fa.values) {
    if (v.section != fn.section || !contains(fn.scope, v.def.begin))
      continue;
    int from = -1;
    if (auto it = argNode.find(&v); it != argNode.end())
      from = static_cast<int>(it->second);
    else
      from = locate.at(v.ownerRange.begin.valid() ? v.ownerRange.begin
                                                  : v.def.begin);
    if (from < 0)
      continue;
    std::string type = v.type.str();
    bool refinable = false;
    for (const std::string &inf : g.nodes[from].inferred)
      refinable |= !inf.empty();
    for (const Range &u : v.uses) {
      int to = locate.at(u.begin);
      if (to < 0 || to == from)
        continue;
      g.edges.push_back({static_cast<unsigned>(from), static_cast<unsigned>(to),
                         v.name.str(), type, dynamicType(type), refinable});
    }
  }
}

} // namespace

FunctionGraph buildGraph(const FileAnalysis &fa, const SymbolInfo &fn,
                         const ShapeInference *shapes, size_t nodeLimit) {
  FunctionGraph g;
  g.function = fn.name;
  g.scope = fn.scope;
  std::vector<OpEntry> ops = collectOps(fa, fn);
  std::vector<const ValueInfo *> args = argumentsOf(fa, fn, ops);
  planNodes(ops, args.size(), nodeLimit, g);
  size_t keptArgs = std::min(args.size(), nodeLimit);
  g.nodes.reserve(keptArgs + ops.size());
  for (size_t i = 0; i < keptArgs; ++i) {
    GraphNode n;
    n.kind = GraphNode::Argument;
    n.label = args[i]->name.str();
    n.range = args[i]->def;
    n.types.push_back(args[i]->type.str());
    n.inferred.push_back("");
    g.nodes.push_back(std::move(n));
  }
  for (const OpEntry &e : ops)
    if (e.node >= 0) {
      g.nodes.push_back(opNode(e));
      g.nodes.back().parent = e.parent >= 0 ? ops[e.parent].node : -1;
    }
  // A region op sent without its contents.
  if (g.truncated)
    for (const OpEntry &e : ops)
      if (e.node < 0 && e.parent >= 0) {
        int top = e.parent;
        while (ops[top].parent >= 0)
          top = ops[top].parent;
        if (ops[top].node >= 0)
          g.nodes[ops[top].node].collapsed = true;
      }
  if (shapes)
    addInferred(*shapes, g);
  addResults(fa, fn, ops, g);
  assignIds(ops, g, keptArgs);
  NodeLocator locate(g);
  // Errors on the innermost node holding them.
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    if (!contains(fn.scope, d.range.begin))
      continue;
    int n = locate.at(d.range.begin);
    if (n >= 0)
      g.nodes[n].errors.push_back(d.message.str());
  }
  addEdges(fa, fn, args, locate, g);
  return g;
}

FunctionGraph buildGraph(const GenericFunction &f,
                         const FunctionGraph *source) {
  FunctionGraph g;
  g.function = f.name;
  if (source)
    g.scope = source->scope;
  std::vector<const GraphNode *> sourceArgs;
  std::optional<NodeLocator> locate;
  std::map<unsigned, int> firstOnLine;
  if (source) {
    for (const GraphNode &n : source->nodes)
      if (n.kind == GraphNode::Argument)
        sourceArgs.push_back(&n);
    locate.emplace(*source);
    for (size_t i = 0; i < source->nodes.size(); ++i)
      if (source->nodes[i].kind != GraphNode::Argument)
        firstOnLine.emplace(source->nodes[i].range.begin.line,
                            static_cast<int>(i));
  }
  // The source op at a location: the innermost holding it, or the first
  // named on its line (a location on `%0 = ...` is before the op's name).
  auto sourceAt = [&](Position p) {
    int at = locate && p.valid() ? locate->at(p) : -1;
    if (at >= 0 && source->nodes[at].range.begin.line == p.line)
      return at;
    auto it = firstOnLine.find(p.line);
    return it != firstOnLine.end() ? it->second : at;
  };
  std::map<std::string, std::pair<unsigned, std::string>> producer;
  for (size_t i = 0; i < f.args.size(); ++i) {
    GraphNode n;
    n.kind = GraphNode::Argument;
    n.label = n.id = f.args[i];
    n.types = {i < f.argTypes.size() ? f.argTypes[i] : ""};
    n.inferred = {""};
    if (i < sourceArgs.size())
      n.range = n.scope = sourceArgs[i]->range;
    else
      n.range = n.scope = {g.scope.begin, g.scope.begin};
    producer[f.args[i]] = {static_cast<unsigned>(g.nodes.size()), n.types[0]};
    g.nodes.push_back(std::move(n));
  }
  const int base = static_cast<int>(g.nodes.size());
  std::map<std::string, unsigned> seen;
  for (const GenericOp &op : f.ops) {
    GraphNode n;
    bool ret = op.name == "func.return" || op.name == "return";
    n.kind = ret ? GraphNode::Return : GraphNode::Op;
    n.label = ret ? "return" : op.name;
    n.results = op.results;
    n.types = op.types;
    n.inferred.assign(n.types.size(), "");
    n.constant = op.name == "arith.constant" || op.name == "tosa.const";
    n.parent = op.parent >= 0 ? op.parent + base : -1;
    int at = sourceAt(op.source);
    if (at >= 0) {
      n.range = source->nodes[at].range;
      n.scope = source->nodes[at].scope;
    } else {
      n.range = n.scope = {g.scope.begin, g.scope.begin};
    }
    n.id = !n.results.empty() ? n.results.front()
                              : n.label + "#" + std::to_string(seen[n.label]++);
    unsigned self = static_cast<unsigned>(g.nodes.size());
    for (const std::string &v : op.operands)
      if (auto it = producer.find(v);
          it != producer.end() && it->second.first != self)
        g.edges.push_back({it->second.first, self, v, it->second.second,
                           dynamicType(it->second.second), false});
    for (size_t r = 0; r < op.results.size(); ++r)
      producer[op.results[r]] = {self, r < op.types.size() ? op.types[r] : ""};
    g.nodes.push_back(std::move(n));
  }
  return g;
}

const SymbolInfo *graphFunctionAt(const FileAnalysis &fa, Position pos) {
  const SymbolInfo *best = nullptr;
  for (const SymbolInfo &s : fa.symbols)
    if (isFunction(s) && s.scope.begin.valid() && contains(s.scope, pos) &&
        (!best || before(best->scope.begin, s.scope.begin)))
      best = &s;
  return best;
}

const SymbolInfo *graphFunctionNamed(const FileAnalysis &fa,
                                     const std::string &name) {
  std::string n = !name.empty() && name[0] == '@' ? name.substr(1) : name;
  for (const SymbolInfo &s : fa.symbols)
    if (isFunction(s) && s.name == n)
      return &s;
  return nullptr;
}

} // namespace tosa_lsp
