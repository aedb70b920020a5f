//===- Navigation.h - definition, references, document symbols --*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_NAVIGATION_H
#define TOSA_LSP_ANALYSIS_NAVIGATION_H

#include "Analysis.h"

#include <optional>

namespace tosa_lsp {

/// Definition of the SSA value, block argument, block or symbol at `pos`.
std::optional<Range> definition(const FileAnalysis &fa, Position pos);

/// The definition and uses of the SSA value, block or symbol at `pos`
/// (`def` invalid when there is none).
struct Occurrences {
  Range def;
  std::vector<Range> uses;
};
Occurrences occurrences(const FileAnalysis &fa, Position pos);

/// Uses (and optionally the definition) of the entity at `pos`.
std::vector<Range> references(const FileAnalysis &fa, Position pos,
                              bool includeDeclaration);

struct DocSymbol {
  enum Kind { Section, Function, Symbol } kind;
  std::string name;
  std::string detail;
  Range range;
  Range selection;
  std::vector<DocSymbol> children;
};

/// Symbols (functions, globals) of the file; grouped per `// -----` section
/// when there is more than one.
std::vector<DocSymbol> documentSymbols(const FileAnalysis &fa);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_NAVIGATION_H
