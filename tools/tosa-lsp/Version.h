//===- Version.h - what `tosa-lsp --version` prints -------------*- C++ -*-===//
//
// Generated at build time (Version.cpp.in, cmake/GitRevision.cmake): the
// project version, the git revision of the source tree and the MLIR/LLVM
// it was built against.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_VERSION_H
#define TOSA_LSP_VERSION_H

namespace tosa_lsp {
/// "0.1.0" (CMake's PROJECT_VERSION).
extern const char *const kVersion;
/// Short commit hash, "-dirty" when the tree had changes, or "unknown".
extern const char *const kGitRevision;
/// LLVM_PACKAGE_VERSION of the MLIR found at configure time ("22.1.8").
extern const char *const kMLIRVersion;
/// Where that MLIR is (its LLVM prefix, "/usr/lib/llvm-22").
extern const char *const kMLIRPrefix;
/// The Debian package and version it came from ("libmlir-22-dev
/// 1:22.1.8-1~deb12u1"), or "" when not from a Debian package.
extern const char *const kMLIRPackage;
} // namespace tosa_lsp

#endif
