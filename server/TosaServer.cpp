//===- TosaServer.cpp - the feature layer of the language server ----------===//

#include "TosaServer.h"

#include "Allocator.h"
#include "OldSyntax.h"
#include "ServerSupport.h"
#include "StaleView.h"

#include "ExpectedChecks.h"

#include "CompileJob.h"
#include "Convert.h"
#include "OpGenericForm.h"
#include "OutputFiles.h"
#include "Timing.h"

#include "Choices.h"
#include "Compile.h"
#include "Hover.h"
#include "InlayHints.h"
#include "Lowering.h"
#include "Navigation.h"
#include "Query.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

char ChangeError::ID = 0;

//===----------------------------------------------------------------------===//
// Choices
//===----------------------------------------------------------------------===//

/// The analysis' edits (1-based byte positions) in the snapshot's LSP
/// positions.
/// The analysis writes new lines as `\n`; they are written as the document's
/// first line ends (`\r\n`, `\r`), so an applied fix never leaves the file
/// with mixed line endings.
std::vector<lsp::TextEdit> toLspEdits(const Snapshot &s,
                                      const std::vector<TextEditData> &edits,
                                      std::string_view newline) {
  std::vector<lsp::TextEdit> out;
  for (const TextEditData &e : edits) {
    std::string text = e.newText;
    if (newline != "\n" && text.find('\n') != std::string::npos) {
      std::string converted;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r'))
          converted.append(newline);
        else
          converted.push_back(text[i]);
      }
      text = std::move(converted);
    }
    out.push_back({s.lines.toLsp(e.range), std::move(text)});
  }
  return out;
}

Error invalidParams(const Twine &message) {
  return make_error<LSPError>(message.str(), ErrorCode::InvalidParams);
}

//===----------------------------------------------------------------------===//
// Lifecycle and configuration
//===----------------------------------------------------------------------===//

TosaServer::TosaServer(Options opts, Callbacks &callbacks)
    : options(std::move(opts)), callbacks(callbacks),
      settings([&callbacks](const std::string &message) {
        callbacks.onError(message);
      }) {
  unsigned workers = options.workers;
  if (!workers)
    workers = std::clamp(std::thread::hardware_concurrency(), 2u, 8u);
  if (!options.sync) {
    // MLIR's parser and passes recurse: big stacks for validation and
    // lowering. Compile jobs wait on a child process: small stacks.
    pool = std::make_unique<WorkerPool>("tosa-work", workers, 256u << 20,
                                        /*shortSlices=*/true);
    compilePool = std::make_unique<WorkerPool>(
        "tosa-compile", options.compileWorkers, 1u << 20);
  }
  validators.resize((pool ? pool->size() : 0) + 1);
  BackgroundInference::Options bg;
  bg.sync = options.sync;
  bg.enabled = options.backgroundInference;
  bg.renewWarmInferrerLines = options.renewWarmInferrerLines;
  background = std::make_unique<BackgroundInference>(
      bg, pool.get(), validators.size(),
      [this](std::shared_ptr<OpenDocument> doc, Scheduler::SnapshotPtr s) {
        republish(std::move(doc), std::move(s));
      });
  scheduler = std::make_unique<Scheduler>(
      options.sync, options.debounce,
      [this](Scheduler::SnapshotPtr s) { publish(std::move(s)); },
      inferShapesHooks(options));
  scheduler->setVerifiedClean(
      [this](const std::shared_ptr<OpenDocument> &doc, int64_t version,
             const Config &config) { publishClean(doc, version, config); });
}

Scheduler::InferShapes TosaServer::inferShapesHooks(const Options &options) {
  Scheduler::InferShapes infer;
  infer.enabled = options.inferInAnalysis;
  infer.afterPublish = options.inferAfterPublish;
  // On the Scheduler's threads, also while the destructor resets it (the
  // inference then stops): `background` outlives it.
  infer.inferred = [this](const std::shared_ptr<OpenDocument> &doc,
                          Scheduler::SnapshotPtr s,
                          Analyzer::FunctionPlace place,
                          std::shared_ptr<const ShapeInference> si) {
    if (!stopping && doc->latest() == s)
      background->storeInferredAfterPublish(*doc, *s, *si);
    background->keptDone(*doc, place);
  };
  infer.started = [this](OpenDocument &doc, const Snapshot &s,
                         Scheduler::InferShapes::Places places) {
    background->keptStarted(doc, s, std::move(places));
  };
  infer.wanted = [this](OpenDocument &doc) {
    return background->keptWanted(doc);
  };
  infer.ended = [this](OpenDocument &doc) { background->keptEnded(doc); };
  infer.asked = [](OpenDocument &doc) { return &doc.shapes.keptAsked; };
  infer.wantedLines = [this](OpenDocument &doc, Analyzer::FunctionPlace p) {
    return background->keptWantedLines(doc, p);
  };
  infer.early = [this](OpenDocument &doc, Analyzer::FunctionPlace p,
                       std::shared_ptr<const ShapeInference> si) {
    background->keptEarly(doc, p, std::move(si));
  };
  infer.done = [this](const std::shared_ptr<OpenDocument> &doc,
                      Scheduler::SnapshotPtr s) {
    if (!stopping && doc->isOpen() && doc->latest() == s)
      background->inferredAfterPublish(doc, s);
  };
  return infer;
}

TosaServer::~TosaServer() {
  stopping = true;
  background->stop();
  cancelCompiles();
  scheduler.reset(); // no new work after this
  background->joinThreads();
  pool.reset();
  compilePool.reset();
}

void TosaServer::setSettings(const nlohmann::json &value) {
  settings.setEditorSettings(value);
  configFilesChanged();
}

void TosaServer::setSettingsText(StringRef text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr,
                                               /*allow_exceptions=*/false);
  if (value.is_discarded()) // llvm::json printed it: cannot happen
    return Logger::error("editor settings: not JSON: {0}", text);
  setSettings(value);
}

void TosaServer::configFilesChanged() {
  settings.invalidateProjectFiles();
  for (const std::shared_ptr<OpenDocument> &doc : scheduler->documents())
    schedule(doc);
}

Config TosaServer::configFor(const std::string &path) {
  return settings.configFor(path);
}

nlohmann::json TosaServer::defaultSettings() { return Settings::defaults(); }

lsp::DiagnosticSeverity TosaServer::severity(const Diagnostic &d) {
  switch (d.severity) {
  case Severity::Error:
    return DiagnosticSeverity::Error;
  case Severity::Warning:
    return DiagnosticSeverity::Warning;
  case Severity::Note:
  case Severity::Info:
    // Runtime checks and refinable results are facts about nearly every
    // dynamic op of a model: Hints, which editors show subtly and keep out
    // of problem lists (hover and inlay hints carry the details). A
    // declared size the runtime must match stays Information.
    return d.code == "dynamic-to-static" ? DiagnosticSeverity::Information
                                         : DiagnosticSeverity::Hint;
  }
  return DiagnosticSeverity::Error;
}

//===----------------------------------------------------------------------===//
// Documents
//===----------------------------------------------------------------------===//

void TosaServer::schedule(const std::shared_ptr<OpenDocument> &doc) {
  scheduler->update(doc, configFor(doc->path));
}

void TosaServer::addDocument(const std::string &uri, const std::string &path,
                             int64_t version, std::string text) {
  // A big document's analysis faults far fewer pages in huge pages; a
  // small one's would touch more memory than it uses (support/Allocator.h).
  if (text.size() >= options.hugePagesFromBytes && hugePagesPay())
    useHugePages();
  // Opened again without a close (a protocol error) starts afresh:
  // versions may repeat, and every answer must come from this text.
  schedule(scheduler->open(uri, path, version, std::move(text)));
}

void TosaServer::warmUpRequests() {
  PhaseTimer timer("requests' context warmed");
  warmGenericForm();
}

Error TosaServer::changeDocument(
    const std::string &uri, int64_t version,
    ArrayRef<TextDocumentContentChangeEvent> changes) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(uri);
  if (!doc)
    return make_error<ChangeError>(
        ChangeError::NotOpen,
        "didChange for a document that is not open: " + uri);
  bool restart = false;
  if (std::optional<std::string> error =
          doc->change(version, changes, restart)) {
    // The client and we disagree on the text: say so rather than analyse
    // something the user does not see, now or after later edits.
    removeDocument(uri);
    return make_error<ChangeError>(ChangeError::Desynced, std::move(*error));
  }
  if (restart) {
    // Versions must increase (LSP); results kept by version would be
    // taken for this text's: the document starts afresh.
    doc = scheduler->open(uri, doc->path, version, doc->clientText());
    schedule(doc);
    return Error::success();
  }
  background->changed(*doc);
  schedule(doc);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

void TosaServer::publish(Scheduler::SnapshotPtr s) {
  // Closed, or opened again, since the analysis: not this document's.
  std::shared_ptr<OpenDocument> doc = scheduler->document(s->uri);
  if (!doc || doc->latest() != s)
    return;
  // Every hover and inlay request looks positions up in the version's
  // index, built on first use: ~80 ms at 200k lines that the first request
  // after each open or edit waited for. For a big file it is built beside
  // the publish (the index takes longer than the diagnostics' JSON and
  // send); for a small one after it, with the rest of the background work
  // below, so that the diagnostics have both cores (10k lines: the index
  // ~2 ms, the publish ~1 ms; the open ~1 ms sooner, interleaved runs).
  // Built before the publish when the kept IR's inference follows (which
  // then takes both cores and made the index 10-30 ms late for a hover
  // sent on the diagnostics), it made the open 10 % later (50k lines, many
  // functions); the hints of the screen came no sooner.
  const bool bigFile = s->text.size() >= kIndexBesidePublishBytes;
  auto buildIndex = [&] {
    if (pool)
      pool->run([s](unsigned) { (void)s->analysis.positionIndex(); });
  };
  if (bigFile)
    buildIndex();
  std::vector<Diagnostic> extra;
  // What the analysis inferred is known before the diagnostics go: a hover
  // sent as soon as they arrive finds it, and its shape errors go with them.
  background->storeInferred(*doc, *s);
  // Nothing known yet (an open without it): the keys are hashed after the
  // publish (~4 ms at 200k lines).
  if (!doc->shapes.cache.empty()) {
    PhaseTimer timer("publish: function keys and known shape errors");
    extra = background->knownErrors(*doc, *s, /*retain=*/true);
  }
  addOldFormSummary(*doc, *s, extra);
  // The diagnostics do not wait for the index: at 200k lines (one
  // function) waiting made the open's publish 30 ms later, and a hover sent
  // as soon as they arrive waited ~2 ms for the rest of it.
  {
    std::lock_guard<std::mutex> lock(publishMu);
    // Published clean on MLIR's verdict (publishClean), and still nothing
    // to say: not sent again.
    bool alreadySaid = doc->cleanVersion == s->version &&
                       doc->publishedVersion == s->version &&
                       llvm::none_of(s->analysis.diagnostics,
                                     [&](const Diagnostic &d) {
                                       return isPublished(s->config, d);
                                     }) &&
                       extra.empty();
    doc->publishedVersion = s->version;
    if (!alreadySaid)
      callbacks.onDiagnostics(s, extra);
  }
  if (!bigFile)
    buildIndex();
  background->published(doc, s, /*fill=*/!s->inferenceFollows);
  migrateInBackground(std::move(doc), std::move(s));
}

void TosaServer::publishClean(const std::shared_ptr<OpenDocument> &doc,
                              int64_t version, const Config &config) {
  // Only where the final publish adds nothing unless the analysis finds
  // it: no informational findings published, no shape errors known from
  // earlier versions (an open's cache is empty), no newer text.
  if (stopping || config.info.publish || !doc->isAt(version) ||
      !doc->shapes.cache.empty())
    return;
  std::lock_guard<std::mutex> lock(publishMu);
  if (!doc->isOpen() || doc->publishedVersion >= version)
    return;
  doc->publishedVersion = version;
  doc->cleanVersion = version;
  timingMark("published clean");
  callbacks.onCleanDiagnostics(doc->uri, version);
}

void TosaServer::republish(std::shared_ptr<OpenDocument> doc,
                           Scheduler::SnapshotPtr s) {
  // From the ordinary pool: a background thread at its priority must not
  // hold publishMu while writing megabytes.
  runHeavy([this, doc = std::move(doc), s = std::move(s)](unsigned) {
    std::vector<Diagnostic> extra =
        background->knownErrors(*doc, *s, /*retain=*/false);
    addOldFormSummary(*doc, *s, extra);
    std::lock_guard<std::mutex> lock(publishMu);
    if (!stopping && doc->isOpen() && doc->publishedVersion == s->version)
      callbacks.onDiagnostics(s, extra);
  });
}

void TosaServer::removeDocument(const std::string &uri) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(uri);
  // Work for it stops at its next check; nothing is published for it.
  if (doc)
    doc->close();
  bool last = scheduler->size() == (doc ? 1u : 0u);
  // Freed first: what it holds (its snapshots, the inference cache) was
  // allocated by the pool's and the fill's threads, and after the last
  // close each thread collects only what was freed before it does.
  // Removed after their collects, a 200k-line file left ~30 MiB in the
  // fill threads' heaps.
  scheduler->remove(uri);
  doc.reset();
  if (!last)
    return;
  // Pool threads still to drop their slots after the last close; this
  // thread collects once they have (bounded), see below.
  struct Drops {
    std::mutex mu;
    std::condition_variable done;
    unsigned left = 0;
    void one(std::atomic<unsigned> &count) {
      ++count;
      std::lock_guard<std::mutex> lock(mu);
      --left;
      done.notify_all();
    }
  };
  auto drops = std::make_shared<Drops>();
  // The MLIRContexts of validation and inference keep every type,
  // attribute and location they uniqued: hundreds of MiB after a big
  // file. Dropped when the last document closes; each slot belongs to one
  // pool thread, so only while the pool is idle (its tasks come from this
  // thread, which is here).
  // Counted, and read, before any of them can finish (they decrement under
  // the lock).
  drops->left = background->fillThreads() +
                (pool ? static_cast<unsigned>(pool->size()) : 0u);
  const bool threadsCollect = drops->left > 0;
  // Each thread gives back its heap (under mimalloc's delay, the pages it
  // frees would wait for its next allocation, which an idle thread does
  // not make: 15-42 MiB after a 200k-line file; releaseAllFreeMemory
  // gives them back at once).
  auto collect = [this, drops] {
    if (options.beforeCollectForTest)
      options.beforeCollectForTest();
    releaseAllFreeMemory();
    drops->one(slotsDroppedCount);
  };
  background->dropAfterLastClose(collect);
  auto dropSlot = [this](unsigned worker) {
    validators[worker].reset();
    background->dropRequestInferrer(worker);
  };
  if (!pool) {
    for (unsigned w = 0; w < validators.size(); ++w)
      dropSlot(w);
  } else {
    // Each thread drops its own slot once it has finished what it is
    // doing (a big function's inference can run for seconds after the
    // close), then collects: what those contexts and the requests'
    // results allocated lives in its heap.
    pool->runOnEachWhenIdle([dropSlot, collect](unsigned worker) {
      GiveBackFreePages now;
      dropSlot(worker);
      collect();
    });
  }
  if (!threadsCollect)
    return;
  // What the pool threads freed of memory other threads allocated waits
  // for its owners: for this thread (and the threads that ended, whose
  // memory only this one reclaims) to collect again after the drops.
  // Collected once before them, a 50k-line many-function file left ~35 MiB
  // that a later collect gave back. Bounded like the wait in
  // Scheduler::remove: an inference may run on for seconds.
  std::unique_lock<std::mutex> lock(drops->mu);
  drops->done.wait_for(lock, std::chrono::seconds(1),
                       [&] { return drops->left == 0; });
  lock.unlock();
  releaseAllFreeMemory();
}

Scheduler::SnapshotPtr TosaServer::snapshot(const std::string &uri) const {
  return scheduler->latest(uri);
}

std::shared_ptr<OpenDocument>
TosaServer::documentForTest(const std::string &uri) const {
  return scheduler->document(uri);
}

//===----------------------------------------------------------------------===//
// Features
//===----------------------------------------------------------------------===//

void TosaServer::withCurrentSnapshot(
    const std::string &uri,
    unique_function<void(Expected<Scheduler::SnapshotPtr>)> fn) {
  background->noteRequest();
  auto shared = std::make_shared<decltype(fn)>(std::move(fn));
  bool known =
      scheduler->withCurrentSnapshot(uri, [shared](Scheduler::SnapshotPtr s) {
        if (!s)
          return (*shared)(make_error<LSPError>(
              "the document was closed before it was analysed",
              ErrorCode::ContentModified));
        (*shared)(std::move(s));
      });
  if (!known)
    (*shared)(invalidParams("unknown document: " + uri + " (not opened)"));
}

void TosaServer::runHeavy(WorkerPool::Task task) {
  if (pool)
    pool->run(std::move(task));
  else
    task(validators.size() - 1);
}

/// Runs `fn(snapshot)` and hands its result to `cb`.
template <typename T, typename Fn> static auto answer(Callback<T> cb, Fn fn) {
  return [cb = std::move(cb),
          fn = std::move(fn)](Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return cb(s.takeError());
    cb(fn(**s));
  };
}

void TosaServer::withSnapshotAt(const std::string &uri, lsp::Position pos,
                                unique_function<void(Expected<ReadAt>)> fn) {
  if (std::shared_ptr<OpenDocument> doc = scheduler->document(uri))
    if (std::shared_ptr<const StaleView> v = doc->staleView())
      if (std::optional<lsp::Position> at = v->answers(pos)) {
        background->noteRequest();
        ++staleAnswersCount;
        return fn(ReadAt{v->snapshot, *at, v});
      }
  withCurrentSnapshot(uri, [pos, fn = std::move(fn)](
                               Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return fn(s.takeError());
    fn(ReadAt{std::move(*s), pos, nullptr});
  });
}

void TosaServer::withShapes(
    const std::string &uri, lsp::Range range,
    unique_function<void(Expected<Scheduler::SnapshotPtr>,
                         std::shared_ptr<const ShapeInference>)>
        fn,
    bool oneOp) {
  withCurrentSnapshot(uri, [this, range, oneOp, fn = std::move(fn)](
                               Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return fn(s.takeError(), nullptr);
    shapesFor(std::move(*s), range, std::move(fn), oneOp);
  });
}

void TosaServer::shapesFor(
    Scheduler::SnapshotPtr s, lsp::Range range,
    unique_function<void(Expected<Scheduler::SnapshotPtr>,
                         std::shared_ptr<const ShapeInference>)>
        fn,
    bool oneOp) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(s->uri);
  if (!doc) // closed meanwhile
    return fn(std::move(s), nullptr);
  unsigned first = 1, last = ~0u;
  if (std::optional<tosa_lsp::Range> r = s->lines.fromLsp(range)) {
    first = r->begin.line;
    last = r->end.line;
  }
  // Held: a newer version's keys may replace these meanwhile.
  std::shared_ptr<const std::vector<FunctionKey>> all =
      background->keysOf(*doc, *s);
  ArrayRef<FunctionKey> keys = keysOnLines(*all, first, last);
  std::vector<FunctionKey> missing;
  auto known = std::make_shared<const ShapeInference>(
      doc->shapes.cache.lookup(keys, &missing));
  if (missing.empty())
    return fn(std::move(s), std::move(known));
  // The background inference goes on from where the user looks.
  background->focusOn(*doc, first);
  // Parsing and the pass take as long as the functions: off the caller,
  // and only waited for when the functions are small.
  if (linesOf(missing) <= BackgroundInference::kWaitLines) {
    runHeavy([this, doc, fn = std::move(fn), first, last, oneOp,
              s = std::move(s)](unsigned worker) mutable {
      auto shapes =
          background->infer(doc, s, worker, first, last,
                            /*refineEdits=*/false, oneOp && first == last);
      fn(std::move(s), std::move(shapes));
    });
    return;
  }
  background->inferLater(doc, s, first, last, missing);
  if (options.sync) // inferred already
    known =
        std::make_shared<const ShapeInference>(doc->shapes.cache.lookup(keys));
  fn(std::move(s), std::move(known));
}

/// Runs `fn(snapshot, shapes)` and hands its result to `cb` (withShapes).
template <typename T, typename Fn>
static auto answerWithShapes(Callback<T> cb, Fn fn) {
  return [cb = std::move(cb), fn = std::move(fn)](
             Expected<Scheduler::SnapshotPtr> s,
             std::shared_ptr<const ShapeInference> shapes) mutable {
    if (!s)
      return cb(s.takeError());
    cb(fn(**s, shapes.get()));
  };
}

/// Runs `fn(snapshot, position)` at a ReadAt and hands its result, moved
/// into the client's text, to `cb` (withSnapshotAt).
template <typename T, typename Fn> static auto answerAt(Callback<T> cb, Fn fn) {
  return [cb = std::move(cb), fn = std::move(fn)](Expected<ReadAt> at) mutable {
    if (!at)
      return cb(at.takeError());
    T out = fn(*at->snapshot, at->pos);
    if (at->stale)
      at->stale->forward(out);
    cb(std::move(out));
  };
}

void TosaServer::hover(const std::string &uri, lsp::Position pos,
                       Callback<std::optional<lsp::Hover>> cb) {
  withSnapshotAt(
      uri, pos, [this, cb = std::move(cb)](Expected<ReadAt> at) mutable {
        if (!at)
          return cb(at.takeError());
        lsp::Position p = at->pos;
        shapesFor(at->snapshot, lsp::Range(p, p),
                  answerWithShapes(
                      std::move(cb),
                      [this, p, stale = std::move(at->stale)](
                          const Snapshot &s, const ShapeInference *si) {
                        std::optional<lsp::Hover> out = hoverAt(s, p, si);
                        if (stale)
                          stale->forward(out);
                        return out;
                      }),
                  /*oneOp=*/true);
      });
}

std::optional<lsp::Hover> TosaServer::hoverAt(const Snapshot &s,
                                              lsp::Position pos,
                                              const ShapeInference *si) {
  // An old-syntax version: as if migrated (OldSyntax.cpp).
  if (std::shared_ptr<const MigratedView> v = migratedView(s))
    return migratedHover(s, *v, pos);
  std::optional<lsp::Hover> out;
  std::optional<Position> p = s.lines.fromLsp(pos);
  std::optional<HoverResult> h =
      p ? tosa_lsp::hover(s.analysis, *p, si) : std::nullopt;
  // Every op's generic form, and aliases (EditingFeatures.cpp).
  if (p)
    h = withGenericForm(s, *p, std::move(h));
  if (!h)
    return out;
  out.emplace(s.lines.toLsp(h->range));
  out->contents.kind = MarkupKind::Markdown;
  out->contents.value = h->markdown;
  return out;
}

void TosaServer::inlayHints(const std::string &uri, lsp::Range range,
                            Callback<std::vector<lsp::InlayHint>> cb) {
  withShapes(
      uri, range,
      answerWithShapes(std::move(cb), [this, range](const Snapshot &s,
                                                    const ShapeInference *si) {
        if (std::shared_ptr<const MigratedView> v = migratedView(s))
          return migratedInlayHints(s, *v, range);
        std::vector<lsp::InlayHint> out;
        std::optional<tosa_lsp::Range> r = s.lines.fromLsp(range);
        if (!r)
          return out;
        for (const InlayHintData &h :
             tosa_lsp::inlayHints(s.analysis, *r, s.config.hints, si)) {
          lsp::InlayHint hint(InlayHintKind::Type, s.lines.toLsp(h.position));
          hint.label = h.label;
          hint.paddingLeft = false;
          out.push_back(std::move(hint));
        }
        return out;
      }));
}

static std::vector<lsp::Range> toLsp(const Snapshot &s,
                                     const std::vector<tosa_lsp::Range> &rs) {
  std::vector<lsp::Range> out;
  for (const tosa_lsp::Range &r : rs)
    if (r.begin.valid())
      out.push_back(s.lines.toLsp(r));
  return out;
}

void TosaServer::definition(const std::string &uri, lsp::Position pos,
                            Callback<std::vector<DefinitionTarget>> cb) {
  withSnapshotAt(
      uri, pos,
      answerAt(std::move(cb), [this](const Snapshot &s, lsp::Position pos) {
        std::vector<DefinitionTarget> out;
        std::optional<Position> p = s.lines.fromLsp(pos);
        if (!p)
          return out;
        if (const AliasInfo *a = aliasAt(s.aliases(), *p)) {
          out.push_back({"", s.lines.toLsp(a->def)});
          return out;
        }
        // An old-syntax version: as if migrated (OldSyntax.cpp).
        if (std::shared_ptr<const MigratedView> v = migratedView(s))
          for (const tosa_lsp::Range &d : migratedDefinition(s, *v, pos))
            out.push_back({"", s.lines.toLsp(d)});
        else if (std::optional<tosa_lsp::Range> d =
                     tosa_lsp::definition(s.analysis, *p))
          if (d->begin.valid())
            out.push_back({"", s.lines.toLsp(*d)});
        // The model's source, as upstream's definition does.
        for (DefinitionTarget &t : sourceLocationTargets(s, *p))
          out.push_back(std::move(t));
        return out;
      }));
}

void TosaServer::references(const std::string &uri, lsp::Position pos,
                            bool includeDeclaration,
                            Callback<std::vector<lsp::Range>> cb) {
  withSnapshotAt(
      uri, pos,
      answerAt(std::move(cb), [this, includeDeclaration](const Snapshot &s,
                                                         lsp::Position pos) {
        std::optional<Position> p = s.lines.fromLsp(pos);
        if (p)
          if (const AliasInfo *a = aliasAt(s.aliases(), *p)) {
            std::vector<tosa_lsp::Range> rs;
            if (includeDeclaration)
              rs.push_back(a->def);
            rs.insert(rs.end(), a->uses.begin(), a->uses.end());
            return toLsp(s, rs);
          }
        if (std::shared_ptr<const MigratedView> v = migratedView(s))
          return toLsp(s, migratedReferences(s, *v, pos, includeDeclaration));
        return toLsp(
            s, p ? tosa_lsp::references(s.analysis, *p, includeDeclaration)
                 : std::vector<tosa_lsp::Range>());
      }));
}

static lsp::DocumentSymbol toLsp(const Snapshot &s, const DocSymbol &d) {
  SymbolKind kind = d.kind == DocSymbol::Section    ? SymbolKind::Namespace
                    : d.kind == DocSymbol::Function ? SymbolKind::Function
                                                    : SymbolKind::Variable;
  lsp::DocumentSymbol out(d.name, kind, s.lines.toLsp(d.range),
                          s.lines.toLsp(d.selection));
  out.detail = d.detail;
  for (const DocSymbol &c : d.children)
    out.children.push_back(toLsp(s, c));
  return out;
}

void TosaServer::documentSymbols(
    const std::string &uri, Callback<std::vector<lsp::DocumentSymbol>> cb) {
  withCurrentSnapshot(uri, answer(std::move(cb), [](const Snapshot &s) {
                        std::vector<lsp::DocumentSymbol> out;
                        for (const DocSymbol &d :
                             tosa_lsp::documentSymbols(s.analysis))
                          out.push_back(toLsp(s, d));
                        return out;
                      }));
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

std::shared_ptr<void> TosaServer::lendWarmInferrerForTest() {
  return background->lendWarmInferrerForTest();
}

TosaServer::Stats TosaServer::stats() const {
  Stats s;
  s.fixValidations = validationCount;
  BackgroundInference::Stats bg = background->stats();
  s.requestInferences = bg.requestInferences;
  s.inferencesCancelled = bg.inferencesCancelled;
  s.slotsDropped = slotsDroppedCount;
  s.migrations = migrationsCount;
  s.migrationsCancelled = migrationsCancelledCount;
  s.loweredGraphsMade = loweredGraphsMade;
  s.loweredGraphsReused = loweredGraphsReused;
  s.staleAnswers = staleAnswersCount;
  s.warmInferrersMade = bg.warmInferrersMade;
  s.requestInferrersMade = bg.requestInferrersMade;
  s.fillInferrersMade = bg.fillInferrersMade;
  s.fillBorrows = bg.fillBorrows;
  s.backgroundPauses = bg.backgroundPauses;
  for (const std::shared_ptr<OpenDocument> &doc : scheduler->documents())
    s.functionsKnown += doc->shapes.cache.size();
  s.configLoads = settings.projectLoads();
  s.scheduler = scheduler->stats();
  return s;
}

void TosaServer::waitIdle() {
  scheduler->waitIdle();
  background->waitIdle();
  if (pool)
    pool->waitIdle();
  if (compilePool)
    compilePool->waitIdle();
}

} // namespace tosa_lsp
