//===- TerminationWatch.cpp - ending the server on a signal ---------------===//

#include "TerminationWatch.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace tosa_lsp {

TerminationWatch::TerminationWatch(std::function<void()> stop) {
  if (::pipe(fds) != 0)
    return;
  (void)fcntl(fds[1], F_SETFL, O_NONBLOCK);
  (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  writeEnd.store(fds[1]);
  watcher = std::thread([this, stop = std::move(stop)] {
    unsigned char sig = 0;
    while (::read(fds[0], &sig, 1) < 0 && errno == EINTR) {
    }
    if (sig == 0)
      return; // the server ended normally
    stop();
    std::_Exit(128 + sig);
  });
  // Only what is async-signal-safe: a write to the pipe.
  struct sigaction act = {};
  act.sa_handler = [](int sig) {
    unsigned char b = static_cast<unsigned char>(sig);
    int fd = writeEnd.load();
    if (fd >= 0)
      (void)!::write(fd, &b, 1);
  };
  sigemptyset(&act.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old;
    // Left alone when ignored (nohup).
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sig, &act, nullptr);
  }
}

TerminationWatch::~TerminationWatch() {
  if (!watcher.joinable())
    return;
  writeEnd.store(-1); // a later signal writes nowhere
  unsigned char none = 0;
  (void)!::write(fds[1], &none, 1);
  watcher.join();
  ::close(fds[0]);
  ::close(fds[1]);
}

} // namespace tosa_lsp
