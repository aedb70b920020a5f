//===- Highlight.h - every occurrence of the name under the cursor -*- C++ -*-//

#ifndef TOSA_LSP_ANALYSIS_HIGHLIGHT_H
#define TOSA_LSP_ANALYSIS_HIGHLIGHT_H

#include "Aliases.h"
#include "Analysis.h"

#include <vector>

namespace tosa_lsp {

struct Highlight {
  Range range;
  bool write = false; // the definition
};

/// The definition (write) and uses (read) of the SSA value, block label,
/// `@symbol` or alias at `pos`, in file order; empty elsewhere.
std::vector<Highlight> documentHighlights(const FileAnalysis &fa,
                                          const std::vector<AliasInfo> &aliases,
                                          Position pos);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_HIGHLIGHT_H
