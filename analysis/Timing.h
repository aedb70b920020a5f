//===- Timing.h - optional phase timing -------------------------*- C++ -*-===//
//
// `TOSA_LSP_TIMING=1` prints how long each phase of the document pipeline
// took, to stderr: the figures behind bench/ and the performance notes.
// Off, a phase costs one branch.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TIMING_H
#define TOSA_LSP_ANALYSIS_TIMING_H

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace tosa_lsp {

class PhaseTimer {
public:
  explicit PhaseTimer(const char *what) : what(what) {}
  ~PhaseTimer() {
    if (!enabled())
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    // The thread, as phases of a section's parts run on two at once.
    std::string line; // written at once: threads' lines do not interleave
    llvm::raw_string_ostream os(line);
    os << "tosa-lsp timing: [" << gettid() % 1000 << "] " << what << " "
       << llvm::format("%.1f", ms) << " ms (RSS " << rssMiB() << " MiB)\n";
    llvm::errs() << line;
  }
  /// Resident set size now, from /proc/self/statm (0 where absent): the
  /// memory figures of bench/ are attributed to phases with it.
  static unsigned long rssMiB() {
    unsigned long size = 0, resident = 0;
    if (FILE *f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
      std::fclose(f);
    }
    return resident * 4096 / (1024 * 1024);
  }
  static bool enabled() {
    static const bool on = [] {
      const char *v = std::getenv("TOSA_LSP_TIMING");
      return v && *v && *v != '0';
    }();
    return on;
  }

private:
  const char *what;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

inline void timingMark(const char *what) {
  if (!PhaseTimer::enabled())
    return;
  // Milliseconds on the monotonic clock (as a client's timestamps), written
  // at once: threads' marks do not interleave.
  std::string line;
  llvm::raw_string_ostream os(line);
  os << "tosa-lsp mark: " << what << " @"
     << llvm::format("%.1f",
                     std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count())
     << "\n";
  llvm::errs() << line;
}

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TIMING_H
