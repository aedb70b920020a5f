//===- TextScan.cpp - skip MLIR strings and comments in text --------------===//

#include "TextScan.h"

#include <cstring>

namespace tosa_lsp::detail {

size_t stringEnd(std::string_view t, size_t open, LineBreaks lineBreaks) {
  const char *p = t.data();
  const size_t n = t.size(), from = open + 1;
  for (size_t k = from; k < n;) {
    const void *quote = std::memchr(p + k, '"', n - k);
    size_t end = quote ? static_cast<const char *>(quote) - p : n;
    size_t stop = end;
    if (lineBreaks == LineBreaks::End)
      if (const void *nl = std::memchr(p + k, '\n', end - k))
        stop = static_cast<const char *>(nl) - p;
    if (stop == n || !escapedAt(p, stop, from))
      return stop;
    k = stop + 1;
  }
  return n;
}

size_t skipString(std::string_view t, size_t open, LineBreaks lineBreaks) {
  size_t end = stringEnd(t, open, lineBreaks);
  return end < t.size() && t[end] == '"' ? end + 1 : end;
}

} // namespace tosa_lsp::detail
