//===- Query.cpp - position lookups over a FileAnalysis -------------------===//

#include "Query.h"

namespace tosa_lsp {

static bool before(Position a, Position b) {
  return a.line < b.line || (a.line == b.line && a.column < b.column);
}

bool contains(const Range &r, Position pos) {
  if (!r.begin.valid())
    return false;
  Position end = r.end.valid() ? r.end : r.begin;
  return !before(pos, r.begin) && !before(end, pos);
}

bool overlaps(const Range &a, const Range &b) {
  if (!a.begin.valid() || !b.begin.valid())
    return false;
  Position ae = a.end.valid() ? a.end : a.begin;
  Position be = b.end.valid() ? b.end : b.begin;
  return !before(ae, b.begin) && !before(be, a.begin);
}

Lookup lookup(const FileAnalysis &fa, Position pos) {
  Lookup l;
  for (const OpReport &op : fa.ops)
    if (contains(op.range, pos)) {
      l.op = &op;
      l.range = op.range;
      return l;
    }
  for (const ValueInfo &v : fa.values) {
    if (contains(v.def, pos)) {
      l.value = &v;
      l.onValueDef = true;
      l.range = v.def;
      return l;
    }
    for (const Range &u : v.uses)
      if (contains(u, pos)) {
        l.value = &v;
        l.range = u;
        return l;
      }
  }
  for (const SymbolInfo &s : fa.symbols) {
    if (contains(s.nameRange, pos)) {
      l.symbol = &s;
      l.onSymbolDef = true;
      l.range = s.nameRange;
      return l;
    }
    for (const Range &u : s.uses)
      if (contains(u, pos)) {
        l.symbol = &s;
        l.range = u;
        return l;
      }
  }
  for (const BlockInfo &b : fa.blocks) {
    if (contains(b.def, pos)) {
      l.block = &b;
      l.range = b.def;
      return l;
    }
    for (const Range &u : b.uses)
      if (contains(u, pos)) {
        l.block = &b;
        l.range = u;
        return l;
      }
  }
  return l;
}

const OpReport *enclosingOp(const FileAnalysis &fa, Position pos) {
  for (const OpReport &op : fa.ops)
    if (contains(op.scope, pos) || contains(op.range, pos))
      return &op;
  return nullptr;
}

const SymbolInfo *functionAt(const FileAnalysis &fa, Position pos) {
  const SymbolInfo *best = nullptr;
  for (const SymbolInfo &s : fa.symbols)
    if (s.opName == "func.func" && contains(s.scope, pos))
      best = &s; // symbols come in text order: the last one is innermost
  return best;
}

} // namespace tosa_lsp
