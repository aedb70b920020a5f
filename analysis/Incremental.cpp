//===- Incremental.cpp - an edit inside one function, re-analysed alone ---===//
//
// A section that parsed last time remembers its units (SectionUnits: the
// top-level ops, usually functions). An edit inside one unit re-parses and
// re-verifies that unit alone, in a buffer that starts with the section's
// aliases and a stub for each function it calls, and merges its items into
// the previous analysis; everything else is kept. Whenever the result could
// differ from a full analysis, std::nullopt sends the section through one.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "CrashGuard.h"
#include "FunctionSplit.h"
#include "TextDiff.h"
#include "Timing.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

namespace {

/// The names `symbolRefsIn` finds, for a unit's stubs.
std::optional<std::vector<std::string>> symbolRefs(std::string_view text) {
  std::optional<std::vector<SymbolRef>> refs = symbolRefsIn(text);
  if (!refs)
    return std::nullopt;
  std::vector<std::string> out;
  out.reserve(refs->size());
  for (const SymbolRef &r : *refs)
    out.emplace_back(r.name);
  return out;
}

/// A section's items of one kind in an analysis (`at`: a Slice's range).
template <typename T>
llvm::ArrayRef<T> itemsIn(const std::vector<T> &items, const size_t (&at)[2]) {
  return llvm::ArrayRef(items).slice(at[0], at[1] - at[0]);
}

/// Where an edit lies: between the common prefix and suffix of the
/// section's old and new text, inside one unit.
struct UnitEdit {
  size_t unit = 0; // its index in SectionUnits::units
  size_t prefix = 0, suffix = 0;
  size_t editEnd = 0;        // in the old text
  ptrdiff_t delta = 0;       // bytes the edit added
  size_t newEnd = 0;         // the unit's end in the new text
  std::string_view unitText; // the unit's new text
};

/// The edit, when it lies inside one unit that is not most of the section
/// (a one-function model: analysing the section whole is as much work,
/// runs on both cores and needs no merge).
std::optional<UnitEdit> locateEdit(const SectionUnits &su,
                                   std::string_view oldText,
                                   std::string_view newText) {
  UnitEdit e;
  size_t limit = std::min(oldText.size(), newText.size());
  e.prefix = commonPrefix(oldText, newText, limit);
  e.suffix = commonSuffix(oldText, newText, limit - e.prefix);
  e.editEnd = oldText.size() - e.suffix;
  size_t k = 0;
  while (k < su.units.size() &&
         !(su.units[k].begin <= e.prefix && e.editEnd <= su.units[k].end))
    ++k;
  if (k == su.units.size())
    return std::nullopt;
  const Unit &u = su.units[k];
  if (2 * (u.end - u.begin) > oldText.size())
    return std::nullopt;
  e.unit = k;
  e.delta = static_cast<ptrdiff_t>(newText.size()) -
            static_cast<ptrdiff_t>(oldText.size());
  e.newEnd = u.end + e.delta;
  e.unitText = newText.substr(u.begin, e.newEnd - u.begin);
  return e;
}

/// The job that re-analyses the edited unit: its text after the section's
/// aliases and a `func.func private` stub for each function it names.
/// std::nullopt when something it names has no faithful stub (not a
/// function, a nested reference).
std::optional<UnitJob> unitJob(const SectionUnits &su, const UnitEdit &e,
                               const Section &sec, const LineIndex &lines,
                               bool &othersFailed) {
  const Unit &u = su.units[e.unit];
  UnitJob job;
  job.prefix = su.aliases;
  std::optional<std::vector<std::string>> refs = symbolRefs(e.unitText);
  if (!refs)
    return std::nullopt;
  std::set<std::string> stubbed;
  for (const std::string &name : *refs) {
    if (name == u.symbol || !stubbed.insert(name).second)
      continue;
    for (size_t j = 0; j < su.units.size(); ++j) {
      if (j == e.unit || su.units[j].symbol != name)
        continue;
      if (su.units[j].opName != "func.func" || su.units[j].signature.empty())
        return std::nullopt; // Only functions have a faithful stub.
      job.prefix +=
          "func.func private @\"" + name + "\"" + su.units[j].signature + "\n";
    }
  }
  job.prefixLines = std::count(job.prefix.begin(), job.prefix.end(), '\n');
  job.map = sec;
  job.map.beginOffset = sec.beginOffset + u.begin;
  job.map.endOffset = sec.beginOffset + e.newEnd;
  Position at = lines.position(job.map.beginOffset);
  job.map.firstLine = at.line;
  job.map.firstColumn = at.column;
  othersFailed = false;
  for (size_t j = 0; j < su.units.size(); ++j)
    othersFailed |= j != e.unit && su.units[j].failed;
  // The module's symbol checks run only when every unit verifies.
  job.moduleChecks = !othersFailed && !u.failed;
  return job;
}

/// The section's result when the edited function alone does not parse:
/// its parse error is the section's first (MLIR stops there) when the
/// functions before it are unchanged and the edit cannot have moved a
/// function's end: it adds and removes no brace, and the error lies inside
/// the function, before its last line.
std::optional<SectionResult>
unitParseError(const Section &sec, std::vector<Diagnostic> diagnostics,
               std::string_view removed, std::string_view inserted,
               unsigned firstLine, unsigned lastLine) {
  auto brace = [](std::string_view t) {
    return t.find_first_of("{}") != std::string_view::npos;
  };
  if (brace(removed) || brace(inserted))
    return std::nullopt;
  bool anyError = false;
  for (const Diagnostic &d : diagnostics) {
    if (d.severity != Severity::Error)
      continue;
    if (!d.range.begin.valid() || d.range.begin.line < firstLine ||
        d.range.begin.line >= lastLine)
      return std::nullopt;
    anyError = true;
  }
  if (!anyError)
    return std::nullopt; // A silent failure: the full analysis says why.
  SectionResult r;
  r.section = sec;
  r.section.parsed = false;
  r.section.incremental = true;
  r.diagnostics = std::move(diagnostics);
  return r;
}

/// The section's units after the edit: the edited one ends elsewhere, those
/// after it moved.
std::shared_ptr<SectionUnits> unitsAfter(const SectionUnits &su,
                                         const UnitEdit &e, bool failed,
                                         int lineDelta) {
  auto units = std::make_shared<SectionUnits>(su);
  Unit &nu = units->units[e.unit];
  nu.end = e.newEnd;
  nu.lastLine = su.units[e.unit].lastLine + lineDelta;
  nu.failed = failed;
  for (size_t j = e.unit + 1; j < units->units.size(); ++j) {
    units->units[j].begin += e.delta;
    units->units[j].end += e.delta;
    units->units[j].firstLine += lineDelta;
    units->units[j].lastLine += lineDelta;
  }
  return units;
}

/// The previous version's items of a section with the unit's new ones
/// (`fresh`) in place of its old ones; what follows the unit moves down by
/// the lines the edit added. The previous version's items are read where
/// they are (shared with the server's snapshot) and what is kept is copied
/// once, straight into its place: copying the section out first and moving
/// it again cost ~300 ms at 200k lines. Old items keep their order; the
/// unit's new ones go where its old ones were.
class UnitMerge {
public:
  UnitMerge(Analyzer::Impl &impl, const Section &sec,
            const AnalysisCache::Impl::Entry &old, const FileAnalysis &previous,
            SectionResult &fresh, const UnitJob &job, const Unit &u,
            int lineDelta)
      : impl(impl), sec(sec), old(old), previous(previous), fresh(fresh),
        job(job), first(u.firstLine), last(u.lastLine), lineDelta(lineDelta) {}

  SectionResult run();

private:
  struct Plan {
    std::vector<int> at; // new index of each old item, -1 if dropped
    size_t base = 0;     // where the new items start
    size_t kept = 0;
  };

  bool inUnit(const Position &p) const {
    return p.valid() && p.line >= first && p.line <= last;
  }
  void shift(Range &r) const {
    for (Position *p : {&r.begin, &r.end})
      if (p->valid() && p->line > last)
        p->line += lineDelta;
  }
  template <typename T> void shiftItem(T &item) const {
    forEachRange(item, [&](Range &r) { shift(r); });
  }

  /// Which old items are kept, and where the unit's new ones go: before
  /// the first selected item at or after the unit's first line.
  template <typename Items, typename Anchor, typename Select>
  Plan plan(const Items &oldItems, Anchor anchor, Select select) const;
  /// Copies the kept old items (adjusted, shifted) and moves the new ones
  /// in where the plan puts them, appending to `out`.
  template <typename Items, typename New, typename Out, typename Adjust,
            typename Shift>
  void copyPlanned(const Items &oldItems, const Plan &p, New &newItems,
                   Out &out, Adjust adjust, Shift shiftOld) const;
  /// Every old item a candidate, nothing to adjust but lines.
  template <typename Items, typename New, typename Anchor, typename Out>
  void mergeAll(const Items &oldItems, New &newItems, Anchor anchor,
                Out &out) const {
    copyPlanned(oldItems, plan(oldItems, anchor, All()), newItems, out, None(),
                ShiftAll{this});
  }
  /// The kept items in their order, as runs of the old ones; the new ones
  /// where the plan puts them (a section's values are its op results, then
  /// its block arguments: the unit's are two blocks).
  template <typename Runs, typename Items, typename New>
  void shareAround(Runs &runs, const Items &oldItems, const Plan &p,
                   New &newItems) const;

  struct All {
    template <typename T> bool operator()(const T &) const { return true; }
  };
  struct None {
    template <typename T> void operator()(T &) const {}
  };
  /// Every range of an item below the unit moves (forEachRange).
  struct ShiftAll {
    const UnitMerge *merge;
    template <typename T> void operator()(T &item) const {
      merge->shiftItem(item);
    }
  };

  /// With no line moved and as many ops in the unit as before, every other
  /// op and value of the section is as it was, indices included: the new
  /// version shares them (ItemRuns) and copies nothing but the unit's.
  template <typename Ops, typename Values>
  bool mayShare(const Plan &opPlan, const Ops &oldOps,
                const Values &oldValues) const;
  void mergeDiagnostics(SectionResult &r) const;
  void mergeSymbols(SectionResult &r) const;

  Analyzer::Impl &impl;
  const Section &sec;
  const AnalysisCache::Impl::Entry &old;
  const FileAnalysis &previous;
  SectionResult &fresh;
  const UnitJob &job;
  unsigned first, last;
  int lineDelta;
};

template <typename Items, typename Anchor, typename Select>
UnitMerge::Plan UnitMerge::plan(const Items &oldItems, Anchor anchor,
                                Select select) const {
  Plan p;
  p.at.assign(oldItems.size(), -1);
  size_t i = 0;
  for (; i < oldItems.size(); ++i) {
    if (!select(oldItems[i]))
      continue;
    Position pos = anchor(oldItems[i]);
    if (pos.valid() && pos.line >= first)
      break;
    p.at[i] = p.kept++;
  }
  p.base = p.kept;
  for (; i < oldItems.size(); ++i)
    if (select(oldItems[i]) && !inUnit(anchor(oldItems[i])))
      p.at[i] = p.kept++;
  return p;
}

template <typename Items, typename New, typename Out, typename Adjust,
          typename Shift>
void UnitMerge::copyPlanned(const Items &oldItems, const Plan &p, New &newItems,
                            Out &out, Adjust adjust, Shift shiftOld) const {
  out.reserve(out.size() + p.kept + newItems.size());
  auto putNew = [&] {
    for (auto &item : newItems)
      out.push_back(std::move(item));
  };
  bool newPut = false;
  for (size_t i = 0; i < oldItems.size(); ++i) {
    if (p.at[i] < 0)
      continue;
    if (!newPut && static_cast<size_t>(p.at[i]) >= p.base) {
      putNew();
      newPut = true;
    }
    out.push_back(oldItems[i]);
    adjust(out.back());
    if (lineDelta) // Lines above the unit never move: shift is a no-op.
      shiftOld(out.back());
  }
  if (!newPut)
    putNew();
}

template <typename Runs, typename Items, typename New>
void UnitMerge::shareAround(Runs &runs, const Items &oldItems, const Plan &p,
                            New &newItems) const {
  bool newPut = false;
  size_t i = 0;
  while (i < oldItems.size()) {
    if (p.at[i] < 0) {
      ++i;
      continue;
    }
    if (!newPut && static_cast<size_t>(p.at[i]) >= p.base) {
      runs.append(std::move(newItems));
      newPut = true;
    }
    size_t j = i + 1;
    while (j < oldItems.size() && p.at[j] == p.at[j - 1] + 1 &&
           static_cast<size_t>(p.at[j]) != p.base)
      ++j;
    runs.appendShared(oldItems, i, j);
    i = j;
  }
  if (!newPut)
    runs.append(std::move(newItems));
}

/// A store keeps the unit's old items too, so a section of many runs (many
/// functions edited since it was last copied whole) is copied again.
constexpr size_t kMaxSharedRuns = 64;

template <typename Ops, typename Values>
bool UnitMerge::mayShare(const Plan &opPlan, const Ops &oldOps,
                         const Values &oldValues) const {
  size_t droppedOps = oldOps.size() - opPlan.kept;
  bool opsInOneBlock = true; // so that the ops after keep their index
  for (size_t i = 0; i < opPlan.at.size(); ++i)
    opsInOneBlock &= (opPlan.at[i] < 0) ==
                     (i >= opPlan.base && i < opPlan.base + droppedOps);
  return lineDelta == 0 && droppedOps == fresh.ops.size() && opsInOneBlock &&
         oldOps.runCount() + 2 <= kMaxSharedRuns &&
         oldValues.runCount() + 4 <= kMaxSharedRuns;
}

/// MLIR's (by unit) before broadcast findings (by unit), as a full
/// analysis orders them.
void UnitMerge::mergeDiagnostics(SectionResult &r) const {
  auto oldDiags = itemsIn(previous.diagnostics, old.slice.diagnostics);
  auto anchor = [](const Diagnostic &d) { return d.range.begin; };
  for (bool findings : {false, true}) {
    auto select = [&](const Diagnostic &d) {
      return (d.source == DiagSource::Broadcast) == findings;
    };
    std::vector<Diagnostic> added;
    for (Diagnostic &d : fresh.diagnostics)
      if (select(d))
        added.push_back(std::move(d));
    copyPlanned(oldDiags, plan(oldDiags, anchor, select), added, r.diagnostics,
                None(), ShiftAll{this});
  }
}

/// Symbols (few): uses cross units. Old uses inside the unit give way to
/// the new ones (the unit's own symbol's, or those recorded on the stubs).
void UnitMerge::mergeSymbols(SectionResult &r) const {
  std::vector<SymbolInfo> prevSymbols(
      previous.symbols.begin() + old.slice.symbols[0],
      previous.symbols.begin() + old.slice.symbols[1]);
  std::map<std::string, std::vector<Range>> outsideUses;
  for (SymbolInfo &sym : prevSymbols) {
    llvm::erase_if(sym.uses, [&](const Range &x) { return inUnit(x.begin); });
    for (Range &use : sym.uses)
      shift(use);
    if (inUnit(sym.nameRange.begin))
      outsideUses[sym.name] = sym.uses;
  }
  for (SymbolInfo &sym : fresh.symbols) {
    auto it = outsideUses.find(sym.name);
    if (it != outsideUses.end())
      sym.uses.insert(sym.uses.end(), it->second.begin(), it->second.end());
  }
  for (SymbolInfo &sym : prevSymbols) {
    if (inUnit(sym.nameRange.begin))
      continue;
    auto it = job.stubUses.find(sym.name);
    if (it != job.stubUses.end())
      sym.uses.insert(sym.uses.end(), it->second.begin(), it->second.end());
  }
  llvm::ArrayRef<SymbolInfo> prev(prevSymbols);
  copyPlanned(
      prev,
      plan(
          prev, [](const SymbolInfo &x) { return x.nameRange.begin; }, All()),
      fresh.symbols, r.symbols, None(),
      [&](SymbolInfo &x) { // Not forEachRange: the uses are moved above.
        shift(x.nameRange);
        shift(x.scope);
      });
  for (SymbolInfo &sym : r.symbols)
    std::sort(sym.uses.begin(), sym.uses.end(),
              [](const Range &a, const Range &b) {
                return std::make_pair(a.begin.line, a.begin.column) <
                       std::make_pair(b.begin.line, b.begin.column);
              });
}

SectionResult UnitMerge::run() {
  PhaseTimer mergeTimer("incremental merge");
  SectionResult r;
  // Filled in place of a retired version's (no fresh pages to fault in).
  Recycler &recycler = *impl.recycler;
  r.diagnostics = recycler.take(recycler.diagnostics);
  r.opSpans = recycler.take(recycler.opSpans);
  r.section = sec;
  r.section.parsed = true;
  r.section.incremental = true;

  // Values name the op that defines them by index: plan the ops first.
  auto oldOps = previous.ops.slice(old.slice.ops[0], old.slice.ops[1]);
  Plan opPlan =
      plan(oldOps, [](const OpReport &o) { return o.range.begin; }, All());
  size_t opBase = opPlan.base, addedOps = fresh.ops.size();
  for (ValueInfo &v : fresh.values)
    if (v.opReport >= 0)
      v.opReport += opBase;
  for (OpReport &o : fresh.ops)
    o.section = sec.index;
  auto oldValues =
      previous.values.slice(old.slice.values[0], old.slice.values[1]);
  Plan valuePlan =
      plan(oldValues, [](const ValueInfo &v) { return v.def.begin; }, All());

  bool share = mayShare(opPlan, oldOps, oldValues);
  if (share) {
    shareAround(r.opRuns, oldOps, opPlan, fresh.ops);
    shareAround(r.valueRuns, oldValues, valuePlan, fresh.values);
  } else {
    r.ops = recycler.take(recycler.ops);
    r.values = recycler.take(recycler.values);
  }

  // The two biggest copies (ops, values) run on two threads.
  TaskThread::Running other = impl.helperThread.beside([&] {
    if (!share)
      copyPlanned(oldOps, opPlan, fresh.ops, r.ops, None(), ShiftAll{this});
    mergeDiagnostics(r);
  });
  if (!share)
    copyPlanned(
        oldValues, valuePlan, fresh.values, r.values,
        [&](ValueInfo &v) {
          if (v.opReport < 0)
            return;
          int at = opPlan.at[v.opReport];
          v.opReport = at < 0 || static_cast<size_t>(at) < opBase
                           ? at
                           : at + static_cast<int>(addedOps);
        },
        ShiftAll{this});
  mergeAll(
      itemsIn(previous.blocks, old.slice.blocks), fresh.blocks,
      [](const BlockInfo &b) { return b.def.begin; }, r.blocks);
  mergeAll(
      itemsIn(previous.opSpans, old.slice.opSpans), fresh.opSpans,
      [](const OpSpan &o) { return o.nameRange.begin; }, r.opSpans);
  mergeSymbols(r);
  other.join();
  for (Diagnostic &d : r.diagnostics)
    d.section = sec.index;
  for (OpReport &o : r.ops)
    o.section = sec.index;
  return r;
}

} // namespace

std::optional<SectionResult> Analyzer::Impl::analyzeIncrementally(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, const AnalysisCache::Impl::Entry &old,
    const FileAnalysis &previous, std::shared_ptr<SectionUnits> &newUnits) {
  const SectionUnits &su = *old.units;
  if (su.units.empty() || su.moduleFailed || !old.section.parsed ||
      old.section.stale || old.section.firstLine != sec.firstLine ||
      old.section.firstColumn != sec.firstColumn)
    return std::nullopt;
  std::string_view oldText = old.text;
  std::string_view newText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  std::optional<UnitEdit> edit = locateEdit(su, oldText, newText);
  if (!edit)
    return std::nullopt;
  const Unit &u = su.units[edit->unit];
  bool othersFailed = false;
  std::optional<UnitJob> job =
      unitJob(su, *edit, sec, file.lines, othersFailed);
  if (!job)
    return std::nullopt;

  SectionResult fresh;
  std::optional<std::string> crash = runContained([&] {
    analyzeSectionUnguarded(file, path, sec, config, fresh, nullptr, &*job);
  });
  if (crash) {
    abandonContext();
    return std::nullopt; // The full analysis reports (and contains) it.
  }
  size_t lastChar = edit->unitText.find_last_not_of(" \t\r\n");
  if (job->parseFailed && lastChar != std::string_view::npos)
    return unitParseError(
        sec, std::move(fresh.diagnostics),
        oldText.substr(edit->prefix, edit->editEnd - edit->prefix),
        newText.substr(edit->prefix,
                       newText.size() - edit->suffix - edit->prefix),
        job->map.firstLine,
        file.lines.position(job->map.beginOffset + lastChar).line);
  if (!job->ok || job->opName != u.opName || job->symbol != u.symbol ||
      job->signature != u.signature ||
      (!othersFailed && u.failed && !job->failed))
    return std::nullopt;

  int lineDelta = static_cast<int>(std::count(edit->unitText.begin(),
                                              edit->unitText.end(), '\n')) -
                  static_cast<int>(std::count(oldText.begin() + u.begin,
                                              oldText.begin() + u.end, '\n'));
  SectionResult r =
      UnitMerge(*this, sec, old, previous, fresh, *job, u, lineDelta).run();
  newUnits = unitsAfter(su, *edit, job->failed, lineDelta);
  return r;
}

} // namespace tosa_lsp
