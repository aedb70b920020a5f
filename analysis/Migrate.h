//===- Migrate.h - rewrite pre-MLIR-22 TOSA into TOSA 1.0 -------*- C++ -*-===//
//
// Files written for TOSA before MLIR 22 (`tosa.const {value = ...}`,
// `tosa.mul` with a `shift` attribute, `tosa.reshape` with `new_shape`, ...)
// parse in MLIR 22 but fail to verify. `planMigration` parses the file with
// MLIR (TOSA ops it no longer knows are kept as unknown ops), finds each op
// in an old form from its operands and attributes, and rewrites its source
// range (from AsmParserState) into the MLIR 22 form. Plain data out.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_MIGRATE_H
#define TOSA_LSP_ANALYSIS_MIGRATE_H

#include "Analysis.h"
#include "PositionMap.h"
#include "TextEdit.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

/// One old-form op and the edits that turn it into its MLIR 22 form.
struct MigrationFix {
  std::string opName; // tosa.mul
  Range nameRange;    // the op name in the file
  unsigned section = 0;
  std::string title; // "Migrate tosa.mul to MLIR 22: shift attribute -> ..."
  /// New constants inserted before the statement, then the op rewritten
  /// (that edit comes last and its text starts with the op name).
  std::vector<TextEditData> edits;
};

/// An old-form op with no mechanical rewrite, and what replaces it.
struct MigrationNote {
  std::string opName;
  Range nameRange;
  unsigned section = 0;
  std::string message;
};

struct MigrationPlan {
  std::vector<MigrationFix> fixes;
  std::vector<MigrationNote> manual;
};

/// Cheap test on the text: could the file hold pre-MLIR-22 TOSA at all?
bool mayNeedMigration(const std::string &text);

/// Every rewrite of the file (sections that do not parse contribute none).
MigrationPlan planMigration(const std::string &text);

/// For a diagnostic on a pre-MLIR-22 form (a TOSA op MLIR 22 removed, a
/// padded size the stride does not divide): what to do.
std::optional<std::string> migrationAdvice(std::string_view message);

/// The text with every fix of `plan` applied; `map` (if given) maps
/// positions between `text` and the result.
std::string applyMigration(const std::string &text, const MigrationPlan &plan,
                           PositionMap *map = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_MIGRATE_H
