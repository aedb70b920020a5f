//===- Query.cpp - position lookups over a FileAnalysis -------------------===//

#include "Query.h"

#include <algorithm>
#include <memory>
#include <mutex>

namespace tosa_lsp {

void shiftLines(Range &r, int delta) {
  if (r.begin.valid())
    r.begin.line += delta;
  if (r.end.valid())
    r.end.line += delta;
}

void shiftLines(Diagnostic &d, int delta) {
  shiftLines(d.range, delta);
  for (DiagNote &n : d.notes)
    shiftLines(n.range, delta);
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

/// `items` stably sorted by `line(item)` (a counting sort: O(n + lines)).
template <typename T, typename Line>
static std::vector<T> sortedByLine(std::vector<T> items, Line line) {
  unsigned maxLine = 0;
  for (const T &item : items)
    maxLine = std::max(maxLine, line(item));
  std::vector<size_t> next(static_cast<size_t>(maxLine) + 2, 0);
  for (const T &item : items)
    ++next[line(item) + 1];
  for (size_t l = 1; l < next.size(); ++l)
    next[l] += next[l - 1];
  std::vector<T> out(items.size());
  for (T &item : items)
    out[next[line(item)]++] = std::move(item);
  return out;
}

PositionIndex::PositionIndex(const FileAnalysis &fa) {
  // Every token in the order lookup meets them within a line: ops, then
  // values (each definition before its uses), symbols, blocks; by item,
  // then use. Gathered once into a compact list, then counted per line and
  // placed from it (a counting sort; std::sort took ~90 ms at 200k lines:
  // the first hover after each version waits for the index). Walking the
  // reports and values themselves twice took 10.5 ms at 50k lines, this
  // ~6: each value's uses are a block of their own, a cache miss.
  auto forEachToken = [&](auto fn) {
    auto add = [&](const Range &r, Kind kind, size_t item, size_t use = 0) {
      if (r.begin.valid() && item < (size_t(1) << kItemBits))
        fn(r.begin.line, Entry{uint32_t(kind) << kItemBits | uint32_t(item),
                               static_cast<uint32_t>(use)});
    };
    for (size_t i = 0; i < fa.ops.size(); ++i)
      add(fa.ops[i].range, Op, i);
    for (size_t i = 0; i < fa.values.size(); ++i) {
      // Each value's uses are a block of their own: asked for ahead (a
      // cache miss per value was a third of the index's time).
      if (i + 8 < fa.values.size())
        __builtin_prefetch(fa.values[i + 8].uses.begin());
      add(fa.values[i].def, ValueDef, i);
      for (size_t u = 0; u < fa.values[i].uses.size(); ++u)
        add(fa.values[i].uses[u], ValueUse, i, u);
    }
    for (size_t i = 0; i < fa.symbols.size(); ++i) {
      add(fa.symbols[i].nameRange, SymbolDef, i);
      for (size_t u = 0; u < fa.symbols[i].uses.size(); ++u)
        add(fa.symbols[i].uses[u], SymbolUse, i, u);
    }
    for (size_t i = 0; i < fa.blocks.size(); ++i) {
      add(fa.blocks[i].def, BlockDef, i);
      for (size_t u = 0; u < fa.blocks[i].uses.size(); ++u)
        add(fa.blocks[i].uses[u], BlockUse, i, u);
    }
  };
  std::vector<std::pair<uint32_t, Entry>> tokens;
  tokens.reserve(fa.ops.size() + 3 * fa.values.size());
  unsigned maxLine = 0;
  forEachToken([&](unsigned line, const Entry &e) {
    tokens.push_back({line, e});
    maxLine = std::max(maxLine, line);
  });
  lineStart.assign(tokens.empty() ? 0 : size_t(maxLine) + 2, 0);
  for (const auto &[line, e] : tokens)
    ++lineStart[line + 1];
  for (size_t l = 1; l < lineStart.size(); ++l)
    lineStart[l] += lineStart[l - 1];
  std::vector<uint32_t> next(lineStart);
  entries.resize(tokens.size());
  for (const auto &[line, e] : tokens)
    entries[next[line]++] = e;
  for (size_t i = 0; i < fa.ops.size(); ++i) {
    const OpReport &op = fa.ops[i];
    Range r = op.scope.begin.valid() ? op.scope : op.range;
    if (!r.begin.valid())
      continue;
    unsigned last =
        r.end.valid() ? std::max(r.end.line, r.begin.line) : r.begin.line;
    opStarts.push_back({r.begin.line, static_cast<unsigned>(i)});
    maxOpLines = std::max(maxOpLines, last - r.begin.line);
  }
  // Added by index: sorted by (line, index) after a stable sort by line.
  opStarts = sortedByLine(
      std::move(opStarts),
      [](const std::pair<unsigned, unsigned> &e) { return e.first; });
}

int PositionIndex::findOp(const FileAnalysis &fa, Position pos) const {
  if (size_t(pos.line) + 1 >= lineStart.size())
    return -1;
  int lineMatch = -1;
  // A line's entries start with its ops, in the order of `fa.ops`.
  for (uint32_t at = lineStart[pos.line], end = lineStart[pos.line + 1];
       at < end && entries[at].kind() == Op; ++at) {
    int i = static_cast<int>(entries[at].item());
    const Range &r = fa.ops[i].range;
    if (pos.column == 0 ||
        (pos.column >= r.begin.column &&
         (pos.column <= r.end.column || r.end.line > r.begin.line)))
      return i;
    if (lineMatch < 0)
      lineMatch = i;
  }
  return lineMatch;
}

int FileAnalysis::findOp(Position pos) const {
  return positionIndex().findOp(*this, pos);
}

Lookup PositionIndex::lookup(const FileAnalysis &fa, Position pos) const {
  Lookup l;
  // Every token lies on one line: only entries starting on pos's line can
  // contain it.
  if (size_t(pos.line) + 1 >= lineStart.size())
    return l;
  for (uint32_t at = lineStart[pos.line], end = lineStart[pos.line + 1];
       at < end; ++at) {
    const Entry &e = entries[at];
    switch (e.kind()) {
    case Op:
      if (contains(fa.ops[e.item()].range, pos)) {
        l.op = &fa.ops[e.item()];
        l.range = l.op->range;
        return l;
      }
      break;
    case ValueDef:
    case ValueUse: {
      const ValueInfo &v = fa.values[e.item()];
      const Range &r = e.kind() == ValueDef ? v.def : v.uses[e.use];
      if (contains(r, pos)) {
        l.value = &v;
        l.onValueDef = e.kind() == ValueDef;
        l.range = r;
        return l;
      }
      break;
    }
    case SymbolDef:
    case SymbolUse: {
      const SymbolInfo &sym = fa.symbols[e.item()];
      const Range &r = e.kind() == SymbolDef ? sym.nameRange : sym.uses[e.use];
      if (contains(r, pos)) {
        l.symbol = &sym;
        l.onSymbolDef = e.kind() == SymbolDef;
        l.range = r;
        return l;
      }
      break;
    }
    case BlockDef:
    case BlockUse: {
      const BlockInfo &b = fa.blocks[e.item()];
      const Range &r = e.kind() == BlockDef ? b.def : b.uses[e.use];
      if (contains(r, pos)) {
        l.block = &b;
        l.range = r;
        return l;
      }
      break;
    }
    }
  }
  return l;
}

std::vector<unsigned> PositionIndex::opsOverlapping(const FileAnalysis &fa,
                                                    unsigned first,
                                                    unsigned last) const {
  std::vector<unsigned> out;
  unsigned from = first > maxOpLines ? first - maxOpLines : 0;
  auto it = std::lower_bound(opStarts.begin(), opStarts.end(),
                             std::make_pair(from, 0u));
  for (; it != opStarts.end() && it->first <= last; ++it) {
    const OpReport &op = fa.ops[it->second];
    Range r = op.scope.begin.valid() ? op.scope : op.range;
    unsigned end =
        r.end.valid() ? std::max(r.end.line, r.begin.line) : r.begin.line;
    if (end >= first)
      out.push_back(it->second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct FileAnalysis::LazyIndex {
  std::once_flag once;
  std::unique_ptr<PositionIndex> index;
  std::once_flag errorsOnce;
  std::vector<uint32_t> errors;
};

FileAnalysis::FileAnalysis() : lazyIndex(std::make_shared<LazyIndex>()) {}
FileAnalysis::~FileAnalysis() = default;
// A copy or a moved-to analysis may still be changed before it is used: it
// builds its own index.
FileAnalysis::FileAnalysis(const FileAnalysis &o)
    : path(o.path), sections(o.sections), diagnostics(o.diagnostics),
      ops(o.ops), values(o.values), blocks(o.blocks), symbols(o.symbols),
      opSpans(o.opSpans), sectionOps(o.sectionOps), lineIndex(o.lineIndex),
      lazyIndex(std::make_shared<LazyIndex>()) {}
FileAnalysis::FileAnalysis(FileAnalysis &&o)
    : path(std::move(o.path)), sections(std::move(o.sections)),
      diagnostics(std::move(o.diagnostics)), ops(std::move(o.ops)),
      values(std::move(o.values)), blocks(std::move(o.blocks)),
      symbols(std::move(o.symbols)), opSpans(std::move(o.opSpans)),
      sectionOps(std::move(o.sectionOps)), lineIndex(std::move(o.lineIndex)),
      lazyIndex(std::make_shared<LazyIndex>()) {}
FileAnalysis &FileAnalysis::operator=(const FileAnalysis &o) {
  if (this != &o)
    *this = FileAnalysis(o);
  return *this;
}
FileAnalysis &FileAnalysis::operator=(FileAnalysis &&o) {
  path = std::move(o.path);
  sections = std::move(o.sections);
  diagnostics = std::move(o.diagnostics);
  ops = std::move(o.ops);
  values = std::move(o.values);
  blocks = std::move(o.blocks);
  symbols = std::move(o.symbols);
  opSpans = std::move(o.opSpans);
  sectionOps = std::move(o.sectionOps);
  lineIndex = std::move(o.lineIndex);
  lazyIndex = std::make_shared<LazyIndex>();
  return *this;
}

const PositionIndex &FileAnalysis::positionIndex() const {
  std::call_once(lazyIndex->once, [&] {
    lazyIndex->index = std::make_unique<PositionIndex>(*this);
  });
  return *lazyIndex->index;
}

const std::vector<uint32_t> &FileAnalysis::errorIndices() const {
  std::call_once(lazyIndex->errorsOnce, [&] {
    for (size_t i = 0; i < diagnostics.size(); ++i)
      if (diagnostics[i].severity == Severity::Error)
        lazyIndex->errors.push_back(static_cast<uint32_t>(i));
  });
  return lazyIndex->errors;
}

Lookup lookup(const FileAnalysis &fa, Position pos) {
  return fa.positionIndex().lookup(fa, pos);
}

Lookup lookupScan(const FileAnalysis &fa, Position pos) {
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

NamedOp namedOpAt(const FileAnalysis &fa, Position pos) {
  NamedOp out;
  int i = fa.findOp(pos);
  if (i >= 0 && contains(fa.ops[i].range, pos))
    return {fa.ops[i].range, fa.ops[i].scope, fa.ops[i].section};
  for (const OpSpan &o : fa.opSpans)
    if (o.nameRange.begin.line == pos.line && contains(o.nameRange, pos))
      return {o.nameRange, o.scope, o.section};
  return out;
}

} // namespace tosa_lsp
