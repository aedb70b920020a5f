//===- Sections.cpp - `// -----` splitting like mlir-opt ------------------===//

#include "Analysis.h"
#include "LineIndex.h"

#include <optional>
#include <string_view>

namespace tosa_lsp {

// Same algorithm as mlir::splitAndProcessBuffer in MLIR 22, including its
// quirks, so that sections (and therefore diagnostics) match mlir-opt's
// --split-input-file: split on the marker minus its last two characters,
// then accept a split only if the next two characters complete the marker
// and something follows (its check compares with '0', not '-').
std::vector<Section> splitSections(const std::string &text,
                                   std::vector<size_t> *nearMisses,
                                   const LineIndex *lines) {
  static constexpr std::string_view kMarker = "// -----";
  static constexpr size_t kCheckLen = 2;
  const std::string_view prefix = kMarker.substr(0, kMarker.size() - kCheckLen);
  std::string_view buf(text);

  // Raw pieces between occurrences of the prefix.
  std::vector<std::pair<size_t, size_t>> raw; // [begin, end)
  size_t start = 0;
  while (true) {
    size_t hit = buf.find(prefix, start);
    if (hit == std::string_view::npos) {
      raw.push_back({start, buf.size()});
      break;
    }
    raw.push_back({start, hit});
    start = hit + prefix.size();
  }

  std::vector<std::pair<size_t, size_t>> pieces;
  std::pair<size_t, size_t> prev{0, 0};
  auto empty = [](std::pair<size_t, size_t> p) { return p.second == p.first; };
  for (auto r : raw) {
    if (empty(prev)) {
      prev = r;
      continue;
    }
    std::string_view piece = buf.substr(r.first, r.second - r.first);
    bool expected =
        piece.substr(0, kCheckLen) == kMarker.substr(prefix.size()) &&
        piece.size() > kCheckLen && piece[kCheckLen] != '0';
    if (expected) {
      pieces.push_back(prev);
      prev = {r.first + kCheckLen, r.second};
    } else {
      if (nearMisses)
        nearMisses->push_back(r.first);
      prev = {prev.first, r.second};
    }
  }
  if (!empty(prev))
    pieces.push_back(prev);
  if (pieces.empty())
    pieces.push_back({0, buf.size()});

  // Lines and columns from a line table: the caller's, else one made here
  // (a memchr per line, not the two byte-at-a-time scans there were).
  std::optional<LineIndex> own;
  if (!lines)
    lines = &own.emplace(text);
  std::vector<Section> out;
  for (auto p : pieces) {
    Section s;
    s.index = out.size();
    s.beginOffset = p.first;
    s.endOffset = p.second;
    Position at = lines->position(p.first);
    s.firstLine = at.line;
    s.firstColumn = at.column;
    s.lastLine = lines->position(p.second).line;
    out.push_back(s);
  }
  return out;
}

} // namespace tosa_lsp
