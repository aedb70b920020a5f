//===- Scheduling.h - how the kernel schedules a thread ---------*- C++ -*-===//
//
// The threads a user waits on (the message loop, the request workers) ask
// Linux's EEVDF scheduler for short time slices: a thread that wakes with a
// shorter slice than the running one preempts it at once (PREEMPT_SHORT),
// instead of waiting up to the end of that one's slice (~1-3 ms). With
// the background inference on both cores after an open, a hover's request
// waited that long before it was read.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SUPPORT_SCHEDULING_H
#define TOSA_LSP_SUPPORT_SCHEDULING_H

#include <chrono>

namespace tosa_lsp {

/// The slice of the threads that answer requests: the kernel's least.
inline constexpr std::chrono::microseconds kRequestSlice{100};

/// Asks for time slices of `slice` for the calling thread (Linux 6.12+;
/// clamped by the kernel to 0.1-100 ms; 0: the default). Nothing else
/// changes: the same policy, nice value and share of the CPU. False where
/// not supported, or with TOSA_LSP_SLICES=off in the environment.
bool requestSlices(std::chrono::microseconds slice);

/// Background work a user does not wait on (the shape inference after an
/// open): long slices, so that every thread that wakes meanwhile (the
/// message loop, the editor itself) preempts it at once.
inline constexpr std::chrono::microseconds kBackgroundSlice{20000};

/// The calling thread's slice as `slice` while it lives, then the default
/// again.
class ScopedSlices {
public:
  explicit ScopedSlices(std::chrono::microseconds slice)
      : set(requestSlices(slice)) {}
  ~ScopedSlices() {
    if (set)
      (void)requestSlices(std::chrono::microseconds(0));
  }
  ScopedSlices(const ScopedSlices &) = delete;
  ScopedSlices &operator=(const ScopedSlices &) = delete;

private:
  bool set;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SUPPORT_SCHEDULING_H
