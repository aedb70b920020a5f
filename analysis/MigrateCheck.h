//===- MigrateCheck.h - the migrated file, checked --------------*- C++ -*-===//
//
// `fix --migrate` and the editor's migration promise a file that verifies,
// or the exact list of what is left: the migrated text is re-analysed by the
// same Analyzer the server uses, and every op left failing is named with its
// line in the original file and the reason.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_MIGRATECHECK_H
#define TOSA_LSP_ANALYSIS_MIGRATECHECK_H

#include "Analysis.h"
#include "Config.h"
#include "Migrate.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

struct MigrationOutcome {
  MigrationPlan plan;
  std::string text; // the migrated file
  /// Positions between the original file and `text`.
  PositionMap map;
  /// `text` analysed; null when the plan rewrote nothing.
  std::shared_ptr<const FileAnalysis> analysis;
  /// Every op left failing, in lines of the original file: the plan's
  /// manual list, then each error the migrated text still has.
  std::vector<MigrationNote> left;
  /// The migrated file re-analyses worse than the original (a section stops
  /// parsing, or more errors): not to be offered.
  bool worse = false;
  /// `stop` said so before the migrated text was analysed: nothing else set.
  bool stopped = false;
  bool verifies() const { return !worse && left.empty(); }
};

/// `stop` (if given) is asked between the planning and the analysis, the
/// two long steps (the server's background stops for a newer version).
MigrationOutcome migrateAndCheck(Analyzer &analyzer, const FileAnalysis &fa,
                                 const std::string &text, const Config &config,
                                 const std::function<bool()> &stop = nullptr);

/// The whole-file action's title: the ops it rewrites and, never silent,
/// how many are left and the first of them (by line).
std::string migrateFileTitle(size_t rewritten,
                             const std::vector<MigrationNote> &left);

/// Whether `fa` has an error of the kind pre-MLIR-22 TOSA gets (an op with
/// the old operands or attributes, a removed op, an old attribute): a cheap
/// look at the messages, deciding whether a migration is worth trying.
bool hasOldFormErrors(const FileAnalysis &fa);

/// The one diagnostic for all of a file's old forms (not one per op: a
/// converted model has thousands), at the first: how many ops use them,
/// which, what the migration leaves, and that hover and inlay hints answer
/// from the migrated form meanwhile. None when nothing is migrated.
std::optional<Diagnostic> oldFormsSummary(const MigrationOutcome &m);

/// The line in the original text of `line` (1-based) of the text with
/// `edits` applied; a line an edit wrote maps to the edit's first line.
unsigned originalLine(const std::vector<TextEditData> &edits, unsigned line);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_MIGRATECHECK_H
