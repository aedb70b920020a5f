//===- Query.h - position lookups over a FileAnalysis -----------*- C++ -*-===//
//
// Shared by the editor features: which op, value, block or symbol is at a
// position. Positions are 1-based lines and byte columns.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_QUERY_H
#define TOSA_LSP_ANALYSIS_QUERY_H

#include "Analysis.h"

namespace tosa_lsp {

/// `pos` lies in `r` (end inclusive, so a cursor right after a token counts).
bool contains(const Range &r, Position pos);
/// `a` and `b` overlap (line granularity is enough for range requests).
bool overlaps(const Range &a, const Range &b);

/// The entity under the cursor: at most one of these is set.
struct Lookup {
  const OpReport *op = nullptr;    // on a Broadcastable op's name
  const ValueInfo *value = nullptr; // on a value definition or use
  bool onValueDef = false;
  const BlockInfo *block = nullptr;
  const SymbolInfo *symbol = nullptr;
  bool onSymbolDef = false;
  /// The range of the token under the cursor.
  Range range;
};

Lookup lookup(const FileAnalysis &fa, Position pos);

/// The Broadcastable op whose text contains `pos`, if any.
const OpReport *enclosingOp(const FileAnalysis &fa, Position pos);

/// The innermost `func.func` whose text contains `pos`, if any.
const SymbolInfo *functionAt(const FileAnalysis &fa, Position pos);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_QUERY_H
