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
// State: every open document is an OpenDocument that the Scheduler owns;
// shape inference is BackgroundInference's. This class keeps no map of its
// own.
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

#include "Allocator.h"
#include "BackgroundInference.h"
#include "CompileJob.h"
#include "EditingResults.h"
#include "Graph.h"
#include "Input.h"
#include "OpenDocument.h"
#include "OutputFiles.h"
#include "Scheduler.h"
#include "Settings.h"
#include "ShapeInference.h"
#include "WorkerPool.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LSP/Protocol.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tosa_lsp {

template <typename T>
using Callback = llvm::unique_function<void(llvm::Expected<T>)>;

struct HoverResult;
struct MigratedView;
struct Snapshot;
class StaleView;

/// Where a reading request is answered (TosaServer::withSnapshotAt): the
/// snapshot, the request's position in its text, and, when the snapshot
/// is older than the client's text, the view its answer's ranges go
/// through.
struct ReadAt {
  std::shared_ptr<const Snapshot> snapshot;
  llvm::lsp::Position pos;
  std::shared_ptr<const StaleView> stale;
};

/// `h` with what hover shows beyond the analysis' own (EditingFeatures.cpp):
/// the generic form of the op named at `p` (any op, also in a function with
/// errors), an alias' value.
std::optional<HoverResult> withGenericForm(const Snapshot &s, Position p,
                                           std::optional<HoverResult> h);
/// The existing files and lines the `loc(...)` of the op named at `p`
/// points to (relative paths from the document's directory).
std::vector<DefinitionTarget> sourceLocationTargets(const Snapshot &s,
                                                    Position p);
/// Why changeDocument did not apply an edit, by what the protocol layer
/// does about it: an unknown document is only logged; a desynced one was
/// closed, and the user is told. An InvalidParams LSPError to code that
/// does not ask for the kind.
class ChangeError : public llvm::ErrorInfo<ChangeError, llvm::lsp::LSPError> {
public:
  enum Kind { NotOpen, Desynced };
  static char ID;
  ChangeError(Kind kind, std::string message)
      : ErrorInfo(std::move(message), llvm::lsp::ErrorCode::InvalidParams),
        kind(kind) {}
  Kind kind;
};

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
    /// Each analysis infers the functions it parses on its own IR (no
    /// second parse; Analyzer::setInferShapes): off, only requests and the
    /// fill infer, each on a parse of its own (tests compare the two).
    bool inferInAnalysis = true;
    /// ... an open's right after its publish, on the IR its analysis kept
    /// (an edit's function before the publish either way); off: before it.
    bool inferAfterPublish = true;
    /// The warm request inferrer's context keeps a location per op of each
    /// function inferred on it: after this many lines it is made afresh.
    unsigned renewWarmInferrerLines = 100000;
    /// An open of at least this much text turns the heap's huge pages on
    /// where they pay (useHugePages, hugePagesPay): a 50k-line session's
    /// CPU 0.75-0.86x, a 10k one's 1.1x.
    size_t hugePagesFromBytes = kHugePagesFromBytes;
    /// Called on the pool before a background migration of `version`
    /// starts (tests: a newer version arrives meanwhile).
    std::function<void(int64_t version)> beforeMigrationForTest;
    /// Called on each pool and fill thread after the last close, just
    /// before it gives back its heap.
    std::function<void()> beforeCollectForTest;
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
    /// `version` of `uri` has nothing to publish: MLIR parsed and verified
    /// it without a word, and nothing else it publishes can come yet
    /// (publishClean). The analysis' own publish follows only if it finds
    /// more (a warning of ours, an error of MLIR's shape inference).
    virtual void onCleanDiagnostics(const std::string &uri, int64_t version) {}
    /// Something the user should see (bad configuration), once per cause.
    virtual void onError(const std::string &message) {}
    /// Inlay hints already shown may have changed (an old-syntax version's
    /// migrated form is ready): the client should ask again.
    virtual void onInlayHintsChanged() {}
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
  /// The same from the settings' JSON text: the protocol reads messages
  /// with llvm::json, the configuration with nlohmann, and both read text.
  void setSettingsText(llvm::StringRef json);
  /// A .tosa-lsp.json was saved, created or deleted: forget parsed files
  /// (lookups also notice changed files by mtime) and re-analyse.
  void configFilesChanged();
  /// Defaults, then the project file, then the editor settings.
  Config configFor(const std::string &path);
  /// The server's defaults, in the settings' own shape.
  static nlohmann::json defaultSettings();
  static std::string defaultSettingsText() { return defaultSettings().dump(); }

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
  /// Loads what the first request on this thread (the one that answers
  /// them) would load: the generic form's dialects (~1-2 ms of the first
  /// hover).
  void warmUpRequests();
  void addDocument(const std::string &uri, const std::string &path,
                   int64_t version, std::string text);
  /// Applies didChange events in order. On a range outside the text the
  /// client and we no longer agree on the text: the document is closed
  /// (as clangd does: requests then fail rather than answer for a text the
  /// user does not see) and a ChangeError (Desynced) says so; NotOpen for
  /// a document not open. A version that does not increase (the client
  /// broke the protocol) starts the document afresh.
  llvm::Error
  changeDocument(const std::string &uri, int64_t version,
                 llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent>);
  void removeDocument(const std::string &uri);
  /// The latest finished snapshot, or nullptr.
  Scheduler::SnapshotPtr snapshot(const std::string &uri) const;
  /// The open document (tests of its lifetime), or nullptr.
  std::shared_ptr<OpenDocument> documentForTest(const std::string &uri) const;

  //===--- Features (answered from the current version's snapshot) ------===//
  void hover(const std::string &uri, llvm::lsp::Position pos,
             Callback<std::optional<llvm::lsp::Hover>> cb);
  void inlayHints(const std::string &uri, llvm::lsp::Range range,
                  Callback<std::vector<llvm::lsp::InlayHint>> cb);
  /// Also aliases' definitions, and the files an op's `loc(...)` names.
  void definition(const std::string &uri, llvm::lsp::Position pos,
                  Callback<std::vector<DefinitionTarget>> cb);
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

  //===--- Editing features (EditingFeatures.cpp) ------------------------===//
  void documentHighlights(const std::string &uri, llvm::lsp::Position pos,
                          Callback<std::vector<DocumentHighlightLsp>> cb);
  /// An error (RequestFailed, saying why) where nothing can be renamed.
  void prepareRename(const std::string &uri, llvm::lsp::Position pos,
                     Callback<PrepareRenameLsp> cb);
  void rename(const std::string &uri, llvm::lsp::Position pos,
              std::string newName, Callback<DocumentEditLsp> cb);
  /// `lineFoldingOnly`: ranges end on the line before their closing
  /// bracket, so that it stays visible (as the client folds whole lines).
  void foldingRanges(const std::string &uri, bool lineFoldingOnly,
                     Callback<std::vector<FoldingRangeLsp>> cb);
  /// Per position, the ranges from the innermost out.
  void selectionRanges(const std::string &uri,
                       std::vector<llvm::lsp::Position> positions,
                       Callback<std::vector<std::vector<llvm::lsp::Range>>> cb);
  /// Full, or a delta against `previousResultId` when it is the last sent.
  void semanticTokens(const std::string &uri,
                      std::optional<std::string> previousResultId,
                      Callback<SemanticTokensLsp> cb);
  /// Functions and globals of the open documents and of the `.mlir` files
  /// under `roots` that are not open, best matches of `query` first.
  void workspaceSymbols(std::string query, std::vector<std::string> roots,
                        Callback<std::vector<WorkspaceSymbolLsp>> cb);
  /// The whole document, or the lines of `range`.
  void formatting(const std::string &uri, std::optional<llvm::lsp::Range> range,
                  Callback<DocumentEditLsp> cb);
  void completion(const std::string &uri, llvm::lsp::Position pos,
                  bool snippets, Callback<llvm::lsp::CompletionList> cb);
  void signatureHelp(const std::string &uri, llvm::lsp::Position pos,
                     Callback<std::optional<llvm::lsp::SignatureHelp>> cb);
  /// Upstream's mlir/convertToBytecode: base64 of the open document's
  /// bytecode.
  void convertToBytecode(const std::string &uri, Callback<std::string> cb);
  /// Upstream's mlir/convertFromBytecode: the text of the bytecode file at
  /// `path` (read, never written).
  void convertFromBytecode(const std::string &path, Callback<std::string> cb);

  /// A function's graph (tosa/graph): the one at `pos`, or named
  /// `function`; with tosa-infer-shapes' types where they are known.
  struct GraphReply {
    Scheduler::SnapshotPtr snapshot; // the text `graph` is of
    std::shared_ptr<const FunctionGraph> graph;
    /// From the migrated form of an old-syntax version (ranges mapped back
    /// to `snapshot`'s text).
    bool migrated = false;
  };
  /// With `stage`: the function after that lowering stage (lowered on the
  /// pool, as the preview is; refused while the function has errors).
  void graph(const std::string &uri, std::optional<llvm::lsp::Position> pos,
             std::optional<std::string> function,
             std::optional<std::string> stage, std::string mode,
             Callback<GraphReply> cb);
  /// graph() after lowering: @name of `snap` lowered to `stage` in `mode`.
  void loweredGraph(Scheduler::SnapshotPtr snap, const std::string &name,
                    const std::string &stage, const std::string &mode,
                    Callback<GraphReply> cb);

  //===--- Long work ------------------------------------------------------===//
  void previewLowering(PreviewRequest request, Callback<PreviewResult> cb);
  /// Runs `tosa-lsp compile` in a child process. Returns a function that
  /// cancels it (kills the child); the callback then gets the error.
  std::function<void()>
  compile(CompileRequest request,
          std::function<void(const CompileProgress &)> progress,
          Callback<CompileOutputs> cb);
  /// Kills running compiles and makes new ones fail at once (shutdown).
  void cancelCompiles();
  /// Waits until no compile runs (their temp directories are gone), at
  /// most `limit`; false when some still ran then.
  bool waitCompilesIdle(std::chrono::milliseconds limit);
  /// Removes the previews' directory now; previews asked for later are
  /// not written (the process is about to end).
  void removePreviews();

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
    /// Background migrations of old-syntax versions kept, and dropped
    /// because a newer version came (OldSyntax.cpp).
    unsigned migrations = 0;
    unsigned migrationsCancelled = 0;
    /// Graphs after lowering made, and served again for the same version.
    unsigned loweredGraphsMade = 0;
    unsigned loweredGraphsReused = 0;
    /// Reading requests answered from a snapshot older than the client's
    /// text (StaleView).
    unsigned staleAnswers = 0;
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
  /// The Scheduler's shape inference on the analysis' IR (Options).
  Scheduler::InferShapes inferShapesHooks(const Options &options);
  void schedule(const std::shared_ptr<OpenDocument> &doc);
  /// Runs fn(snapshot) with a snapshot of the document's current version
  /// (or newer), on the caller's thread or the Scheduler's: every request's
  /// positions are in the text the client has now, which the latest
  /// snapshot may predate by an edit.
  void withCurrentSnapshot(
      const std::string &uri,
      llvm::unique_function<void(llvm::Expected<Scheduler::SnapshotPtr>)> fn);
  /// Runs fn at `pos`: with the latest snapshot at once when the client's
  /// text since differs only away from `pos` (StaleView; the answer's
  /// ranges must go through `ReadAt::stale`), else with the current
  /// version's.
  void withSnapshotAt(const std::string &uri, llvm::lsp::Position pos,
                      llvm::unique_function<void(llvm::Expected<ReadAt>)> fn);
  std::optional<llvm::lsp::Hover>
  hoverAt(const Snapshot &s, llvm::lsp::Position pos, const ShapeInference *si);
  void runHeavy(WorkerPool::Task task);
  void completionWithShapes(const std::string &uri, llvm::lsp::Position pos,
                            bool snippets,
                            Callback<llvm::lsp::CompletionList> cb);
  bool isValid(OpenDocument *doc, const Scheduler::SnapshotPtr &s, size_t fix,
               unsigned worker);
  CodeActions computeCodeActions(Scheduler::SnapshotPtr s,
                                 llvm::lsp::Range range,
                                 const std::vector<std::string> &only,
                                 unsigned worker);
  Analyzer &validator(unsigned worker);
  /// Runs fn(snapshot, shapes of the functions in `range`) at once when
  /// they are known, else on the pool after inferring them; for functions
  /// too big to infer while the user waits (hover must stay immediate), at
  /// once with what is known, inferring them in the background for the
  /// next request. The range becomes the background's focus. With
  /// `oneOp`, `fn` reads only the ops on the range's line (a hover, a
  /// completion): they may come alone (BackgroundInference::infer).
  void
  withShapes(const std::string &uri, llvm::lsp::Range range,
             llvm::unique_function<void(llvm::Expected<Scheduler::SnapshotPtr>,
                                        std::shared_ptr<const ShapeInference>)>
                 fn,
             bool oneOp = false);
  /// withShapes on a snapshot in hand.
  void
  shapesFor(Scheduler::SnapshotPtr s, llvm::lsp::Range range,
            llvm::unique_function<void(llvm::Expected<Scheduler::SnapshotPtr>,
                                       std::shared_ptr<const ShapeInference>)>
                fn,
            bool oneOp = false);
  std::string writePreviewFile(OpenDocument &doc, const std::string &function,
                               llvm::StringRef content);
  /// Publishes a new snapshot with the shape errors known for its
  /// functions, and starts the background inference of the others.
  void publish(Scheduler::SnapshotPtr s);
  /// On an analysis thread: the version MLIR accepted, published clean
  /// before the analysis ends (the op reports, index and findings of a
  /// big file are ~40 % of its analysis), where the final publish can only
  /// say the same or add to it.
  void publishClean(const std::shared_ptr<OpenDocument> &doc, int64_t version,
                    const Config &config);
  /// Publishes `s` again with the shape errors known now, if it is still
  /// the latest published version of the open `doc`.
  void republish(std::shared_ptr<OpenDocument> doc, Scheduler::SnapshotPtr s);

  //===--- Old syntax (OldSyntax.cpp) -------------------------------------===//
  /// After the publish of a version with old-form errors: its migration,
  /// checked, in the background; re-publishes with the summary.
  void migrateInBackground(std::shared_ptr<OpenDocument> doc,
                           Scheduler::SnapshotPtr s);
  /// The migrated form of `s`'s version and configuration, when known.
  std::shared_ptr<const MigratedView> migratedView(const Snapshot &s) const;
  /// The same, computed on `worker` when not known yet (not kept).
  std::shared_ptr<const MigratedView>
  migrateNow(const Scheduler::SnapshotPtr &s, unsigned worker);
  /// What a publish of `s` adds for its old forms.
  void addOldFormSummary(OpenDocument &doc, const Snapshot &s,
                         std::vector<Diagnostic> &extra);

  /// From this size of text on, a version's position index is built beside
  /// its publish; below it, after the publish (publish()).
  static constexpr size_t kIndexBesidePublishBytes = size_t(4) << 20;

  const Options options;
  Callbacks &callbacks;
  std::atomic<bool> stopping{false}; // the destructor runs: drop checks

  Settings settings;

  /// Held while publishing: one publish at a time, and a re-publish of a
  /// version never lands after the publish of a newer one.
  std::mutex publishMu;

  std::atomic<unsigned> validationCount{0};
  std::atomic<unsigned> slotsDroppedCount{0};
  std::atomic<unsigned> staleAnswersCount{0};
  std::atomic<unsigned> migrationsCount{0}, migrationsCancelledCount{0};
  std::atomic<unsigned> loweredGraphsMade{0}, loweredGraphsReused{0};
  /// One Analyzer (its own MLIRContext) per pool worker, used only by it;
  /// the last one is the inline (sync mode) caller's.
  std::vector<std::unique_ptr<Analyzer>> validators;

  std::mutex compilesMu;
  std::set<std::shared_ptr<std::atomic<bool>>> compiles; // running ones
  bool compilesStopped = false;

  std::mutex previewMu;
  std::optional<TempDir> previewDir; // removed with the server
  bool previewsRemoved = false;      // removePreviews (under previewMu)
  unsigned previewFiles = 0;         // made in it, numbering their names

  // Last: their threads call into the members above.
  std::unique_ptr<WorkerPool> compilePool;
  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<BackgroundInference> background;
  std::unique_ptr<Scheduler> scheduler;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_TOSASERVER_H
