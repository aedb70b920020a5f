//===- Snapshot.h - one analysed version of a document ----------*- C++ -*-===//
//
// What every request answers from: a version's text, its configuration and
// its analysis, immutable and shared between threads.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_SNAPSHOT_H
#define TOSA_LSP_SERVER_SNAPSHOT_H

#include "Aliases.h"
#include "Analysis.h"
#include "CodeActions.h"
#include "Config.h"
#include "Convert.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tosa_lsp {

struct ShapeInference; // ShapeInference.h

/// A document's text, shared (not copied) by the server's copy, the
/// Scheduler's and each snapshot: 17 MB at 200k lines, copied four times
/// per edit before.
using SharedString = std::shared_ptr<const std::string>;

/// One analysed version of a document; immutable, shared between threads.
struct Snapshot {
  Snapshot(std::string uri, std::string path, int64_t version,
           SharedString text, Config config,
           std::shared_ptr<const FileAnalysis> analysis,
           std::shared_ptr<const ShapeInference> inferred = nullptr,
           bool inferenceFollows = false)
      : uri(std::move(uri)), path(std::move(path)), version(version),
        sharedText(std::move(text)), text(*sharedText),
        config(std::move(config)), sharedAnalysis(std::move(analysis)),
        analysis(*sharedAnalysis), inferred(std::move(inferred)),
        inferenceFollows(inferenceFollows),
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
  /// What the analysis inferred on its own IR (Analyzer::setInferShapes),
  /// for the document's InferenceCache at the publish; null when off. Its
  /// functions are shared with the cache, not copied.
  std::shared_ptr<const ShapeInference> inferred;
  /// More of its functions are inferred right after its publish, on the
  /// IR its analysis kept (Scheduler::InferShapes::afterPublish): the
  /// background's fill waits for that.
  bool inferenceFollows = false;
  /// Candidate quick fixes (text only), derived when a code action first
  /// asks, not with every analysis: most versions of a document being typed
  /// are never asked. Each is validated by re-analysis when a code action
  /// asks for it (the verdicts live in its OpenDocument, per version).
  const std::vector<FixData> &fixes() const {
    std::call_once(fixesOnce,
                   [&] { fixesFound = candidateFixes(analysis, text); });
    return fixesFound;
  }
  mutable std::once_flag fixesOnce;
  mutable std::vector<FixData> fixesFound;
  LineTable lines;
  /// `#name = ...` / `!name = ...` and their uses, read from the text once:
  /// by the Scheduler right after the version's publish (a first hover
  /// paid the scan), or by a request that comes first.
  const std::vector<AliasInfo> &aliases() const {
    std::call_once(aliasesOnce, [&] {
      aliasesFound = scanAliases(text, lines.index(), analysis.sections);
    });
    return aliasesFound;
  }
  mutable std::once_flag aliasesOnce;
  mutable std::vector<AliasInfo> aliasesFound;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_SNAPSHOT_H
