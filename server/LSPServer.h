//===- LSPServer.h - the language server's protocol layer -------*- C++ -*-===//
//
// Converts between LSP messages (llvm::lsp, Protocol.h) and the feature
// API (TosaServer, which owns the open documents' text; analysis runs in
// its Scheduler; features are computed by analysis/ and only converted
// here). Messages are read and written by Transport.h.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_LSPSERVER_H
#define TOSA_LSP_SERVER_LSPSERVER_H

#include <cstdio>
#include <string>

namespace tosa_lsp {

struct ServerOptions {
  /// Analyse inline, before the next message is read (lit tests).
  bool sync = false;
  /// Delimited input and pretty output (lit tests).
  bool litTest = false;
  /// Quiet period after an edit before analysis starts (async mode).
  unsigned debounceMs = 50;
  /// TosaServer::Options::inferInAnalysis (benchmarks compare both).
  bool inferInAnalysis = true;
  bool inferAfterPublish = true; // TosaServer::Options::inferAfterPublish
  bool verbose = false;
  /// After `exit`, end the process at once, once compiles and previews are
  /// cleaned up, instead of freeing what it holds (the binary; not a
  /// library caller, nor a sanitizer build, whose checks run at exit).
  bool exitAtOnce = false;
  /// `initialize`'s serverInfo.version (the binary's version and revision).
  std::string version = "0.1.0";
};

/// Serves LSP on `in`/stdout until `exit`. Returns the process exit code:
/// 0 when `shutdown` came before `exit`, 1 otherwise (with `exitAtOnce`,
/// the process ends with that code instead).
int runServer(std::FILE *in, const ServerOptions &options);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_LSPSERVER_H
