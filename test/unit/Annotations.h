//===- Annotations.h - marked-up snippets for feature tests -----*- C++ -*-===//
//
// clangd-style annotated inputs, adapted to MLIR (where `^` and `[` are
// syntax): `$$` marks a point, `[[` ... `]]` a range. The markers are
// removed; positions are 1-based lines and byte columns like the analysis.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TEST_ANNOTATIONS_H
#define TOSA_LSP_TEST_ANNOTATIONS_H

#include "Analysis.h"

#include <ostream>
#include <string>
#include <vector>

namespace tosa_lsp {

class Annotations {
public:
  explicit Annotations(const std::string &marked) {
    unsigned line = 1, col = 1;
    std::vector<Position> open;
    for (size_t i = 0; i < marked.size();) {
      if (marked.compare(i, 2, "$$") == 0) {
        points.push_back({line, col});
        i += 2;
      } else if (marked.compare(i, 2, "[[") == 0) {
        open.push_back({line, col});
        i += 2;
      } else if (marked.compare(i, 2, "]]") == 0 && !open.empty()) {
        ranges.push_back({open.back(), {line, col}});
        open.pop_back();
        i += 2;
      } else {
        text += marked[i];
        if (marked[i] == '\n') {
          ++line;
          col = 1;
        } else {
          ++col;
        }
        ++i;
      }
    }
  }
  std::string text;
  std::vector<Position> points;
  std::vector<Range> ranges;
  Position point(size_t i = 0) const { return points.at(i); }
  Range range(size_t i = 0) const { return ranges.at(i); }
};

inline bool operator==(Position a, Position b) {
  return a.line == b.line && a.column == b.column;
}
inline bool operator==(const Range &a, const Range &b) {
  return a.begin == b.begin && a.end == b.end;
}
inline std::ostream &operator<<(std::ostream &os, Position p) {
  return os << p.line << ":" << p.column;
}
inline std::ostream &operator<<(std::ostream &os, const Range &r) {
  return os << r.begin << "-" << r.end;
}

} // namespace tosa_lsp

#endif // TOSA_LSP_TEST_ANNOTATIONS_H
