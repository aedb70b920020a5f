//===- OldSyntax.cpp - a pre-MLIR-22 file seen as migrated ----------------===//

#include "OldSyntax.h"
#include "TosaServer.h"

#include "GraphJSON.h"
#include "Hover.h"
#include "InlayHints.h"
#include "Migrate.h"
#include "Navigation.h"
#include "TextDiff.h"
#include "Timing.h"

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

const char *const kMigratedFormNote =
    "*From the migrated form: this file uses pre-MLIR-22 TOSA, so this is "
    "what MLIR 22 says of it once migrated (lines named here are the "
    "migrated file's).*";

bool worthMigrating(const Snapshot &s) {
  return s.analysis.hasErrors() && mayNeedMigration(s.text) &&
         hasOldFormErrors(s.analysis);
}

std::shared_ptr<MigratedView>
migrateVersion(Analyzer &analyzer, const Snapshot &s,
               const std::function<bool()> &stop) {
  PhaseTimer timer("old syntax: migrate and analyse");
  auto view = std::make_shared<MigratedView>();
  view->version = s.version;
  view->config = s.config.fingerprint();
  view->text = s.sharedText;
  view->outcome = migrateAndCheck(analyzer, s.analysis, s.text, s.config, stop);
  if (view->outcome.stopped)
    return nullptr;
  if (view->outcome.analysis)
    view->snapshot = std::make_shared<const Snapshot>(
        s.uri, s.path, s.version,
        std::make_shared<const std::string>(std::move(view->outcome.text)),
        s.config, view->outcome.analysis);
  view->summary = oldFormsSummary(view->outcome);
  return view;
}

std::optional<lsp::Hover>
migratedHover(const Snapshot &s, const MigratedView &v, lsp::Position pos) {
  std::optional<Position> p = s.lines.fromLsp(pos);
  if (!p || !v.snapshot)
    return std::nullopt;
  std::optional<Position> at = v.outcome.map.toNew(*p);
  if (!at)
    return std::nullopt;
  const Snapshot &m = *v.snapshot;
  std::optional<HoverResult> h =
      tosa_lsp::hover(m.analysis, *at, v.shapes().get());
  h = withGenericForm(m, *at, std::move(h));
  if (!h)
    return std::nullopt;
  std::optional<Range> r = v.outcome.map.toOld(h->range);
  if (!r)
    return std::nullopt;
  lsp::Hover out(s.lines.toLsp(*r));
  out.contents.kind = MarkupKind::Markdown;
  out.contents.value = h->markdown + "\n\n---\n\n" + kMigratedFormNote;
  return out;
}

std::vector<lsp::InlayHint>
migratedInlayHints(const Snapshot &s, const MigratedView &v, lsp::Range range) {
  std::vector<lsp::InlayHint> out;
  std::optional<Range> r = s.lines.fromLsp(range);
  if (!r || !v.snapshot)
    return out;
  std::optional<Range> inMigrated = v.outcome.map.toNew(*r);
  if (!inMigrated)
    return out;
  for (const InlayHintData &h :
       tosa_lsp::inlayHints(v.snapshot->analysis, *inMigrated, s.config.hints,
                            v.shapes().get())) {
    bool exact = false;
    std::optional<Position> p = v.outcome.map.toOld(h.position, &exact);
    if (!p || !exact)
      continue; // In text the migration wrote: nowhere in the user's.
    lsp::InlayHint hint(InlayHintKind::Type, s.lines.toLsp(*p));
    hint.label = h.label;
    out.push_back(std::move(hint));
  }
  return out;
}

std::optional<Diagnostic> carriedSummary(const MigratedView &v,
                                         const Snapshot &s) {
  if (!v.summary || !v.text)
    return std::nullopt;
  PositionMap edit = PositionMap::between(*v.text, s.text);
  Diagnostic d = *v.summary;
  bool lost = false;
  detail::forEachRange(d, [&](Range &r) {
    bool exactBegin = false, exactEnd = false;
    std::optional<Position> b = edit.toNew(r.begin, &exactBegin),
                            e = edit.toNew(r.end, &exactEnd);
    if (!b || !e || !exactBegin || !exactEnd)
      lost = true;
    else
      r = {*b, *e};
  });
  if (lost)
    return std::nullopt;
  return d;
}

namespace {
/// `rs` (names: one line each) of the migrated text in the old one; those
/// the migration wrote (inexact) left out. A name that ends where an
/// edit's shared start ends (`%m` in `tosa.mul %0, %m {shift...}`) is the
/// user's, so only its start needs to map exactly.
std::vector<Range> mappedBack(const MigratedView &v,
                              const std::vector<Range> &rs) {
  std::vector<Range> out;
  for (const Range &r : rs) {
    if (!r.begin.valid() || r.begin.line != r.end.line)
      continue;
    bool exact = false;
    std::optional<Position> b = v.outcome.map.toOld(r.begin, &exact);
    if (b && exact)
      out.push_back(
          {*b, {b->line, b->column + (r.end.column - r.begin.column)}});
  }
  return out;
}

std::optional<Position> inMigrated(const Snapshot &s, const MigratedView &v,
                                   lsp::Position pos) {
  std::optional<Position> p = s.lines.fromLsp(pos);
  if (!p || !v.snapshot)
    return std::nullopt;
  return v.outcome.map.toNew(*p);
}

/// A range of the migrated text in the old one, inexact ends included (a
/// graph node the migration inserted still needs somewhere to point).
Range mappedRange(const MigratedView &v, const Range &r) {
  std::optional<Range> old = v.outcome.map.toOld(r);
  return old ? *old : Range{};
}
} // namespace

std::vector<Range> migratedDefinition(const Snapshot &s, const MigratedView &v,
                                      lsp::Position pos) {
  std::optional<Position> at = inMigrated(s, v, pos);
  if (!at)
    return {};
  std::optional<Range> d = tosa_lsp::definition(v.snapshot->analysis, *at);
  return d ? mappedBack(v, {*d}) : std::vector<Range>();
}

std::vector<Range> migratedReferences(const Snapshot &s, const MigratedView &v,
                                      lsp::Position pos,
                                      bool includeDeclaration) {
  std::optional<Position> at = inMigrated(s, v, pos);
  if (!at)
    return {};
  return mappedBack(
      v, tosa_lsp::references(v.snapshot->analysis, *at, includeDeclaration));
}

namespace {
const SymbolInfo *migratedFunction(const Snapshot &s, const MigratedView &v,
                                   std::optional<lsp::Position> pos,
                                   const std::optional<std::string> &function) {
  if (!v.snapshot)
    return nullptr;
  const FileAnalysis &fa = v.snapshot->analysis;
  if (function)
    return graphFunctionNamed(fa, *function);
  if (pos)
    if (std::optional<Position> at = inMigrated(s, v, *pos))
      return graphFunctionAt(fa, *at);
  return nullptr;
}
} // namespace

void mapGraphBack(const MigratedView &v, FunctionGraph &g) {
  g.scope = mappedRange(v, g.scope);
  for (GraphNode &n : g.nodes) {
    n.range = mappedRange(v, n.range);
    n.scope = mappedRange(v, n.scope);
  }
}

std::optional<FunctionGraph>
migratedGraph(const Snapshot &s, const MigratedView &v,
              std::optional<lsp::Position> pos,
              const std::optional<std::string> &function) {
  const SymbolInfo *fn = migratedFunction(s, v, pos, function);
  if (!fn)
    return std::nullopt;
  FunctionGraph g =
      buildGraph(v.snapshot->analysis, *fn, v.shapes().get(), kGraphNodeLimit);
  mapGraphBack(v, g);
  return g;
}

std::optional<std::string>
migratedGraphFunction(const Snapshot &s, const MigratedView &v,
                      std::optional<lsp::Position> pos,
                      const std::optional<std::string> &function) {
  const SymbolInfo *fn = migratedFunction(s, v, pos, function);
  return fn ? std::optional<std::string>(fn->name) : std::nullopt;
}

//===----------------------------------------------------------------------===//
// TosaServer: the background migration
//===----------------------------------------------------------------------===//

std::shared_ptr<const MigratedView>
TosaServer::migratedView(const Snapshot &s) const {
  std::shared_ptr<OpenDocument> doc = scheduler->document(s.uri);
  if (!doc)
    return nullptr;
  std::shared_ptr<const MigratedView> v = doc->migrated(s.version);
  return v && v->config == s.config.fingerprint() ? v : nullptr;
}

void TosaServer::addOldFormSummary(OpenDocument &doc, const Snapshot &s,
                                   std::vector<Diagnostic> &extra) {
  std::shared_ptr<const MigratedView> v = doc.latestMigrated();
  if (!v || !v->summary || v->config != s.config.fingerprint() ||
      v->version > s.version)
    return;
  if (v->version == s.version)
    return extra.push_back(*v->summary);
  // This version's migration is still running: the last summary until it
  // is replaced, if the file still has old forms.
  if (worthMigrating(s))
    if (std::optional<Diagnostic> d = carriedSummary(*v, s))
      extra.push_back(std::move(*d));
}

void TosaServer::migrateInBackground(std::shared_ptr<OpenDocument> doc,
                                     Scheduler::SnapshotPtr s) {
  if (!worthMigrating(*s) || migratedView(*s))
    return;
  runHeavy([this, doc = std::move(doc), s = std::move(s)](unsigned worker) {
    if (options.beforeMigrationForTest)
      options.beforeMigrationForTest(s->version);
    auto stale = [&] { return stopping || !doc->isAt(s->version); };
    std::shared_ptr<MigratedView> view;
    if (!stale())
      view = migrateVersion(validator(worker), *s, stale);
    if (!view || stale() || !doc->setMigrated(view)) {
      ++migrationsCancelledCount;
      return;
    }
    ++migrationsCount;
    if (view->summary)
      republish(doc, s);
    if (!view->snapshot)
      return;
    // Inlay hints and hover's inferred types need MLIR's shape inference of
    // the migrated text: after the summary is out; the client is asked to
    // fetch its hints again once it is known.
    PhaseTimer timer("old syntax: infer the migrated form's shapes");
    const Snapshot &m = *view->snapshot;
    ShapeInferrer inferrer;
    auto shapes = std::make_shared<ShapeInference>(
        inferrer.infer(m.text, m.lines.index(), m.analysis, 1, ~0u, stale,
                       /*withRefineEdits=*/false));
    if (shapes->cancelled)
      return;
    view->setShapes(std::move(shapes));
    callbacks.onInlayHintsChanged();
  });
}

std::shared_ptr<const MigratedView>
TosaServer::migrateNow(const Scheduler::SnapshotPtr &s, unsigned worker) {
  if (std::shared_ptr<const MigratedView> v = migratedView(*s))
    return v;
  // Not kept: the background's own (which also publishes the summary)
  // replaces it soon.
  return migrateVersion(validator(worker), *s, nullptr);
}

} // namespace tosa_lsp
