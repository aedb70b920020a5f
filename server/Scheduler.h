//===- Scheduler.h - analysis off the main loop -----------------*- C++ -*-===//
//
// Owns the open documents (an OpenDocument per URI, the one map keyed by
// URI), analyses each one's latest text on a worker thread after a short
// debounce (a newer edit supersedes a pending one), and keeps the latest
// finished snapshot so requests never wait on a parse. In sync mode (lit
// tests) analysis runs inline instead.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_SCHEDULER_H
#define TOSA_LSP_SERVER_SCHEDULER_H

#include "OpenDocument.h"
#include "Snapshot.h"
#include "TaskThread.h"

#include "llvm/Support/thread.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace tosa_lsp {

/// Shape inference on the analysis' own IR (Analyzer::setInferShapes).
struct SchedulerInference {
  bool enabled = false;
  /// An open's (not an edit's function): after the publish, on the IR
  /// the analysis kept (Analyzer::inferKept), unless a newer version
  /// comes first. During it, what it infers goes to `inferred` (from the
  /// analysis thread), then `done` is called (on the worker).
  bool afterPublish = false;
  std::function<void(const std::shared_ptr<OpenDocument> &, SnapshotPtr,
                     Analyzer::FunctionPlace,
                     std::shared_ptr<const ShapeInference>)>
      inferred;
  std::function<void(const std::shared_ptr<OpenDocument> &, SnapshotPtr)> done;
  /// Around Analyzer::inferKept: the functions it will infer, before; what
  /// requests wait for, between functions; `ended` always, after.
  using Places = std::vector<Analyzer::FunctionPlace>;
  std::function<void(OpenDocument &, const Snapshot &, Places)> started;
  std::function<Places(OpenDocument &)> wanted;
  std::function<void(OpenDocument &)> ended;
  /// Analyzer::KeptHooks::asked / wantedLines / deliverEarly for the
  /// document.
  std::function<const std::atomic<unsigned> *(OpenDocument &)> asked;
  std::function<std::vector<unsigned>(OpenDocument &, Analyzer::FunctionPlace)>
      wantedLines;
  std::function<void(OpenDocument &, Analyzer::FunctionPlace,
                     std::shared_ptr<const ShapeInference>)>
      early;
};

class Scheduler {
public:
  using SnapshotPtr = tosa_lsp::SnapshotPtr;
  /// Called (on the worker thread, or inline in sync mode) with each
  /// finished snapshot that is still the newest version of its document.
  using Ready = std::function<void(SnapshotPtr)>;

  using InferShapes = SchedulerInference;
  /// With `infer.enabled`, each analysis also infers the functions it
  /// parses on its own IR (Snapshot::inferred, or after the publish).
  Scheduler(bool sync, std::chrono::milliseconds debounce, Ready onReady,
            InferShapes infer = {});
  ~Scheduler();

  /// Opens `uri` afresh: a document open under it is removed first.
  std::shared_ptr<OpenDocument> open(const std::string &uri,
                                     const std::string &path, int64_t version,
                                     std::string text);
  /// Analyses `doc`'s current text with `config`, unless it was removed.
  void update(const std::shared_ptr<OpenDocument> &doc, Config config);
  /// Opens `uri`, or replaces its text, then analyses it (tests).
  void update(const std::string &uri, const std::string &path, int64_t version,
              std::string text, Config config);
  /// Closes `uri`'s document and erases it: everything known about it goes
  /// with it. Requests waiting for its first snapshot get nullptr.
  void remove(const std::string &uri);

  /// The open document, or nullptr.
  std::shared_ptr<OpenDocument> document(const std::string &uri) const;
  std::vector<std::shared_ptr<OpenDocument>> documents() const;
  size_t size() const;

  /// The latest finished snapshot, or nullptr.
  SnapshotPtr latest(const std::string &uri) const;

  /// Runs `fn` with a snapshot of the document's current version (or a
  /// newer one) now if there is one, otherwise as soon as it is ready (on
  /// the worker thread), or with nullptr if the document is closed first.
  /// Returns false if it is unknown. Requests' positions are in the text
  /// the client has now, which the latest snapshot may predate by an edit.
  bool withCurrentSnapshot(const std::string &uri,
                           std::function<void(SnapshotPtr)> fn);

  /// Blocks until no analysis is pending (tests, shutdown).
  void waitIdle();

  /// Called on an analysis thread when MLIR has parsed and verified the
  /// whole text of `version` without a diagnostic, before the analysis
  /// finishes (Analyzer::analyzeShared's `verifiedClean`). Set before the
  /// first document opens.
  using VerifiedClean = std::function<void(
      const std::shared_ptr<OpenDocument> &, int64_t version, const Config &)>;
  void setVerifiedClean(VerifiedClean fn) { verifiedClean = std::move(fn); }

  /// Number of analyses run and of sections reused from a previous version.
  struct Stats {
    unsigned analyses = 0;
    unsigned sectionsReused = 0;
    /// Times the Analyzer released its memory (Analyzer::releaseMemory)
    /// after the last document closed.
    unsigned memoryReleases = 0;
    /// Times the Analyzer forgot what its contexts uniqued and gave back
    /// its threads' free pages, idle after a publish (once the version it
    /// replaced was freed): Analyzer::releaseIdleMemory.
    unsigned idleReleases = 0;
  };
  Stats stats() const;

private:
  /// A document as the worker sees it (under `mu`): what to analyse next.
  struct Doc {
    std::shared_ptr<OpenDocument> doc;
    SharedString text;
    int64_t version = 0;
    Config config;
    bool dirty = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point lastUpdate; // epoch: never
    AnalysisCache cache; // touched only by whoever analyses (worker/inline)
    /// withCurrentSnapshot's: each with the version it waits for.
    std::vector<std::pair<int64_t, std::function<void(SnapshotPtr)>>>
        currentWaiters;
  };

  void run();
  void analyze(const std::string &uri, std::shared_ptr<Doc> doc,
               std::unique_lock<std::mutex> &lock);
  /// The IR the analysis of `snap` kept, inferred (when `published`) or
  /// dropped; stops once `doc` is edited.
  void inferKept(const std::shared_ptr<Doc> &doc, const SnapshotPtr &snap,
                 bool published);

  const bool sync;
  const std::chrono::milliseconds debounce;
  Ready onReady;
  VerifiedClean verifiedClean;
  const InferShapes infer;
  mutable std::mutex mu;
  std::condition_variable cv, idle;
  std::map<std::string, std::shared_ptr<Doc>> docs;
  bool stopping = false;
  bool busy = false;
  /// Whether some document waits for its analysis (under mu).
  bool anyDirty() const;
  Stats counters;
  std::unique_ptr<Analyzer> analyzer;
  /// The last document closed: the worker has the Analyzer release its
  /// memory when idle, since its MLIRContext keeps every type, attribute
  /// and location it ever uniqued (a 200k-line file leaves ~100 MiB
  /// behind otherwise).
  bool releaseAnalyzerMemory = false;
  /// An analysis was published: once idle, the Analyzer releases what it
  /// no longer needs (see run()).
  bool idleMemoryToRelease = false;
  std::unique_ptr<llvm::thread> worker;
  /// Frees the snapshot a new one replaced, beside the next analysis: an
  /// edit sent right after the last publish waited for that free (1.4 ms
  /// at 10k lines, at times 5). Drained before the Analyzer releases its
  /// memory and by waitIdle. Declared last: joined first.
  TaskThread reclaimer{1u << 20};
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_SCHEDULER_H
