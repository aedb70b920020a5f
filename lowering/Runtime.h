//===- Runtime.h - what run/compile need outside the binary -----*- C++ -*-===//
//
// `run` loads MLIR's C runner utils (memrefCopy) into the JIT and `compile
// --emit=shared` links it and calls the system's `cc`. Neither is part of
// the tosa-lsp binary: when one is missing the error says which Debian
// package provides it.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_RUNTIME_H
#define TOSA_LSP_RUNTIME_H

#include "llvm/Support/Error.h"

#include <string>

namespace tosa_lsp {

/// MLIR's runtime library: the versioned file of the runtime package
/// (/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so.22.1, Debian's
/// libmlir-22; the unversioned .so is only in libmlir-22-dev).
/// $TOSA_LSP_MLIR_RUNTIME overrides it.
std::string mlirRuntimePath();

/// The Debian package that provides it ("libmlir-22"), or "" if unknown.
std::string mlirRuntimePackage();

/// mlirRuntimePath() if the file exists, else an error naming the package
/// to install. `what` says what needs it ("run: @f calls memrefCopy").
llvm::Expected<std::string> requireMlirRuntime(const std::string &what);

/// LLVM's OpenMP runtime (libomp.so.5), which `--threads` code calls
/// (__kmpc_fork_call): $TOSA_LSP_OPENMP_RUNTIME, else the first that exists
/// of the system's (Debian's libomp5) and LLVM's own directories; an error
/// naming the package when there is none. `what` says what needs it.
llvm::Expected<std::string> requireOpenMPRuntime(const std::string &what);

/// The error when `cc` (the C compiler driver that links a shared library)
/// is not on PATH.
std::string missingCompilerMessage();

} // namespace tosa_lsp

#endif
