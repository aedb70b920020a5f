//===- LowerCommand.h - `lower`, `compile` and `run` ------------*- C++ -*-===//
//
// The commands that go through MLIR's lowering: the lowered IR (`lower`),
// native code (`compile`) and a JIT call (`run`). Stage, mode and emit
// names are kept as given and checked against the lowering's table
// (Choices.h). See CommandSupport.h for the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_LOWERCOMMAND_H
#define TOSA_LSP_TOOLS_LOWERCOMMAND_H

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp::cli {

struct LowerCommandOptions {
  std::vector<std::string> files;      // exactly one FILE
  std::string format;                  // text (""), json
  std::optional<std::string> function; // `@` allowed; given empty: error
  std::string stage = "linalg";
  std::string mode = "fast";
  bool strided = false;
  bool annotate = false;
  /// --threads: 1 to Config::Compile::maxThreads; 0: the running machine's.
  unsigned threads = 1;
  /// --fill-elided: zeros, ones, random[:SEED]; not given: elided constants
  /// stay (a warning names them).
  std::optional<std::string> fillElided;
};

/// Exit code 1 when the lowering fails.
int runLower(const LowerCommandOptions &opts, llvm::raw_ostream &out,
             llvm::raw_ostream &err);

struct CompileCommandOptions {
  std::vector<std::string> files; // exactly one FILE
  std::string format;             // text (""), json
  std::optional<std::string> function;
  std::string output; // -o, required
  std::string emit = "obj";
  std::string mode = "fast";
  bool strided = false;
  std::string cpu = "native";
  /// auto (the L2 cache size), off, or a size (4096, 512K, 4M, 1G).
  std::string streamingStores = "auto";
  unsigned optLevel = 2;
  unsigned threads = 1;
  bool header = false;
  bool force = false;
  bool newName = false;
  /// Progress lines (`tosa-lsp: STEP`) on `err` unless set.
  bool quiet = false;
  // For the server's compile jobs, which compile a temp copy of a buffer:
  /// A header unless a name is not a C identifier.
  bool headerIfPossible = false;
  /// Paths never written (the buffer's file).
  std::vector<std::string> protect;
  /// The name diagnostics give FILE ("": FILE's own).
  std::string displayName;
  /// --fill-elided; not given: elided constants are an error.
  std::optional<std::string> fillElided;
};

/// Exit code 1 when the compilation fails.
int runCompile(const CompileCommandOptions &opts, llvm::raw_ostream &out,
               llvm::raw_ostream &err);

struct RunCommandOptions {
  std::vector<std::string> files;      // exactly one FILE
  std::string format;                  // json ("")
  std::optional<std::string> function; // required
  /// Exactly one of the two: the arguments as JSON, or a seed.
  std::optional<std::string> inputs;
  std::optional<unsigned> seed;
  std::vector<std::string> shapes; // of dynamic arguments, with `seed`
  std::string mode = "fast";
  unsigned optLevel = 2;
  unsigned threads = 1;
  /// A size (4096, 512K, 4M, 1G); not given: the lowering's default.
  std::optional<std::string> maxBytes;
  /// --fill-elided; not given: elided constants are an error.
  std::optional<std::string> fillElided;
};

/// Exit code 1 when the function cannot be compiled or run.
int runRun(const RunCommandOptions &opts, llvm::raw_ostream &out,
           llvm::raw_ostream &err);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_LOWERCOMMAND_H
