//===- TextEdit.cpp - edits of a file's text as plain data ----------------===//

#include "TextEdit.h"

#include "LineIndex.h"

#include <algorithm>

namespace tosa_lsp {

std::string applyEdits(const std::string &text,
                       const std::vector<TextEditData> &edits) {
  LineIndex off(text);
  std::vector<std::pair<std::pair<size_t, size_t>, const std::string *>> spans;
  for (const TextEditData &e : edits) {
    auto b = off.offset(e.range.begin), en = off.offset(e.range.end);
    if (!b || !en)
      continue;
    spans.push_back({{*b, *en}, &e.newText});
  }
  // One forward pass (a migration has an edit per op of a model: replacing
  // in place would move the file's tail once per edit).
  std::stable_sort(
      spans.begin(), spans.end(),
      [](const auto &x, const auto &y) { return x.first < y.first; });
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (const auto &[r, t] : spans) {
    if (r.first < at)
      continue; // Overlaps the previous edit.
    out.append(text, at, r.first - at);
    out += *t;
    at = r.second;
  }
  out.append(text, at, std::string::npos);
  return out;
}

} // namespace tosa_lsp
