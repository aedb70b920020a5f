//===- GraphJSON.h - a function's graph as the `tosa/graph` result -*- C++
//-*-===//
//
// The wire form of analysis/Graph.h's FunctionGraph, shared by the server's
// `tosa/graph` request (which adds "uri" and "version") and the CLI's
// `graph --format=json`:
//
//   {"function", "range", "truncated", "nodes": [{"id", "kind", "label",
//    "results", "range", "types", "inferred", "errors", "broadcast",
//    "constant", "constantBytes", "parent"}], "edges": [{"from", "to",
//    "value", "type", "dynamic", "refinable"}]}
//
// Positions are LSP's (0-based lines, UTF-16 columns). Nodes and edges name
// nodes by id (unique within the result), so a client keeps its selection
// and view across versions.
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
/// it (a 4,000-op graph: ~2 MB in a few ms, ~30x faster than graphToJSON
/// and printing; what a reply should use). `extra`, when given, holds
/// attributes written first (the server's "uri" and "version"). Keys come
/// in the order above, not sorted.
void writeGraphJSON(llvm::raw_ostream &out, const FunctionGraph &g,
                    const LineTable &lines, size_t nodeLimit = kGraphNodeLimit,
                    const llvm::json::Object *extra = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_GRAPHJSON_H
