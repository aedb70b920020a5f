//===- Transport.h - the server's end of the connection ---------*- C++ -*-===//
//
// Messages in: MessageReader reads them (framing, size and nesting caps,
// the JSON-RPC checks that must be answered) and Transport::run dispatches
// what it parsed, never parsing a message twice. Messages out: llvm::lsp's
// JSONTransport writes replies and notifications, and the server's
// hand-written replies (DiagnosticsJSON.h, InlayHintsJSON.h) go as they
// are (sendRaw); both as whole frames through one FramedOutput.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_TRANSPORT_H
#define TOSA_LSP_SERVER_TRANSPORT_H

#include "Allocator.h"
#include "FramedOutput.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace tosa_lsp {

/// Reads messages like JSONTransportInputOverFile, but
/// - remembers the id of the message about to be dispatched (MessageHandler
///   does not hand it to method handlers, and `$/cancelRequest` needs it);
/// - never lets a message take the server down: bodies are read in chunks
///   up to kMaxMessageBytes (a `Content-Length: 1000000000` with no body
///   allocates nothing), bad headers are skipped up to the next one, and
///   nesting deeper than kMaxMessageDepth is refused before any recursive
///   JSON code sees it;
/// - answers what JSON-RPC says must be answered: a request that is not a
///   JSON-RPC 2.0 object gets InvalidRequest, unparsable JSON ParseError
///   (id null), and every request after `shutdown` InvalidRequest. Those
///   become a call of `$/tosa-lsp/invalid` (InvalidMessageParams), which
///   replies with the error; anything else malformed becomes the no-op
///   notification `$/tosa-lsp/ignored` (JSONTransport would otherwise stop);
/// - carries URIs of schemes llvm::lsp does not know as kOpaqueScheme
///   (Protocol.h), and `FILE:` as `file:`.
class MessageReader : public llvm::lsp::JSONTransportInput {
public:
  static constexpr size_t kMaxMessageBytes = size_t(256) << 20;
  static constexpr unsigned kMaxMessageDepth = 256;
  static constexpr size_t kReserveMessageBytes = size_t(64) << 20;

  MessageReader(std::FILE *in, llvm::lsp::JSONStreamStyle style)
      : JSONTransportInput(style), in(in), inner(in, style) {}
  bool hasError() const override { return inner.hasError(); }
  bool isEndOfInput() const override { return inner.isEndOfInput(); }
  llvm::LogicalResult readDelimitedMessage(std::string &json) override;
  llvm::LogicalResult readStandardMessage(std::string &json) override;

  /// The id of the request just read (none for a notification).
  std::optional<llvm::json::Value> currentId;
  /// Taken at a message's first byte, reset by the transport loop once the
  /// message is answered: what a request frees (its reply), the next one
  /// allocates again, and a free page given back in between was faulted in
  /// again (inlay requests at 200k lines: ~290 faults each, 0.6 -> 0.9 ms).
  /// Not while waiting for input, when what the analyses free goes back at
  /// once (configureAllocator).
  std::optional<KeepFreePages> keep;
  /// The text of the didOpen just read (`parsed` has "" in its place).
  std::optional<std::string> takeOpenedText() {
    return std::exchange(openedText, std::nullopt);
  }
  /// The message just read, parsed (inspect has to parse it anyway): the
  /// transport loop dispatches it without parsing a 20 MB didOpen twice.
  std::optional<llvm::json::Value> parsed;

private:
  /// One header line, at most 8 KiB kept (a longer one is not a header).
  bool readHeaderLine(std::string &line);
  /// The body of `length` bytes into `json`.
  llvm::LogicalResult readBody(size_t length, std::string &json);
  llvm::LogicalResult skipBody(size_t length);
  /// Checks and parses the message in `text`, replacing it by one that
  /// answers or ignores it when it cannot be dispatched.
  void inspect(std::string &text);
  /// Refuses the message by the lifecycle (before initialize, after
  /// shutdown); true when it did.
  bool refusedByLifecycle(std::string &text, std::optional<llvm::StringRef>,
                          const llvm::json::Value *id);

  std::FILE *in;
  llvm::lsp::JSONTransportInputOverFile inner;
  std::optional<std::string> openedText;
  bool shutdownSeen = false;
  bool initializeSeen = false;
};

/// The connection on `in` and stdout.
class Transport {
public:
  /// `litTest`: messages delimited by `// -----` lines, output indented.
  Transport(std::FILE *in, bool litTest);

  /// For llvm::lsp::MessageHandler.
  llvm::lsp::JSONTransport &json() { return transport; }
  /// The id of the request being dispatched (none for a notification).
  const std::optional<llvm::json::Value> &currentId() const {
    return reader.currentId;
  }
  /// The didOpen's text the reader put aside (MessageJSON.h), once.
  std::optional<std::string> takeOpenedText() {
    return reader.takeOpenedText();
  }
  /// A whole JSON-RPC message written by hand.
  void sendRaw(llvm::StringRef message) { output.sendRaw(message); }
  /// Reads and dispatches messages. Returns after `exit` (success) or at the
  /// end of the input (an error).
  llvm::Error run(llvm::lsp::MessageHandler &handler);

private:
  Transport(std::unique_ptr<MessageReader> reader, bool litTest);
  /// Hands a message read to the handler as JSONTransport::run would;
  /// false when the handler is done (`exit`).
  bool dispatch(llvm::json::Value message, llvm::lsp::MessageHandler &handler);

  MessageReader &reader; // owned by `transport`
  FramedOutput output;
  llvm::lsp::JSONTransport transport;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_TRANSPORT_H
