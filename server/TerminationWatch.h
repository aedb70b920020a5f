//===- TerminationWatch.h - ending the server on a signal -------*- C++ -*-===//
//
// SIGTERM, SIGINT and SIGHUP (an editor quitting sends one): the server was
// killed at once, leaving a compile's child running and the user's text in
// its temp directory. While a TerminationWatch lives, a handler writes the
// signal to a pipe; a thread reads it, runs `stop` (which ends the
// compiles) and exits with the signal's code.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_TERMINATIONWATCH_H
#define TOSA_LSP_SERVER_TERMINATIONWATCH_H

#include <atomic>
#include <functional>
#include <thread>

namespace tosa_lsp {

class TerminationWatch {
public:
  /// Installs the handlers, except for signals ignored (nohup). One watch
  /// at a time.
  explicit TerminationWatch(std::function<void()> stop);
  /// Stops watching (the server is ending: a later signal is ignored).
  ~TerminationWatch();
  TerminationWatch(const TerminationWatch &) = delete;
  TerminationWatch &operator=(const TerminationWatch &) = delete;

private:
  static inline std::atomic<int> writeEnd{-1};
  int fds[2] = {-1, -1};
  std::thread watcher;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_TERMINATIONWATCH_H
