//===- Scheduler.cpp - analysis off the main loop -------------------------===//

#include "Scheduler.h"

#include "Allocator.h"
#include "Timing.h"

#include <optional>

namespace tosa_lsp {

/// Below this (~50k lines), a replaced version is freed before the new
/// one's publish (see analyze).
static constexpr size_t kFreeBeforePublishBytes = 4 << 20;
/// The biggest text whose analysis keeps the pages it frees (analyze).
static constexpr size_t kKeepPagesBytes = 8 << 20;
/// How long the worker is idle before the analyzer gives back its memory.
static constexpr std::chrono::milliseconds kIdleReleaseDelay{150};

Scheduler::Scheduler(bool sync, std::chrono::milliseconds debounce,
                     Ready onReady, InferShapes inferShapes)
    : sync(sync), debounce(debounce), onReady(std::move(onReady)),
      infer(std::move(inferShapes)), analyzer(std::make_unique<Analyzer>()) {
  // Before the worker reads it.
  analyzer->setInferShapes(infer.enabled, infer.afterPublish);
  if (!sync)
    worker = std::make_unique<llvm::thread>([this] { run(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_all();
  if (worker)
    worker->join();
}

std::shared_ptr<OpenDocument> Scheduler::open(const std::string &uri,
                                              const std::string &path,
                                              int64_t version,
                                              std::string text) {
  // Opened again without a close (a protocol error): versions may repeat,
  // and nothing derived from the old text may answer for the new one.
  if (document(uri))
    remove(uri);
  auto doc =
      std::make_shared<OpenDocument>(uri, path, version, std::move(text));
  auto entry = std::make_shared<Doc>();
  entry->doc = doc;
  std::lock_guard<std::mutex> lock(mu);
  docs[uri] = std::move(entry);
  return doc;
}

void Scheduler::update(const std::string &uri, const std::string &path,
                       int64_t version, std::string text, Config config) {
  std::shared_ptr<OpenDocument> doc = document(uri);
  if (doc)
    doc->replace(version, std::move(text));
  else
    doc = open(uri, path, version, std::move(text));
  update(doc, std::move(config));
}

void Scheduler::update(const std::shared_ptr<OpenDocument> &opened,
                       Config config) {
  OpenDocument::Version latestText = opened->current();
  std::unique_lock<std::mutex> lock(mu);
  auto it = docs.find(opened->uri);
  if (it == docs.end() || it->second->doc != opened || !latestText.text)
    return; // closed meanwhile
  std::shared_ptr<Doc> doc = it->second;
  doc->text = std::move(latestText.text);
  doc->version = latestText.version;
  doc->config = std::move(config);
  // Leading edge: an open, or an edit while no version of the document
  // waits for analysis (the last one is published or being analysed), is
  // analysed at once; edits that arrive while one waits coalesce,
  // `debounce` after the last. Debouncing every edit within `debounce` of
  // the one before delayed each of a user's edit-then-look steps on a
  // small file by up to 50 ms once its analysis took less than that.
  bool waiting = doc->dirty;
  doc->dirty = true;
  auto now = std::chrono::steady_clock::now();
  doc->deadline =
      !waiting || now - doc->lastUpdate >= debounce ? now : now + debounce;
  doc->lastUpdate = now;
  if (sync) {
    analyze(opened->uri, doc, lock);
    return;
  }
  cv.notify_all();
}

void Scheduler::remove(const std::string &uri) {
  std::vector<std::function<void(SnapshotPtr)>> waiters;
  bool lastClosed = false;
  unsigned releases = 0;
  SnapshotPtr latest; // freed here, outside the lock
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = docs.find(uri);
    if (it == docs.end())
      return;
    for (auto &w : it->second->currentWaiters)
      waiters.push_back(std::move(w.second));
    it->second->doc->close();
    latest = it->second->doc->takeLatest();
    docs.erase(it);
    lastClosed = docs.empty();
    releaseAnalyzerMemory = lastClosed && !sync;
    if (lastClosed && sync)
      ++counters.memoryReleases;
    releases = counters.memoryReleases;
  }
  latest.reset();
  if (lastClosed && sync)
    analyzer->releaseMemory(); // analyses run right here
  else if (lastClosed)
    cv.notify_all();
  // Requests still waiting for a snapshot get an answer: none.
  for (auto &w : waiters)
    w(nullptr);
  if (lastClosed && !sync) {
    // Collect once the worker has released its Analyzer's memory, and
    // here (the snapshots were freed on this thread). Bounded: a close
    // never waits long for an analysis still running.
    std::unique_lock<std::mutex> lock(mu);
    idle.wait_for(lock, std::chrono::seconds(1), [&] {
      return stopping || !docs.empty() || counters.memoryReleases > releases;
    });
  }
  releaseAllFreeMemory();
}

std::shared_ptr<OpenDocument>
Scheduler::document(const std::string &uri) const {
  std::lock_guard<std::mutex> lock(mu);
  auto it = docs.find(uri);
  return it == docs.end() ? nullptr : it->second->doc;
}

std::vector<std::shared_ptr<OpenDocument>> Scheduler::documents() const {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::shared_ptr<OpenDocument>> out;
  for (const auto &[uri, doc] : docs)
    out.push_back(doc->doc);
  return out;
}

size_t Scheduler::size() const {
  std::lock_guard<std::mutex> lock(mu);
  return docs.size();
}

Scheduler::SnapshotPtr Scheduler::latest(const std::string &uri) const {
  std::lock_guard<std::mutex> lock(mu);
  auto it = docs.find(uri);
  return it == docs.end() ? nullptr : it->second->doc->latest();
}

bool Scheduler::withCurrentSnapshot(const std::string &uri,
                                    std::function<void(SnapshotPtr)> fn) {
  std::unique_lock<std::mutex> lock(mu);
  auto it = docs.find(uri);
  if (it == docs.end())
    return false;
  SnapshotPtr s = it->second->doc->latest();
  if (s && s->version >= it->second->version) {
    lock.unlock();
    fn(std::move(s));
    return true;
  }
  it->second->currentWaiters.push_back({it->second->version, std::move(fn)});
  return true;
}

bool Scheduler::anyDirty() const {
  return llvm::any_of(docs, [](const auto &d) { return d.second->dirty; });
}

void Scheduler::waitIdle() {
  {
    std::unique_lock<std::mutex> lock(mu);
    idle.wait(lock, [&] { return !busy && !anyDirty(); });
  }
  reclaimer.wait();
}

Scheduler::Stats Scheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu);
  return counters;
}

void Scheduler::analyze(const std::string &uri, std::shared_ptr<Doc> doc,
                        std::unique_lock<std::mutex> &lock) {
  SharedString text = doc->text;
  std::string path = doc->doc->path;
  int64_t version = doc->version;
  Config config = doc->config;
  doc->dirty = false;
  busy = true;
  lock.unlock();

  timingMark("analysis start");
  // The analysis and the kept IR's inference keep the pages they free for
  // what they allocate next; the analyzer's threads give them back when
  // the worker is next idle (releaseIdleMemory). Given back page by page,
  // each madvise was a TLB shootdown on every core and each reuse a fault
  // (50k lines: the session's CPU -13 to -23 %, its peak +1 to +5 MiB).
  // Not for a big text, whose peak it raised most (200k lines: +15-19 MiB).
  std::optional<KeepFreePages> burst;
  if (text->size() <= kKeepPagesBytes)
    burst.emplace();
  std::function<void()> clean;
  if (verifiedClean)
    clean = [&] { verifiedClean(doc->doc, version, config); };
  std::shared_ptr<const FileAnalysis> fa =
      analyzer->analyzeShared(text, path, config, doc->cache, std::move(clean));
  unsigned reused = 0;
  for (const Section &s : fa->sections)
    reused += s.reused;
  auto snap = std::make_shared<const Snapshot>(
      uri, path, version, std::move(text), std::move(config), std::move(fa),
      analyzer->takeInferred(), analyzer->hasKeptIR());

  lock.lock();
  busy = false;
  ++counters.analyses;
  counters.sectionsReused += reused;
  auto it = docs.find(uri);
  bool current = it != docs.end() && it->second == doc;
  std::vector<std::function<void(SnapshotPtr)>> waiters;
  bool newest = false;
  // The snapshot this one replaces is freed after the publish, outside the
  // lock: a 200k-line analysis takes ~100 ms to free.
  SnapshotPtr replaced;
  if (current) {
    replaced = doc->doc->setLatest(snap);
    // Those waiting for this version (or an older one) are answered.
    auto &cw = doc->currentWaiters;
    for (auto w = cw.begin(); w != cw.end();)
      if (w->first <= version) {
        waiters.push_back(std::move(w->second));
        w = cw.erase(w);
      } else {
        ++w;
      }
    // A newer edit is already waiting: don't publish results for text the
    // user no longer sees.
    newest = !doc->dirty;
  }
  lock.unlock();
  // Once what the new version replaced is freed, the Analyzer gives back
  // what it no longer needs (run()).
  auto freed = [this] {
    std::lock_guard<std::mutex> lock(mu);
    idleMemoryToRelease = true;
    cv.notify_all();
  };
  bool handedOver = false;
  auto handOver = [&] {
    // Only this thread starts the reclaimer's tasks: idle now, it takes
    // this one.
    if (replaced && !sync && reclaimer.idle())
      handedOver =
          reclaimer.start([old = std::move(replaced), freed]() mutable {
            old.reset();
            noteFreedForOthers();
            freed();
          });
  };
  // A small version goes before the publish: the notification's text (~250
  // bytes a diagnostic, 0.5 MB at 10k lines) was built while both versions
  // lived, a 10k-line session's peak. A big one after: freeing it (~100 ms
  // at 200k lines) beside the publish made a many-function edit's
  // diagnostics ~5 ms later.
  bool early = replaced && replaced->text.size() < kFreeBeforePublishBytes;
  if (early)
    handOver();
  // Before the publish: a request it prompts finds the functions the kept
  // IR will infer, and waits for them rather than parsing them again.
  if (snap->inferenceFollows && newest && infer.started)
    infer.started(*doc->doc, *snap, analyzer->keptFunctions());
  if (newest && onReady) {
    timingMark("publish start");
    PhaseTimer t("publish");
    onReady(snap);
    timingMark("published");
  }
  for (auto &w : waiters)
    w(snap);
  if (!early)
    handOver();
  // Not handed over (sync mode, the reclaimer busy): freed here, after the
  // publish.
  replaced.reset();
  if (!sync && !handedOver)
    freed();
  if (newest) {
    // Read from the whole text by a version's first request (0.7 ms at
    // 50k lines, which a first hover paid), now that it was published.
    PhaseTimer t("aliases scanned");
    (void)snap->aliases();
  }
  if (snap->inferenceFollows)
    inferKept(doc, snap, newest);
  lock.lock();
  idle.notify_all();
}

void Scheduler::inferKept(const std::shared_ptr<Doc> &doc,
                          const SnapshotPtr &snap, bool published) {
  // On the analysis' threads, while its IR lives: no parse of its own.
  // A version sent meanwhile goes first (the rest is inferred later, by
  // the background on parses of its own).
  auto edited = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return stopping || doc->dirty;
  };
  {
    std::lock_guard<std::mutex> lock(mu);
    busy = true;
  }
  auto stop = [&] { return !published || !infer.inferred || edited(); };
  auto deliver = [&](Analyzer::FunctionPlace place,
                     std::shared_ptr<const ShapeInference> si) {
    infer.inferred(doc->doc, snap, place, std::move(si));
  };
  auto wanted = [&] {
    return infer.wanted ? infer.wanted(*doc->doc)
                        : SchedulerInference::Places();
  };
  auto wantedLines = [&](Analyzer::FunctionPlace place) {
    return infer.wantedLines(*doc->doc, place);
  };
  auto early = [&](Analyzer::FunctionPlace place,
                   std::shared_ptr<const ShapeInference> si) {
    infer.early(*doc->doc, place, std::move(si));
  };
  Analyzer::KeptHooks hooks{stop, deliver};
  hooks.wanted = wanted;
  if (infer.asked)
    hooks.asked = infer.asked(*doc->doc);
  if (infer.wantedLines && infer.early) {
    hooks.wantedLines = wantedLines;
    hooks.deliverEarly = early;
  }
  analyzer->inferKept(hooks);
  if (infer.ended)
    infer.ended(*doc->doc);
  {
    std::lock_guard<std::mutex> lock(mu);
    busy = false;
  }
  if (published && infer.done && !edited())
    infer.done(doc->doc, snap);
}

void Scheduler::run() {
  // Before the first document arrives (or while its message is read): the
  // dialects loaded, the parser's code faulted in.
  analyzer->warmUp();
  std::unique_lock<std::mutex> lock(mu);
  while (!stopping) {
    // The dirty document whose debounce expired first.
    std::string uri;
    std::shared_ptr<Doc> doc;
    auto soonest = std::chrono::steady_clock::time_point::max();
    for (auto &[u, d] : docs)
      if (d->dirty && d->deadline < soonest) {
        soonest = d->deadline;
        uri = u;
        doc = d;
      }
    if (!doc && releaseAnalyzerMemory) {
      releaseAnalyzerMemory = false;
      lock.unlock();
      reclaimer.wait(); // the last replaced snapshot is freed first
      {
        GiveBackFreePages now;     // for what both free
        analyzer->releaseMemory(); // only this thread uses it
        releaseAllFreeMemory();
      }
      lock.lock();
      // The helper thread has ended and its heap gone back: a release
      // still pending would only start a new one.
      idleMemoryToRelease = false;
      ++counters.memoryReleases;
      idle.notify_all();
      continue;
    }
    if (!doc && idleMemoryToRelease) {
      // The free pages of the helper thread (a big section's parts;
      // idle during one-function edits, it never collected what the
      // reclaimer freed in its heap) and, past a bound, what the contexts
      // uniqued (~25-35 MiB after a 200k-line open; see
      // releaseIdleMemory): 200k lines, session peak 444 -> 421 MiB (one
      // function), 412 -> 379 (many). Between analyses, once the
      // reclaimer has freed the replaced version. Not at once: the
      // requests a publish prompts come now, and giving back the pages an
      // analysis kept (analyze) is a burst of TLB shootdowns that made the
      // first hover after a 50k-line open ~1 ms later; an edit meanwhile
      // reuses them.
      idle.notify_all();
      if (cv.wait_for(lock, kIdleReleaseDelay, [&] {
            return stopping || releaseAnalyzerMemory || anyDirty();
          }))
        continue;
      idleMemoryToRelease = false;
      lock.unlock();
      analyzer->releaseIdleMemory();
      collectWhatOthersFreed(); // this thread's snapshot parts
      lock.lock();
      ++counters.idleReleases;
      continue;
    }
    if (!doc) {
      idle.notify_all();
      cv.wait(lock);
      continue;
    }
    if (soonest > std::chrono::steady_clock::now()) {
      cv.wait_until(lock, soonest);
      continue;
    }
    analyze(uri, doc, lock);
  }
}

} // namespace tosa_lsp
