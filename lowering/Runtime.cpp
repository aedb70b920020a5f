//===- Runtime.cpp - what run/compile need outside the binary -------------===//

#include "Runtime.h"

#include "Errors.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

namespace tosa_lsp {

std::string mlirRuntimePath() {
  if (const char *env = std::getenv("TOSA_LSP_MLIR_RUNTIME"); env && *env)
    return env;
  return TOSA_LSP_MLIR_RUNTIME;
}

std::string mlirRuntimePackage() { return TOSA_LSP_MLIR_RUNTIME_PACKAGE; }

llvm::Expected<std::string> requireMlirRuntime(const std::string &what) {
  std::string path = mlirRuntimePath();
  if (llvm::sys::fs::exists(path))
    return path;
  std::string pkg = mlirRuntimePackage();
  return makeError(what + " needs MLIR's runtime library " + path +
                   ", which is missing: install " +
                   (pkg.empty() ? std::string("the package that provides it")
                                : "the Debian package " + pkg +
                                      " (apt-get install " + pkg + ")"));
}

llvm::Expected<std::string> requireOpenMPRuntime(const std::string &what) {
  if (const char *env = std::getenv("TOSA_LSP_OPENMP_RUNTIME"); env && *env) {
    if (llvm::sys::fs::exists(env))
      return std::string(env);
    return makeError(what + " needs libomp: TOSA_LSP_OPENMP_RUNTIME names " +
                     env + ", which does not exist");
  }
  // The ABI of __kmpc_fork_call and the static loop schedule has not
  // changed since LLVM 3.x: bookworm's libomp5-14 runs LLVM 22's calls.
  for (const char *path :
       {"/usr/lib/x86_64-linux-gnu/libomp.so.5",
        "/usr/lib/aarch64-linux-gnu/libomp.so.5",
        "/usr/lib/llvm-22/lib/libomp.so.5", "/usr/lib/libomp.so.5",
        "/usr/local/lib/libomp.so.5"})
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  return makeError(what +
                   " needs LLVM's OpenMP runtime libomp.so.5, which is "
                   "missing: install the Debian package libomp5 (apt-get "
                   "install libomp5), or set TOSA_LSP_OPENMP_RUNTIME to its "
                   "path; without --threads nothing needs it");
}

std::string missingCompilerMessage() {
  return "no C compiler driver `cc` on PATH to link the shared library: "
         "install the Debian packages gcc and libc6-dev (apt-get install gcc "
         "libc6-dev), or emit an object file (--emit=obj)";
}

} // namespace tosa_lsp
