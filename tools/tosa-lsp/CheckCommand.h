//===- CheckCommand.h - `check` and `explain` -------------------*- C++ -*-===//
//
// The commands that report on files as they are: `check` (diagnostics in
// mlir-opt's format or JSON) and `explain` (per-dimension broadcast tables
// and MLIR's shape inference). See CommandSupport.h for the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_CHECKCOMMAND_H
#define TOSA_LSP_TOOLS_CHECKCOMMAND_H

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp::cli {

struct CheckOptions {
  std::vector<std::string> files; // `-` is standard input
  std::string format;             // text (""), json
  std::string config;             // "": the .tosa-lsp.json next to FILE
  bool lenient = false;
  bool showInfo = false;
  bool inferShapes = false;
  /// --validate[=ITEMS] (ValidateTarget.h): given, even empty, runs MLIR's
  /// tosa-validate on each section that verifies (over the config's).
  std::optional<std::string> validate;
  /// Like clang's -disable-free: the last file's analysis and MLIR's
  /// contexts are left for the OS to take back at exit (the caller exits
  /// at once, without cleanup) instead of being freed object by object.
  bool disableFree = false;
};

/// Exit code 0 clean, 1 some file has errors, 2 some file is unusable.
int runCheck(const CheckOptions &opts, llvm::raw_ostream &out,
             llvm::raw_ostream &err);

struct ExplainOptions {
  std::vector<std::string> files; // exactly one FILE[:LINE[:COL]]
  std::string format;             // text (""), markdown, json
  std::string config;
  bool lenient = false;
};

/// A report: errors in the input are part of it, so only unusable input
/// (exit 2) makes it fail.
int runExplain(const ExplainOptions &opts, llvm::raw_ostream &out,
               llvm::raw_ostream &err);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_CHECKCOMMAND_H
