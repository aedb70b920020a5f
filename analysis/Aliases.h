//===- Aliases.h - `#name = ...` and `!name = ...` in the text --*- C++ -*-===//
//
// MLIR's parser resolves aliases and forgets them; the editor features want
// their definitions and uses (highlight, rename, definition, references,
// hover), also in a section that does not parse. Read from the text with the
// Lexer: a definition is `#name =` or `!name =` outside any brackets, a use
// is the same token elsewhere in its `// -----` section.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_ALIASES_H
#define TOSA_LSP_ANALYSIS_ALIASES_H

#include "Analysis.h"

#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct AliasInfo {
  std::string name; // with its sigil: #map, !row
  Range def;        // the name in the definition
  Range value;      // what follows `=`
  std::string valueText;
  std::vector<Range> uses;
  unsigned section = 0;
  bool isType() const { return !name.empty() && name[0] == '!'; }
};

/// Every alias of `text`, in order. `sections` as splitSections gives them
/// (empty: one section).
std::vector<AliasInfo> scanAliases(std::string_view text,
                                   const LineIndex &lines,
                                   const std::vector<Section> &sections);

/// The alias whose definition or a use contains `pos`, and whether `pos` is
/// on the definition.
const AliasInfo *aliasAt(const std::vector<AliasInfo> &aliases, Position pos,
                         bool *onDef = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_ALIASES_H
