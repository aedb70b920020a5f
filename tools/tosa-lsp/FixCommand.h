//===- FixCommand.h - `fix`: quick fixes, migration, refinement -*- C++ -*-===//
//
// The rewrites the server offers as code actions, from the command line:
// the validated quick fixes (listed, or one applied), the migration to
// MLIR 22 TOSA (--migrate), and every shape MLIR's shape inference refines
// (--refine-all). See CommandSupport.h for the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_FIXCOMMAND_H
#define TOSA_LSP_TOOLS_FIXCOMMAND_H

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp::cli {

struct FixOptions {
  std::vector<std::string> files; // exactly one FILE
  std::string format;             // text (""), json
  std::string config;             // "": the .tosa-lsp.json next to FILE
  /// List (and index) every candidate fix, validated or not.
  bool candidates = false;
  /// Print FILE with fix N of the listing applied.
  std::optional<unsigned> apply;
  /// Print FILE migrated to MLIR 22 TOSA.
  bool migrate = false;
  /// Print FILE with every refinable `?` set.
  bool refineAll = false;
  /// --refine-all in this function only (`@` allowed); given empty is an
  /// error.
  std::optional<std::string> function;
};

int runFix(const FixOptions &opts, llvm::raw_ostream &out,
           llvm::raw_ostream &err);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_FIXCOMMAND_H
