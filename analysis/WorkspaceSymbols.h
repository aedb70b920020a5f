//===- WorkspaceSymbols.h - find functions and globals by name --*- C++ -*-===//
//
// Fuzzy matching as clangd's (every query character in order, word starts
// and a prefix scored higher), over the symbols of analysed files and over
// files read from disk but not opened (a lexical scan: `func.func @f`,
// `ml_program.global @w`, ... at the start of a line).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_WORKSPACESYMBOLS_H
#define TOSA_LSP_ANALYSIS_WORKSPACESYMBOLS_H

#include "Analysis.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

/// A score in (0, 1] when every character of `query` appears in `name` in
/// order (case-insensitively), higher for a prefix, word starts and a
/// contiguous run; std::nullopt otherwise. An empty query matches all.
std::optional<double> fuzzyMatch(std::string_view query, std::string_view name);

struct ScannedSymbol {
  std::string name;   // without '@'
  std::string opName; // func.func
  Range nameRange;    // the `@name`
};

/// Symbol definitions of a file that is not analysed: an op name at the
/// start of a line followed (after `private`/`public`/`nested`) by `@name`.
std::vector<ScannedSymbol> scanSymbols(std::string_view text,
                                       const LineIndex &lines);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_WORKSPACESYMBOLS_H
