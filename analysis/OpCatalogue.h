//===- OpCatalogue.h - the dialects and ops MLIR registers ------*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_OPCATALOGUE_H
#define TOSA_LSP_ANALYSIS_OPCATALOGUE_H

#include "Completion.h"

namespace tosa_lsp {

/// The dialects tosa-lsp parses with (registerFileDialects) and their ops;
/// built on first use (loading every dialect: ~0.1 s, once a process).
/// Thread-safe.
const CompletionCatalogue &completionCatalogue();

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_OPCATALOGUE_H
