//===- Findings.h - broadcast findings as diagnostics -----------*- C++ -*-===//
//
// Turns an op's broadcast report into diagnostics: errors for violated
// constraints MLIR does not check itself (unregistered Broadcastable ops),
// and informational findings (refinable result, runtime broadcast check,
// dynamic-to-static obligation) that the configuration can switch off.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_FINDINGS_H
#define TOSA_LSP_ANALYSIS_FINDINGS_H

#include "Analysis.h"
#include "Config.h"

namespace tosa_lsp {

/// With `texts`, equal messages and codes are one SharedText each (a
/// model's hints repeat a few dozen messages).
void appendFindings(const OpReport &op, const Config &config,
                    std::vector<Diagnostic> &out,
                    SharedTextPool *texts = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_FINDINGS_H
