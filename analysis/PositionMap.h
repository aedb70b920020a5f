//===- PositionMap.h - positions between a text and its edited form -*- C++
//-*-===//
//
// Where a position of a text is after edits were applied to it, and back:
// the server answers requests on a pre-MLIR-22 file from the analysis of its
// migrated text, so the request's position goes forward and the answer's
// ranges come back. Outside the edits a position moves by what the edits
// before it added; inside one, the part the old and new text of the edit
// share at their start or end (an op's name, its result type and `loc`)
// maps exactly, anything else to the edit's start, flagged inexact.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_POSITIONMAP_H
#define TOSA_LSP_ANALYSIS_POSITIONMAP_H

#include "LineIndex.h"
#include "TextEdit.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

class PositionMap {
public:
  /// One applied edit, in byte offsets of the old and the new text, with
  /// the lengths its old and new text share at the start and the end.
  struct Span {
    size_t oldBegin, oldEnd, newBegin, newEnd, prefix, suffix;
  };

  /// The identity on the empty text.
  PositionMap() : oldLines(""), newLines("") {}
  /// Applies `edits` (non-overlapping, any order; as applyEdits, an edit
  /// overlapping an earlier one is dropped) to `text` and returns the
  /// result; `map` (if given) maps between the two.
  static std::string apply(const std::string &text,
                           const std::vector<TextEditData> &edits,
                           PositionMap *map);

  /// The map from `before` to `after` as one edit: what lies between
  /// their common prefix and suffix (a document's previous version to its
  /// current one).
  static PositionMap between(const std::string &before,
                             const std::string &after);

  /// Where `p` of the old text is in the new one; std::nullopt outside the
  /// text. `exact` (if given) is false where `p` lies in text an edit
  /// rewrote and the answer is the edit's start.
  std::optional<Position> toNew(Position p, bool *exact = nullptr) const;
  /// The same from the new text to the old one (inserted text maps to where
  /// it was inserted).
  std::optional<Position> toOld(Position p, bool *exact = nullptr) const;
  /// A range of the new text in the old one (begin and end mapped alone).
  std::optional<Range> toOld(Range r) const;
  std::optional<Range> toNew(Range r) const;

  size_t offsetToNew(size_t old, bool *exact = nullptr) const;
  size_t offsetToOld(size_t now, bool *exact = nullptr) const;

  const std::vector<Span> &spans() const { return edits; }
  bool empty() const { return edits.empty(); }

private:
  std::vector<Span> edits; // by oldBegin (and newBegin)
  LineIndex oldLines, newLines;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_POSITIONMAP_H
