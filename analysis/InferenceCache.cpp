//===- InferenceCache.cpp - shape inference kept across versions ----------===//

#include "InferenceCache.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>

namespace tosa_lsp {

std::vector<FunctionKey> functionKeys(llvm::StringRef text,
                                      const LineIndex &lines,
                                      const FileAnalysis &fa) {
  struct Fn {
    size_t begin, end;
    const SymbolInfo *sym;
  };
  const size_t n = fa.sections.size();
  std::vector<std::vector<Fn>> fns(n);
  for (const SymbolInfo &sym : fa.symbols) {
    if (sym.opName != "func.func" || !sym.scope.begin.valid() ||
        !sym.scope.end.valid() || sym.section >= n)
      continue;
    const Section &sec = fa.sections[sym.section];
    if (!sec.parsed || sec.stale)
      continue;
    std::optional<size_t> b = lines.offset(sym.scope.begin),
                          e = lines.offset(sym.scope.end);
    if (!b || !e || *e < *b || *e > text.size())
      continue;
    fns[sym.section].push_back({*b, *e, &sym});
  }
  // What the inferrer skips: a function with an error inside, every one of
  // a section with an error that has no place.
  std::vector<std::vector<Position>> errors(n);
  std::vector<bool> unplaced(n);
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.section >= n)
      continue;
    if (d.range.begin.valid())
      errors[d.section].push_back(d.range.begin);
    else
      unplaced[d.section] = true;
  }
  std::vector<FunctionKey> out;
  for (size_t s = 0; s < n; ++s) {
    if (fns[s].empty())
      continue;
    const Section &sec = fa.sections[s];
    std::sort(fns[s].begin(), fns[s].end(),
              [](const Fn &a, const Fn &b) { return a.begin < b.begin; });
    std::sort(errors[s].begin(), errors[s].end(), before);
    // The section's text outside its functions: its aliases, which a
    // function's types may name.
    uint64_t around = 0;
    size_t at = std::min(sec.beginOffset, text.size());
    auto hashUpTo = [&](size_t end) {
      end = std::min(end, text.size());
      if (end > at)
        around =
            llvm::hash_combine(around, llvm::xxh3_64bits(text.slice(at, end)));
      at = std::max(at, end);
    };
    for (const Fn &f : fns[s]) {
      hashUpTo(f.begin);
      at = std::max(at, f.end);
    }
    hashUpTo(sec.endOffset);
    size_t lastEnd = 0;
    for (const Fn &f : fns[s]) {
      // One inside another's text (in an op's region) is never inferred.
      if (f.begin < lastEnd)
        continue;
      lastEnd = f.end;
      const Range &scope = f.sym->scope;
      auto e = std::lower_bound(errors[s].begin(), errors[s].end(), scope.begin,
                                before);
      bool hasError =
          unplaced[s] || (e != errors[s].end() && !before(scope.end, *e));
      FunctionKey k;
      k.hash = llvm::hash_combine(llvm::xxh3_64bits(text.slice(f.begin, f.end)),
                                  scope.begin.column, around, hasError);
      k.section = static_cast<unsigned>(s);
      k.firstLine = scope.begin.line;
      k.lastLine = scope.end.line;
      out.push_back(k);
    }
  }
  // Sections are in text order, and so are the functions within each.
  return out;
}

llvm::ArrayRef<FunctionKey> keysOnLines(llvm::ArrayRef<FunctionKey> all,
                                        unsigned first, unsigned last) {
  // The functions do not overlap (functionKeys): their last lines are
  // sorted too.
  auto b = std::lower_bound(
      all.begin(), all.end(), first,
      [](const FunctionKey &k, unsigned line) { return k.lastLine < line; });
  auto e = b;
  while (e != all.end() && e->firstLine <= last)
    ++e;
  return llvm::ArrayRef<FunctionKey>(b, e);
}

bool InferenceCache::answers(const Entry &e, bool refineEdits) {
  return e.inference && (!refineEdits || e.inference->refineKnown ||
                         !e.inference->skipped.empty());
}

ShapeInference InferenceCache::lookup(llvm::ArrayRef<FunctionKey> fns,
                                      std::vector<FunctionKey> *missing,
                                      bool refineEdits) {
  ShapeInference out;
  std::lock_guard<std::mutex> lock(mu);
  for (const FunctionKey &k : fns) {
    auto it = entries.find(k.hash);
    if (it == entries.end() || !answers(it->second, refineEdits)) {
      if (missing)
        missing->push_back(k);
      continue;
    }
    std::shared_ptr<const FunctionInference> &f = it->second.inference;
    // Moved by an edit above it: shifted once, and kept so, for the
    // versions after this one.
    if (f->scope.begin.line != k.firstLine || f->section != k.section)
      f = std::make_shared<const FunctionInference>(shifted(
          *f,
          static_cast<int>(k.firstLine) - static_cast<int>(f->scope.begin.line),
          k.section));
    out.functions.push_back(f);
  }
  return out;
}

std::vector<FunctionKey>
InferenceCache::unknown(llvm::ArrayRef<FunctionKey> fns) {
  std::vector<FunctionKey> out;
  std::lock_guard<std::mutex> lock(mu);
  for (const FunctionKey &k : fns) {
    auto it = entries.find(k.hash);
    if (it == entries.end() || !answers(it->second, false))
      out.push_back(k);
  }
  return out;
}

bool InferenceCache::store(llvm::ArrayRef<FunctionKey> fns,
                           const ShapeInference &fresh) {
  if (fresh.cancelled)
    return false;
  std::vector<Diagnostic> all = contradictionDiagnostics(fresh);
  // By place (an open's analysis stores every function at once).
  auto place = [](unsigned section, unsigned line) {
    return (uint64_t(section) << 32) | line;
  };
  std::unordered_map<uint64_t, size_t> at;
  at.reserve(fresh.functions.size());
  for (size_t i = fresh.functions.size(); i-- > 0;) // the first one wins
    at[place(fresh.functions[i].section, fresh.functions[i].scope.begin.line)] =
        i;
  bool gained = false;
  std::lock_guard<std::mutex> lock(mu);
  for (const FunctionKey &k : fns) {
    std::shared_ptr<const FunctionInference> found;
    auto pos = at.find(place(k.section, k.firstLine));
    if (pos != at.end())
      found = fresh.functions.shared(pos->second);
    if (!found) {
      // Nothing to ask for again (a section error without a place).
      FunctionInference none;
      none.scope.begin = {k.firstLine, 1};
      none.scope.end = {k.lastLine, 1};
      none.section = k.section;
      none.skipped = "not inferred";
      found = std::make_shared<const FunctionInference>(std::move(none));
    }
    std::vector<Diagnostic> mine;
    for (const Diagnostic &d : all) {
      if (d.section != k.section || !d.range.begin.valid() ||
          d.range.begin.line < k.firstLine || d.range.begin.line > k.lastLine)
        continue;
      Diagnostic rel = d;
      shiftLines(rel, -static_cast<int>(k.firstLine));
      mine.push_back(std::move(rel));
    }
    auto [it, added] = entries.try_emplace(k.hash);
    gained |= !mine.empty() && (added || it->second.errors.empty());
    // What is known of the same text is not traded for less.
    if (!found->refineKnown && it->second.inference &&
        it->second.inference->refineKnown)
      found = it->second.inference;
    it->second.inference = std::move(found);
    it->second.errors = std::move(mine);
  }
  return gained;
}

std::vector<Diagnostic>
InferenceCache::shapeErrors(llvm::ArrayRef<FunctionKey> fns,
                            std::vector<FunctionKey> *unchecked) {
  std::vector<Diagnostic> out;
  std::lock_guard<std::mutex> lock(mu);
  for (const FunctionKey &k : fns) {
    auto it = entries.find(k.hash);
    if (it == entries.end()) {
      if (unchecked)
        unchecked->push_back(k);
      continue;
    }
    for (Diagnostic d : it->second.errors) {
      shiftLines(d, static_cast<int>(k.firstLine));
      d.section = k.section;
      out.push_back(std::move(d));
    }
  }
  return out;
}

void InferenceCache::retain(llvm::ArrayRef<FunctionKey> fns) {
  std::unordered_map<uint64_t, bool> keep;
  keep.reserve(fns.size());
  for (const FunctionKey &k : fns)
    keep[k.hash] = true;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = entries.begin(); it != entries.end();)
    it = keep.count(it->first) ? std::next(it) : entries.erase(it);
}

void InferenceCache::dropInferenceOver(unsigned lines) {
  std::lock_guard<std::mutex> lock(mu);
  for (auto &[hash, e] : entries)
    if (e.inference && e.inference->scope.begin.valid() &&
        e.inference->scope.end.line - e.inference->scope.begin.line + 1 > lines)
      e.inference.reset();
}

size_t InferenceCache::size() const {
  std::lock_guard<std::mutex> lock(mu);
  size_t n = 0;
  for (const auto &[hash, e] : entries)
    n += e.inference != nullptr;
  return n;
}

bool InferenceCache::empty() const {
  std::lock_guard<std::mutex> lock(mu);
  return entries.empty();
}

} // namespace tosa_lsp
