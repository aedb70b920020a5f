//===- CrashGuard.h - contain crashes inside MLIR ---------------*- C++ -*-===//
//
// Upstream code can crash on input it does not expect (verifiers reading a
// missing attribute, lowering bugs, recursion deeper than any stack). The
// server must outlive all of that, so such calls run under LLVM's
// CrashRecoveryContext with an alternate signal stack (a stack overflow has
// no stack left for the handler otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_CRASHGUARD_H
#define TOSA_LSP_ANALYSIS_CRASHGUARD_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace tosa_lsp {

/// Runs `fn`. If it crashes (SIGSEGV including stack overflow, SIGABRT from
/// an assertion or a fatal error, SIGFPE, SIGILL, SIGBUS) returns what
/// happened instead; whatever `fn` was working on must then be treated as
/// lost: leaked, never destroyed or reused. Unwinding is by longjmp, so
/// destructors inside `fn` do not run.
std::optional<std::string> runContained(llvm::function_ref<void()> fn);

/// Crash recovery is on by default. Fuzzers turn it off so that a crash is
/// reported as one instead of being turned into a diagnostic.
void setCrashRecovery(bool enabled);
bool crashRecoveryEnabled();

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_CRASHGUARD_H
