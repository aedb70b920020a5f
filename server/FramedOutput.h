//===- FramedOutput.h - whole LSP frames to stdout, from any thread -*- C++
//-*-===//
//
// JSONTransport builds a json::Value tree for every message; for a document
// with 10^5 diagnostics that tree costs more than the analysis itself. The
// server writes such messages as text it streamed itself (`sendRaw`), and
// the transport writes everything else through this stream. Both paths go
// out as whole `Content-Length` frames under one lock, so they never
// interleave.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_FRAMEDOUTPUT_H
#define TOSA_LSP_SERVER_FRAMEDOUTPUT_H

#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

namespace tosa_lsp {

/// Frees `buffer` when it holds more than `keep` bytes of capacity: a
/// message buffer grown by one big message (a 20 MB didOpen, a preview)
/// is not kept for the small ones after it, resident for the session
/// (a 10k-line didOpen, 0.9 MB, was under the first limit of 1 MiB).
inline void releaseBigBuffer(std::string &buffer) {
  constexpr size_t keep = size_t(64) << 10;
  if (buffer.capacity() > keep)
    std::string().swap(buffer);
}

class FramedOutput : public llvm::raw_ostream {
public:
  explicit FramedOutput(llvm::raw_ostream &out) : out(out) { SetUnbuffered(); }
  ~FramedOutput() override;

  /// Writes `json` (one JSON-RPC message) as one frame.
  void sendRaw(llvm::StringRef json);
  /// Bytes held between messages (the buffer of incomplete frames): a big
  /// reply is not kept as the buffer of the small ones after it.
  size_t retainedBytes();

private:
  void write_impl(const char *ptr, size_t size) override;
  uint64_t current_pos() const override { return position; }
  /// Emits every complete frame in `pending` (caller holds `mu`).
  void flushFrames();

  llvm::raw_ostream &out;
  std::mutex mu;
  std::string pending; // bytes of the transport's frame not yet complete
  uint64_t position = 0;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_FRAMEDOUTPUT_H
