//===- Scheduling.cpp - how the kernel schedules a thread -----------------===//

#include "Scheduling.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#endif

namespace tosa_lsp {

#if defined(__linux__) && defined(SYS_sched_setattr)
namespace {
/// The kernel's struct sched_attr (glibc 2.36 has no wrapper).
struct SchedAttr {
  uint32_t size;
  uint32_t policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
};
} // namespace

bool requestSlices(std::chrono::microseconds slice) {
  static const bool off = [] {
    const char *v = std::getenv("TOSA_LSP_SLICES");
    return v && std::string_view(v) == "off";
  }();
  if (off)
    return false;
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.policy = SCHED_OTHER;
  // The thread's own nice value, unchanged (sched_setattr sets both).
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);
  if (errno)
    return false;
  attr.nice = nice;
  attr.runtime = uint64_t(slice.count()) * 1000; // ns: the slice asked for
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}
#else
bool requestSlices(std::chrono::microseconds) { return false; }
#endif

} // namespace tosa_lsp
