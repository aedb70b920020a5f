//===- BackgroundInference.h - shape inference off the requests -*- C++ -*-===//
//
// Shape inference for the server: after each publish, every small function
// of the version is inferred in the background, nearest to where the user
// looks first, and the shape errors found are published again (fill); a
// request infers the small functions it needs itself, on an inferrer kept
// warm, and leaves the big ones to the background. Results live in each
// document's InferenceCache (OpenDocument::shapes).
//
// Only the background publishes: a request's inference never does (the
// shape errors it finds are published by the background's current round,
// or with the next version).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_BACKGROUNDINFERENCE_H
#define TOSA_LSP_SERVER_BACKGROUNDINFERENCE_H

#include "OpenDocument.h"
#include "ShapeInference.h"
#include "WorkerPool.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tosa_lsp {

class BackgroundInference {
public:
  /// Requests wait for the inference of functions of at most this many
  /// lines (together); longer ones are inferred in the background
  /// (inferLater), and their inference is not kept across versions.
  static constexpr unsigned kWaitLines = 2000;

  struct Options {
    bool sync = false;
    /// Infer every small function after each publish (fill).
    bool enabled = true;
    /// See TosaServer::Options::renewWarmInferrerLines.
    unsigned renewWarmInferrerLines = 100000;
  };
  /// Publishes `s` again with the shape errors known now, if it is still
  /// `doc`'s latest published version.
  using Republish =
      std::function<void(std::shared_ptr<OpenDocument> doc, SnapshotPtr s)>;

  /// `pool` (null in sync mode) runs the warm-up and the big functions'
  /// inference; `slots` is its size plus one (the inline caller's).
  BackgroundInference(Options options, WorkerPool *pool, unsigned slots,
                      Republish republish);
  ~BackgroundInference();

  /// The server is going: running inferences stop at their next check and
  /// nothing new is made.
  void stop();
  /// Joins the fill's threads (after the Scheduler, before the pool).
  void joinThreads();

  //===--- Publishing -----------------------------------------------------===//
  /// The shape errors known for `s`'s functions (what its publish adds);
  /// with `retain`, functions `s` no longer has are forgotten.
  std::vector<Diagnostic> knownErrors(OpenDocument &doc, const Snapshot &s,
                                      bool retain);
  /// What the analysis of `s` inferred on its own IR (Snapshot::inferred)
  /// goes into the document's cache, by key.
  void storeInferred(OpenDocument &doc, const Snapshot &s);
  /// The same for what the analysis infers after the publish (`inferred`
  /// is part of it); shape errors it finds are published with the fill's.
  void storeInferredAfterPublish(OpenDocument &doc, const Snapshot &s,
                                 const ShapeInference &inferred);
  /// That inference is over: the fill does what it did not do.
  void inferredAfterPublish(const std::shared_ptr<OpenDocument> &doc,
                            const SnapshotPtr &s);
  /// `s` was published: warms the request inferrer and starts the fill
  /// (unless not `fill`: inferredAfterPublish then does).
  void published(const std::shared_ptr<OpenDocument> &doc, SnapshotPtr s,
                 bool fill = true);
  /// A new version is on its way.
  void changed(OpenDocument &doc);

  //===--- Requests -------------------------------------------------------===//
  /// A request reads a snapshot now (the fill's second thread pauses).
  void noteRequest();
  /// Inference on the analysis' kept IR (Analyzer::inferKept) of `s`'s
  /// `places` starts / ends; what requests wait for meanwhile.
  void keptStarted(OpenDocument &doc, const Snapshot &s,
                   std::vector<std::pair<unsigned, unsigned>> places);
  void keptEnded(OpenDocument &doc);
  void keptDone(OpenDocument &doc, std::pair<unsigned, unsigned> place);
  std::vector<std::pair<unsigned, unsigned>> keptWanted(OpenDocument &doc);
  /// The lines requests wait for in the function at `place`, and its ops
  /// on them, delivered before the rest of it (KeptHooks).
  std::vector<unsigned> keptWantedLines(OpenDocument &doc,
                                        std::pair<unsigned, unsigned> place);
  void keptEarly(OpenDocument &doc, std::pair<unsigned, unsigned> place,
                 std::shared_ptr<const ShapeInference> si);
  /// The keys of `s`'s functions (all of them), computed once per version.
  std::shared_ptr<const std::vector<FunctionKey>> keysOf(OpenDocument &doc,
                                                         const Snapshot &s);
  /// Moves the fill's focus to `line`.
  void focusOn(OpenDocument &doc, unsigned line);
  /// The request's own inference of the functions on lines [first, last]:
  /// the known ones from the cache, the others inferred on `worker`. Never
  /// publishes. With `refineEdits`, the functions' refine-all edits too.
  /// With `oneLine` (first == last, a hover's), a function being inferred
  /// by the kept IR may come as the ops on that line alone (and those
  /// defining their operands): all a request about that line reads.
  std::shared_ptr<const ShapeInference>
  infer(const std::shared_ptr<OpenDocument> &doc, const SnapshotPtr &s,
        unsigned worker, unsigned first, unsigned last,
        bool refineEdits = false, bool oneLine = false);
  /// The `missing` functions (too big for a request to wait for) inferred
  /// in the background a moment from now, unless `s` is edited first;
  /// shape errors found are published. Inline in sync mode.
  void inferLater(const std::shared_ptr<OpenDocument> &doc, SnapshotPtr s,
                  unsigned first, unsigned last,
                  llvm::ArrayRef<FunctionKey> missing);

  //===--- Memory ---------------------------------------------------------===//
  /// The fill's threads (0 in sync mode).
  unsigned fillThreads() const;
  /// After the last close: the warm inferrer goes now; each fill thread
  /// drops its inferrer when idle, then calls `dropped`, which gives back
  /// its heap (fillThreads() calls; in sync mode all is done inline, no
  /// call).
  void dropAfterLastClose(std::function<void()> dropped);
  /// Pool worker `worker`'s own inferrer goes (on that worker).
  void dropRequestInferrer(unsigned worker);

  struct Stats {
    unsigned requestInferences = 0, inferencesCancelled = 0;
    unsigned warmInferrersMade = 0, requestInferrersMade = 0;
    unsigned fillInferrersMade = 0, fillBorrows = 0, backgroundPauses = 0;
  };
  Stats stats() const;
  void waitIdle();
  /// Lends the warm inferrer as the fill does (WarmLoan) until the result
  /// is released on the same thread.
  std::shared_ptr<void> lendWarmInferrerForTest();

private:
  class WarmLoan;
  /// `inferred` (of `s`) into the document's cache; whether it found shape
  /// errors not known before.
  bool store(OpenDocument &doc, const Snapshot &s,
             const ShapeInference &inferred);
  /// Infers `fns` on the request inferrer for `worker`; stores the
  /// results. Nullopt when cancelled; else whether shape errors were new.
  std::optional<bool>
  inferOnRequestInferrer(OpenDocument &doc, const SnapshotPtr &s,
                         unsigned worker, llvm::ArrayRef<FunctionKey> fns,
                         bool stopWhenEdited, bool refineEdits);
  void warmRequestInferrer(const std::vector<FunctionKey> &keys);
  void countWarmLines(size_t lines);
  void startFill(const std::shared_ptr<OpenDocument> &doc);
  void fill(const std::shared_ptr<OpenDocument> &doc, unsigned worker,
            bool yieldToRequests);
  /// The fill's next function: the latest published version's small
  /// function not known yet nearest to the focus, marked in flight.
  std::optional<FunctionKey> nextToFill(OpenDocument &doc, const Snapshot &s,
                                        size_t &left);
  /// Ends one round of a fill thread; whether another round follows.
  bool endFillRound(const std::shared_ptr<OpenDocument> &doc, SnapshotPtr s,
                    SnapshotPtr gained);
  bool requestedWithin(std::chrono::milliseconds d) const;
  /// Waits while the kept IR's inference of `s` holds one of `missing`,
  /// asking for it first. With `line`, until each of them is done or its
  /// ops on `line` came early: those are returned (or null).
  std::shared_ptr<const ShapeInference>
  waitForKept(OpenDocument &doc, const Snapshot &s,
              llvm::ArrayRef<FunctionKey> missing,
              std::optional<unsigned> line = std::nullopt);

  const Options options;
  WorkerPool *pool;
  Republish republish;
  std::atomic<bool> stopping{false};

  /// One inferrer per pool worker (the last for the inline caller): for
  /// functions longer than kWaitLines, and for requests that find the warm
  /// one lent for longer than kWaitForLentWarm; dropped after either.
  std::vector<std::unique_ptr<ShapeInferrer>> inferrers;
  /// The inferrer of requests for small functions, shared and kept warm
  /// (dialects loaded, the pass built). A fresh one made the first hover
  /// in a function the background had not reached wait ~5-8 ms more (50k
  /// lines, many functions: the first hover at the end 6.8-15.5 ms), once
  /// per pool worker. Requests take turns on it (each waits at most one
  /// small function's inference, ~1-2 ms); the fill borrows it for an
  /// edit's few functions (warmLent).
  std::timed_mutex warmMu;
  std::unique_ptr<ShapeInferrer> warmInferrer; // under warmMu
  size_t warmLines = 0;                        // under warmMu
  std::atomic<bool> warmQueued{false};
  /// The fill holds warmMu: requests wait for it at most kWaitForLentWarm
  /// (a nice-19 thread that an analysis on both cores may hold off for
  /// long), then use a context of their worker's own.
  std::atomic<bool> warmLent{false};
  /// The fill's own inferrers, one per thread.
  std::vector<std::unique_ptr<ShapeInferrer>> fillInferrers;
  /// When the last request that reads a snapshot came (steady ticks).
  std::atomic<std::chrono::steady_clock::rep> lastRequest{0};

  std::atomic<unsigned> requestInferenceCount{0}, inferencesCancelledCount{0},
      warmInferrersMadeCount{0}, requestInferrersMadeCount{0},
      fillInferrersMadeCount{0}, fillBorrowsCount{0}, backgroundPausesCount{0};

  /// kFillThreads threads at the lowest priority (nice 19): the fill uses
  /// only what no analysis, request or edit needs. Last: joined first.
  std::unique_ptr<WorkerPool> fillPool;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_BACKGROUNDINFERENCE_H
