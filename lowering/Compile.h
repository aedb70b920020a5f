//===- Compile.h - TOSA to native code --------------------------*- C++ -*-===//
//
// TOSA -> linalg -> one-shot bufferize -> loops -> LLVM dialect (MLIR's own
// passes, see pipelineFor) -> LLVM IR -> optimised -> x86-64 object through
// the LLVM TargetMachine; a shared library through the system linker; a C
// header declaring the `_mlir_ciface_*` entry points.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_COMPILE_H
#define TOSA_LSP_LOWERING_COMPILE_H

#include "Errors.h"
#include "Lowering.h"
#include "OutputFiles.h"

#include <functional>
#include <string>
#include <vector>

namespace tosa_lsp {

enum class EmitKind { Object, Shared, LLVMIR, Asm, MLIRLLVM };
std::optional<EmitKind> parseEmit(const std::string &s);

struct CompileOptions {
  std::string function; // empty: every function of the (single) section
  EmitKind emit = EmitKind::Object;
  std::string output; // required (ErrorTopic::Output when empty)
  /// Also write OUTPUT-without-extension.h; an entry point whose name is
  /// not a C identifier is then an error, unless `headerIfPossible`: then
  /// no header is written and the log says why (the server's compile jobs,
  /// which always ask for one).
  bool header = false;
  bool headerIfPossible = false;
  /// When OUTPUT (or its header) exists. Outputs are only ever created
  /// exclusively or renamed into place, never written through a symlink.
  OnExisting onExisting = OnExisting::Fail;
  /// Files never to replace, compared by identity (the input file).
  std::vector<std::string> protectedPaths;
  LowerMode mode = LowerMode::Fast;
  /// Outside upstream mode: entry points accept any strides (slower).
  bool strided = false;
  unsigned optLevel = 2;
  /// LLVM CPU name; "native" is the host CPU with its features.
  std::string cpu = "native";
  /// Outside upstream mode: loop nests that store at least this many bytes
  /// use non-temporal stores (StreamingStores.h). 0: the default for `cpu`;
  /// UINT64_MAX: never.
  uint64_t streamThreshold = 0;
  /// Above 1: matmuls and convolutions on this many threads (OpenMP; the
  /// library then needs libomp); 0: the running machine's (OpenMP's
  /// default). Only with the host's kernels (cpu native).
  unsigned threads = 1;
  /// Constants whose data is elided: an error naming them, unless filled.
  ElidedFill elided{ElidedData::Refuse, 0};
};

struct CompileResult {
  std::string output; // the path written (OUTPUT-1.so with NewName)
  std::string headerPath;
  /// Defined external functions of the result (for obj/shared/asm/ir).
  std::vector<std::string> symbols;
  size_t bytes = 0;
  /// What was done, step by step (pipeline, target, linker command): the
  /// lines given to `progress`.
  std::string log;
};

/// Compiles the file, or the section defining `options.function`, and
/// writes the outputs. Errors (Errors.h): MLIR's diagnostics as
/// SourceErrors; otherwise one-line messages (writeOutputs' among them,
/// ErrorTopic::OutputExists when an output exists and may not be replaced).
/// Nothing is written on failure.
llvm::Expected<CompileResult>
compile(const std::string &text, const std::string &path,
        const CompileOptions &options,
        const std::function<void(const std::string &)> &progress = {});

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_COMPILE_H
