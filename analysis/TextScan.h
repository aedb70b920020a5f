//===- TextScan.h - skip MLIR strings and comments in text ------*- C++ -*-===//
//
// Several places read MLIR text without MLIR (the nesting guard, the cuts of
// a section, the migration's repairs, quick fixes, shape inference's edits):
// each must step over string literals and `//` comments, where brackets,
// quotes and `->` do not count. This is the one lexer for that. No MLIR
// headers: the pure library and its tests use it.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TEXTSCAN_H
#define TOSA_LSP_ANALYSIS_TEXTSCAN_H

#include <cstddef>
#include <string_view>

namespace tosa_lsp::detail {

/// Whether a string literal may hold a line break. MLIR's lexer refuses
/// one, so text that parsed (an op's) has none; text that does not parse
/// yet is scanned with `Inside` where a repair must read it as before.
enum class LineBreaks { End, Inside };

/// The quote closing the string literal whose opening quote is at `open`,
/// or `t.size()` when there is none; with `LineBreaks::End` the first line
/// break instead where the literal ends unclosed on its line (MLIR's do not
/// span lines). A quote or line break is skipped when an odd run of
/// backslashes escapes it. Found with memchr: a model's weights are
/// `dense<"0x...">` literals of megabytes, which byte loops took ~10 ms
/// each to cross.
size_t stringEnd(std::string_view t, size_t open,
                 LineBreaks lineBreaks = LineBreaks::End);

/// After the string literal that starts at `open`: past its closing quote,
/// or where it ends unclosed (see stringEnd).
size_t skipString(std::string_view t, size_t open,
                  LineBreaks lineBreaks = LineBreaks::End);

/// Whether a `//` comment starts at `i`.
inline bool commentAt(std::string_view t, size_t i) {
  return i + 1 < t.size() && t[i] == '/' && t[i + 1] == '/';
}

/// The line break ending the comment at `i`, or npos at the text's end.
inline size_t commentEnd(std::string_view t, size_t i) {
  return t.find('\n', i);
}

/// Whether the character at `p[at]` is escaped: an odd run of backslashes,
/// none before `p[from]`, ends right before it.
inline bool escapedAt(const char *p, size_t at, size_t from) {
  size_t k = at;
  while (k > from && p[k - 1] == '\\')
    --k;
  return (at - k) % 2 == 1;
}

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_TEXTSCAN_H
