//===- DroppedNanModes.cpp - `nan_mode` strings MLIR 22 drops -------------===//

#include "DroppedNanModes.h"

#include "TextScan.h"

namespace tosa_lsp::detail {

namespace {

constexpr std::string_view kKey = "nan_mode";
constexpr std::string_view kIgnore = "\"IGNORE\"";

bool identChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

size_t skipBlanks(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t'))
    ++i;
  return i;
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
  std::vector<DroppedNanMode> found;
  for (size_t at = text.find(kKey); at != std::string_view::npos;
       at = text.find(kKey, at + kKey.size())) {
    if (at > 0 && identChar(text[at - 1]))
      continue;
    size_t eq = skipBlanks(text, at + kKey.size());
    if (eq >= text.size() || text[eq] != '=')
      continue;
    size_t value = skipBlanks(text, eq + 1);
    if (text.substr(value, kIgnore.size()) != kIgnore)
      continue;
    size_t lineStart = text.rfind('\n', at);
    lineStart = lineStart == std::string_view::npos ? 0 : lineStart + 1;
    if (!inCode(text, lineStart, at) || inProperties(text, lineStart, at))
      continue;
    found.push_back({at, value + kIgnore.size() - at});
  }
  return found;
}

} // namespace tosa_lsp::detail
