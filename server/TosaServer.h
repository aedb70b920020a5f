//===- TosaServer.h - the feature layer of the language server --*- C++ -*-===//
//
// What the language server can do, as a plain C++ API (clangd's
// ClangdServer): documents, configuration, editor features, code actions,
// lowering previews and compile jobs. Plain data in (strings, LSP position
// structs, nlohmann settings values), plain data out, results through
// callbacks that may run on any thread. No JSON-RPC, no message ids: the
// protocol layer (LSPServer.cpp) converts messages to these calls and the
// results back. Errors are llvm::Error values carrying an lsp::ErrorCode
// (LSPError), which the protocol layer forwards as they are.
//
// Threading: analysis runs in the Scheduler (one worker, debounced); fix
// validation and previews on a bounded pool of big-stack threads, each with
// its own Analyzer; compile jobs (which mostly wait for a child process) on
// a second small pool. Both pools are joined by the destructor. With
// `sync`, everything runs inline before the call returns (lit tests).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_TOSASERVER_H
#define TOSA_LSP_SERVER_TOSASERVER_H

#include "InferenceCache.h"
#include "Input.h"
#include "OutputFiles.h"
#include "Scheduler.h"
#include "ShapeInference.h"
#include "WorkerPool.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LSP/Protocol.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tosa_lsp {

template <typename T>
using Callback = llvm::unique_function<void(llvm::Expected<T>)>;

/// A quick fix (an edit) or a command on the function under the cursor.
struct CodeActionItem {
  std::string title;
  std::string kind; // quickfix | refactor.rewrite | source[.migrate|...]
  bool preferred = false;
  /// Quick fixes: the diagnostic repaired (in CodeActions::snapshot) and
  /// the edits to this document.
  const Diagnostic *diagnostic = nullptr;
  std::vector<llvm::lsp::TextEdit> edits;
  /// A whole-file rewrite (migrating a file, refining a function's
  /// shapes): the edit goes as a versioned document change and the action
  /// carries `data: {review: true}`, so the project's plugins show a diff
  /// and apply on confirmation; other clients apply it as they apply any
  /// edit. (A change annotation with needsConfirmation made VS Code open
  /// its refactor preview with every change unticked: Apply did nothing.)
  /// `version` is the document's.
  bool review = false;
  int64_t version = 0;
  /// Commands: tosa.previewLowering or tosa.compile on `function`.
  std::string command, commandTitle, function, stage, mode, emit;
};
struct CodeActions {
  Scheduler::SnapshotPtr snapshot;   // keeps `diagnostic` alive
  std::vector<CodeActionItem> items; // quick fixes first
};

struct PreviewRequest {
  std::string uri;
  std::optional<std::string> function;         // or:
  std::optional<llvm::lsp::Position> position; // the function around it
  std::string stage = "linalg", mode = "fast";
  /// Also write the preview to a read-only file (clients without a plugin
  /// open it through window/showDocument).
  bool writeFile = false;
};
struct PreviewMappingLsp {
  llvm::lsp::Position preview, source;
  std::string sourceOp;
};
struct PreviewResult {
  std::string text, pipeline;
  std::vector<PreviewMappingLsp> mappings;
  std::string file; // set when writeFile succeeded
};

struct CompileRequest {
  std::string uri;
  std::string function; // empty: the whole file
  std::string emit = "shared";
  std::string mode = "fast";
};
/// begin (message = title), report (a step), end (done or the error).
struct CompileProgress {
  enum Kind { Begin, Report, End } kind;
  std::string message;
};

class TosaServer {
public:
  struct Options {
    bool sync = false;
    std::chrono::milliseconds debounce{50};
    /// Threads for validation and previews; 0: from the hardware (2-8).
    unsigned workers = 0;
    unsigned compileWorkers = 4;
    /// The tosa-lsp binary compile jobs run (`tosa-lsp compile`).
    std::string self;
    /// Infer every small function after each publish (fill): off, only
    /// requests infer, and shape errors come from what they inferred
    /// (tests of the requests' own inference).
    bool backgroundInference = true;
    /// The warm request inferrer's context keeps a location per op of each
    /// function inferred on it: after this many lines it is made afresh.
    unsigned renewWarmInferrerLines = 100000;
  };
  /// Called from any thread.
  struct Callbacks {
    virtual ~Callbacks() = default;
    /// A finished analysis that is still the newest version: publish its
    /// diagnostics and `extra` (errors from MLIR's shape inference). Called
    /// again for the same version when the background shape checks find
    /// more; never for a version older than one already published.
    virtual void onDiagnostics(Scheduler::SnapshotPtr,
                               const std::vector<Diagnostic> &extra) {}
    /// Something the user should see (bad configuration), once per cause.
    virtual void onError(const std::string &message) {}
  };

  TosaServer(Options options, Callbacks &callbacks);
  /// Kills running compiles, then joins every thread.
  ~TosaServer();

  //===--- Configuration --------------------------------------------------===//
  /// The editor's settings (flat or under "tosaLsp"): only what the user
  /// set; null members count as unset. They apply on top of the server's
  /// defaults and the project's .tosa-lsp.json. Invalid settings are
  /// reported and ignored. Re-analyses open documents.
  void setSettings(const nlohmann::json &settings);
  /// A .tosa-lsp.json was saved, created or deleted: forget parsed files
  /// (lookups also notice changed files by mtime) and re-analyse.
  void configFilesChanged();
  /// Defaults, then the project file, then the editor settings.
  Config configFor(const std::string &path);
  /// The server's defaults, in the settings' own shape.
  static nlohmann::json defaultSettings();

  /// How an editor shows a diagnostic: errors and warnings as such;
  /// informational findings as Hints, except a declared size the runtime
  /// must match (Information).
  static llvm::lsp::DiagnosticSeverity severity(const Diagnostic &d);
  /// Whether a publish carries `d`: problems always; informational
  /// findings (refinable results, runtime checks, lenient parses) only
  /// with `info.publish`.
  static bool isPublished(const Config &config, const Diagnostic &d) {
    return config.info.publish || d.severity != Severity::Info;
  }

  //===--- Documents ------------------------------------------------------===//
  void addDocument(const std::string &uri, const std::string &path,
                   int64_t version, std::string text);
  /// Applies didChange events in order. On a range outside the text the
  /// client and we no longer agree on the text: the document is closed
  /// (as clangd does: requests then fail rather than answer for a text the
  /// user does not see) and an error says so. A version that does not
  /// increase (the client broke the protocol) starts the document afresh.
  llvm::Error
  changeDocument(const std::string &uri, int64_t version,
                 llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent>);
  void removeDocument(const std::string &uri);
  /// The latest finished snapshot, or nullptr.
  Scheduler::SnapshotPtr snapshot(const std::string &uri) const;

  //===--- Features (answered from the latest snapshot) -------------------===//
  void hover(const std::string &uri, llvm::lsp::Position pos,
             Callback<std::optional<llvm::lsp::Hover>> cb);
  void inlayHints(const std::string &uri, llvm::lsp::Range range,
                  Callback<std::vector<llvm::lsp::InlayHint>> cb);
  void definition(const std::string &uri, llvm::lsp::Position pos,
                  Callback<std::vector<llvm::lsp::Range>> cb);
  void references(const std::string &uri, llvm::lsp::Position pos,
                  bool includeDeclaration,
                  Callback<std::vector<llvm::lsp::Range>> cb);
  void documentSymbols(const std::string &uri,
                       Callback<std::vector<llvm::lsp::DocumentSymbol>> cb);
  /// Validated quick fixes whose diagnostic overlaps `range`, then preview
  /// and compile actions on the function there; `only` filters by kind
  /// prefix. Validation runs on the pool, cached per (document, version).
  void codeActions(const std::string &uri, llvm::lsp::Range range,
                   std::vector<std::string> only, Callback<CodeActions> cb);

  //===--- Long work ------------------------------------------------------===//
  void previewLowering(PreviewRequest request, Callback<PreviewResult> cb);
  /// Runs `tosa-lsp compile` in a child process. Returns a function that
  /// cancels it (kills the child); the callback then gets the error.
  std::function<void()>
  compile(CompileRequest request,
          std::function<void(const CompileProgress &)> progress,
          Callback<llvm::json::Value> cb);
  /// Kills running compiles and makes new ones fail at once (shutdown).
  void cancelCompiles();
  /// Waits until no compile runs (their temp directories are gone), at
  /// most `limit`; false when some still ran then.
  bool waitCompilesIdle(std::chrono::milliseconds limit);

  /// Counters for tests.
  struct Stats {
    unsigned fixValidations = 0;
    unsigned configLoads = 0;
    /// Shape inferences run for requests (hover, inlay hints, ...).
    unsigned requestInferences = 0;
    /// Background inferences stopped because their version was edited or
    /// closed before they finished.
    unsigned inferencesCancelled = 0;
    /// Pool threads that dropped their validator and inferrer after the
    /// last close (the background inference's threads included).
    unsigned slotsDropped = 0;
    /// Request inferrers made warm ahead of requests (warmRequestInferrer),
    /// and made by a request itself (which then waited for it).
    unsigned warmInferrersMade = 0;
    unsigned requestInferrersMade = 0;
    /// Contexts the background made, and functions it inferred on the
    /// warm request inferrer instead.
    unsigned fillInferrersMade = 0;
    unsigned fillBorrows = 0;
    /// Times a background thread paused because requests were coming.
    unsigned backgroundPauses = 0;
    /// Functions whose inference is known, over all open documents.
    size_t functionsKnown = 0;
    Scheduler::Stats scheduler;
  };
  Stats stats() const;
  /// Blocks until analysis and pooled work are done (tests).
  void waitIdle();
  /// Lends the warm request inferrer as the background does when it
  /// borrows it for an edit's functions (WarmLoan), until the result is
  /// released on the same thread (tests: a starved nice-19 thread can hold
  /// it for long).
  std::shared_ptr<void> lendWarmInferrerForTest();

private:
  struct Document {
    std::string path;
    /// What is analysed: the client's text, with lone `\r`s made `\n`.
    SharedString text;
    /// The client's own text when it has lone `\r`s, else null (`text` is
    /// it): changes apply to it, as the client counts lines.
    SharedString clientText;
    int64_t version = 0;
  };
  /// Drops `uri`'s fix verdicts and shape checks (kept by version).
  void forgetVerdicts(const std::string &uri);
  /// Drops what was derived from `uri`'s earlier texts: snapshots and the
  /// verdicts, all keyed by the client's version.
  void forgetDerived(const std::string &uri);
  /// The document's text from the client's `text`.
  static void setText(Document &doc, std::string text);
  /// How new lines are written in `uri`'s edits.
  std::string newlineOf(const std::string &uri, const Snapshot &s) const;
  std::optional<Document> document(const std::string &uri) const;
  /// The version of the text last received (no copy of the text).
  std::optional<int64_t> currentVersion(const std::string &uri) const;
  void schedule(const std::string &uri, const Document &doc);
  void reportOnce(const std::string &message);
  /// Runs fn(snapshot) now, or when the first snapshot exists, on the
  /// caller's thread, the Scheduler's, or (heavy) the pool.
  void withSnapshot(
      const std::string &uri,
      llvm::unique_function<void(llvm::Expected<Scheduler::SnapshotPtr>)> fn);
  void runHeavy(WorkerPool::Task task);
  bool isValid(const Scheduler::SnapshotPtr &s, size_t fix, unsigned worker);
  CodeActions computeCodeActions(Scheduler::SnapshotPtr s,
                                 llvm::lsp::Range range,
                                 const std::vector<std::string> &only,
                                 unsigned worker);
  Analyzer &validator(unsigned worker);
  /// MLIR's shape inference of the snapshot's functions overlapping lines
  /// [first, last]: each function's from the document's InferenceCache,
  /// the missing ones computed on `worker`, one at a time. With
  /// `stopWhenEdited`, the work stops (nullptr, nothing kept) once the
  /// document has a newer version or is closed: a background inference of
  /// a big function would otherwise hold a second parse beside the edit's
  /// analysis for nothing.
  /// With `refineEdits`, the functions' refine-all edits too.
  std::shared_ptr<const ShapeInference>
  shapesFor(const Scheduler::SnapshotPtr &s, unsigned worker, unsigned first,
            unsigned last, bool stopWhenEdited = false,
            bool refineEdits = false);
  /// Runs fn(snapshot, shapes of the functions in `range`) at once when
  /// they are known, else on the pool after computing them; for functions
  /// too big to infer while the user waits (hover must stay immediate), at
  /// once with what is known, inferring them in the background for the
  /// next request. The range becomes the background's focus.
  void
  withShapes(const std::string &uri, llvm::lsp::Range range,
             llvm::unique_function<void(llvm::Expected<Scheduler::SnapshotPtr>,
                                        std::shared_ptr<const ShapeInference>)>
                 fn);
  std::string writePreviewFile(const std::string &uri, const std::string &path,
                               const std::string &function,
                               llvm::StringRef content);

  const Options options;
  Callbacks &callbacks;

  mutable std::mutex docsMu;
  std::map<std::string, Document> docs;

  std::mutex configMu;
  std::optional<nlohmann::json> settings; // valid editor settings
  std::string lastError;
  ConfigCache projectConfigs;

  /// Fix verdicts per document for one (version, config): a newer version
  /// or a different config starts afresh.
  struct Validation {
    int64_t version = -1;
    std::string config;
    std::map<size_t, bool> verdicts;
  };
  std::mutex validationMu;
  std::map<std::string, Validation> validations;
  std::atomic<unsigned> validationCount{0};
  std::atomic<unsigned> requestInferenceCount{0};
  std::atomic<unsigned> inferencesCancelledCount{0};
  std::atomic<unsigned> slotsDroppedCount{0};
  std::atomic<unsigned> warmInferrersMadeCount{0};
  std::atomic<unsigned> requestInferrersMadeCount{0};
  std::atomic<unsigned> fillInferrersMadeCount{0};
  std::atomic<unsigned> fillBorrowsCount{0};
  std::atomic<unsigned> backgroundPausesCount{0};
  /// One Analyzer (its own MLIRContext) per pool worker, used only by it;
  /// the last one is the inline (sync mode) caller's.
  std::vector<std::unique_ptr<Analyzer>> validators;

  /// Shape inference per document: each function's by its text, across
  /// versions (InferenceCache), and the keys of the latest version's
  /// functions (hashing a 17 MB file's takes ~2 ms: once per version).
  struct DocShapes {
    InferenceCache cache;
    // The rest under shapesMu.
    int64_t keysVersion = -1;
    std::shared_ptr<const std::vector<FunctionKey>> keys;
    /// The latest published version (never the Scheduler's: the
    /// destructor stops it before the background thread).
    std::weak_ptr<const Snapshot> published;
    /// Functions being inferred off the requests' path: by the background
    /// (fill), and big ones a request started (withShapes).
    std::set<uint64_t> inflight;
    /// The line last asked about: the background infers from there on.
    unsigned focus = 1;
    unsigned filling = 0; // fill tasks running
    bool fillAgain = false;
  };
  mutable std::mutex shapesMu;
  std::map<std::string, std::shared_ptr<DocShapes>> shapes;
  /// One inferrer (its own MLIRContext) per pool worker, the last for the
  /// inline caller: for functions longer than kWaitLines, and for requests
  /// that find the warm one lent to the background for longer than
  /// kWaitForLentWarm; dropped after either.
  std::vector<std::unique_ptr<ShapeInferrer>> inferrers;
  /// The inferrer of requests for small functions, shared and kept warm
  /// (dialects loaded, the pass built: warmRequestInferrer). A fresh one
  /// made the first hover in a function the background had not reached
  /// wait ~5-8 ms more (50k lines, many functions: the first hover at the
  /// end 6.8-15.5 ms), once per pool worker. Requests take turns on it
  /// (each waits at most one small function's inference, ~1-2 ms); the
  /// background borrows it for an edit's few functions (warmLent).
  std::timed_mutex warmMu;
  std::unique_ptr<ShapeInferrer> warmInferrer; // under warmMu
  size_t warmLines = 0; // inferred on warmInferrer (under warmMu)
  /// Counts `lines` inferred on the warm inferrer (warmMu held); drops it
  /// past Options::renewWarmInferrerLines, to be made again on the next
  /// publish.
  void countWarmLines(size_t lines);
  std::atomic<bool> warmQueued{false};
  /// The background holds warmMu (borrowed for an edit's few functions):
  /// requests wait for it at most kWaitForLentWarm (a nice-19 thread that
  /// an analysis on both cores may hold off for long), then use a context
  /// of their worker's own.
  std::atomic<bool> warmLent{false};
  /// warmMu held for the background, with warmLent set, while it lives
  /// (on the thread that made it).
  class WarmLoan {
  public:
    /// Waits for warmMu, or only tries (held() says whether it has it).
    WarmLoan(TosaServer &server, bool wait);
    ~WarmLoan();
    WarmLoan(const WarmLoan &) = delete;
    WarmLoan &operator=(const WarmLoan &) = delete;
    bool held() const { return lock.owns_lock(); }

  private:
    TosaServer &server;
    std::unique_lock<std::timed_mutex> lock;
  };
  /// Up to this many functions left to infer, the background borrows the
  /// warm inferrer instead of making a context (an edit's re-inference).
  static constexpr size_t kBorrowWarmFunctions = 4;
  /// How long a request waits for the warm inferrer the background
  /// borrowed before it infers on a context of its own (dropped after).
  static constexpr std::chrono::milliseconds kWaitForLentWarm{20};
  /// Makes warmInferrer on the pool when a published version has small
  /// functions (a file of one big function never needs it).
  void warmRequestInferrer(const std::vector<FunctionKey> &keys);
  std::shared_ptr<DocShapes> docShapes(const std::string &uri);
  /// The keys of `s`'s functions (all of them), computed once per version.
  std::shared_ptr<const std::vector<FunctionKey>> keysOf(const Snapshot &s);

  /// Functions up to this many lines are inferred in the background, all
  /// of them, from the focus outwards (fill): a hover or inlay request
  /// anywhere then finds them known, and the shape errors they contain are
  /// published. Longer ones only when a request asks (shapesFor): a
  /// 10^5-line function's inference holds a second parse of it for seconds.
  static constexpr unsigned kShapeCheckLines = 2000;
  /// From this size of text on, a version's position index is built beside
  /// its publish; below it, after the publish (publish()).
  static constexpr size_t kIndexBesidePublishBytes = size_t(4) << 20;
  /// A big function's inference, asked for by a hover, starts this long
  /// after the request unless the document changed meanwhile: right after
  /// an open come edits as often as reading, and an inference started then
  /// held a second parse of the function beside the edit's analysis
  /// (200k-line function: peak 871 -> 644 MiB with the cancel alone).
  static constexpr std::chrono::milliseconds kBackgroundInferenceDelay{300};
  /// Hovers and inlay hints wait for the inference of functions of at most
  /// this many lines (together); longer ones are inferred in the background.
  static constexpr unsigned kWaitLines = 2000;
  /// Held while publishing: a background re-publish of a version never
  /// lands after the publish of a newer one.
  std::mutex publishMu;
  /// The version last published per document (under publishMu): what the
  /// background checks compare with, never the Scheduler, which the
  /// destructor stops before the pool.
  std::map<std::string, int64_t> publishedVersions;
  bool isPublished(const Snapshot &s);
  std::atomic<bool> stopping{false}; // the destructor runs: drop checks
  /// Publishes a new snapshot with the shape errors known for its
  /// functions, and starts the background inference of the others.
  void publish(Scheduler::SnapshotPtr s);
  /// Starts (or restarts) the background inference of `uri`'s functions.
  void startFill(const std::string &uri);
  /// The background inference: the latest published version's small
  /// functions not known yet, nearest to the focus first, one at a time
  /// (a newer version or a close stops it between two). `yieldToRequests`:
  /// a second thread, which pauses while requests come.
  void fill(const std::string &uri, std::shared_ptr<DocShapes> doc,
            unsigned worker, bool yieldToRequests);
  /// Threads of the background inference: both cores when both are idle
  /// (200k lines, many functions: every function known ~1 s sooner).
  static constexpr unsigned kFillThreads = 2;
  static constexpr size_t kFillFunctionsPerThread = 64;
  /// The background's second thread waits until no request came for this
  /// long (see fill).
  static constexpr std::chrono::milliseconds kRequestQuiet{100};
  /// When the last request that reads a snapshot came (steady clock ticks).
  std::atomic<std::chrono::steady_clock::rep> lastRequest{0};
  bool requestedWithin(std::chrono::milliseconds d) const;
  /// Publishes `s` again with the shape errors known now, if it is still
  /// the latest published version.
  void republish(Scheduler::SnapshotPtr s);

  std::mutex compilesMu;
  std::set<std::shared_ptr<std::atomic<bool>>> compiles; // running ones
  bool compilesStopped = false;

  std::mutex previewMu;
  std::optional<TempDir> previewDir;               // removed with the server
  std::map<std::string, std::string> previewFiles; // uri + function -> stem

  /// The background inference's own inferrers, one per thread.
  std::vector<std::unique_ptr<ShapeInferrer>> fillInferrers;

  // Last: their threads call into the members above.
  std::unique_ptr<WorkerPool> compilePool;
  /// kFillThreads threads at the lowest priority (nice 19) for the
  /// background inference: it uses only what no analysis, request or edit
  /// needs.
  std::unique_ptr<WorkerPool> fillPool;
  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<Scheduler> scheduler;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_TOSASERVER_H
