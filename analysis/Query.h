//===- Query.h - position lookups over a FileAnalysis -----------*- C++ -*-===//
//
// Shared by the editor features: which op, value, block or symbol is at a
// position. Positions are 1-based lines and byte columns.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_QUERY_H
#define TOSA_LSP_ANALYSIS_QUERY_H

#include "Analysis.h"

#include <cstdint>
#include <vector>

namespace tosa_lsp {

/// `pos` lies in `r` (end inclusive, so a cursor right after a token counts).
bool contains(const Range &r, Position pos);
/// `a` and `b` overlap (line granularity is enough for range requests).
bool overlaps(const Range &a, const Range &b);

/// The entity under the cursor: at most one of these is set.
struct Lookup {
  const OpReport *op = nullptr;     // on a Broadcastable op's name
  const ValueInfo *value = nullptr; // on a value definition or use
  bool onValueDef = false;
  const BlockInfo *block = nullptr;
  const SymbolInfo *symbol = nullptr;
  bool onSymbolDef = false;
  /// The range of the token under the cursor.
  Range range;
};

Lookup lookup(const FileAnalysis &fa, Position pos);

/// The op (with or without a report) whose name is at `pos`: its name, its
/// whole text and its section; `name` invalid when there is none.
struct NamedOp {
  Range name, scope;
  unsigned section = 0;
};
NamedOp namedOpAt(const FileAnalysis &fa, Position pos);
/// The same answer by a walk over everything (the reference for tests).
Lookup lookupScan(const FileAnalysis &fa, Position pos);

/// Every token an editor can point at (op names, value definitions and
/// uses, symbols, block labels) sorted by position, and the ops sorted by
/// where their text starts: hovers and inlay hints cost O(log n) at any
/// position of a 200k-line file instead of a walk over all of it.
class PositionIndex {
public:
  explicit PositionIndex(const FileAnalysis &fa);
  Lookup lookup(const FileAnalysis &fa, Position pos) const;
  /// FileAnalysis::findOp: the ops starting on `pos.line`, not all of them
  /// (a hover's 50k-op walk was 4% of a many-function session's CPU).
  int findOp(const FileAnalysis &fa, Position pos) const;
  /// Indices into `fa.ops` of the ops whose text overlaps lines
  /// [first, last], in the order of `fa.ops`.
  std::vector<unsigned> opsOverlapping(const FileAnalysis &fa, unsigned first,
                                       unsigned last) const;

private:
  enum Kind : uint8_t {
    Op,
    ValueDef,
    ValueUse,
    SymbolDef,
    SymbolUse,
    BlockDef,
    BlockUse
  };
  /// 8 bytes, not 16: the line is where the entry is (`lineStart`), the
  /// kind shares a word with the item (a 200k-line file's index was ~13
  /// MB, and a version's index lives beside the next one's).
  struct Entry {
    uint32_t kindItem; // kind << kItemBits | index into its kind's vector
    uint32_t use;      // index into `uses` for *Use kinds
    Kind kind() const { return Kind(kindItem >> kItemBits); }
    unsigned item() const { return kindItem & ((1u << kItemBits) - 1); }
  };
  static constexpr unsigned kItemBits = 29;
  std::vector<Entry> entries; // by line, then kind, then item (scan order)
  /// The entries of line L are [lineStart[L], lineStart[L + 1]).
  std::vector<uint32_t> lineStart;
  /// (first line of the op's text, op index), sorted.
  std::vector<std::pair<unsigned, unsigned>> opStarts;
  unsigned maxOpLines = 0; // the longest op's line span
};

/// The Broadcastable op whose text contains `pos`, if any.
const OpReport *enclosingOp(const FileAnalysis &fa, Position pos);

/// The innermost `func.func` whose text contains `pos`, if any.
const SymbolInfo *functionAt(const FileAnalysis &fa, Position pos);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_QUERY_H
