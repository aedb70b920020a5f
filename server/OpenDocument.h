//===- OpenDocument.h - what the server knows of a document ---*- C++ -*-===//
//
// Everything kept per open document, in one object: the client's text and
// version (and how its lines end), the latest snapshot, the verdicts of its
// quick fixes, its shape inference, the version last published and its
// preview files. The Scheduler owns one per URI (as clangd's TUScheduler
// owns its ASTWorkers); closing the document erases it, so nothing about a
// closed URI survives, and work still holding the object finds it closed.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_OPENDOCUMENT_H
#define TOSA_LSP_SERVER_OPENDOCUMENT_H

#include "InferenceCache.h"
#include "SemanticTokens.h"
#include "Snapshot.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/LSP/Protocol.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace tosa_lsp {

struct MigratedView;  // OldSyntax.h
struct FunctionGraph; // Graph.h
class StaleView;      // StaleView.h

/// One document's shape inference, kept by BackgroundInference. The cache
/// locks itself; the rest is under `mu`.
struct DocumentShapes {
  /// Each function's inference by its text, across versions.
  InferenceCache cache;
  std::mutex mu;
  /// The keys of the latest version's functions (hashing a 17 MB file's
  /// takes ~2 ms: once per version).
  int64_t keysVersion = -1;
  std::shared_ptr<const std::vector<FunctionKey>> keys;
  /// The latest published version, held weakly: a replaced one is freed.
  std::weak_ptr<const Snapshot> published;
  /// Functions being inferred off the requests' path: by the background
  /// (fill), and big ones a request asked for.
  std::set<uint64_t> inflight;
  /// The line last asked about: the background infers from there on.
  unsigned focus = 1;
  unsigned filling = 0; // fill tasks running
  bool fillAgain = false;
  /// A request's inference found shape errors in this version while the
  /// background ran: the background publishes them when it is done.
  int64_t requestFoundErrors = -1;
  /// The functions the analysis' kept IR is inferring for `keptVersion`
  /// (Analyzer::inferKept) by place, and those requests wait for (it takes
  /// them next): a request waits for them rather than parsing them again.
  int64_t keptVersion = -1;
  std::set<std::pair<unsigned, unsigned>> keptPending;
  std::vector<std::pair<unsigned, unsigned>> keptWanted;
  /// Moves each time keptWanted grows (read without the lock, between the
  /// ops of the function in progress).
  std::atomic<unsigned> keptAsked{0};
  /// The lines requests on one line (a hover's) wait for in keptWanted
  /// functions, and the ops on them as delivered before the rest of their
  /// function (KeptHooks::deliverEarly), by the function's place.
  std::vector<std::pair<std::pair<unsigned, unsigned>, unsigned>>
      keptWantedLines;
  std::map<std::pair<unsigned, unsigned>, std::shared_ptr<const ShapeInference>>
      keptEarly;
  std::condition_variable keptCv; // keptPending shrank, keptWanted grew,
                                  // keptEarly grew, ended
};

class OpenDocument {
public:
  OpenDocument(std::string uri, std::string path, int64_t version,
               std::string text);
  OpenDocument(const OpenDocument &) = delete;
  OpenDocument &operator=(const OpenDocument &) = delete;

  const std::string uri, path;

  //===--- The client's text ----------------------------------------------===//
  struct Version {
    int64_t version = 0;
    /// What is analysed: the client's text, with lone `\r`s made `\n`.
    SharedString text;
  };
  /// The current version; a null text once closed.
  Version current() const;
  /// Open and at `version`: what work for a version checks between steps.
  bool isAt(int64_t version) const;
  bool isOpen() const;
  /// Applies didChange events in order to the client's text (Convert's
  /// applyChanges). The error when a range lies outside the text (nothing
  /// changes then); `restarted` when the version did not increase.
  std::optional<std::string>
  change(int64_t version,
         llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent> changes,
         bool &restarted);
  /// The client's own text (lone `\r`s kept); empty once closed.
  std::string clientText() const;
  /// Replaces the whole text (the Scheduler's tests' shortcut).
  void replace(int64_t version, std::string text);
  /// How new lines are written in edits of `s`: as the client's first line
  /// ends (`\r\n`, `\r`), so that a fix never mixes line endings.
  std::string newline(const Snapshot &s) const;

  //===--- Derived from versions ------------------------------------------===//
  /// The latest finished snapshot, or null.
  SnapshotPtr latest() const;
  /// Makes `s` the latest unless a newer one is; returns what it replaced.
  SnapshotPtr setLatest(SnapshotPtr s);
  /// The latest snapshot, no longer kept (the Scheduler frees it on close).
  SnapshotPtr takeLatest();

  /// A quick fix's verdict for (version, configuration), when known.
  std::optional<bool> verdict(int64_t version, const std::string &config,
                              size_t fix) const;
  /// Records one; a newer version or another configuration starts afresh,
  /// and an older version's is dropped.
  void setVerdict(int64_t version, const std::string &config, size_t fix,
                  bool ok);

  /// The migrated form of `version` (a pre-MLIR-22 file), when the
  /// background has it for that version.
  std::shared_ptr<const MigratedView> migrated(int64_t version) const;
  /// The last migrated form kept, of whichever version.
  std::shared_ptr<const MigratedView> latestMigrated() const;
  /// Keeps `v` unless the document is closed or a newer version's is kept;
  /// whether it was kept.
  bool setMigrated(std::shared_ptr<const MigratedView> v);

  /// The client's current text over the latest snapshot when that is of an
  /// older version, or null when it is current (or there is none): made
  /// once for a (snapshot, version) pair, for every request until the
  /// analysis catches up.
  std::shared_ptr<const StaleView> staleView() const;

  /// The version last published, -1 before the first; written under the
  /// publisher's lock, so a re-publish never lands after a newer publish.
  std::atomic<int64_t> publishedVersion{-1};
  /// The version published clean on MLIR's verdict, before its analysis
  /// finished (TosaServer::publishClean); -1: none.
  std::atomic<int64_t> cleanVersion{-1};

  /// The path (without extension) of the preview file of `function`: the
  /// same for every preview of it, made by `make` the first time.
  std::string previewStem(const std::string &function,
                          llvm::function_ref<std::string()> make);

  /// A function's graph after lowering (tosa/graph's "stage"), kept for
  /// one version by `key` (function, stage, mode): the view asks again
  /// after every publish, and lowering a big function takes seconds.
  std::shared_ptr<const FunctionGraph>
  loweredGraph(int64_t version, const std::string &key) const;
  /// Keeps `g` unless a newer version's are kept (an older version's go).
  void setLoweredGraph(int64_t version, const std::string &key,
                       std::shared_ptr<const FunctionGraph> g);

  DocumentShapes shapes;

  /// The semantic tokens last sent (for a delta against them) and what
  /// the next request reuses in place: the tokens the text alone gave, with
  /// that text (an edit relexes only its lines), and the buffers (a request
  /// after an edit allocates nothing on a big file).
  struct TokenState {
    std::string resultId; // empty: nothing sent yet
    std::vector<uint32_t> data, next;
    LexedTokens lexed;
    SharedString lexedText;
    std::vector<TokenClass> classes;
  };
  /// Runs `f` on the token state, one request at a time per document.
  void withTokens(llvm::function_ref<void(TokenState &)> f);

  /// Forgets the text, verdicts and preview files: the document is at no
  /// version any more, and work for it stops at its next check.
  void close();

private:
  void setText(std::string text);

  mutable std::mutex mu;
  bool open = true;
  int64_t version;
  SharedString text;
  /// The client's own text when it has lone `\r`s, else null (`text` is
  /// it): changes apply to it, as the client counts lines.
  SharedString client;
  SnapshotPtr latestSnapshot;
  /// Fix verdicts for one (version, config).
  int64_t verdictsVersion = -1;
  std::string verdictsConfig;
  std::map<size_t, bool> verdicts;
  std::shared_ptr<const MigratedView> migratedView;
  mutable std::shared_ptr<const StaleView> stale;
  std::map<std::string, std::string> previewStems; // by function
  int64_t loweredVersion = -1;
  std::map<std::string, std::shared_ptr<const FunctionGraph>> lowered;
  std::mutex tokensMu; // held through a whole token request
  TokenState tokens;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_OPENDOCUMENT_H
