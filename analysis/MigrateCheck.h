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

#include <string>
#include <vector>

namespace tosa_lsp {

struct MigrationOutcome {
  MigrationPlan plan;
  std::string text; // the migrated file
  /// Every op left failing, in lines of the original file: the plan's
  /// manual list, then each error the migrated text still has.
  std::vector<MigrationNote> left;
  /// The migrated file re-analyses worse than the original (a section stops
  /// parsing, or more errors): not to be offered.
  bool worse = false;
  bool verifies() const { return !worse && left.empty(); }
};

MigrationOutcome migrateAndCheck(Analyzer &analyzer, const FileAnalysis &fa,
                                 const std::string &text, const Config &config);

/// The line in the original text of `line` (1-based) of the text with
/// `edits` applied; a line an edit wrote maps to the edit's first line.
unsigned originalLine(const std::vector<TextEditData> &edits, unsigned line);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_MIGRATECHECK_H
