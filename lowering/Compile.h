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
  std::string output;  // required
  bool header = false; // also write OUTPUT-without-extension.h
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
};

struct CompileResult {
  bool ok = false;
  std::string output; // the path written (OUTPUT-1.so with NewName)
  std::string headerPath;
  /// Defined external functions of the result (for obj/shared/asm/ir).
  std::vector<std::string> symbols;
  size_t bytes = 0;
  /// What was done, step by step (pipeline, target, linker command).
  std::string log;
  std::vector<std::string> errors;
};

CompileResult
compile(const std::string &text, const std::string &path,
        const CompileOptions &options,
        const std::function<void(const std::string &)> &progress = {});

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_COMPILE_H
