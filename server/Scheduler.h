//===- Scheduler.h - analysis off the main loop -----------------*- C++ -*-===//
//
// Keeps the latest text of each open document, analyses it on a worker
// thread after a short debounce (a newer edit supersedes a pending one), and
// keeps the latest finished snapshot so requests never wait on a parse. In
// sync mode (lit tests) analysis runs inline instead.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_SCHEDULER_H
#define TOSA_LSP_SERVER_SCHEDULER_H

#include "Analysis.h"
#include "CodeActions.h"
#include "Config.h"
#include "Convert.h"
#include "TaskThread.h" // releaseFreeMemory

#include "llvm/Support/thread.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace tosa_lsp {

/// One analysed version of a document; immutable, shared between threads.
/// A document's text, shared (not copied) by the server's copy, the
/// Scheduler's and each snapshot: 17 MB at 200k lines, copied four times
/// per edit before.
using SharedString = std::shared_ptr<const std::string>;

struct Snapshot {
  Snapshot(std::string uri, std::string path, int64_t version,
           SharedString text, Config config,
           std::shared_ptr<const FileAnalysis> analysis)
      : uri(std::move(uri)), path(std::move(path)), version(version),
        sharedText(std::move(text)), text(*sharedText),
        config(std::move(config)), sharedAnalysis(std::move(analysis)),
        analysis(*sharedAnalysis),
        lines(this->text, sharedAnalysis->lineIndex) {}
  std::string uri, path;
  int64_t version;
  SharedString sharedText;
  const std::string &text;
  Config config;
  /// Shared with the document's AnalysisCache, which reuses its unchanged
  /// sections for the next version without keeping a copy.
  std::shared_ptr<const FileAnalysis> sharedAnalysis;
  const FileAnalysis &analysis;
  /// Candidate quick fixes (text only), derived when a code action first
  /// asks, not with every analysis: most versions of a document being typed
  /// are never asked. Each is validated by re-analysis when a code action
  /// asks for it (the verdicts live in TosaServer, per document version).
  const std::vector<FixData> &fixes() const {
    std::call_once(fixesOnce,
                   [&] { fixesFound = candidateFixes(analysis, text); });
    return fixesFound;
  }
  mutable std::once_flag fixesOnce;
  mutable std::vector<FixData> fixesFound;
  LineTable lines;
};

class Scheduler {
public:
  using SnapshotPtr = std::shared_ptr<const Snapshot>;
  /// Called (on the worker thread, or inline in sync mode) with each
  /// finished snapshot that is still the newest version of its document.
  using Ready = std::function<void(SnapshotPtr)>;

  Scheduler(bool sync, std::chrono::milliseconds debounce, Ready onReady);
  ~Scheduler();

  void update(const std::string &uri, const std::string &path, int64_t version,
              SharedString text, Config config);
  void update(const std::string &uri, const std::string &path, int64_t version,
              std::string text, Config config) {
    update(uri, path, version,
           std::make_shared<const std::string>(std::move(text)),
           std::move(config));
  }
  void remove(const std::string &uri);

  /// The latest finished snapshot, or nullptr.
  SnapshotPtr latest(const std::string &uri) const;

  /// Runs `fn` with the latest snapshot now if there is one, otherwise as
  /// soon as the first one is ready (on the worker thread), or with nullptr
  /// if the document is closed first. Returns false if it is unknown.
  bool withSnapshot(const std::string &uri,
                    std::function<void(SnapshotPtr)> fn);

  /// Blocks until no analysis is pending (tests, shutdown).
  void waitIdle();

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
  struct Doc {
    std::string path;
    SharedString text;
    int64_t version = 0;
    Config config;
    bool dirty = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point lastUpdate; // epoch: never
    AnalysisCache cache; // touched only by whoever analyses (worker/inline)
    SnapshotPtr latest;
    std::vector<std::function<void(SnapshotPtr)>> waiters;
  };

  void run();
  void analyze(const std::string &uri, std::shared_ptr<Doc> doc,
               std::unique_lock<std::mutex> &lock);

  const bool sync;
  const std::chrono::milliseconds debounce;
  Ready onReady;
  mutable std::mutex mu;
  std::condition_variable cv, idle;
  std::map<std::string, std::shared_ptr<Doc>> docs;
  bool stopping = false;
  bool busy = false;
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
