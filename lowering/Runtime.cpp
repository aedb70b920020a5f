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

std::string missingCompilerMessage() {
  return "no C compiler driver `cc` on PATH to link the shared library: "
         "install the Debian packages gcc and libc6-dev (apt-get install gcc "
         "libc6-dev), or emit an object file (--emit=obj)";
}

} // namespace tosa_lsp
