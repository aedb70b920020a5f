//===- FramedOutput.cpp - whole LSP frames to stdout, from any thread -----===//

#include "FramedOutput.h"

namespace tosa_lsp {

FramedOutput::~FramedOutput() {
  std::lock_guard<std::mutex> lock(mu);
  if (!pending.empty()) // Never half a frame: write what there is.
    out << pending;
  out.flush();
}

void FramedOutput::sendRaw(llvm::StringRef json) {
  std::lock_guard<std::mutex> lock(mu);
  out << "Content-Length: " << json.size() << "\r\n\r\n" << json;
  out.flush();
}

void FramedOutput::write_impl(const char *ptr, size_t size) {
  std::lock_guard<std::mutex> lock(mu);
  position += size;
  pending.append(ptr, size);
  flushFrames();
}

size_t FramedOutput::retainedBytes() {
  std::lock_guard<std::mutex> lock(mu);
  return pending.capacity();
}

void FramedOutput::flushFrames() {
  for (;;) {
    size_t headerEnd = pending.find("\r\n\r\n");
    if (headerEnd == std::string::npos)
      return;
    llvm::StringRef header(pending.data(), headerEnd);
    size_t length = 0;
    size_t at = header.find("Content-Length:");
    if (at == llvm::StringRef::npos ||
        header.substr(at + 15).trim().getAsInteger(10, length)) {
      // Not a frame we understand: pass it through rather than hold it.
      out << pending;
      out.flush();
      pending.clear();
      return;
    }
    size_t total = headerEnd + 4 + length;
    if (pending.size() < total)
      return;
    out.write(pending.data(), total);
    out.flush();
    pending.erase(0, total);
    if (pending.empty())
      releaseBigBuffer(pending);
  }
}

} // namespace tosa_lsp
