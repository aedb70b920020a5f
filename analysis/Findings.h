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

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tosa_lsp {

/// With `texts`, equal messages and codes are one SharedText each (a
/// model's hints repeat a few dozen messages).
void appendFindings(const OpReport &op, const Config &config,
                    std::vector<Diagnostic> &out,
                    SharedTextPool *texts = nullptr);

/// What appendFindings said of ops with the same inputs, for one
/// configuration. collectOpReports gives the ops of one signature one list
/// of packed shapes, and what is said of such an op when its broadcast is
/// valid depends on nothing else (not its name): made once per list, then
/// copied with each op's range (a model's ops repeat a few dozen
/// signatures; each finding made anew was ~4 % of a 10k-line open).
/// The findings are made into the list itself and the memo keeps where:
/// a list of their own for each signature cost a 50k-line file of few
/// repeats an allocation per op. One memo serves one list.
class FindingsMemo {
public:
  SharedTextPool texts;

private:
  friend void appendFindings(const OpReport &op, const Config &config,
                             std::vector<Diagnostic> &out, FindingsMemo &memo);
  /// Where in the list an earlier op of the signature's findings are.
  llvm::DenseMap<std::pair<const int32_t *, unsigned>,
                 std::pair<uint32_t, uint32_t>>
      made;
};

/// The same with equal texts pooled and the findings of ops of one
/// signature made once (`out` is always the same list for one `memo`).
void appendFindings(const OpReport &op, const Config &config,
                    std::vector<Diagnostic> &out, FindingsMemo &memo);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_FINDINGS_H
