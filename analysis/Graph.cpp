//===- Graph.cpp - a function as a graph of ops and values ----------------===//

#include "Graph.h"

#include "Query.h"
#include "ShapeInference.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

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

/// Nodes for the ops of `fn`, in text order, with their parents.
void addOps(const FileAnalysis &fa, const SymbolInfo &fn,
            const ShapeInference *shapes, FunctionGraph &g) {
  struct Found {
    Position at;
    GraphNode node;
  };
  std::vector<Found> found;
  found.reserve(fa.ops.size() + fa.opSpans.size());
  auto inside = [&](const Range &r) {
    return contains(fn.scope, r.begin) &&
           !(r.begin.line == fn.nameRange.begin.line &&
             r.begin.column <= fn.nameRange.begin.column);
  };
  for (const OpReport &op : fa.ops) {
    if (op.section != fn.section || !inside(op.range))
      continue;
    GraphNode n;
    n.label = op.name.str();
    n.range = op.range;
    n.scope = op.scope;
    n.types.push_back(op.resultType.str());
    n.inferred.push_back("");
    if (op.kind == OpKind::Implicit && op.summary) {
      const BroadcastSummary &s = *op.summary;
      n.broadcast = !s.ok               ? "incompatible"
                    : s.anyRuntimeCheck ? "runtime-check"
                    : s.anyRefinable    ? "refinable"
                                        : "";
      if (s.anyRefinable)
        if (MaybeShape inf = op.inferredShape())
          n.inferred[0] = withShape(n.types[0], formatShape(inf));
    }
    found.push_back({op.range.begin, std::move(n)});
  }
  for (const OpSpan &op : fa.opSpans) {
    if (op.section != fn.section || !inside(op.nameRange) ||
        op.nameRange.begin.line == fn.nameRange.begin.line)
      continue;
    GraphNode n;
    std::string name = op.name.str();
    bool ret = name == "func.return" || name == "return";
    n.kind = ret ? GraphNode::Return : GraphNode::Op;
    n.label = ret ? "return" : name;
    n.range = op.nameRange;
    n.scope = op.scope;
    n.constant = name == "tosa.const" || name == "arith.constant";
    if (n.constant && op.scope.end.valid())
      n.constantBytes =
          op.scope.end.line == op.scope.begin.line
              ? op.scope.end.column - op.scope.begin.column
              : 80 * (op.scope.end.line - op.scope.begin.line + 1);
    found.push_back({op.nameRange.begin, std::move(n)});
  }
  // Sorted by index: a GraphNode is ~300 bytes to move.
  std::vector<uint32_t> order(found.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return before(found[a].at, found[b].at);
  });
  g.nodes.reserve(found.size() + fn.scope.end.line - fn.scope.begin.line);
  for (uint32_t i : order)
    g.nodes.push_back(std::move(found[i].node));
  // The innermost earlier node whose text holds each node: op texts nest,
  // so a stack of the open ones (a 4,000-op function: one pass, not 10^7
  // comparisons).
  std::vector<int> open;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Position at = g.nodes[i].range.begin;
    while (!open.empty()) {
      const GraphNode &o = g.nodes[open.back()];
      if (contains(o.scope, at) &&
          !(o.range.begin.line == at.line && o.range.begin.column == at.column))
        break;
      open.pop_back();
    }
    g.nodes[i].parent = open.empty() ? -1 : open.back();
    if (g.nodes[i].scope.begin.valid())
      open.push_back(static_cast<int>(i));
  }
  if (!shapes)
    return;
  for (GraphNode &n : g.nodes) {
    const InferredOp *op = shapes->opAt(n.range.begin);
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

FunctionGraph buildGraph(const FileAnalysis &fa, const SymbolInfo &fn,
                         const ShapeInference *shapes) {
  FunctionGraph g;
  g.function = fn.name;
  g.scope = fn.scope;
  addOps(fa, fn, shapes, g);
  // Arguments: the values defined in the signature (before the first op).
  Position firstOp =
      g.nodes.empty() ? fn.scope.end : g.nodes.front().range.begin;
  std::map<std::pair<unsigned, unsigned>, unsigned> argNode;
  std::vector<GraphNode> args;
  // The first op's results are written before its name (`%w = "tosa.const"`)
  // and have no report when it is not Broadcastable: known by their owner.
  std::set<std::pair<unsigned, unsigned>> opNames;
  for (const GraphNode &n : g.nodes)
    opNames.insert({n.range.begin.line, n.range.begin.column});
  for (const ValueInfo &v : fa.values)
    if (v.section == fn.section && contains(fn.scope, v.def.begin) &&
        before(v.def.begin, firstOp) && fa.opOf(v) == nullptr &&
        !opNames.count({v.ownerRange.begin.line, v.ownerRange.begin.column})) {
      GraphNode n;
      n.kind = GraphNode::Argument;
      n.label = v.name.str();
      n.range = v.def;
      n.types.push_back(v.type.str());
      n.inferred.push_back("");
      args.push_back(std::move(n));
    }
  g.nodes.insert(g.nodes.begin(), args.begin(), args.end());
  for (GraphNode &n : g.nodes)
    if (n.parent >= 0)
      n.parent += static_cast<int>(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    argNode[{args[i].range.begin.line, args[i].range.begin.column}] =
        static_cast<unsigned>(i);
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
  // Result names, then ids.
  std::map<std::pair<unsigned, unsigned>, size_t> opAtName;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == GraphNode::Op)
      opAtName.emplace(std::make_pair(g.nodes[i].range.begin.line,
                                      g.nodes[i].range.begin.column),
                       i);
  for (const ValueInfo &v : fa.values)
    if (v.section == fn.section && contains(fn.scope, v.def.begin) &&
        v.ownerRange.begin.valid())
      if (auto it = opAtName.find(
              {v.ownerRange.begin.line, v.ownerRange.begin.column});
          it != opAtName.end()) {
        GraphNode &n = g.nodes[it->second];
        n.results.push_back(v.name.str());
        // Declared types of ops without a report or an inference.
        size_t k = n.results.size() - 1;
        if (n.types.size() <= k)
          n.types.resize(k + 1);
        n.inferred.resize(n.types.size());
        if (n.types[k].empty())
          n.types[k] = v.type.str();
      }
  std::map<std::string, unsigned> seen;
  for (GraphNode &n : g.nodes)
    n.id = n.kind == GraphNode::Argument ? n.label
           : !n.results.empty()
               ? n.results.front()
               : n.label + "#" + std::to_string(seen[n.label]++);
  // Edges: each value from its producer to the node of each use.
  for (const ValueInfo &v : fa.values) {
    if (v.section != fn.section || !contains(fn.scope, v.def.begin))
      continue;
    int from = -1;
    if (auto it = argNode.find({v.def.begin.line, v.def.begin.column});
        it != argNode.end())
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
