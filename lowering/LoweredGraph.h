//===- LoweredGraph.h - a function after lowering, as a graph ---*- C++ -*-===//
//
// The graph view's "after lowering" toggle: the function lowered as the
// preview lowers it (Lowering.h), walked op by op into analysis/Graph.h's
// GenericFunction, which buildGraph draws like any function. The bodies of
// linalg's structured ops (scalar arith on block arguments) are left out:
// a linalg.generic is one node, as the preview's text reads.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_LOWEREDGRAPH_H
#define TOSA_LSP_LOWERING_LOWEREDGRAPH_H

#include "Graph.h"
#include "Lowering.h"

#include "llvm/Support/Error.h"

namespace tosa_lsp {

/// `options.function` of `text` after `options.stage`. Errors as lower()'s;
/// "after the llvm stage @F is not a function" when the stage renamed it.
llvm::Expected<GenericFunction> lowerForGraph(const std::string &text,
                                              const std::string &path,
                                              const LowerOptions &options);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_LOWEREDGRAPH_H
