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

/// What the text alone says about a token (the analysis adds the rest):
/// kept between requests so that an edit relexes only the lines it touched
/// (a 50k-line file has ~380k tokens; lexing them is most of a full pass).
struct LexedToken {
  uint32_t offset;
  uint32_t line; // 0-based
  uint32_t length;
  SemanticType type;
  uint8_t flags; // LexedMarkable | LexedOpName
};
enum : uint8_t {
  LexedMarkable = 1 << 0, // %v, ^bb, @s, #a, !t: the analysis may know it
  LexedOpName = 1 << 1,   // the op part of `dialect.op`: may carry an error
};
struct LexedTokens {
  std::vector<LexedToken> tokens; // sorted by offset
  size_t textSize = 0;
  size_t lineCount = 0;
};
LexedTokens lexTokens(std::string_view text, const LineIndex &lines);
/// Brings `lexed` (lexed from `beforeText`) to `text`, in place: the lines
/// between the first and the last changed byte (and one on either side, for
/// a look-ahead across a line break) are lexed again, the rest shifted.
void relexTokens(LexedTokens &lexed, std::string_view beforeText,
                 std::string_view text, const LineIndex &lines);

/// What the analysis adds to a lexed token.
struct TokenClass {
  SemanticType type;
  uint8_t modifiers;
};
/// One per token of `lexed`, in `out`, whose memory is reused (a request
/// after an edit allocates nothing on a big file).
void classifyTokens(const FileAnalysis &fa,
                    const std::vector<AliasInfo> &aliases,
                    const LexedTokens &lexed, const LineIndex &lines,
                    std::vector<TokenClass> &out);

/// Sorted by position; none overlaps another or spans lines.
void semanticTokens(const FileAnalysis &fa,
                    const std::vector<AliasInfo> &aliases,
                    const LexedTokens &lexed, const LineIndex &lines,
                    std::vector<SemanticToken> &out);
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
