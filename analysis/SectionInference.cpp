//===- SectionInference.cpp - shape inference on the analysis' own IR ----===//
//
// With Analyzer::setInferShapes, each section, part or unit the analysis
// parsed is put through tosa-infer-shapes once its results are copied out,
// in the context it was parsed in, before its IR is destroyed: the same
// inference ShapeInferrer::infer makes on a parse of its own, without that
// parse (a fifth of a many-function session's CPU). A cut function's parts
// are not inferred (neither part is the function), nor anything parsed
// with lenient dialects or validated (the IR is not the inferrer's). What
// the finished analysis says decides what is kept (finishInference).
//
//===----------------------------------------------------------------------===//

#include "Allocator.h"
#include "AnalyzerImpl.h"
#include "CrashGuard.h"
#include "ParsedInference.h"
#include "Scheduling.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

namespace {
/// The text of the sections kept for inferKept at most: their IR lives
/// until then beside the next steps, and the rest is inferred as before
/// (the fill, on parses of its own). At 200k lines, many functions (17.6
/// MiB), 8 MiB -> 32 MiB: session CPU 1.88 -> 1.34 s (upstream 1.3-1.5),
/// first hovers' p95 1.7 -> 0.54 ms, peak RSS 190 -> 280 MiB (upstream
/// 457), an edit right after the open 23 -> 53 ms (upstream 900; the
/// analysis thread frees what it had not inferred first).
constexpr size_t kKeepIRBytes = 32u << 20;
} // namespace

void Analyzer::setInferShapes(bool on, bool afterAnalysis) {
  impl->inferShapes = on;
  impl->inferAfterAnalysis = on && afterAnalysis;
}

std::shared_ptr<const ShapeInference> Analyzer::takeInferred() {
  return std::move(impl->lastInferred);
}

bool Analyzer::hasKeptIR() {
  std::lock_guard<std::mutex> lock(impl->keptMu);
  return !impl->kept.empty();
}

void Analyzer::inferKept(const KeptHooks &hooks) {
  impl->analysisThread.run([&] { impl->inferKept(hooks); });
}

namespace {
/// `infer` (tosa-infer-shapes in `ctx`) with MLIR's diagnostics silenced;
/// the crash, if any.
std::optional<std::string> inferContained(MLIRContext &ctx,
                                          llvm::function_ref<void()> infer) {
  ScopedDiagnosticHandler silence(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });
  return runContained(infer);
}
} // namespace

void Analyzer::Impl::inferParsed(std::unique_ptr<ParsedSection> &ps,
                                 std::unique_ptr<MLIRContext> &slot,
                                 const Section &sec,
                                 const SectionResult &result,
                                 const Config &config, bool unit,
                                 std::shared_ptr<const LineIndex> lines) {
  if (!inferShapes || !ps || !ps->module || !sec.parsed || lenientLoaded ||
      config.validate.enabled)
    return;
  FunctionsToInfer what;
  what.section = sec.index;
  for (const Diagnostic &d : result.diagnostics) {
    if (d.severity != Severity::Error)
      continue;
    if (!d.range.begin.valid())
      return; // the inferrer skips the section: nothing to infer
    what.errors.push_back(d.range.begin);
  }
  if (inferAfterAnalysis && !unit) {
    size_t bytes = ps->section.endOffset - ps->section.beginOffset;
    std::lock_guard<std::mutex> lock(keptMu);
    if (keptBytes + bytes > kKeepIRBytes)
      return; // destroyed now, inferred by others later
    keptBytes += bytes;
    std::vector<ListedFunction> functions = listTopLevelFunctions(*ps, what);
    kept.push_back({std::move(ps), &slot != &context, std::move(what), bytes,
                    std::move(functions), std::move(lines)});
    return;
  }
  PhaseTimer t("shape inference on the analysis' IR");
  std::vector<FunctionInference> out;
  if (std::optional<std::string> crash = inferContained(*slot, [&] {
        (void)inferTopLevelFunctions(
            *ps, *slot, what, [] { return false; }, nullptr, out);
      })) {
    // Abandoned as after a crash in the analysis (see analyzeSection); the
    // results are already out. The inferrer meets the same crash on its
    // own parse and says so.
    (void)ps.release();
    if (&slot == &context) {
      abandonRetired();
      abandonKept(false);
    } else {
      abandonKept(true);
    }
    (void)slot.release();
    slot = makeContext();
    return;
  }
  std::lock_guard<std::mutex> lock(inferredMu);
  for (FunctionInference &f : out)
    inferred.push_back(std::move(f));
}

namespace {
/// One thread's share of inferKept: the functions of `items` (all parsed in
/// one context), in text order except that a wanted one goes next.
class KeptFunctions {
public:
  explicit KeptFunctions(std::vector<Analyzer::Impl::KeptIR> &items)
      : items(items) {
    // By place, those not inferred yet: a wanted one is looked up between
    // every two functions.
    for (size_t i = 0; i < items.size(); ++i) {
      left.push_back(items[i].functions.size());
      for (size_t j = 0; j < items[i].functions.size(); ++j)
        where[placeOf({i, j})] = {i, j};
    }
  }
  /// The next function to infer ({item, function}), if any.
  std::optional<std::pair<size_t, size_t>>
  next(llvm::ArrayRef<Analyzer::FunctionPlace> wanted) {
    if (auto w = nextWanted(wanted))
      return w;
    for (;; ++fn) {
      while (item < items.size() && fn >= items[item].functions.size()) {
        ++item;
        fn = 0;
      }
      if (item == items.size())
        return std::nullopt;
      if (where.count(placeOf({item, fn}))) // else taken out of turn
        return std::make_pair(item, fn++);
    }
  }
  /// A wanted function not inferred yet, other than `busy` (in progress).
  std::optional<std::pair<size_t, size_t>>
  nextWanted(llvm::ArrayRef<Analyzer::FunctionPlace> wanted,
             std::optional<std::pair<size_t, size_t>> busy = {}) const {
    for (const Analyzer::FunctionPlace &w : wanted)
      if (auto it = where.find(w); it != where.end() && it->second != busy)
        return it->second;
    return std::nullopt;
  }
  /// Marks it done; true when its item has no function left.
  bool done(std::pair<size_t, size_t> at) {
    where.erase(placeOf(at));
    return --left[at.first] == 0;
  }

private:
  Analyzer::FunctionPlace placeOf(std::pair<size_t, size_t> at) const {
    const FunctionInference &fi = items[at.first].functions[at.second].fi;
    return {fi.section, fi.scope.begin.line};
  }
  std::vector<Analyzer::Impl::KeptIR> &items;
  std::vector<size_t> left;
  std::map<Analyzer::FunctionPlace, std::pair<size_t, size_t>> where;
  size_t item = 0, fn = 0;
};
} // namespace

std::vector<Analyzer::FunctionPlace> Analyzer::keptFunctions() {
  std::vector<FunctionPlace> places;
  std::lock_guard<std::mutex> lock(impl->keptMu);
  for (const Impl::KeptIR &k : impl->kept)
    for (const ListedFunction &f : k.functions)
      places.push_back({f.fi.section, f.fi.scope.begin.line});
  return places;
}

namespace {
/// inferKept's loop over the kept functions (`todo`), each in the context
/// it was parsed in. A wanted function goes next, and interrupts the one in
/// progress between two of its ops: it is inferred there, nested, as the
/// IR of each function is its own (a hover waited for the rest of the
/// current function, ~0.3 ms on average).
class KeptRun {
public:
  using ContextOf =
      llvm::function_ref<MLIRContext &(const Analyzer::Impl::KeptIR &)>;
  KeptRun(std::vector<Analyzer::Impl::KeptIR> &items, ContextOf contextOf,
          const Analyzer::KeptHooks &hooks,
          const Analyzer::Impl::InferenceFilter &filter)
      : items(items), todo(items), contextOf(contextOf), hooks(hooks),
        filter(filter) {}

  /// Infers until done or stopped; false after a crash inside MLIR.
  bool run() {
    for (;;) {
      refreshWanted();
      if (stopped())
        return true;
      std::optional<std::pair<size_t, size_t>> at = todo.next(wanted);
      if (!at)
        return true;
      bool finished = false;
      std::optional<std::string> crash =
          inferContained(contextOf(items[at->first]), [&] {
            finished = inferOne(*at, /*interruptible=*/true);
          });
      if (crash)
        return false;
      if (!finished)
        return true;
    }
  }

private:
  void refreshWanted() {
    seen = hooks.asked ? hooks.asked->load() : 0;
    wanted = hooks.wanted ? hooks.wanted() : std::vector<FunctionPlace>();
  }
  bool stopped() { return stoppedInside || hooks.stop(); }
  /// Infers the function `at` and delivers it; false when stopped.
  bool inferOne(std::pair<size_t, size_t> at, bool interruptible) {
    Analyzer::Impl::KeptIR &k = items[at.first];
    ListedFunction &f = k.functions[at.second];
    auto betweenOps = [&] {
      if (interruptible && hooks.asked &&
          hooks.asked->load(std::memory_order_relaxed) != seen)
        serveWanted(at);
    };
    FunctionPlace place{f.fi.section, f.fi.scope.begin.line};
    // A function's records as takeInferred would give them.
    auto filtered = [&](FunctionInference fi) {
      std::vector<FunctionInference> one;
      one.push_back(std::move(fi));
      return Analyzer::Impl::filterInferred(std::move(one), filter);
    };
    EarlyOps early;
    auto deliverEarly = [&](FunctionInference fi) {
      hooks.deliverEarly(place, filtered(std::move(fi)));
    };
    if (hooks.wantedLines && hooks.deliverEarly &&
        llvm::is_contained(wanted, place)) {
      early.lines = hooks.wantedLines(place);
      early.deliver = deliverEarly;
    }
    if (!inferListed(
            *k.ps, contextOf(k), f, k.what.withRefineEdits,
            [&] { return stopped(); }, nullptr, betweenOps, &early))
      return false;
    bool itemDone = todo.done(at); // before f.fi is moved out
    hooks.deliver(place, filtered(std::move(f.fi)));
    if (itemDone) {
      FreeInBulk bulk;
      k.ps.reset(); // its IR, as soon as it is no longer needed
    }
    return true;
  }
  /// Inside `busy`'s inference: the wanted functions, one after the other
  /// (a crash among them is the caller's, contained around `busy`; one in
  /// the other context is inferred there all the same).
  void serveWanted(std::pair<size_t, size_t> busy) {
    refreshWanted();
    while (std::optional<std::pair<size_t, size_t>> w =
               todo.nextWanted(wanted, busy)) {
      if (!inferOne(*w, /*interruptible=*/false)) {
        stoppedInside = true;
        return;
      }
      refreshWanted();
    }
  }
  using FunctionPlace = Analyzer::FunctionPlace;
  std::vector<Analyzer::Impl::KeptIR> &items;
  KeptFunctions todo;
  ContextOf contextOf;
  const Analyzer::KeptHooks &hooks;
  const Analyzer::Impl::InferenceFilter &filter;
  std::vector<FunctionPlace> wanted;
  unsigned seen = 0;
  bool stoppedInside = false;
};
} // namespace

void Analyzer::Impl::inferKept(const KeptHooks &hooks) {
  std::vector<KeptIR> items;
  {
    std::lock_guard<std::mutex> lock(keptMu);
    items = std::move(kept);
    kept.clear();
    keptBytes = 0;
  }
  PhaseTimer t("shape inference on the IR kept after the analysis");
  // One thread, whichever context parsed each part: with the helper on the
  // other core as well, the requests that come meanwhile (and the editor)
  // found both cores taken. Right after a 50k-line open, the first hovers
  // in 100 functions waited p50 0.55 / p95 1.4 ms, 0.33 / 0.8 on one
  // thread, which also finished sooner under them (137 against 250 ms;
  // 132 against 86-98 ms with no request).
  bool helperParsed =
      llvm::any_of(items, [](const KeptIR &k) { return k.helper; });
  {
    // Work no one waits on, unless a request wants one of its functions:
    // whatever wakes meanwhile (the message loop, the editor) preempts it.
    ScopedSlices slices(kBackgroundSlice);
    auto contextOf = [&](const KeptIR &k) -> MLIRContext & {
      return k.helper ? *partContext : *context;
    };
    KeptRun run(items, contextOf, hooks, inferenceFilter);
    if (!run.run()) {
      // A crash inside MLIR: what is left is abandoned with both contexts
      // it was parsed in (the helper's is made again when next needed).
      for (KeptIR &left : items)
        (void)left.ps.release();
      abandonContext();
      if (helperParsed)
        (void)partContext.release();
      return;
    }
  }
  {
    FreeInBulk bulk;
    items.clear(); // what a stop left uninferred
  }
  // The helper's share was allocated by its thread: with mimalloc only that
  // thread gives the pages freed here back.
  if (helperParsed)
    helperThread.run([] { releaseFreeMemory(); });
}

void Analyzer::Impl::dropKept(bool helper) {
  std::vector<KeptIR> dead;
  {
    std::lock_guard<std::mutex> lock(keptMu);
    for (auto it = kept.begin(); it != kept.end();)
      if (it->helper == helper) {
        keptBytes -= it->bytes;
        dead.push_back(std::move(*it));
        it = kept.erase(it);
      } else {
        ++it;
      }
  }
}

void Analyzer::Impl::abandonKept(bool helper) {
  std::lock_guard<std::mutex> lock(keptMu);
  for (auto it = kept.begin(); it != kept.end();)
    if (it->helper == helper) {
      keptBytes -= it->bytes;
      (void)it->ps.release();
      it = kept.erase(it);
    } else {
      ++it;
    }
}

bool Analyzer::Impl::keptIn(bool helper) {
  std::lock_guard<std::mutex> lock(keptMu);
  return llvm::any_of(kept,
                      [&](const KeptIR &k) { return k.helper == helper; });
}

Analyzer::Impl::InferenceFilter
Analyzer::Impl::makeFilter(const FileAnalysis &fa) {
  InferenceFilter f;
  for (const Section &sec : fa.sections)
    f.usable.push_back(sec.parsed && !sec.stale);
  f.errors.resize(fa.sections.size(), std::vector<Position>());
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.section >= f.errors.size() || !f.errors[d.section])
      continue;
    if (!d.range.begin.valid())
      f.errors[d.section].reset();
    else
      f.errors[d.section]->push_back(d.range.begin);
  }
  return f;
}

std::shared_ptr<const ShapeInference>
Analyzer::Impl::filterInferred(std::vector<FunctionInference> all,
                               const InferenceFilter &filter) {
  // By place; a function analysed twice (parts, then whole) keeps the last.
  std::map<std::pair<unsigned, unsigned>, FunctionInference> byPlace;
  for (FunctionInference &f : all)
    if (f.section < filter.usable.size() && filter.usable[f.section] &&
        filter.errors[f.section]) // else an error without a place
      byPlace[{f.section, f.scope.begin.line}] = std::move(f);
  auto out = std::make_shared<ShapeInference>();
  for (auto &[place, f] : byPlace) {
    bool hasError = llvm::any_of(*filter.errors[f.section], [&](Position p) {
      return !before(p, f.scope.begin) && !before(f.scope.end, p);
    });
    // What the inferrer says of a function with an error (one the
    // analysis of its part or unit did not see is found by the whole's).
    if (hasError && f.skipped != "the function has errors") {
      FunctionInference skipped;
      skipped.name = std::move(f.name);
      skipped.scope = f.scope;
      skipped.section = f.section;
      skipped.skipped = "the function has errors";
      out->functions.push_back(std::move(skipped));
      continue;
    }
    if (!hasError && f.skipped == "the function has errors")
      continue;
    out->functions.push_back(std::move(f));
  }
  return out;
}

void Analyzer::Impl::finishInference(const FileAnalysis &fa) {
  std::vector<FunctionInference> all;
  {
    std::lock_guard<std::mutex> lock(inferredMu);
    all.swap(inferred);
  }
  if (!inferShapes)
    return;
  inferenceFilter = makeFilter(fa);
  lastInferred = filterInferred(std::move(all), inferenceFilter);
}

} // namespace tosa_lsp
