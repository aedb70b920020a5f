//===- Lexer.cpp - MLIR tokens without MLIR -------------------------------===//

#include "Lexer.h"

#include "TextScan.h"

namespace tosa_lsp {

namespace {
bool isLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isBareChar(char c) { return isIdChar(c) && c != '-'; }
} // namespace

Token Lexer::next() {
  const size_t n = text.size();
  while (pos < n && (text[pos] == ' ' || text[pos] == '\t' ||
                     text[pos] == '\n' || text[pos] == '\r'))
    ++pos;
  Token t;
  t.offset = static_cast<uint32_t>(pos);
  if (pos >= n)
    return t;
  auto finish = [&](TokKind kind, size_t end) {
    t.kind = kind;
    t.length = static_cast<uint32_t>(end - pos);
    pos = end;
    return t;
  };
  auto idEnd = [&](size_t from, bool (*ok)(char)) {
    while (from < n && ok(text[from]))
      ++from;
    return from;
  };
  char c = text[pos];
  if (detail::commentAt(text, pos)) {
    size_t end = detail::commentEnd(text, pos);
    if (end == std::string_view::npos)
      end = n;
    if (end > pos && text[end - 1] == '\r')
      --end;
    return finish(TokKind::Comment, end);
  }
  if (c == '"')
    return finish(TokKind::String, detail::skipString(text, pos));
  if (c == '-' && pos + 1 < n && text[pos + 1] == '>')
    return finish(TokKind::Arrow, pos + 2);
  if ((c == '%' || c == '^') && pos + 1 < n && isIdChar(text[pos + 1]))
    return finish(c == '%' ? TokKind::ValueId : TokKind::BlockId,
                  idEnd(pos + 1, isIdChar));
  if (c == '@' && pos + 1 < n) {
    if (text[pos + 1] == '"')
      return finish(TokKind::SymbolId, detail::skipString(text, pos + 1));
    if (isLetter(text[pos + 1]))
      return finish(TokKind::SymbolId, idEnd(pos + 1, isBareChar));
  }
  if ((c == '#' || c == '!') && pos + 1 < n) {
    if (isLetter(text[pos + 1]))
      return finish(c == '#' ? TokKind::HashId : TokKind::BangId,
                    idEnd(pos + 1, isBareChar));
    if (c == '#' && isDigit(text[pos + 1]))
      return finish(TokKind::HashNumber, idEnd(pos + 1, [](char d) {
                      return d >= '0' && d <= '9';
                    }));
  }
  if (isLetter(c))
    return finish(TokKind::BareId, idEnd(pos, isBareChar));
  if (isDigit(c) || (c == '-' && pos + 1 < n && isDigit(text[pos + 1]))) {
    size_t end = pos + 1;
    while (end < n) {
      char d = text[end];
      if (isBareChar(d) && d != '$')
        ++end;
      else if ((d == '-' || d == '+') &&
               (text[end - 1] == 'e' || text[end - 1] == 'E') &&
               text.substr(pos, 2) != "0x")
        ++end;
      else
        break;
    }
    return finish(TokKind::Number, end);
  }
  return finish(TokKind::Punct, pos + 1);
}

} // namespace tosa_lsp
