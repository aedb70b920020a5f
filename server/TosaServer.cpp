//===- TosaServer.cpp - the feature layer of the language server ----------===//

#include "TosaServer.h"

#include "llvm/Support/Threading.h"
#include "llvm/Support/xxhash.h"

#include "CompileJob.h"
#include "Convert.h"
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
#if defined(__linux__)
#include <sys/resource.h>
#endif
#include <mutex>
#include <thread>

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// Choices
//===----------------------------------------------------------------------===//

/// The analysis' edits (1-based byte positions) in the snapshot's LSP
/// positions.
/// The analysis writes new lines as `\n`; they are written as the document's
/// first line ends (`\r\n`, `\r`), so an applied fix never leaves the file
/// with mixed line endings.
static std::vector<lsp::TextEdit>
toLspEdits(const Snapshot &s, const std::vector<TextEditData> &edits,
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

/// The background inference's priority: the lowest ordinary one (nice 19),
/// not SCHED_IDLE. A core running only SCHED_IDLE work counts as idle when
/// a thread wakes, so the message loop woke there and, under lazy
/// preemption (Linux 6.13+, this host's 6.18), waited for the next tick:
/// hovers answered from memory took ~4 ms instead of ~0.1 while the
/// background ran (50k lines, many functions: 1-16 of 600). At nice 19 it
/// wakes on the other core.
static void lowerPriority() {
#if defined(__linux__)
  // On Linux the nice value is the calling thread's.
  if (setpriority(PRIO_PROCESS, 0, 19) == 0)
    return;
#endif
  (void)llvm::set_thread_priority(llvm::ThreadPriority::Background);
}

static Error invalidParams(const Twine &message) {
  return make_error<LSPError>(message.str(), ErrorCode::InvalidParams);
}

//===----------------------------------------------------------------------===//
// Lifecycle and configuration
//===----------------------------------------------------------------------===//

TosaServer::TosaServer(Options opts, Callbacks &callbacks)
    : options(std::move(opts)), callbacks(callbacks) {
  unsigned workers = options.workers;
  if (!workers)
    workers = std::clamp(std::thread::hardware_concurrency(), 2u, 8u);
  if (!options.sync) {
    // MLIR's parser and passes recurse: big stacks for validation and
    // lowering. Compile jobs wait on a child process: small stacks.
    pool = std::make_unique<WorkerPool>("tosa-work", workers, 256u << 20);
    compilePool = std::make_unique<WorkerPool>(
        "tosa-compile", options.compileWorkers, 1u << 20);
    fillPool =
        std::make_unique<WorkerPool>("tosa-shapes", kFillThreads, 256u << 20);
  }
  validators.resize((pool ? pool->size() : 0) + 1);
  inferrers.resize(validators.size());
  fillInferrers.resize(fillPool ? fillPool->size() : 1);
  scheduler = std::make_unique<Scheduler>(
      options.sync, options.debounce,
      [this](Scheduler::SnapshotPtr s) { publish(std::move(s)); });
}

TosaServer::~TosaServer() {
  stopping = true;
  cancelCompiles();
  scheduler.reset(); // no new work after this
  fillPool.reset();
  pool.reset();
  compilePool.reset();
}

void TosaServer::reportOnce(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(configMu);
    if (message == lastError)
      return;
    lastError = message;
  }
  Logger::error("{0}", message);
  callbacks.onError(message);
}

/// Editor settings with null members removed: a client may send the shape
/// of its settings with nulls where the user set nothing.
static nlohmann::json withoutNulls(const nlohmann::json &v) {
  if (!v.is_object())
    return v;
  nlohmann::json out = nlohmann::json::object();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!it.value().is_null())
      out[it.key()] = withoutNulls(it.value());
  return out;
}

void TosaServer::setSettings(const nlohmann::json &value) {
  const nlohmann::json *s = &value;
  if (value.is_object() && value.contains("tosaLsp"))
    s = &value["tosaLsp"];
  nlohmann::json clean = withoutNulls(*s);
  std::optional<nlohmann::json> accepted;
  if (clean.is_object() && !clean.empty()) {
    if (Expected<Config> checked = applyConfig(clean, Config()))
      accepted = std::move(clean);
    else
      reportOnce("editor settings: " + toString(checked.takeError()));
  } else if (!clean.is_object() && !clean.is_null() &&
             !(clean.is_array() && clean.empty())) {
    // (An empty Lua table, which Neovim sends for "no settings", is `[]`.)
    // `[]` or `5`: say so, as for a wrong value inside an object.
    reportOnce("editor settings: expected an object, got " +
               clean.dump(-1).substr(0, 80) + "; the defaults apply");
  }
  {
    std::lock_guard<std::mutex> lock(configMu);
    settings = std::move(accepted);
  }
  configFilesChanged();
}

void TosaServer::configFilesChanged() {
  projectConfigs.invalidate();
  std::map<std::string, Document> all;
  {
    std::lock_guard<std::mutex> lock(docsMu);
    all = docs;
  }
  for (auto &[uri, doc] : all)
    schedule(uri, doc);
}

Config TosaServer::configFor(const std::string &path) {
  ConfigCache::Result project = projectConfigs.get(path);
  if (project.loaded && !project.error.empty()) {
    reportOnce(project.error);
  } else if (project.loaded) {
    // Fixed: the same mistake made again is reported again.
    std::lock_guard<std::mutex> lock(configMu);
    lastError.clear();
  }
  std::optional<nlohmann::json> s;
  {
    std::lock_guard<std::mutex> lock(configMu);
    s = settings;
  }
  if (!s)
    return project.config;
  Expected<Config> merged = applyConfig(*s, project.config);
  if (!merged) { // cannot happen: checked in setSettings
    reportOnce("editor settings: " + toString(merged.takeError()));
    return project.config;
  }
  return std::move(*merged);
}

nlohmann::json TosaServer::defaultSettings() {
  Config d;
  return {
      {"broadcastableOps", d.broadcastableOps},
      {"extraBroadcastableOps", nlohmann::json::array()},
      {"hints",
       {{"inferredShapes", d.hints.inferredShapes},
        {"runtimeChecks", d.hints.runtimeChecks}}},
      {"info",
       {{"refinable", d.info.refinable},
        {"runtimeChecks", d.info.runtimeChecks},
        {"dynamicToStatic", d.info.dynamicToStatic},
        {"publish", d.info.publish}}},
      {"lenientDialects", d.lenient.enabled},
      {"shapeChecks", d.shapeChecks},
      {"compile",
       {{"outputDir", d.compile.outputDir},
        {"overwrite", d.compile.overwrite},
        {"timeoutSeconds", d.compile.timeoutSeconds},
        {"memoryLimitMB", d.compile.memoryLimitMB}}},
  };
}

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

void TosaServer::schedule(const std::string &uri, const Document &doc) {
  scheduler->update(uri, doc.path, doc.version, doc.text, configFor(doc.path));
}

void TosaServer::setText(Document &doc, std::string text) {
  if (!hasLoneCR(text)) {
    doc.text = std::make_shared<const std::string>(std::move(text));
    doc.clientText = nullptr;
    return;
  }
  doc.text = std::make_shared<const std::string>(loneCRsAsLF(text));
  doc.clientText = std::make_shared<const std::string>(std::move(text));
}

std::string TosaServer::newlineOf(const std::string &uri,
                                  const Snapshot &s) const {
  {
    std::lock_guard<std::mutex> lock(docsMu);
    auto it = docs.find(uri);
    if (it != docs.end() && it->second.clientText)
      return std::string(firstLineBreak(*it->second.clientText));
  }
  return std::string(firstLineBreak(s.text));
}

void TosaServer::forgetVerdicts(const std::string &uri) {
  {
    std::lock_guard<std::mutex> lock(validationMu);
    validations.erase(uri);
  }
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    shapes.erase(uri);
  }
}

void TosaServer::forgetDerived(const std::string &uri) {
  forgetVerdicts(uri);
  scheduler->remove(uri);
}

void TosaServer::addDocument(const std::string &uri, const std::string &path,
                             int64_t version, std::string text) {
  Document doc;
  doc.path = path;
  doc.version = version;
  setText(doc, std::move(text));
  bool reopened;
  {
    std::lock_guard<std::mutex> lock(docsMu);
    reopened = docs.count(uri) != 0;
    docs[uri] = doc;
  }
  // Opened again without a close (a protocol error): versions may repeat,
  // and every answer must come from this text.
  if (reopened)
    forgetDerived(uri);
  schedule(uri, doc);
}

Error TosaServer::changeDocument(
    const std::string &uri, int64_t version,
    ArrayRef<TextDocumentContentChangeEvent> changes) {
  Document doc;
  std::optional<std::string> error;
  bool restart = false;
  {
    std::lock_guard<std::mutex> lock(docsMu);
    auto it = docs.find(uri);
    if (it == docs.end())
      return invalidParams("didChange for a document that is not open: " + uri);
    std::string text;
    // The latest snapshot's line starts, when it shows this very text.
    Scheduler::SnapshotPtr shown = scheduler->latest(uri);
    const LineIndex *lines = shown && shown->sharedText == it->second.text
                                 ? &shown->lines.index()
                                 : nullptr;
    const SharedString &client =
        it->second.clientText ? it->second.clientText : it->second.text;
    // Lone \r line ends count from the change that brings the first one.
    bool loneCR =
        client != it->second.text || llvm::any_of(changes, [](const auto &c) {
          return c.text.find('\r') != std::string::npos;
        });
    error = applyChanges(*client, changes, text, lines, loneCR);
    if (!error) {
      setText(it->second, std::move(text));
      restart = version <= it->second.version;
      it->second.version = version;
      doc = it->second;
    }
  }
  if (error) {
    // The client and we disagree on the text: say so rather than analyse
    // something the user does not see, now or after later edits.
    removeDocument(uri);
    return make_error<LSPError>(*error, ErrorCode::InvalidParams);
  }
  if (restart) {
    // Versions must increase (LSP); results kept by version would be
    // taken for this text's.
    forgetDerived(uri);
    schedule(uri, doc);
    return Error::success();
  }
  // A long function's inference is not kept for the next version: for a
  // function of 10^5 lines it is ~250 MiB that would otherwise live through
  // the re-analysis (an edit in it changes its key anyway). Small ones are
  // kept: what the edit did not change is not inferred again.
  docShapes(uri)->cache.dropInferenceOver(kWaitLines);
  schedule(uri, doc);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Diagnostics and shape checks
//===----------------------------------------------------------------------===//

std::shared_ptr<TosaServer::DocShapes>
TosaServer::docShapes(const std::string &uri) {
  std::lock_guard<std::mutex> lock(shapesMu);
  std::shared_ptr<DocShapes> &d = shapes[uri];
  if (!d)
    d = std::make_shared<DocShapes>();
  return d;
}

std::shared_ptr<const std::vector<FunctionKey>>
TosaServer::keysOf(const Snapshot &s) {
  std::shared_ptr<DocShapes> doc = docShapes(s.uri);
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    if (doc->keysVersion == s.version && doc->keys)
      return doc->keys;
  }
  auto keys = std::make_shared<const std::vector<FunctionKey>>(
      functionKeys(s.text, s.lines.index(), s.analysis));
  std::lock_guard<std::mutex> lock(shapesMu);
  if (s.version >= doc->keysVersion) {
    doc->keysVersion = s.version;
    doc->keys = keys;
  }
  return keys;
}

void TosaServer::publish(Scheduler::SnapshotPtr s) {
  // Every hover and inlay request looks positions up in the version's
  // index, built on first use: ~80 ms at 200k lines that the first request
  // after each open or edit waited for. For a big file it is built beside
  // the publish (the index takes longer than the diagnostics' JSON and
  // send); for a small one after it, with the rest of the background work
  // below, so that the diagnostics have both cores (10k lines: the index
  // ~2 ms, the publish ~1 ms; the open ~1 ms sooner, interleaved runs).
  const bool bigFile = s->text.size() >= kIndexBesidePublishBytes;
  auto buildIndex = [&] {
    if (pool)
      pool->run([s](unsigned) { (void)s->analysis.positionIndex(); });
  };
  if (bigFile)
    buildIndex();
  std::shared_ptr<DocShapes> doc = docShapes(s->uri);
  std::vector<Diagnostic> extra;
  // Nothing known yet (an open): the keys are hashed after the publish
  // (~4 ms at 200k lines).
  if (!doc->cache.empty()) {
    PhaseTimer timer("publish: function keys and known shape errors");
    std::shared_ptr<const std::vector<FunctionKey>> keys = keysOf(*s);
    // What the functions this version no longer has inferred is not read
    // again.
    doc->cache.retain(*keys);
    if (s->config.shapeChecks)
      extra = doc->cache.shapeErrors(*keys, nullptr);
  }
  // The diagnostics do not wait for the index: at 200k lines (one
  // function) waiting made the open's publish 30 ms later, and a hover sent
  // as soon as they arrive waited ~2 ms for the rest of it.
  {
    std::lock_guard<std::mutex> lock(publishMu);
    publishedVersions[s->uri] = s->version;
    callbacks.onDiagnostics(s, extra);
  }
  if (!bigFile)
    buildIndex();
  // The keys are hashed once per version; the fill reads them too.
  warmRequestInferrer(*keysOf(*s));
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    doc->published = s;
  }
  startFill(s->uri);
}

void TosaServer::warmRequestInferrer(const std::vector<FunctionKey> &keys) {
  if (!pool || warmQueued.load() ||
      llvm::none_of(
          keys, [](const FunctionKey &k) { return k.lines() <= kWaitLines; }))
    return;
  if (warmQueued.exchange(true))
    return;
  pool->run([this](unsigned) {
    std::lock_guard<std::timed_mutex> lock(warmMu);
    if (!stopping && !warmInferrer) {
      warmInferrer = std::make_unique<ShapeInferrer>();
      warmInferrer->warmUp();
      ++warmInferrersMadeCount;
    }
  });
}

void TosaServer::countWarmLines(size_t lines) {
  warmLines += lines;
  if (warmLines <= options.renewWarmInferrerLines)
    return;
  warmInferrer.reset();
  warmLines = 0;
  warmQueued = false;
}

void TosaServer::startFill(const std::string &uri) {
  if (!options.backgroundInference)
    return;
  std::shared_ptr<DocShapes> doc = docShapes(uri);
  unsigned threads = fillPool ? fillPool->size() : 1;
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    if (doc->filling) {
      doc->fillAgain = true;
      return;
    }
    // A second thread (a context of its own) only for many functions: an
    // edit changes one or two, a small file has a few dozen.
    if (doc->keys && doc->keys->size() < kFillFunctionsPerThread)
      threads = 1;
    doc->filling = threads;
  }
  for (unsigned i = 0; i < threads; ++i) {
    auto task = [this, uri, doc, second = i > 0](unsigned worker) {
      fill(uri, doc, worker, second);
    };
    if (fillPool)
      fillPool->run(std::move(task));
    else
      task(0);
  }
}

TosaServer::WarmLoan::WarmLoan(TosaServer &server, bool wait)
    : server(server), lock(server.warmMu, std::defer_lock) {
  if (wait)
    lock.lock();
  else
    (void)lock.try_lock();
  if (lock.owns_lock())
    server.warmLent = true;
}

TosaServer::WarmLoan::~WarmLoan() {
  if (lock.owns_lock())
    server.warmLent = false;
}

void TosaServer::fill(const std::string &uri, std::shared_ptr<DocShapes> doc,
                      unsigned worker, bool yieldToRequests) {
  PhaseTimer timer("background inference, one thread, until none is left");
  if (fillPool) // Only what no analysis or request needs.
    lowerPriority();
  std::unique_ptr<ShapeInferrer> &inferrer = fillInferrers[worker];
  // The version whose functions gained shape errors: published again once
  // its functions are all known (one publish, not one per function).
  Scheduler::SnapshotPtr gained;
  for (;;) {
    // All but the first thread leave a core to requests while they come:
    // with every core busy in the background, the message loop's wake-up
    // waited for one to be preempted (up to a scheduler tick, ~4 ms here).
    if (yieldToRequests && requestedWithin(kRequestQuiet)) {
      ++backgroundPausesCount;
      while (!stopping && requestedWithin(kRequestQuiet))
        std::this_thread::sleep_for(kRequestQuiet / 4);
    }
    // The latest published version, held only while one function is
    // inferred: a version replaced meanwhile is freed, and its item arrays
    // go to the next incremental merge.
    Scheduler::SnapshotPtr s;
    {
      std::lock_guard<std::mutex> lock(shapesMu);
      s = doc->published.lock();
    }
    if (s && (stopping || currentVersion(uri) != s->version))
      s.reset(); // a newer version is on its way: its publish restarts this
    {
      std::lock_guard<std::mutex> lock(publishMu);
      if (s && !isPublished(*s))
        s.reset();
    }
    std::optional<FunctionKey> next;
    size_t left = 0;
    if (s) {
      std::shared_ptr<const std::vector<FunctionKey>> keys = keysOf(*s);
      std::vector<FunctionKey> small;
      for (const FunctionKey &k : *keys)
        if (k.lines() <= kShapeCheckLines)
          small.push_back(k);
      // Not lookup: it would place (and shift) every known function.
      std::vector<FunctionKey> missing = doc->cache.unknown(small);
      left = missing.size();
      std::lock_guard<std::mutex> lock(shapesMu);
      unsigned focus = doc->focus;
      auto distance = [&](const FunctionKey &k) {
        return focus < k.firstLine  ? k.firstLine - focus
               : focus > k.lastLine ? focus - k.lastLine
                                    : 0u;
      };
      for (const FunctionKey &k : missing)
        if (!doc->inflight.count(k.hash) &&
            (!next || distance(k) < distance(*next)))
          next = k;
      if (next) // The other fill threads take another one.
        doc->inflight.insert(next->hash);
    }
    bool cancelled = false;
    if (next) {
      // An edit's few functions go on the warm request inferrer when no
      // request is using it: a context of its own each edit held ~0.6 MiB
      // more (10k lines, many functions: the session's peak) and loaded
      // the dialects again. Not an open's many: requests would find it
      // lent most of the time.
      std::optional<WarmLoan> loan;
      ShapeInferrer *use = inferrer.get();
      if (!use && left <= kBorrowWarmFunctions) {
        loan.emplace(*this, /*wait=*/false);
        if (loan->held() && warmInferrer) {
          use = warmInferrer.get();
          ++fillBorrowsCount;
        } else {
          loan.reset();
        }
      }
      if (!use) {
        inferrer = std::make_unique<ShapeInferrer>();
        ++fillInferrersMadeCount;
        use = inferrer.get();
      }
      auto edited = [&] {
        return stopping || currentVersion(uri) != s->version;
      };
      ShapeInference fresh = use->infer(s->text, s->lines.index(), s->analysis,
                                        next->firstLine, next->lastLine, edited,
                                        /*withRefineEdits=*/false);
      if (loan) {
        countWarmLines(next->lines());
        loan.reset();
      }
      cancelled = fresh.cancelled;
      if (!cancelled && doc->cache.store({*next}, fresh) &&
          s->config.shapeChecks)
        gained = s;
      {
        std::lock_guard<std::mutex> lock(shapesMu);
        doc->inflight.erase(next->hash);
      }
      if (!cancelled)
        continue;
    }
    if (gained && s && gained->version == s->version)
      republish(gained);
    gained.reset();
    std::unique_lock<std::mutex> lock(shapesMu);
    if (doc->fillAgain) {
      doc->fillAgain = false;
      continue;
    }
    --doc->filling;
    lock.unlock();
    // Done until the next version: the context goes (every location and
    // type it uniqued), and the thread's free pages with it.
    inferrer.reset();
    if (fillPool)
      releaseFreeMemory();
    return;
  }
}

void TosaServer::republish(Scheduler::SnapshotPtr s) {
  // From the ordinary pool: a background thread at its priority must not
  // hold publishMu while writing megabytes.
  runHeavy([this, s = std::move(s)](unsigned) {
    std::vector<Diagnostic> extra =
        docShapes(s->uri)->cache.shapeErrors(*keysOf(*s), nullptr);
    std::lock_guard<std::mutex> lock(publishMu);
    if (!stopping && isPublished(*s))
      callbacks.onDiagnostics(s, extra);
  });
}

bool TosaServer::isPublished(const Snapshot &s) {
  auto it = publishedVersions.find(s.uri);
  return it != publishedVersions.end() && it->second == s.version;
}

void TosaServer::removeDocument(const std::string &uri) {
  bool last;
  {
    std::lock_guard<std::mutex> lock(docsMu);
    docs.erase(uri);
    last = docs.empty();
  }
  forgetVerdicts(uri);
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
  if (last) {
    {
      // Before the pool threads collect (below): its memory is in their
      // heaps, and the background's. A request or the background using
      // it is waited for (a small function's inference; a closed
      // version's is cancelled).
      std::lock_guard<std::timed_mutex> lock(warmMu);
      warmInferrer.reset();
      warmLines = 0;
      warmQueued = false;
    }
    // The MLIRContexts of validation and inference keep every type,
    // attribute and location they uniqued: hundreds of MiB after a big
    // file. Dropped when the last document closes; each slot belongs to
    // one pool thread, so only while the pool is idle (its tasks come from
    // this thread, which is here).
    if (fillPool) {
      drops->left += fillPool->size();
      fillPool->runOnEachWhenIdle([this, drops](unsigned worker) {
        GiveBackFreePages now; // see below
        fillInferrers[worker].reset();
        releaseFreeMemory();
        drops->one(slotsDroppedCount);
      });
    } else {
      for (std::unique_ptr<ShapeInferrer> &inferrer : fillInferrers)
        inferrer.reset();
    }
    auto dropSlot = [this](unsigned worker) {
      validators[worker].reset();
      inferrers[worker].reset();
    };
    if (!pool) {
      for (unsigned w = 0; w < validators.size(); ++w)
        dropSlot(w);
    } else {
      // Each thread drops its own slot once it has finished what it is
      // doing (a big function's inference can run for seconds after the
      // close) and hands back its heap: what those contexts and the
      // requests' results allocated lives there. Freed under the delay,
      // its pages would wait for the thread's next allocation, which an
      // idle pool thread does not make (15-42 MiB after a 200k-line file).
      drops->left += static_cast<unsigned>(pool->size());
      pool->runOnEachWhenIdle([this, dropSlot, drops](unsigned worker) {
        GiveBackFreePages now;
        dropSlot(worker);
        releaseFreeMemory();
        drops->one(slotsDroppedCount);
      });
    }
  }
  {
    std::lock_guard<std::mutex> lock(publishMu);
    publishedVersions.erase(uri);
  }
  scheduler->remove(uri);
  if (last && drops->left) {
    // What the pool threads freed of memory other threads allocated waits
    // for its owners: for this thread (and the threads that ended, whose
    // memory only this one reclaims) to collect again after the drops.
    // Collected once before them, a 50k-line many-function file left
    // ~35 MiB that a later collect gave back. Bounded like the wait in
    // Scheduler::remove: an inference may run on for seconds.
    std::unique_lock<std::mutex> lock(drops->mu);
    drops->done.wait_for(lock, std::chrono::seconds(1),
                         [&] { return drops->left == 0; });
    lock.unlock();
    releaseFreeMemory();
  }
}

std::optional<TosaServer::Document>
TosaServer::document(const std::string &uri) const {
  std::lock_guard<std::mutex> lock(docsMu);
  auto it = docs.find(uri);
  if (it == docs.end())
    return std::nullopt;
  return it->second;
}

std::optional<int64_t>
TosaServer::currentVersion(const std::string &uri) const {
  std::lock_guard<std::mutex> lock(docsMu);
  auto it = docs.find(uri);
  if (it == docs.end())
    return std::nullopt;
  return it->second.version;
}

Scheduler::SnapshotPtr TosaServer::snapshot(const std::string &uri) const {
  return scheduler->latest(uri);
}

//===----------------------------------------------------------------------===//
// Features
//===----------------------------------------------------------------------===//

void TosaServer::withSnapshot(
    const std::string &uri,
    unique_function<void(Expected<Scheduler::SnapshotPtr>)> fn) {
  lastRequest = std::chrono::steady_clock::now().time_since_epoch().count();
  // Scheduler waiters are std::function (copyable): share the callback.
  auto shared = std::make_shared<decltype(fn)>(std::move(fn));
  bool known = scheduler->withSnapshot(uri, [shared](Scheduler::SnapshotPtr s) {
    if (!s)
      return (*shared)(
          make_error<LSPError>("the document was closed before it was analysed",
                               ErrorCode::ContentModified));
    (*shared)(std::move(s));
  });
  if (!known)
    (*shared)(invalidParams("unknown document: " + uri + " (not opened)"));
}

bool TosaServer::requestedWithin(std::chrono::milliseconds d) const {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  return now - std::chrono::steady_clock::duration(lastRequest.load()) < d;
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

std::shared_ptr<const ShapeInference>
TosaServer::shapesFor(const Scheduler::SnapshotPtr &s, unsigned worker,
                      unsigned first, unsigned last, bool stopWhenEdited,
                      bool refineEdits) {
  std::shared_ptr<DocShapes> doc = docShapes(s->uri);
  std::shared_ptr<const std::vector<FunctionKey>> all = keysOf(*s);
  ArrayRef<FunctionKey> keys = keysOnLines(*all, first, last);
  std::vector<FunctionKey> missing;
  ShapeInference known = doc->cache.lookup(keys, &missing, refineEdits);
  if (missing.empty())
    return std::make_shared<const ShapeInference>(std::move(known));
  bool big = llvm::any_of(
      missing, [](const FunctionKey &k) { return k.lines() > kWaitLines; });
  std::unique_lock<std::timed_mutex> warmLock(warmMu, std::defer_lock);
  // Another request's inference is waited for; the background's (an
  // edit's function on the borrowed inferrer, ~1-5 ms) only for a while:
  // a nice-19 thread that an analysis on both cores may hold off.
  auto lentUntil = std::chrono::steady_clock::now() + kWaitForLentWarm;
  while (!big && !warmLock.try_lock_for(std::chrono::milliseconds(1)))
    if (warmLent && std::chrono::steady_clock::now() >= lentUntil)
      break;
  // Not kept when made only because the warm one was lent.
  const bool transient = big || !warmLock.owns_lock();
  std::unique_ptr<ShapeInferrer> &inferrer =
      warmLock.owns_lock() ? warmInferrer : inferrers[worker];
  if (!inferrer) {
    inferrer = std::make_unique<ShapeInferrer>();
    ++requestInferrersMadeCount;
  }
  ++requestInferenceCount;
  // Also on shutdown: the destructor joins the pool, and a 200k-line
  // function's inference would hold it for seconds.
  auto edited = [&] {
    return stopping || currentVersion(s->uri) != s->version;
  };
  bool gained = false, cancelled = false;
  // One function at a time: each is parsed alone either way.
  for (const FunctionKey &k : missing) {
    ShapeInference fresh = inferrer->infer(
        s->text, s->lines.index(), s->analysis, k.firstLine, k.lastLine,
        stopWhenEdited ? llvm::function_ref<bool()>(edited) : nullptr,
        refineEdits);
    if ((cancelled = fresh.cancelled))
      break;
    // What a hover or inlay hint inferred also counts for the shape checks
    // (functions too long for the background ones, among others).
    gained |= doc->cache.store({k}, fresh);
  }
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    for (const FunctionKey &m : missing)
      doc->inflight.erase(m.hash);
  }
  if (cancelled) {
    ++inferencesCancelledCount;
    return nullptr;
  }
  // After a long function the context holds a location per op, and the
  // thread the pages of its parse: both go (10k-line function: ~5 MiB).
  if (transient) {
    inferrer.reset();
    if (pool)
      releaseFreeMemory();
  }
  if (warmLock.owns_lock()) {
    countWarmLines(linesOf(missing));
    warmLock.unlock();
  }
  if (gained && s->config.shapeChecks)
    republish(s);
  return std::make_shared<const ShapeInference>(doc->cache.lookup(keys));
}

void TosaServer::withShapes(
    const std::string &uri, lsp::Range range,
    unique_function<void(Expected<Scheduler::SnapshotPtr>,
                         std::shared_ptr<const ShapeInference>)>
        fn) {
  withSnapshot(uri, [this, range, fn = std::move(fn)](
                        Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return fn(s.takeError(), nullptr);
    unsigned first = 1, last = ~0u;
    if (std::optional<tosa_lsp::Range> r = (*s)->lines.fromLsp(range)) {
      first = r->begin.line;
      last = r->end.line;
    }
    std::shared_ptr<DocShapes> doc = docShapes((*s)->uri);
    // Held: a newer version's keys may replace these meanwhile.
    std::shared_ptr<const std::vector<FunctionKey>> all = keysOf(**s);
    ArrayRef<FunctionKey> keys = keysOnLines(*all, first, last);
    std::vector<FunctionKey> missing;
    auto known = std::make_shared<const ShapeInference>(
        doc->cache.lookup(keys, &missing));
    if (missing.empty())
      return fn(std::move(*s), std::move(known));
    // The background inference goes on from where the user looks.
    {
      std::lock_guard<std::mutex> lock(shapesMu);
      doc->focus = first;
    }
    // Parsing and the pass take as long as the functions: off the caller,
    // and only waited for when the functions are small.
    if (linesOf(missing) <= kWaitLines || options.sync) {
      runHeavy([this, fn = std::move(fn), first, last,
                s = std::move(*s)](unsigned worker) mutable {
        auto shapes = shapesFor(s, worker, first, last);
        fn(std::move(s), std::move(shapes));
      });
      return;
    }
    // The background work is queued before the answer goes out; none for
    // a version already edited (its result would be dropped unread).
    Scheduler::SnapshotPtr snap = *s;
    if (currentVersion(snap->uri) != snap->version)
      return fn(std::move(*s), std::move(known));
    bool start = false;
    {
      std::lock_guard<std::mutex> lock(shapesMu);
      for (const FunctionKey &k : missing)
        start |= doc->inflight.insert(k.hash).second;
    }
    if (start)
      runHeavy([this, first, last, snap](unsigned worker) {
        auto until =
            std::chrono::steady_clock::now() + kBackgroundInferenceDelay;
        while (!options.sync && !stopping &&
               currentVersion(snap->uri) == snap->version &&
               std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        // Edited meanwhile: shapesFor stops before the parse.
        (void)shapesFor(snap, worker, first, last, /*stopWhenEdited=*/true);
      });
    fn(std::move(*s), std::move(known));
  });
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

void TosaServer::hover(const std::string &uri, lsp::Position pos,
                       Callback<std::optional<lsp::Hover>> cb) {
  withShapes(uri, lsp::Range(pos, pos),
             answerWithShapes(std::move(cb), [pos](const Snapshot &s,
                                                   const ShapeInference *si) {
               std::optional<lsp::Hover> out;
               std::optional<Position> p = s.lines.fromLsp(pos);
               std::optional<HoverResult> h =
                   p ? tosa_lsp::hover(s.analysis, *p, si) : std::nullopt;
               if (!h)
                 return out;
               out.emplace(s.lines.toLsp(h->range));
               out->contents.kind = MarkupKind::Markdown;
               out->contents.value = h->markdown;
               return out;
             }));
}

void TosaServer::inlayHints(const std::string &uri, lsp::Range range,
                            Callback<std::vector<lsp::InlayHint>> cb) {
  withShapes(uri, range,
             answerWithShapes(std::move(cb), [range](const Snapshot &s,
                                                     const ShapeInference *si) {
               std::vector<lsp::InlayHint> out;
               std::optional<tosa_lsp::Range> r = s.lines.fromLsp(range);
               if (!r)
                 return out;
               for (const InlayHintData &h :
                    tosa_lsp::inlayHints(s.analysis, *r, s.config.hints, si)) {
                 lsp::InlayHint hint(InlayHintKind::Type,
                                     s.lines.toLsp(h.position));
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
                            Callback<std::vector<lsp::Range>> cb) {
  withSnapshot(uri, answer(std::move(cb), [pos](const Snapshot &s) {
                 std::optional<Position> p = s.lines.fromLsp(pos);
                 std::optional<tosa_lsp::Range> d =
                     p ? tosa_lsp::definition(s.analysis, *p) : std::nullopt;
                 return toLsp(s, d ? std::vector<tosa_lsp::Range>{*d}
                                   : std::vector<tosa_lsp::Range>());
               }));
}

void TosaServer::references(const std::string &uri, lsp::Position pos,
                            bool includeDeclaration,
                            Callback<std::vector<lsp::Range>> cb) {
  withSnapshot(
      uri, answer(std::move(cb), [pos, includeDeclaration](const Snapshot &s) {
        std::optional<Position> p = s.lines.fromLsp(pos);
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
  withSnapshot(uri, answer(std::move(cb), [](const Snapshot &s) {
                 std::vector<lsp::DocumentSymbol> out;
                 for (const DocSymbol &d :
                      tosa_lsp::documentSymbols(s.analysis))
                   out.push_back(toLsp(s, d));
                 return out;
               }));
}

//===----------------------------------------------------------------------===//
// Code actions
//===----------------------------------------------------------------------===//

Analyzer &TosaServer::validator(unsigned worker) {
  // Each slot is touched by one thread only (its pool worker, or the
  // inline caller in sync mode).
  std::unique_ptr<Analyzer> &a = validators[worker];
  if (!a)
    a = std::make_unique<Analyzer>();
  return *a;
}

bool TosaServer::isValid(const Scheduler::SnapshotPtr &s, size_t fix,
                         unsigned worker) {
  std::string config = s->config.fingerprint();
  {
    std::lock_guard<std::mutex> lock(validationMu);
    Validation &v = validations[s->uri];
    if (v.version == s->version && v.config == config)
      if (auto it = v.verdicts.find(fix); it != v.verdicts.end())
        return it->second;
  }
  // Outside any lock: validations of different documents, versions or
  // fixes run side by side on their workers' own Analyzers. Two requests
  // racing for the same fix compute the same verdict twice.
  bool ok = validateFix(validator(worker), s->analysis, s->text, s->config,
                        s->fixes()[fix]);
  ++validationCount;
  std::lock_guard<std::mutex> lock(validationMu);
  Validation &v = validations[s->uri];
  if (v.version != s->version || v.config != config) {
    if (v.version > s->version)
      return ok; // a newer version is being validated: keep its cache
    v = Validation();
    v.version = s->version;
    v.config = config;
  }
  v.verdicts[fix] = ok;
  return ok;
}

CodeActions TosaServer::computeCodeActions(Scheduler::SnapshotPtr s,
                                           lsp::Range range,
                                           const std::vector<std::string> &only,
                                           unsigned worker) {
  CodeActions out;
  out.snapshot = s;
  auto wants = [&](StringRef kind) {
    return only.empty() || llvm::any_of(only, [&](const std::string &k) {
             return kind.starts_with(k);
           });
  };
  std::optional<tosa_lsp::Range> r = s->lines.fromLsp(range);
  if (!r)
    return out;
  // How the edits write new lines: looked up once, when an edit needs it.
  std::optional<std::string> newlineText;
  auto newline = [&]() -> std::string_view {
    if (!newlineText)
      newlineText = newlineOf(s->uri, *s);
    return *newlineText;
  };
  // Quick fixes first: editors show the first action most prominently.
  // Migrating the whole file is a source action offered anywhere in it,
  // and a quick fix (after the op's own) on every diagnostic a migration
  // repairs, so that editors which keep source actions out of their
  // lightbulb (VS Code) still show it where the old forms are.
  std::optional<size_t> migrateFile;
  bool onOldForm = false;
  for (size_t i = 0; i < s->fixes().size(); ++i) {
    const FixData &fix = s->fixes()[i];
    if (fix.kind == FixData::MigrateFile)
      migrateFile = i;
    else if (fix.kind == FixData::Migrate &&
             overlaps(s->analysis.diagnostics[fix.diagnostic].range, *r))
      onOldForm = true;
  }
  auto wholeFileMigration = [&](StringRef kind) {
    CodeActionItem item;
    item.title = s->fixes()[*migrateFile].title;
    item.kind = kind.str();
    item.review = true;
    item.version = s->version;
    item.edits = toLspEdits(*s, s->fixes()[*migrateFile].edits, newline());
    out.items.push_back(std::move(item));
  };
  if (wants("quickfix"))
    for (size_t i = 0; i < s->fixes().size(); ++i) {
      const FixData &fix = s->fixes()[i];
      const Diagnostic &d = s->analysis.diagnostics[fix.diagnostic];
      if (fix.kind == FixData::MigrateFile || !overlaps(d.range, *r) ||
          !isValid(s, i, worker))
        continue;
      CodeActionItem item;
      item.title = fix.title;
      item.kind = "quickfix";
      item.version = s->version;
      item.preferred = fix.preferred;
      item.diagnostic = &d;
      item.edits = toLspEdits(*s, fix.edits, newline());
      out.items.push_back(std::move(item));
    }
  bool migrateValid = migrateFile && (onOldForm || wants("source.migrate")) &&
                      isValid(s, *migrateFile, worker);
  if (migrateValid && onOldForm && wants("quickfix"))
    wholeFileMigration("quickfix");
  const SymbolInfo *fn = functionAt(s->analysis, r->begin);
  // Lowering and compiling a function fail when it has errors (its quick
  // fixes are offered), or leniently parsed ops (MLIR has no lowering for a
  // dialect it does not have): not offered then.
  bool lowerable =
      fn && llvm::none_of(s->analysis.diagnostics, [&](const Diagnostic &d) {
        return (d.severity == Severity::Error || d.code == "lenient-parse") &&
               d.range.begin.line >= fn->scope.begin.line &&
               d.range.begin.line <= fn->scope.end.line;
      });
  if (lowerable && wants("refactor.rewrite")) {
    CodeActionItem item;
    item.title = "Preview lowering of @" + fn->name + " (TOSA -> linalg)";
    item.kind = "refactor.rewrite";
    item.command = "tosa.previewLowering";
    item.commandTitle = "Preview lowering";
    item.function = fn->name;
    item.stage = "linalg";
    item.mode = "fast";
    out.items.push_back(std::move(item));
  }
  if (fn && wants("source.refineShapes")) {
    // "Refine all shapes in this function": MLIR's tosa-infer-shapes
    // written into the text, offered when the result re-analyses cleanly.
    std::shared_ptr<const ShapeInference> shapes =
        shapesFor(s, worker, fn->scope.begin.line, fn->scope.end.line,
                  /*stopWhenEdited=*/false, /*refineEdits=*/true);
    std::vector<TextEditData> edits = refineAllEdits(*shapes, fn->name);
    if (!edits.empty() && refinedTextVerifies(validator(worker), s->analysis,
                                              s->text, s->config, edits)) {
      CodeActionItem item;
      item.title = "Refine all shapes in @" + fn->name + " (tosa-infer-shapes)";
      item.kind = "source.refineShapes";
      item.review = true;
      item.version = s->version;
      item.edits = toLspEdits(*s, edits, newline());
      out.items.push_back(std::move(item));
    }
  }
  if (migrateValid && wants("source.migrate"))
    wholeFileMigration("source.migrate");
  if (lowerable && wants("source")) {
    CodeActionItem item;
    item.title = "Compile @" + fn->name + " to native code (shared library)";
    item.kind = "source";
    item.command = "tosa.compile";
    item.commandTitle = "Compile to native code";
    item.function = fn->name;
    item.emit = "shared";
    out.items.push_back(std::move(item));
  }
  return out;
}

void TosaServer::codeActions(const std::string &uri, lsp::Range range,
                             std::vector<std::string> only,
                             Callback<CodeActions> cb) {
  withSnapshot(uri, [this, range, only = std::move(only), cb = std::move(cb)](
                        Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return cb(s.takeError());
    // Validation re-analyses a section: on the pool, off the caller.
    runHeavy([this, range, only = std::move(only), cb = std::move(cb),
              s = std::move(*s)](unsigned worker) mutable {
      cb(computeCodeActions(std::move(s), range, only, worker));
    });
  });
}

//===----------------------------------------------------------------------===//
// Lowering preview
//===----------------------------------------------------------------------===//

void TosaServer::previewLowering(PreviewRequest req,
                                 Callback<PreviewResult> cb) {
  std::optional<Document> doc = document(req.uri);
  if (!doc)
    return cb(invalidParams("unknown document: " + req.uri + " (not opened)"));
  LowerOptions opts;
  opts.annotate = true;
  std::optional<LowerStage> stage = parseStage(req.stage);
  if (!stage)
    return cb(invalidParams(
        unknownChoiceMessage("stage", req.stage, choices().stages)));
  std::optional<LowerMode> mode = parseMode(req.mode);
  if (!mode)
    return cb(
        invalidParams(unknownChoiceMessage("mode", req.mode, choices().modes)));
  opts.stage = *stage;
  opts.mode = *mode;
  if (req.function) {
    opts.function = *req.function;
  } else if (req.position) {
    Scheduler::SnapshotPtr snap = scheduler->latest(req.uri);
    if (!snap)
      return cb(invalidParams("unknown document or bad position"));
    std::optional<Position> at = snap->lines.fromLsp(*req.position);
    const SymbolInfo *fn = at ? functionAt(snap->analysis, *at) : nullptr;
    if (!fn)
      return cb(invalidParams("no function at this position"));
    opts.function = fn->name;
  }
  auto work = [this, cb = std::move(cb), text = doc->text, path = doc->path,
               opts, uri = req.uri,
               writeFile = req.writeFile](unsigned) mutable {
    Expected<LowerResult> lowered = lower(*text, path, opts);
    if (!lowered)
      return cb(make_error<LSPError>("lowering failed\n" +
                                         toString(lowered.takeError()),
                                     ErrorCode::RequestFailed));
    LowerResult &r = *lowered;
    PreviewResult out;
    LineTable preview(r.text);
    LineTable source(*text); // the text that was lowered, not a snapshot
    for (const PreviewMapping &m : r.mappings)
      out.mappings.push_back(
          {preview.toLsp(Position{m.previewLine, m.previewColumn + 1}),
           source.toLsp(Position{m.sourceLine, m.sourceColumn}), m.sourceOp});
    if (writeFile) {
      std::string content;
      raw_string_ostream os(content);
      os << "// Lowering preview (" << stageName(opts.stage) << ", "
         << modeName(opts.mode) << ") of @" << opts.function
         << " — read-only, regenerated on request\n"
         << r.text;
      out.file = writePreviewFile(uri, path, opts.function, content);
    }
    out.text = std::move(r.text);
    out.pipeline = std::move(r.pipeline);
    cb(std::move(out));
  };
  runHeavy(std::move(work));
}

/// One read-only preview file per (document, function), rewritten on each
/// request, in a directory of this server's own that is removed with it:
/// previews never pile up in the temp directory. Empty on failure.
std::string TosaServer::writePreviewFile(const std::string &uri,
                                         const std::string &path,
                                         const std::string &function,
                                         StringRef content) {
  std::lock_guard<std::mutex> lock(previewMu);
  if (!previewDir)
    previewDir.emplace("tosa-lsp-preview");
  if (previewDir->error()) {
    Logger::error("preview: {0}", previewDir->error().message());
    return "";
  }
  std::string &stem = previewFiles[uri + "\n" + function];
  if (stem.empty()) {
    // Function names may hold "/" or "..": sanitised, and numbered so that
    // two documents named alike do not share a file.
    SmallString<256> p(previewDir->path());
    sys::path::append(p, std::to_string(previewFiles.size()) + "-" +
                             sanitizeFileName(sys::path::stem(path).str() +
                                              "-" + function + "-lowered"));
    stem = std::string(p);
  }
  std::string file = stem + ".mlir";
  sys::fs::remove(file); // read-only: replaced, not written to
  Expected<std::vector<std::string>> written =
      writeOutputs(stem, {OutputFile{".mlir", content}}, OnExisting::Fail, {});
  if (!written) {
    Logger::error("preview: {0}", toString(written.takeError()));
    return "";
  }
  sys::fs::setPermissions(file, sys::fs::owner_read | sys::fs::group_read |
                                    sys::fs::others_read);
  return file;
}

//===----------------------------------------------------------------------===//
// Compile jobs
//===----------------------------------------------------------------------===//

std::function<void()>
TosaServer::compile(CompileRequest req,
                    std::function<void(const CompileProgress &)> progress,
                    Callback<json::Value> cb) {
  std::optional<Document> doc = document(req.uri);
  if (!doc) {
    cb(invalidParams("unknown document: " + req.uri + " (not opened)"));
    return [] {};
  }
  if (!parseMode(req.mode)) {
    cb(invalidParams(unknownChoiceMessage("mode", req.mode, choices().modes)));
    return [] {};
  }
  if (!parseEmit(req.emit)) {
    cb(invalidParams(
        unknownChoiceMessage("emit kind", req.emit, choices().emits)));
    return [] {};
  }
  CompileJob job;
  job.self = options.self;
  job.text = *doc->text;
  job.name = sys::path::filename(doc->path).str();
  job.function = req.function;
  job.emit = req.emit;
  job.mode = req.mode;
  Config config = configFor(doc->path);
  job.source = doc->path;
  job.outputDir = config.compile.outputDir;
  job.outputDirRoot = config.compile.outputDirRoot;
  job.overwrite = config.compile.overwrite;
  job.timeoutSeconds = config.compile.timeoutSeconds;
  job.memoryLimitMB = config.compile.memoryLimitMB;

  auto cancel = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard<std::mutex> lock(compilesMu);
    *cancel = compilesStopped;
    compiles.insert(cancel);
  }
  std::string title =
      "Compiling " + (job.function.empty() ? job.name : "@" + job.function);
  auto work = [this, job, progress, cb = std::move(cb), cancel,
               title](unsigned) mutable {
    progress({CompileProgress::Begin, title});
    CompileJobResult r = runCompileJob(
        job,
        [&](const std::string &step) {
          progress({CompileProgress::Report, step});
        },
        *cancel);
    progress({CompileProgress::End, r.ok ? "done" : r.error});
    {
      std::lock_guard<std::mutex> lock(compilesMu);
      compiles.erase(cancel);
    }
    if (r.ok)
      cb(std::move(r.result));
    else
      cb(make_error<LSPError>(r.error, r.cancelled ? ErrorCode::RequestCancelled
                                                   : ErrorCode::RequestFailed));
  };
  if (compilePool)
    compilePool->run(std::move(work));
  else
    work(0);
  return [cancel] { *cancel = true; };
}

void TosaServer::cancelCompiles() {
  std::lock_guard<std::mutex> lock(compilesMu);
  compilesStopped = true;
  for (const auto &cancel : compiles)
    *cancel = true;
}

bool TosaServer::waitCompilesIdle(std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(compilesMu);
      if (compiles.empty())
        return true;
    }
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

std::shared_ptr<void> TosaServer::lendWarmInferrerForTest() {
  return std::make_shared<WarmLoan>(*this, /*wait=*/true);
}

TosaServer::Stats TosaServer::stats() const {
  Stats s;
  s.fixValidations = validationCount;
  s.requestInferences = requestInferenceCount;
  s.inferencesCancelled = inferencesCancelledCount;
  s.slotsDropped = slotsDroppedCount;
  s.warmInferrersMade = warmInferrersMadeCount;
  s.requestInferrersMade = requestInferrersMadeCount;
  s.fillInferrersMade = fillInferrersMadeCount;
  s.fillBorrows = fillBorrowsCount;
  s.backgroundPauses = backgroundPausesCount;
  {
    std::lock_guard<std::mutex> lock(shapesMu);
    for (const auto &[uri, doc] : shapes)
      s.functionsKnown += doc->cache.size();
  }
  s.configLoads = projectConfigs.loads();
  s.scheduler = scheduler->stats();
  return s;
}

void TosaServer::waitIdle() {
  scheduler->waitIdle();
  if (fillPool)
    fillPool->waitIdle();
  if (pool)
    pool->waitIdle();
  if (compilePool)
    compilePool->waitIdle();
}

} // namespace tosa_lsp
