//===- CompileJob.h - native compilation in a child process -----*- C++ -*-===//
//
// The server never compiles in its own process: it runs `tosa-lsp compile`
// as a child with a time and memory limit, streams its steps as progress,
// kills it on cancellation, and turns any failure (including a crash of the
// child) into an error message.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_COMPILEJOB_H
#define TOSA_LSP_SERVER_COMPILEJOB_H

#include "llvm/Support/JSON.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace tosa_lsp {

struct CompileJob {
  std::string self;     // path of the tosa-lsp binary
  std::string text;     // the document as the editor has it (maybe unsaved)
  std::string name;     // file name, for messages and the output's name
  std::string function; // empty: the whole file
  std::string emit = "shared";
  std::string mode = "fast"; // fast | upstream | safe | versioned
  std::string source;        // the document's file: never replaced
  std::string outputDir;     // empty: a new temp directory
  /// Set when outputDir comes from a project's .tosa-lsp.json: the output
  /// directory must resolve inside this directory (Config::outputDirRoot).
  std::string outputDirRoot;
  bool overwrite = false; // replace existing outputs, else OUT-1.so, ...
  unsigned timeoutSeconds = 120;
  unsigned memoryLimitMB = 4096;
  unsigned threads = 1; // compile --threads (0: the machine's)
};

/// What `tosa-lsp compile --format=json` reports of a success.
struct CompileOutputs {
  std::string output;
  std::string header; // empty: none written
  std::vector<std::string> symbols;
  uint64_t bytes = 0;
  std::string log; // the steps, one a line
};
/// Reads the child's report (its `ok` and `errors` are not read here).
bool fromJSON(const llvm::json::Value &v, CompileOutputs &out,
              llvm::json::Path path);

struct CompileJobResult {
  bool ok = false;
  bool cancelled = false;
  std::string error;
  CompileOutputs result; // when ok
};

CompileJobResult
runCompileJob(const CompileJob &job,
              const std::function<void(const std::string &)> &progress,
              const std::atomic<bool> &cancel);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_COMPILEJOB_H
