//===- SemanticTokens.h - what each name in the text is ---------*- C++ -*-===//
//
// The tokens a grammar cannot classify, or can but without knowing what the
// parser knows: SSA values (block arguments apart), block labels, symbols,
// op names (dialect and op), types, attribute names and values, aliases;
// with modifiers for a definition, a value whose type has a dynamic size,
// a result whose declared shape the broadcast rules can refine, an op with
// an error. Strings, numbers and comments are left to the grammar.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_SEMANTICTOKENS_H
#define TOSA_LSP_ANALYSIS_SEMANTICTOKENS_H

#include "Aliases.h"
#include "Analysis.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

/// Token types, in the order of the legend (`semanticTokenTypeNames`).
enum class SemanticType : uint8_t {
  Variable,   // %v
  Parameter,  // a block argument
  Label,      // ^bb1
  Function,   // @f
  Namespace,  // the `tosa` of tosa.add
  Method,     // the `add` of tosa.add
  Type,       // tensor<2xf32>, f32, !tosa.shape<3>, !alias
  Property,   // an attribute's name in a dictionary
  EnumMember, // #dialect.attr<...> and #alias
  Keyword,    // attributes, loc, dense, array, ...
};
/// Modifier bits, in the order of the legend (`semanticModifierNames`).
enum SemanticModifier : uint8_t {
  ModDeclaration = 1 << 0,
  ModDynamic = 1 << 1,   // the value's type has a `?` or `*` size
  ModRefinable = 1 << 2, // the broadcast rules give a more static shape
  ModError = 1 << 3,     // the op has an error
};

const std::vector<const char *> &semanticTypeNames();
const std::vector<const char *> &semanticModifierNames();

struct SemanticToken {
  unsigned line;   // 1-based
  unsigned column; // 1-based byte column
  unsigned length; // bytes, on one line
  SemanticType type;
  uint8_t modifiers;
};

/// Sorted by position; none overlaps another or spans lines.
std::vector<SemanticToken> semanticTokens(const FileAnalysis &fa,
                                          const std::vector<AliasInfo> &aliases,
                                          std::string_view text,
                                          const LineIndex &lines);

/// One edit turning `before` into `after` (LSP's SemanticTokensEdit: start,
/// deleteCount, data), both encoded arrays; empty `data` and deleteCount 0
/// when equal.
struct IntArrayEdit {
  uint32_t start = 0;
  uint32_t deleteCount = 0;
  std::vector<uint32_t> data;
};
IntArrayEdit diffIntArrays(const std::vector<uint32_t> &before,
                           const std::vector<uint32_t> &after);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SEMANTICTOKENS_H
