//===- CrashGuard.cpp - contain crashes inside MLIR -----------------------===//

#include "CrashGuard.h"

#include "llvm/Support/CrashRecoveryContext.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tosa_lsp {
namespace {

std::atomic<bool> enabled{true};

/// CrashRecoveryContext installs its handlers without SA_ONSTACK: on a stack
/// overflow the kernel could not run them and the process would die. Add the
/// flag once the handlers are in place.
void installHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::CrashRecoveryContext::Enable();
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) {
      struct sigaction act;
      if (sigaction(sig, nullptr, &act) == 0 && act.sa_handler != SIG_IGN &&
          act.sa_handler != SIG_DFL) {
        act.sa_flags |= SA_ONSTACK;
        sigaction(sig, &act, nullptr);
      }
    }
  });
}

/// One alternate signal stack per thread that runs guarded code, released
/// when the thread ends.
struct AltStack {
  void *memory = nullptr;
  AltStack() {
    stack_t current;
    if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE))
      return; // The thread already has one (e.g. LLVM's own).
    constexpr size_t kSize = 256 * 1024;
    memory = std::malloc(kSize);
    if (!memory)
      return;
    stack_t ss;
    std::memset(&ss, 0, sizeof(ss));
    ss.ss_sp = memory;
    ss.ss_size = kSize;
    if (sigaltstack(&ss, nullptr) != 0) {
      std::free(memory);
      memory = nullptr;
    }
  }
  ~AltStack() {
    if (!memory)
      return;
    stack_t ss;
    std::memset(&ss, 0, sizeof(ss));
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    std::free(memory);
  }
};

std::string describe(int retCode) {
  int sig = retCode - 128;
  switch (sig) {
  case SIGSEGV:
    return "a segmentation fault (an upstream bug or a stack overflow)";
  case SIGBUS:
    return "a bus error";
  case SIGABRT:
    return "an abort (an assertion or a fatal error inside MLIR/LLVM)";
  case SIGFPE:
    return "an arithmetic exception";
  case SIGILL:
    return "an illegal instruction (an unreachable point was reached)";
  default:
    return "signal " + std::to_string(sig);
  }
}

} // namespace

void setCrashRecovery(bool on) { enabled = on; }
bool crashRecoveryEnabled() { return enabled; }

std::optional<std::string> runContained(llvm::function_ref<void()> fn) {
  if (!enabled) {
    fn();
    return std::nullopt;
  }
  installHandlers();
  thread_local AltStack altStack;
  (void)altStack;
  llvm::CrashRecoveryContext crc;
  if (crc.RunSafely(fn))
    return std::nullopt;
  return describe(crc.RetCode);
}

} // namespace tosa_lsp
