//===- GraphCommand.h - `graph`: a function as a picture --------*- C++ -*-===//
//
// The graph the editors show (server/GraphJSON.h) from the command line:
// as that JSON, as Graphviz DOT, as one self-contained HTML page (the
// webview's renderer, its layout library and the graph inlined: readable
// offline), or as SVG laid out by that same renderer run by node. See
// CommandSupport.h for the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_GRAPHCOMMAND_H
#define TOSA_LSP_TOOLS_GRAPHCOMMAND_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp::cli {

struct GraphOptions {
  /// Exactly one FILE, or FILE:LINE[:COL] for the function there.
  std::vector<std::string> files;
  std::optional<std::string> function; // `@` allowed; given empty: error
  std::string format;                  // json (""), dot, html, svg
  std::string output;                  // -o; "" or "-": standard output
  std::string config;                  // "": the .tosa-lsp.json next to FILE
  bool force = false;                  // replace an existing -o file
  /// Node limit of the view (server/GraphJSON.h's by default).
  std::optional<size_t> nodeLimit;
  /// The function after this lowering stage (the preview's), e.g. linalg.
  std::optional<std::string> stage;
  std::string mode = "fast"; // with stage: the lowering's mode
  /// `node` for --format=svg ("": found on PATH).
  std::string node;
};

/// Exit code 1 when the picture cannot be made (svg without node, node
/// failing), 2 for unusable input or options.
int runGraph(const GraphOptions &opts, llvm::raw_ostream &out,
             llvm::raw_ostream &err);

/// The graph (the `tosa/graph` result without uri and version) as DOT.
std::string graphToDot(const llvm::json::Object &graph);

/// One HTML page drawing `graph` offline; `title` names the source.
std::string graphToHTML(const llvm::json::Object &graph,
                        const std::string &title);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_GRAPHCOMMAND_H
