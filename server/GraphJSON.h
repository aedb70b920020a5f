//===- GraphJSON.h - a function's graph as the `tosa/graph` result -*- C++
//-*-===//
//
// The wire form of analysis/Graph.h's FunctionGraph, shared by the server's
// `tosa/graph` request (which adds "uri" and "version") and the CLI's
// `graph --format=json`. Compact (a 4,000-op function: ~0.6 MB, not 2 MB):
// fields at their default are left out, types are named by their index in
// one table, edges are arrays:
//
//   {"function", "range": [line, character, endLine, endCharacter],
//    "nodes": [{"id"?, "kind"?, "label", "results"?, "range", "types"?,
//               "inferred"?, "errors"?, "broadcast"?, "constant"?,
//               "constantBytes"?, "parent"?, "collapsed"?}],
//    "edges": [[from, to, value, type, flags]],
//    "types": ["", "tensor<2x3xf32>", ...], "truncated", "omitted"?}
//
// A node without "id" is named by its first result, or its label when it
// has none (an argument); no "kind": "op"; "types" / "inferred": an index
// in "types" per result (0: none; no "inferred": none differs); "parent":
// the index in "nodes" of the region op holding it. An edge: the indices
// of its producer and consumer in "nodes", the value's name, its type's
// index, flags 1 (a `?` or `*` size) | 2 (refinable). Positions are LSP's
// (0-based lines, UTF-16 columns). Node ids are unique within the result
// and survive edits, so a client keeps its selection and view across
// versions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_GRAPHJSON_H
#define TOSA_LSP_SERVER_GRAPHJSON_H

#include "Convert.h"
#include "Graph.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>

namespace tosa_lsp {

/// Above this many nodes a graph is sent with its top-level nodes only (the
/// contents of regions left out, their edges attached to the region op):
/// a view of more stops being usable, and laying it out takes seconds.
constexpr size_t kGraphNodeLimit = 5000;

/// `g` as JSON, positions converted with `lines` (the text `g` was built
/// from). Over `nodeLimit` nodes: top-level nodes only, `"truncated": true`,
/// region ops that lost their contents marked `"collapsed": true`; if even
/// those are too many, the first `nodeLimit` in text order and `"omitted"`
/// says how many were left out.
llvm::json::Object graphToJSON(const FunctionGraph &g, const LineTable &lines,
                               size_t nodeLimit = kGraphNodeLimit);

/// The same object as compact JSON text written to `out` without building
/// it (a 4,000-op graph: ~0.6 MB in a few ms, many times faster than
/// graphToJSON and printing; what a reply should use). `extra`, when given,
/// holds attributes written first (the server's "uri" and "version"). Keys come
/// in the order above, not sorted.
void writeGraphJSON(llvm::raw_ostream &out, const FunctionGraph &g,
                    const LineTable &lines, size_t nodeLimit = kGraphNodeLimit,
                    const llvm::json::Object *extra = nullptr);

/// `wire` (graphToJSON's object, with any keys added) as JSON text for
/// people and FileCheck: keys sorted, one line per node, edge and type.
std::string graphJSONLines(const llvm::json::Object &wire);

/// The wire form read back into one object per node and edge with every
/// field, as the form before the compact one: ranges as {start, end},
/// types as strings, "id" and "parent" as ids, edges as {from, to, value,
/// type, dynamic, refinable}, no "types" table. What the CLI's DOT writer
/// and tests read.
llvm::json::Object expandGraphJSON(const llvm::json::Object &wire);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_GRAPHJSON_H
