//===- Graph.h - a function as a graph of ops and values --------*- C++ -*-===//
//
// What a graph view draws (the `tosa/graph` request): one function's ops as
// nodes -- with their declared and inferred result types, their errors, the
// broadcast verdict -- and its SSA values as edges from producer to each
// consumer; arguments and the return as nodes of their own; ops inside
// `tosa.cond_if` / `tosa.while_loop` regions under their parent. Built from
// the analysis alone, so a function with errors still draws: the ops that
// parsed, the failing ones marked.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_GRAPH_H
#define TOSA_LSP_ANALYSIS_GRAPH_H

#include "Analysis.h"

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace tosa_lsp {

struct ShapeInference;

struct GraphNode {
  enum Kind { Argument, Op, Return } kind = Op;
  std::string label; // tosa.add, %arg0, return
  /// A name that survives edits elsewhere: the first result's (`%0`), the
  /// argument's, or `<label>#<k>` for the k-th such op without results; a
  /// name repeated in the function (sibling regions) `#2`, `#3`... after.
  std::string id;
  std::vector<std::string> results; // result names as written
  Range range; // what a click selects: the op name, the argument
  Range scope; // the op's whole text
  /// Declared result types; inferred ones where they differ ("" where not).
  std::vector<std::string> types, inferred;
  std::vector<std::string> errors;
  /// Broadcast verdict of a Broadcastable op: "", "refinable",
  /// "runtime-check", "incompatible".
  std::string broadcast;
  bool constant = false; // tosa.const / arith.constant
  size_t constantBytes = 0;
  int parent = -1; // the op whose region holds it
  /// A region op sent without its contents (the function was too big).
  bool collapsed = false;
};

struct GraphEdge {
  unsigned from, to;
  std::string value;      // %0
  std::string type;       // as declared
  bool dynamic = false;   // a `?` or `*` size
  bool refinable = false; // the producer's inferred type is more static
};

struct FunctionGraph {
  std::string function; // without '@'
  Range scope;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  /// Cut to a node limit: top-level nodes only (regions collapsed), and
  /// `omitted` top-level nodes past the limit left out.
  bool truncated = false;
  size_t omitted = 0;
};

/// The graph of function `fn` of `fa`; `shapes`, when given, adds
/// tosa-infer-shapes' types. Nodes in text order. Over `nodeLimit` nodes
/// only what is sent is built: the top-level nodes, region ops marked
/// `collapsed` (their contents' edges attached to them), and past
/// `nodeLimit` top-level nodes the first ones (`omitted` counts the rest).
/// Ids do not depend on the cut: they are counted over every op.
FunctionGraph buildGraph(const FileAnalysis &fa, const SymbolInfo &fn,
                         const ShapeInference *shapes = nullptr,
                         size_t nodeLimit = std::numeric_limits<size_t>::max());

/// One op of a function as a walk of any module sees it: what the graph of
/// a lowered function is built from (lowering/LoweredGraph.h makes it; the
/// graph model stays free of the lowering).
struct GenericOp {
  std::string name;                        // linalg.generic
  std::vector<std::string> operands;       // value names, as printed
  std::vector<std::string> results, types; // names and printed types
  int parent = -1; // the op (index) whose region holds it
  Position source; // the source op it came from (its location); invalid: none
};

struct GenericFunction {
  std::string name;  // without '@'
  std::string stage; // what it is after: "linalg"
  std::vector<std::string> args, argTypes;
  std::vector<GenericOp> ops; // in walk order (parents first)
};

/// The graph of `f`. Nodes point at the text of `source` (the graph of the
/// function it was lowered from, when given): an op at the source op of
/// its location, an argument at the source's argument of that number.
FunctionGraph buildGraph(const GenericFunction &f,
                         const FunctionGraph *source = nullptr);

/// The function at `pos` (innermost), or the one named `name`.
const SymbolInfo *graphFunctionAt(const FileAnalysis &fa, Position pos);
const SymbolInfo *graphFunctionNamed(const FileAnalysis &fa,
                                     const std::string &name);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_GRAPH_H
