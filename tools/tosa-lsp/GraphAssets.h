//===- GraphAssets.h - the graph view's JavaScript, built in ----*- C++ -*-===//
//
// editors/graph/ as built into tosa-lsp (cmake/EmbedFiles.cmake), for the
// HTML and SVG the `graph` command writes: the page needs no installed
// files and no network.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_GRAPHASSETS_H
#define TOSA_LSP_TOOLS_GRAPHASSETS_H

namespace tosa_lsp::cli {

/// elkjs' elk.bundled.js (editors/graph/vendor, from npm; EPL-2.0).
extern const char kElkJS[];
/// editors/graph/graph-view.js: layout, SVG and the interactive view.
extern const char kGraphViewJS[];
/// editors/graph/layered.js: the layout of big graphs.
extern const char kGraphLayeredJS[];
/// editors/graph/render.js: node MODEL.json OUT.svg.
extern const char kGraphRenderJS[];

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_GRAPHASSETS_H
