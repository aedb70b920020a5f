//===- DroppedNanModes.cpp - `nan_mode` strings MLIR 22 drops -------------===//

#include "DroppedNanModes.h"

#include "TextScan.h"

#include <cstring>

namespace tosa_lsp::detail {

namespace {

constexpr std::string_view kKey = "nan_mode";
constexpr std::string_view kIgnore = "\"IGNORE\"";

bool identChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

/// Whether `at` is code on its line: not in a `//` comment or a string.
bool inCode(std::string_view t, size_t lineStart, size_t at) {
  for (size_t i = lineStart; i < at;) {
    if (commentAt(t, i))
      return false;
    if (t[i] == '"') {
      i = skipString(t, i);
      if (i > at)
        return false;
      continue;
    }
    ++i;
  }
  return true;
}

/// Whether the dictionary holding `at` opens with `<{` (properties), seen
/// on its line.
bool inProperties(std::string_view t, size_t lineStart, size_t at) {
  size_t open = t.rfind('{', at);
  if (open == std::string_view::npos || open < lineStart)
    return false;
  return open > 0 && t[open - 1] == '<';
}

} // namespace

std::vector<DroppedNanMode> droppedNanModes(std::string_view text) {
  // Found by the `G` of `"IGNORE"`: a capital G is rare in MLIR text (none
  // in hex weights), so memchr crosses a 200k-line file in about a
  // millisecond, where a search for `nan_mode` stopped at every `n` (12 ms).
  std::vector<DroppedNanMode> found;
  const char *begin = text.data(), *end = begin + text.size();
  for (const char *g = begin;
       (g = static_cast<const char *>(std::memchr(g, 'G', end - g))); ++g) {
    size_t quote = g - begin;
    if (quote < 2 || text.substr(quote - 2, kIgnore.size()) != kIgnore)
      continue;
    quote -= 2;
    size_t eq = quote;
    while (eq > 0 && (text[eq - 1] == ' ' || text[eq - 1] == '\t'))
      --eq;
    if (eq == 0 || text[eq - 1] != '=')
      continue;
    size_t keyEnd = eq - 1;
    while (keyEnd > 0 && (text[keyEnd - 1] == ' ' || text[keyEnd - 1] == '\t'))
      --keyEnd;
    if (keyEnd < kKey.size() ||
        text.substr(keyEnd - kKey.size(), kKey.size()) != kKey)
      continue;
    size_t at = keyEnd - kKey.size();
    if (at > 0 && identChar(text[at - 1]))
      continue;
    size_t lineStart = text.rfind('\n', at);
    lineStart = lineStart == std::string_view::npos ? 0 : lineStart + 1;
    if (!inCode(text, lineStart, at) || inProperties(text, lineStart, at))
      continue;
    found.push_back({at, quote + kIgnore.size() - at});
  }
  return found;
}

} // namespace tosa_lsp::detail
