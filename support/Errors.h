//===- Errors.h - how the libraries report failure --------------*- C++ -*-===//
//
// One error style across library boundaries: an entry point that can fail
// returns llvm::Expected<T> (or llvm::Error). A failure is one of two kinds:
//
// - Problems in the input text: MLIR's diagnostics, and whatever else is
//   about a place in the file (MLIR crashing on it, a signature with no C
//   type). A SourceErrors holds them all as data, each printed on a line of
//   its own in mlir-opt's form `file:line:col: error: message`.
// - Everything else (a request that cannot be met, bad argument values,
//   output files, target, linker, JIT): an llvm::StringError whose message
//   is one line describing the thing. Its error code may be an ErrorTopic,
//   naming what the caller has to supply or change, so that a front end can
//   point at its own option for it.
//
// Library messages never carry a program name ("tosa-lsp:"), a severity
// ("error:") or a command-line flag: the CLI prints plain errors as
// `tosa-lsp: error: MESSAGE` and adds its flag hints, the server puts its
// own headline first. Several failures are joined (llvm::joinErrors);
// llvm::toString gives every line, in order, newline-separated.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SUPPORT_ERRORS_H
#define TOSA_LSP_SUPPORT_ERRORS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tosa_lsp {

/// What the caller has to supply or change to get past a failure.
enum class ErrorTopic {
  Function = 1, // a function to work on (none given, or several to pick from)
  Inputs,       // the argument values given
  Shapes,       // the shapes asked for random arguments
  Output,       // an output path
  OutputExists, // permission to replace an existing output
};

/// A one-line failure, optionally about a topic.
llvm::Error makeError(const llvm::Twine &message);
llvm::Error makeError(ErrorTopic topic, const llvm::Twine &message);

/// The topic of a failure made by makeError(topic, ...), if any.
std::optional<ErrorTopic> topicOf(const llvm::ErrorInfoBase &error);

/// A problem at a place in the input.
struct SourceDiagnostic {
  std::string file;
  unsigned line = 0, column = 0; // 1-based; 0 when not known
  std::string message;
  /// mlir-opt's form `file:line:col: error: message` (`file: error: ...`
  /// without a line, `file:line: error: ...` without a column).
  std::string str() const;
};

/// Diagnostics about the input, as data (see the file comment).
class SourceErrors : public llvm::ErrorInfo<SourceErrors> {
public:
  static char ID;
  explicit SourceErrors(std::vector<SourceDiagnostic> diagnostics)
      : diags(std::move(diagnostics)) {}
  const std::vector<SourceDiagnostic> &diagnostics() const { return diags; }
  /// The diagnostics' str(), one per line.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::vector<SourceDiagnostic> diags;
};

/// A SourceErrors of `diagnostics`; success when there are none.
llvm::Error sourceErrors(std::vector<SourceDiagnostic> diagnostics);
/// A SourceErrors of one diagnostic.
llvm::Error sourceError(const std::string &file, unsigned line, unsigned column,
                        const std::string &message);

} // namespace tosa_lsp

#endif // TOSA_LSP_SUPPORT_ERRORS_H
