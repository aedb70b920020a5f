//===- CodeActions.h - quick fixes for broadcast problems -------*- C++ -*-===//
//
// Fixes travel with the diagnostics they repair (like clangd): they are
// computed with each analysis and validated by re-analysing the edited text,
// so only edits that make the op verify (and break nothing else) are
// offered.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_CODEACTIONS_H
#define TOSA_LSP_ANALYSIS_CODEACTIONS_H

#include "Analysis.h"
#include "Config.h"
#include "TextEdit.h"

namespace tosa_lsp {

struct FixData {
  enum Kind {
    ResultType,
    RefineResult,
    ReshapeOperand,
    /// One pre-MLIR-22 TOSA op rewritten (Migrate.h).
    Migrate,
    /// Every Migrate fix of the file at once (a source action).
    MigrateFile
  } kind;
  std::string title;
  std::vector<TextEditData> edits;
  /// Index into FileAnalysis::diagnostics of the diagnostic it repairs.
  size_t diagnostic = 0;
  bool preferred = false;
  /// Migrate: the op's name, which the rewrite keeps on its line and column
  /// (below the constants it inserts).
  Position target;
};

/// Candidate fixes, not yet validated: (a) replace a wrong static result
/// dimension with the inferred one (updating users and the function
/// signature when the value is returned), (b) refine `?` result dims to the
/// inferred sizes, keeping users on the old type through a `tensor.cast`,
/// (c) for TOSA rank mismatches, reshape the lower-rank operand with leading
/// 1s (`tosa.const_shape` + `tosa.reshape`); (d) rewrite pre-MLIR-22 TOSA ops
/// (Migrate.h), one by one and, last, the whole file at once.
std::vector<FixData> candidateFixes(const FileAnalysis &fa,
                                    const std::string &text);

/// Whether the edited file, re-analysed, has fewer errors in the fixed
/// section (the same number for refinements) and still parses. Only the
/// fixed section is re-analysed. A Migrate fix must leave no error at the
/// rewritten op (its users may now report theirs); MigrateFile must keep
/// every section that parsed parsing and not add errors to the file.
bool validateFix(Analyzer &analyzer, const FileAnalysis &fa,
                 const std::string &text, const Config &config,
                 const FixData &fix);

/// The candidates that pass validateFix; at most `limit` are tried.
std::vector<FixData> validatedFixes(Analyzer &analyzer, const FileAnalysis &fa,
                                    const std::string &text,
                                    const Config &config, size_t limit = 32);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_CODEACTIONS_H
