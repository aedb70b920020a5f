//===- OldSyntax.h - a pre-MLIR-22 file seen as migrated --------*- C++ -*-===//
//
// MLIR 22 stops at the first pre-MLIR-22 TOSA form of a file (a parse
// error, or a verifier error whose consumers are skipped), so an old-syntax
// file would show one error and answer hover almost nowhere. After the
// publish of such a version, the server migrates it in the background
// (migrateAndCheck, off the main thread, dropped once a newer version
// exists) and keeps the result beside the version: one summary diagnostic
// for all the old forms, the complete title of the migration action, and
// hover and inlay hints answered from the migrated text through the
// migration's PositionMap, with a note saying so.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_OLDSYNTAX_H
#define TOSA_LSP_SERVER_OLDSYNTAX_H

#include "Graph.h"
#include "MigrateCheck.h"
#include "ShapeInference.h"
#include "Snapshot.h"

#include "llvm/Support/LSP/Protocol.h"

#include <memory>
#include <mutex>
#include <optional>

namespace tosa_lsp {

/// One version's migrated form; shared, immutable but for its shapes.
struct MigratedView {
  int64_t version = 0;
  std::string config; // Config::fingerprint() of the version
  SharedString text;  // the version's own (old-syntax) text
  /// The migration of the version's text, checked (its `text` moved into
  /// `snapshot`).
  MigrationOutcome outcome;
  /// The migrated text as requests read it; null when nothing was migrated.
  SnapshotPtr snapshot;
  /// The diagnostic published for all the old forms.
  std::optional<Diagnostic> summary;

  /// MLIR's shape inference of the migrated text (inlay hints, hover's
  /// inferred types), once the background has it: after the summary is
  /// published, which it would delay by as long again as the migration.
  std::shared_ptr<const ShapeInference> shapes() const {
    std::lock_guard<std::mutex> lock(mu);
    return inferred;
  }
  void setShapes(std::shared_ptr<const ShapeInference> s) const {
    std::lock_guard<std::mutex> lock(mu);
    inferred = std::move(s);
  }

private:
  mutable std::mutex mu;
  mutable std::shared_ptr<const ShapeInference> inferred;
};

/// `s`'s migration, checked by `analyzer`; null when `stop` said so first.
std::shared_ptr<MigratedView> migrateVersion(Analyzer &analyzer,
                                             const Snapshot &s,
                                             const std::function<bool()> &stop);

/// Whether a version is worth migrating in the background: it has errors of
/// the kind old forms get. Files without them pay only this look.
bool worthMigrating(const Snapshot &s);

/// Hover at `pos` of the old text `s`, answered from `v`'s migrated text.
std::optional<llvm::lsp::Hover> migratedHover(const Snapshot &s,
                                              const MigratedView &v,
                                              llvm::lsp::Position pos);
/// Inlay hints for `range` of the old text, from the migrated text; hints
/// inside text the migration rewrote are left out.
std::vector<llvm::lsp::InlayHint> migratedInlayHints(const Snapshot &s,
                                                     const MigratedView &v,
                                                     llvm::lsp::Range range);

/// `v`'s summary moved to where its text is in `s`, a later version still
/// in old syntax whose own migration has not arrived: shown meanwhile, so
/// that it does not blink out at each keystroke. None where its range was
/// edited away.
std::optional<Diagnostic> carriedSummary(const MigratedView &v,
                                         const Snapshot &s);

/// Definition and references at `pos` of the old text `s`, from `v`'s
/// migrated text; ranges the migration wrote (which are nowhere in the
/// user's text) are left out.
std::vector<Range> migratedDefinition(const Snapshot &s, const MigratedView &v,
                                      llvm::lsp::Position pos);
std::vector<Range> migratedReferences(const Snapshot &s, const MigratedView &v,
                                      llvm::lsp::Position pos,
                                      bool includeDeclaration);

/// The graph of the function at `pos` (or named `function`) of the old
/// text, built from `v`'s migrated text with its shapes; ranges mapped back
/// to the old text (ops the migration inserted point at the op they
/// replace). Null when the migrated text has no such function.
std::optional<FunctionGraph>
migratedGraph(const Snapshot &s, const MigratedView &v,
              std::optional<llvm::lsp::Position> pos,
              const std::optional<std::string> &function);
/// The name of that function in `v`'s migrated text, if it has it.
std::optional<std::string>
migratedGraphFunction(const Snapshot &s, const MigratedView &v,
                      std::optional<llvm::lsp::Position> pos,
                      const std::optional<std::string> &function);
/// A graph of `v`'s migrated text with its ranges in the old text.
void mapGraphBack(const MigratedView &v, FunctionGraph &g);

/// What hover adds to an answer from the migrated form.
extern const char *const kMigratedFormNote;

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_OLDSYNTAX_H
