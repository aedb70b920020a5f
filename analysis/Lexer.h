//===- Lexer.h - MLIR tokens without MLIR -----------------------*- C++ -*-===//
//
// The editing features that must work on text MLIR rejects (folding,
// aliases, semantic tokens, formatting) read it token by token. Close to
// MLIR's own lexer where it matters to them (identifiers, strings, comments,
// `->`); numbers and shapes are lexed loosely (`1x2xf32` is one token).
// Strings and comments are skipped with TextScan, so multi-megabyte
// `dense<"0x...">` literals cost a memchr.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_LEXER_H
#define TOSA_LSP_ANALYSIS_LEXER_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tosa_lsp {

enum class TokKind : uint8_t {
  End,
  Comment,    // `// ...` up to the line break
  String,     // "..." (unterminated: up to the line break)
  ValueId,    // %name
  BlockId,    // ^name
  SymbolId,   // @name, @"name"
  HashId,     // #name (attribute alias or dialect attribute)
  HashNumber, // #1 in %x#1
  BangId,     // !name (type alias or dialect type)
  BareId,     // tosa.add, tensor, f32, attributes, true
  Number,     // 1, -2, 0.5, 1e-3, 0x1F, 1x2xf32
  Arrow,      // ->
  Punct,      // any other single character
};

struct Token {
  TokKind kind = TokKind::End;
  uint32_t offset = 0;
  uint32_t length = 0;
  std::string_view text(std::string_view source) const {
    return source.substr(offset, length);
  }
  char first(std::string_view source) const { return source[offset]; }
};

/// Identifier characters after a sigil (MLIR's suffix-id and bare-id).
inline bool isIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.' || c == '-';
}

/// A forward lexer over `text` from `offset`.
class Lexer {
public:
  explicit Lexer(std::string_view text, size_t offset = 0)
      : text(text), pos(offset) {}
  Token next();
  size_t position() const { return pos; }

private:
  std::string_view text;
  size_t pos;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_LEXER_H
