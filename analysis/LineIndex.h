//===- LineIndex.h - byte offsets <-> 1-based positions ---------*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_LINEINDEX_H
#define TOSA_LSP_ANALYSIS_LINEINDEX_H

#include "Analysis.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace tosa_lsp {

/// Line starts of one text version: 1-based line / byte-column positions to
/// byte offsets and back.
class LineIndex {
public:
  explicit LineIndex(std::string_view text) : size(text.size()) {
    // memchr: a byte loop over a 20 MB file took ~15 ms per version.
    const char *begin = text.data(), *end = begin + text.size();
    for (const char *p = begin;
         p < end &&
         (p = static_cast<const char *>(std::memchr(p, '\n', end - p)));
         ++p)
      starts.push_back(p - begin + 1);
  }
  /// std::nullopt for an invalid position or one past the end of the text.
  std::optional<size_t> offset(Position p) const {
    if (!p.valid() || p.line > starts.size())
      return std::nullopt;
    size_t off = starts[p.line - 1] + p.column - 1;
    return off <= size ? std::optional<size_t>(off) : std::nullopt;
  }
  Position position(size_t offset) const {
    // Callers walk the text mostly forwards: try the line of the previous
    // answer (per thread) and the next one before a binary search.
    thread_local const LineIndex *hintOwner = nullptr;
    thread_local size_t hint = 0;
    if (hintOwner == this) {
      for (size_t l = hint; l < hint + 2 && l < starts.size(); ++l)
        if (starts[l] <= offset &&
            (l + 1 == starts.size() || offset < starts[l + 1])) {
          hint = l;
          return {static_cast<unsigned>(l + 1),
                  static_cast<unsigned>(offset - starts[l] + 1)};
        }
    }
    auto it = std::upper_bound(starts.begin(), starts.end(), offset);
    size_t line = static_cast<size_t>(it - starts.begin());
    hintOwner = this;
    hint = line - 1;
    return {static_cast<unsigned>(line),
            static_cast<unsigned>(offset - starts[line - 1] + 1)};
  }

  size_t lineCount() const { return starts.size(); }
  /// The size of the text it was built from.
  size_t textSize() const { return size; }
  /// Byte offset where 0-based line `index0` starts.
  size_t lineStart(size_t index0) const { return starts[index0]; }

private:
  std::vector<size_t> starts{0};
  size_t size;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_LINEINDEX_H
