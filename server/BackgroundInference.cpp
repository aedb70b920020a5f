//===- BackgroundInference.cpp - shape inference off the requests' path ---===//

#include "BackgroundInference.h"

#include "Allocator.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Threading.h"

#if defined(__linux__)
#include <sys/resource.h>
#endif
#include <thread>

using namespace llvm;

namespace tosa_lsp {

namespace {
/// Functions up to this many lines are inferred in the background, all of
/// them, from the focus outwards (fill): a hover or inlay request anywhere
/// then finds them known, and the shape errors they contain are published.
/// Longer ones only when a request asks: a 10^5-line function's inference
/// holds a second parse of it for seconds.
constexpr unsigned kShapeCheckLines = 2000;
/// Up to this many functions left to infer, the fill borrows the warm
/// inferrer instead of making a context (an edit's re-inference).
constexpr size_t kBorrowWarmFunctions = 4;
/// How long a request waits for the warm inferrer the fill borrowed before
/// it infers on a context of its own (dropped after).
constexpr std::chrono::milliseconds kWaitForLentWarm{20};
/// A big function's inference, asked for by a hover, starts this long
/// after the request unless the document changed meanwhile: right after an
/// open come edits as often as reading, and an inference started then held
/// a second parse of the function beside the edit's analysis (200k-line
/// function: peak 871 -> 644 MiB with the cancel alone).
constexpr std::chrono::milliseconds kBackgroundInferenceDelay{300};
/// Threads of the fill: both cores when both are idle (200k lines, many
/// functions: every function known ~1 s sooner).
constexpr unsigned kFillThreads = 2;
constexpr size_t kFillFunctionsPerThread = 64;
/// How long a request waits for the kept IR's inference of its function
/// before it infers it on a parse of its own.
constexpr std::chrono::milliseconds kWaitForKept{50};
/// The fill's second thread waits until no request came for this long.
constexpr std::chrono::milliseconds kRequestQuiet{100};

/// The fill's priority: the lowest ordinary one (nice 19), not SCHED_IDLE.
/// A core running only SCHED_IDLE work counts as idle when a thread wakes,
/// so the message loop woke there and, under lazy preemption (Linux 6.13+,
/// this host's 6.18), waited for the next tick: hovers answered from
/// memory took ~4 ms instead of ~0.1 while the background ran (50k lines,
/// many functions: 1-16 of 600). At nice 19 it wakes on the other core.
void lowerPriority() {
#if defined(__linux__)
  // On Linux the nice value is the calling thread's.
  if (setpriority(PRIO_PROCESS, 0, 19) == 0)
    return;
#endif
  (void)llvm::set_thread_priority(llvm::ThreadPriority::Background);
}
} // namespace

/// warmMu held for the fill, with warmLent set, while it lives (on the
/// thread that made it).
class BackgroundInference::WarmLoan {
public:
  /// Waits for warmMu, or only tries (held() says whether it has it).
  WarmLoan(BackgroundInference &bg, bool wait)
      : bg(bg), lock(bg.warmMu, std::defer_lock) {
    if (wait)
      lock.lock();
    else
      (void)lock.try_lock();
    if (lock.owns_lock())
      bg.warmLent = true;
  }
  ~WarmLoan() {
    if (lock.owns_lock())
      bg.warmLent = false;
  }
  WarmLoan(const WarmLoan &) = delete;
  WarmLoan &operator=(const WarmLoan &) = delete;
  bool held() const { return lock.owns_lock(); }

private:
  BackgroundInference &bg;
  std::unique_lock<std::timed_mutex> lock;
};

BackgroundInference::BackgroundInference(Options opts, WorkerPool *pool,
                                         unsigned slots, Republish republish)
    : options(opts), pool(pool), republish(std::move(republish)) {
  if (!options.sync)
    fillPool =
        std::make_unique<WorkerPool>("tosa-shapes", kFillThreads, 256u << 20);
  inferrers.resize(slots);
  fillInferrers.resize(fillPool ? fillPool->size() : 1);
}

BackgroundInference::~BackgroundInference() { joinThreads(); }

void BackgroundInference::stop() { stopping = true; }

void BackgroundInference::joinThreads() { fillPool.reset(); }

//===----------------------------------------------------------------------===//
// Publishing
//===----------------------------------------------------------------------===//

std::shared_ptr<const std::vector<FunctionKey>>
BackgroundInference::keysOf(OpenDocument &doc, const Snapshot &s) {
  DocumentShapes &shapes = doc.shapes;
  {
    std::lock_guard<std::mutex> lock(shapes.mu);
    if (shapes.keysVersion == s.version && shapes.keys)
      return shapes.keys;
  }
  auto keys = std::make_shared<const std::vector<FunctionKey>>(
      functionKeys(s.text, s.lines.index(), s.analysis));
  std::lock_guard<std::mutex> lock(shapes.mu);
  if (s.version >= shapes.keysVersion) {
    shapes.keysVersion = s.version;
    shapes.keys = keys;
  }
  return keys;
}

std::vector<Diagnostic> BackgroundInference::knownErrors(OpenDocument &doc,
                                                         const Snapshot &s,
                                                         bool retain) {
  std::shared_ptr<const std::vector<FunctionKey>> keys = keysOf(doc, s);
  // What the functions this version no longer has inferred is not read
  // again.
  if (retain)
    doc.shapes.cache.retain(*keys);
  if (!s.config.shapeChecks)
    return {};
  return doc.shapes.cache.shapeErrors(*keys, nullptr);
}

bool BackgroundInference::store(OpenDocument &doc, const Snapshot &s,
                                const ShapeInference &inferred) {
  if (inferred.functions.empty())
    return false;
  PhaseTimer timer("what the analysis inferred, by key");
  std::shared_ptr<const std::vector<FunctionKey>> keys = keysOf(doc, s);
  // The keys of the functions inferred (both lists in text order): the
  // others stay unknown (store would record them as not inferred).
  const FunctionList &fns = inferred.functions;
  auto place = [](unsigned section, unsigned line) {
    return std::make_pair(section, line);
  };
  std::vector<FunctionKey> known;
  size_t i = 0;
  for (const FunctionKey &k : *keys) {
    while (i < fns.size() && place(fns[i].section, fns[i].scope.begin.line) <
                                 place(k.section, k.firstLine))
      ++i;
    if (i < fns.size() && place(fns[i].section, fns[i].scope.begin.line) ==
                              place(k.section, k.firstLine))
      known.push_back(k);
  }
  return doc.shapes.cache.store(known, inferred);
}

void BackgroundInference::storeInferred(OpenDocument &doc, const Snapshot &s) {
  if (s.inferred)
    (void)store(doc, s, *s.inferred);
}

void BackgroundInference::storeInferredAfterPublish(
    OpenDocument &doc, const Snapshot &s, const ShapeInference &inferred) {
  if (!store(doc, s, inferred) || !s.config.shapeChecks)
    return;
  // Published by the fill's round that follows (endFillRound).
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  doc.shapes.requestFoundErrors = s.version;
}

void BackgroundInference::inferredAfterPublish(
    const std::shared_ptr<OpenDocument> &doc, const SnapshotPtr &s) {
  if (options.enabled) {
    startFill(doc);
    return;
  }
  bool gained;
  {
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    gained = doc->shapes.requestFoundErrors == s->version;
    doc->shapes.requestFoundErrors = -1;
  }
  if (gained)
    republish(doc, s);
}

void BackgroundInference::published(const std::shared_ptr<OpenDocument> &doc,
                                    SnapshotPtr s, bool fill) {
  // The keys are hashed once per version; the fill reads them too.
  warmRequestInferrer(*keysOf(*doc, *s));
  {
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    doc->shapes.published = s;
  }
  if (fill)
    startFill(doc);
}

void BackgroundInference::changed(OpenDocument &doc) {
  // A long function's inference is not kept for the next version: for a
  // function of 10^5 lines it is ~250 MiB that would otherwise live
  // through the re-analysis (an edit in it changes its key anyway). Small
  // ones are kept: what the edit did not change is not inferred again.
  doc.shapes.cache.dropInferenceOver(kWaitLines);
}

void BackgroundInference::warmRequestInferrer(
    const std::vector<FunctionKey> &keys) {
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

void BackgroundInference::countWarmLines(size_t lines) {
  warmLines += lines;
  if (warmLines <= options.renewWarmInferrerLines)
    return;
  warmInferrer.reset();
  warmLines = 0;
  warmQueued = false;
}

//===----------------------------------------------------------------------===//
// The fill
//===----------------------------------------------------------------------===//

void BackgroundInference::startFill(const std::shared_ptr<OpenDocument> &doc) {
  if (!options.enabled)
    return;
  unsigned threads = fillPool ? fillPool->size() : 1;
  {
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    if (doc->shapes.filling) {
      doc->shapes.fillAgain = true;
      return;
    }
    // A second thread (a context of its own) only for many functions: an
    // edit changes one or two, a small file has a few dozen.
    if (doc->shapes.keys && doc->shapes.keys->size() < kFillFunctionsPerThread)
      threads = 1;
    doc->shapes.filling = threads;
  }
  for (unsigned i = 0; i < threads; ++i) {
    auto task = [this, doc, second = i > 0](unsigned worker) {
      fill(doc, worker, second);
    };
    if (fillPool)
      fillPool->run(std::move(task));
    else
      task(0);
  }
}

std::optional<FunctionKey> BackgroundInference::nextToFill(OpenDocument &doc,
                                                           const Snapshot &s,
                                                           size_t &left) {
  std::shared_ptr<const std::vector<FunctionKey>> keys = keysOf(doc, s);
  std::vector<FunctionKey> small;
  for (const FunctionKey &k : *keys)
    if (k.lines() <= kShapeCheckLines)
      small.push_back(k);
  // Not lookup: it would place (and shift) every known function.
  std::vector<FunctionKey> missing = doc.shapes.cache.unknown(small);
  left = missing.size();
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  unsigned focus = doc.shapes.focus;
  auto distance = [&](const FunctionKey &k) {
    return focus < k.firstLine  ? k.firstLine - focus
           : focus > k.lastLine ? focus - k.lastLine
                                : 0u;
  };
  std::optional<FunctionKey> next;
  for (const FunctionKey &k : missing)
    if (!doc.shapes.inflight.count(k.hash) &&
        (!next || distance(k) < distance(*next)))
      next = k;
  if (next) // The other fill threads take another one.
    doc.shapes.inflight.insert(next->hash);
  return next;
}

bool BackgroundInference::endFillRound(const std::shared_ptr<OpenDocument> &doc,
                                       SnapshotPtr s, SnapshotPtr gained) {
  bool again;
  {
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    // What a request's inference found while this round ran is published
    // with what the round found.
    if (s && doc->shapes.requestFoundErrors == s->version)
      gained = s;
    doc->shapes.requestFoundErrors = -1;
    again = doc->shapes.fillAgain;
    doc->shapes.fillAgain = false;
    if (!again)
      --doc->shapes.filling;
  }
  if (gained && s && gained->version == s->version)
    republish(doc, std::move(gained));
  return again;
}

void BackgroundInference::fill(const std::shared_ptr<OpenDocument> &doc,
                               unsigned worker, bool yieldToRequests) {
  PhaseTimer timer("background inference, one thread, until none is left");
  // `options.sync`, not `fillPool`: joinThreads() clears that pointer
  // before the pool's destructor joins this thread (a race ThreadSanitizer
  // found; scripts/tsan.sh).
  if (!options.sync) // Only what no analysis or request needs.
    lowerPriority();
  std::unique_ptr<ShapeInferrer> &inferrer = fillInferrers[worker];
  // The version whose functions gained shape errors: published again once
  // its functions are all known (one publish, not one per function).
  SnapshotPtr gained;
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
    SnapshotPtr s;
    {
      std::lock_guard<std::mutex> lock(doc->shapes.mu);
      s = doc->shapes.published.lock();
    }
    // A newer version is on its way: its publish restarts this.
    if (s && (stopping || !doc->isAt(s->version) ||
              doc->publishedVersion != s->version))
      s.reset();
    size_t left = 0;
    std::optional<FunctionKey> next =
        s ? nextToFill(*doc, *s, left) : std::nullopt;
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
      auto edited = [&] { return stopping || !doc->isAt(s->version); };
      ShapeInference fresh = use->infer(s->text, s->lines.index(), s->analysis,
                                        next->firstLine, next->lastLine, edited,
                                        /*withRefineEdits=*/false);
      if (loan) {
        countWarmLines(next->lines());
        loan.reset();
      }
      if (!fresh.cancelled && doc->shapes.cache.store({*next}, fresh) &&
          s->config.shapeChecks)
        gained = s;
      {
        std::lock_guard<std::mutex> lock(doc->shapes.mu);
        doc->shapes.inflight.erase(next->hash);
      }
      if (!fresh.cancelled)
        continue;
    }
    if (endFillRound(doc, s, std::move(gained))) {
      gained.reset();
      continue;
    }
    // Done until the next version: the context goes (every location and
    // type it uniqued), and the thread's free pages with it.
    inferrer.reset();
    if (!options.sync)
      releaseAllFreeMemory();
    return;
  }
}

//===----------------------------------------------------------------------===//
// Requests
//===----------------------------------------------------------------------===//

void BackgroundInference::noteRequest() {
  lastRequest = std::chrono::steady_clock::now().time_since_epoch().count();
}

void BackgroundInference::keptStarted(
    OpenDocument &doc, const Snapshot &s,
    std::vector<std::pair<unsigned, unsigned>> places) {
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  doc.shapes.keptVersion = s.version;
  doc.shapes.keptPending = {places.begin(), places.end()};
  doc.shapes.keptWanted.clear();
  doc.shapes.keptWantedLines.clear();
  doc.shapes.keptEarly.clear();
}

void BackgroundInference::keptEnded(OpenDocument &doc) {
  {
    std::lock_guard<std::mutex> lock(doc.shapes.mu);
    doc.shapes.keptVersion = -1;
    doc.shapes.keptPending.clear();
    doc.shapes.keptWanted.clear();
    doc.shapes.keptWantedLines.clear();
    doc.shapes.keptEarly.clear();
  }
  doc.shapes.keptCv.notify_all();
}

void BackgroundInference::keptDone(OpenDocument &doc,
                                   std::pair<unsigned, unsigned> place) {
  {
    std::lock_guard<std::mutex> lock(doc.shapes.mu);
    doc.shapes.keptPending.erase(place);
    doc.shapes.keptEarly.erase(place); // the whole function is in the cache
  }
  doc.shapes.keptCv.notify_all();
}

std::vector<std::pair<unsigned, unsigned>>
BackgroundInference::keptWanted(OpenDocument &doc) {
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  return doc.shapes.keptWanted;
}

std::vector<unsigned>
BackgroundInference::keptWantedLines(OpenDocument &doc,
                                     std::pair<unsigned, unsigned> place) {
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  std::vector<unsigned> lines;
  for (const auto &[p, line] : doc.shapes.keptWantedLines)
    if (p == place)
      lines.push_back(line);
  return lines;
}

void BackgroundInference::keptEarly(OpenDocument &doc,
                                    std::pair<unsigned, unsigned> place,
                                    std::shared_ptr<const ShapeInference> si) {
  {
    std::lock_guard<std::mutex> lock(doc.shapes.mu);
    if (doc.shapes.keptVersion < 0 || !doc.shapes.keptPending.count(place))
      return;
    doc.shapes.keptEarly[place] = std::move(si);
  }
  doc.shapes.keptCv.notify_all();
}

std::shared_ptr<const ShapeInference>
BackgroundInference::waitForKept(OpenDocument &doc, const Snapshot &s,
                                 llvm::ArrayRef<FunctionKey> missing,
                                 std::optional<unsigned> line) {
  std::unique_lock<std::mutex> lock(doc.shapes.mu);
  DocumentShapes &shapes = doc.shapes;
  auto pending = [&](const std::pair<unsigned, unsigned> &place) {
    return shapes.keptVersion == s.version && shapes.keptPending.count(place);
  };
  // Its ops on `line` came before the rest of it (and there are some: a
  // line without one waits for the function).
  auto early = [&](const std::pair<unsigned, unsigned> &place)
      -> const ShapeInference * {
    auto it = shapes.keptEarly.find(place);
    if (!line || it == shapes.keptEarly.end() ||
        it->second->opsOnLines(*line, *line).empty())
      return nullptr;
    return it->second.get();
  };
  std::vector<std::pair<unsigned, unsigned>> asked;
  for (const FunctionKey &k : missing)
    if (pending({k.section, k.firstLine}))
      asked.push_back({k.section, k.firstLine});
  if (asked.empty())
    return nullptr;
  if (line)
    for (const auto &place : asked)
      shapes.keptWantedLines.push_back({place, *line});
  // All asked at once (an inlay request's screen holds several): the
  // analysis thread takes them next, a function's inference each (~1 ms),
  // not the ~2 ms of a parse of its own beside it. Bounded: a thread the
  // machine holds off is not waited for long; what is still missing is
  // then parsed as before.
  shapes.keptWanted.insert(shapes.keptWanted.end(), asked.begin(), asked.end());
  ++shapes.keptAsked;
  (void)shapes.keptCv.wait_for(lock, kWaitForKept, [&] {
    return llvm::all_of(asked, [&](const auto &place) {
      return !pending(place) || early(place);
    });
  });
  auto out = std::make_shared<ShapeInference>();
  for (const auto &place : asked) {
    if (auto it = llvm::find(shapes.keptWanted, place);
        it != shapes.keptWanted.end())
      shapes.keptWanted.erase(it);
    if (line)
      if (auto it =
              llvm::find(shapes.keptWantedLines, std::make_pair(place, *line));
          it != shapes.keptWantedLines.end())
        shapes.keptWantedLines.erase(it);
    if (pending(place))
      if (const ShapeInference *e = early(place))
        for (size_t i = 0; i < e->functions.size(); ++i)
          out->functions.push_back(e->functions.shared(i));
  }
  return out->functions.empty() ? nullptr : out;
}

bool BackgroundInference::requestedWithin(std::chrono::milliseconds d) const {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  return now - std::chrono::steady_clock::duration(lastRequest.load()) < d;
}

void BackgroundInference::focusOn(OpenDocument &doc, unsigned line) {
  std::lock_guard<std::mutex> lock(doc.shapes.mu);
  doc.shapes.focus = line;
}

std::optional<bool> BackgroundInference::inferOnRequestInferrer(
    OpenDocument &doc, const SnapshotPtr &s, unsigned worker,
    ArrayRef<FunctionKey> fns, bool stopWhenEdited, bool refineEdits) {
  bool big = llvm::any_of(
      fns, [](const FunctionKey &k) { return k.lines() > kWaitLines; });
  std::unique_lock<std::timed_mutex> warmLock(warmMu, std::defer_lock);
  // Another request's inference is waited for; the fill's (an edit's
  // function on the borrowed inferrer, ~1-5 ms) only for a while: a
  // nice-19 thread that an analysis on both cores may hold off.
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
  auto edited = [&] { return stopping || !doc.isAt(s->version); };
  bool gained = false, cancelled = false;
  // One function at a time: each is parsed alone either way.
  for (const FunctionKey &k : fns) {
    ShapeInference fresh = inferrer->infer(
        s->text, s->lines.index(), s->analysis, k.firstLine, k.lastLine,
        stopWhenEdited ? llvm::function_ref<bool()>(edited) : nullptr,
        refineEdits);
    if ((cancelled = fresh.cancelled))
      break;
    // What a request inferred also counts for the shape checks
    // (functions too long for the fill, among others).
    gained |= doc.shapes.cache.store({k}, fresh);
  }
  {
    std::lock_guard<std::mutex> lock(doc.shapes.mu);
    for (const FunctionKey &m : fns)
      doc.shapes.inflight.erase(m.hash);
  }
  if (cancelled) {
    ++inferencesCancelledCount;
    return std::nullopt;
  }
  // After a long function the context holds a location per op, and the
  // thread the pages of its parse: both go (10k-line function: ~5 MiB).
  if (transient) {
    inferrer.reset();
    if (pool)
      releaseFreeMemory();
  }
  if (warmLock.owns_lock()) {
    countWarmLines(linesOf(fns));
    warmLock.unlock();
  }
  return gained;
}

/// `known` with what came early of the `missing` functions, in text order;
/// null unless each of them came.
static std::shared_ptr<const ShapeInference>
withEarly(const ShapeInference &known, const ShapeInference &early,
          ArrayRef<FunctionKey> missing) {
  std::vector<FunctionList::Shared> all;
  for (size_t i = 0; i < known.functions.size(); ++i)
    all.push_back(known.functions.shared(i));
  for (const FunctionKey &k : missing) {
    size_t i = 0;
    while (i < early.functions.size() &&
           (early.functions[i].section != k.section ||
            early.functions[i].scope.begin.line != k.firstLine))
      ++i;
    if (i == early.functions.size())
      return nullptr;
    all.push_back(early.functions.shared(i));
  }
  llvm::sort(all, [](const auto &a, const auto &b) {
    return std::make_tuple(a->section, a->scope.begin.line,
                           a->scope.begin.column) <
           std::make_tuple(b->section, b->scope.begin.line,
                           b->scope.begin.column);
  });
  auto out = std::make_shared<ShapeInference>();
  for (FunctionList::Shared &f : all)
    out->functions.push_back(std::move(f));
  return out;
}

std::shared_ptr<const ShapeInference>
BackgroundInference::infer(const std::shared_ptr<OpenDocument> &doc,
                           const SnapshotPtr &s, unsigned worker,
                           unsigned first, unsigned last, bool refineEdits,
                           bool oneLine) {
  std::shared_ptr<const std::vector<FunctionKey>> all = keysOf(*doc, *s);
  ArrayRef<FunctionKey> keys = keysOnLines(*all, first, last);
  std::vector<FunctionKey> missing;
  ShapeInference known = doc->shapes.cache.lookup(keys, &missing, refineEdits);
  if (!missing.empty() && !refineEdits) {
    std::shared_ptr<const ShapeInference> early =
        waitForKept(*doc, *s, missing,
                    oneLine ? std::optional<unsigned>(first) : std::nullopt);
    missing.clear();
    known = doc->shapes.cache.lookup(keys, &missing, refineEdits);
    if (early && !missing.empty())
      if (std::shared_ptr<const ShapeInference> out =
              withEarly(known, *early, missing))
        return out;
  }
  if (missing.empty())
    return std::make_shared<const ShapeInference>(std::move(known));
  {
    // The fill, which a hover moves here (focusOn), takes other functions
    // meanwhile: it took the same one, inferred twice (a sixth of an
    // open's inferences at 50k lines, many functions).
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    for (const FunctionKey &k : missing)
      doc->shapes.inflight.insert(k.hash);
  }
  std::optional<bool> gained = inferOnRequestInferrer(
      *doc, s, worker, missing, /*stopWhenEdited=*/false, refineEdits);
  if (!gained)
    return nullptr;
  if (*gained && s->config.shapeChecks) {
    // Not published here (a request only reads): by the fill's round
    // running for this version, or one started for it.
    bool idle;
    {
      std::lock_guard<std::mutex> lock(doc->shapes.mu);
      doc->shapes.requestFoundErrors = s->version;
      idle = doc->shapes.filling == 0;
    }
    if (idle)
      startFill(doc);
  }
  return std::make_shared<const ShapeInference>(doc->shapes.cache.lookup(keys));
}

void BackgroundInference::inferLater(const std::shared_ptr<OpenDocument> &doc,
                                     SnapshotPtr s, unsigned first,
                                     unsigned last,
                                     ArrayRef<FunctionKey> missing) {
  // Queued before the request's answer goes out; none for a version
  // already edited (its result would be dropped unread).
  if (!doc->isAt(s->version))
    return;
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(doc->shapes.mu);
    for (const FunctionKey &k : missing)
      start |= doc->shapes.inflight.insert(k.hash).second;
  }
  if (!start)
    return;
  auto task = [this, doc, s = std::move(s), first, last,
               asked = std::vector<FunctionKey>(missing)](unsigned worker) {
    auto until = std::chrono::steady_clock::now() + kBackgroundInferenceDelay;
    while (!options.sync && !stopping && doc->isAt(s->version) &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::shared_ptr<const std::vector<FunctionKey>> all = keysOf(*doc, *s);
    std::vector<FunctionKey> todo;
    (void)doc->shapes.cache.lookup(keysOnLines(*all, first, last), &todo);
    // Edited meanwhile: stops before the parse.
    std::optional<bool> gained =
        todo.empty() ? std::optional<bool>(false)
                     : inferOnRequestInferrer(*doc, s, worker, todo,
                                              /*stopWhenEdited=*/true, false);
    {
      std::lock_guard<std::mutex> lock(doc->shapes.mu);
      for (const FunctionKey &k : asked)
        doc->shapes.inflight.erase(k.hash);
    }
    if (gained && *gained && s->config.shapeChecks)
      republish(doc, s);
  };
  if (pool)
    pool->run(std::move(task));
  else
    task(inferrers.size() - 1);
}

//===----------------------------------------------------------------------===//
// Memory and tests
//===----------------------------------------------------------------------===//

unsigned BackgroundInference::fillThreads() const {
  return fillPool ? fillPool->size() : 0;
}

void BackgroundInference::dropAfterLastClose(std::function<void()> dropped) {
  {
    // Before the pool threads collect: its memory is in their heaps, and
    // the fill's. A request or the fill using it is waited for (a small
    // function's inference; a closed version's is cancelled).
    std::lock_guard<std::timed_mutex> lock(warmMu);
    warmInferrer.reset();
    warmLines = 0;
    warmQueued = false;
  }
  if (!fillPool) {
    for (std::unique_ptr<ShapeInferrer> &inferrer : fillInferrers)
      inferrer.reset();
    return;
  }
  fillPool->runOnEachWhenIdle([this, dropped](unsigned worker) {
    GiveBackFreePages now; // see TosaServer::removeDocument
    fillInferrers[worker].reset();
    dropped();
  });
}

void BackgroundInference::dropRequestInferrer(unsigned worker) {
  inferrers[worker].reset();
}

BackgroundInference::Stats BackgroundInference::stats() const {
  Stats s;
  s.requestInferences = requestInferenceCount;
  s.inferencesCancelled = inferencesCancelledCount;
  s.warmInferrersMade = warmInferrersMadeCount;
  s.requestInferrersMade = requestInferrersMadeCount;
  s.fillInferrersMade = fillInferrersMadeCount;
  s.fillBorrows = fillBorrowsCount;
  s.backgroundPauses = backgroundPausesCount;
  return s;
}

void BackgroundInference::waitIdle() {
  if (fillPool)
    fillPool->waitIdle();
}

std::shared_ptr<void> BackgroundInference::lendWarmInferrerForTest() {
  return std::make_shared<WarmLoan>(*this, /*wait=*/true);
}

} // namespace tosa_lsp
