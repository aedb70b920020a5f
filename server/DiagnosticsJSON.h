//===- DiagnosticsJSON.h - diagnostics as LSP JSON, streamed ----*- C++ -*-===//
//
// A publish of a 200k-line file carries ~10^5 diagnostics: written as text
// directly, never as a json::Value tree (built, copied, sorted, printed),
// and with each distinct message quoted once.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_DIAGNOSTICSJSON_H
#define TOSA_LSP_SERVER_DIAGNOSTICSJSON_H

#include "Scheduler.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace tosa_lsp {

/// One diagnostic as an LSP Diagnostic object (code actions carry the one
/// they fix).
llvm::json::Value diagnosticJSON(const Snapshot &s, const Diagnostic &d);

/// The whole `textDocument/publishDiagnostics` notification for `s` (its
/// analysis' diagnostics, then `extra`). `pretty`: indented, as the lit
/// transcripts read it, through json::OStream; otherwise compact, appended
/// by hand (~5x faster; the same JSON value).
std::string publishDiagnosticsMessage(const Snapshot &s,
                                      const std::vector<Diagnostic> &extra,
                                      bool pretty);

/// The notification that `uri`'s `version` has no diagnostics (published
/// on MLIR's verdict, before the analysis finished: TosaServer::publishClean).
std::string cleanDiagnosticsMessage(const std::string &uri, int64_t version,
                                    bool pretty);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_DIAGNOSTICSJSON_H
