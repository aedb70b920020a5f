//===- CommandSupport.h - what every command shares -------------*- C++ -*-===//
//
// The one wording of CLI errors (`tosa-lsp: error: MESSAGE`), usage errors
// (exit 2, with a pointer to --help), and the checks several commands make
// of their options: --format, --function, one FILE, FILE and its
// configuration.
//
// Every command is `int runX(const XOptions &, raw_ostream &out,
// raw_ostream &err)`: it prints its result on `out`, errors on `err`, and
// returns the exit code (0 ok, 1 the command failed or found errors, 2
// unusable input or usage error). main.cpp fills the options from the
// command line; tests fill them directly.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_COMMANDSUPPORT_H
#define TOSA_LSP_TOOLS_COMMANDSUPPORT_H

#include "Analysis.h"
#include "Config.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tosa_lsp::cli {

/// `tosa-lsp: error: MESSAGE`.
std::string errorLine(const std::string &message);

/// Prints `message` as an error line.
void printError(llvm::raw_ostream &err, const std::string &message);

/// The lines a library error prints as: diagnostics about the input in
/// mlir-opt's form `file:line:col: error: ...`, anything else as an error
/// line naming the option it is about (`(--function)`).
std::vector<std::string> errorLines(llvm::Error e);
void printError(llvm::raw_ostream &err, llvm::Error e);

/// Prints `message` and where the usage is; returns 2.
int usageError(llvm::raw_ostream &err, const std::string &message);

/// `format` checked against what the command prints (`allowed`; "" is the
/// first), or std::nullopt after a usage error (`rc` is 2).
std::optional<std::string>
formatOrReport(const std::string &format,
               const std::vector<std::string> &allowed, llvm::raw_ostream &err,
               int &rc);

/// The function --function names (`@add` as MLIR spells it, or `add`): ""
/// when not given, std::nullopt after a usage error when given empty.
std::optional<std::string>
functionOrReport(const std::optional<std::string> &function,
                 llvm::raw_ostream &err, int &rc);

/// --function, then --format (text or json), as the commands that print a
/// file or one function check them: std::nullopt after a usage error.
struct FunctionAndFormat {
  std::string function, format;
};
std::optional<FunctionAndFormat>
functionAndFormatOrReport(const std::optional<std::string> &function,
                          const std::string &format, llvm::raw_ostream &err,
                          int &rc);

/// Exactly one FILE, or std::nullopt after a usage error.
std::optional<std::string> oneFile(const char *command,
                                   const std::vector<std::string> &files,
                                   llvm::raw_ostream &err, int &rc);

/// The file's text, or std::nullopt after printing why it is unusable.
std::optional<std::string> readOrReport(const std::string &path,
                                        llvm::raw_ostream &err);

/// The file's text and configuration (`configPath`, or the .tosa-lsp.json
/// found next to the file), or std::nullopt after printing why they are
/// unusable.
std::optional<std::pair<std::string, Config>>
readWithConfig(const std::string &path, const std::string &configPath,
               llvm::raw_ostream &err);

/// Splits "file.mlir:12:8" (or "file.mlir:12") into path and position
/// (1-based line, byte column; invalid when not given), preferring an
/// existing file of the full name (paths may contain ':').
void splitPosition(const std::string &arg, std::string &path, Position &pos);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_COMMANDSUPPORT_H
