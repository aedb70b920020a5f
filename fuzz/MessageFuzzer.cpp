//===- MessageFuzzer.cpp - libFuzzer target: messages with long strings ---===//
//
// The server reads a client's messages with its own unescaping of long
// strings (server/MessageJSON.cpp) before llvm::json: on any bytes, the
// value (or the error) must be json::parse's. The first byte sets what
// counts as long (1-32 bytes), so that short inputs take that path too.
//
//===----------------------------------------------------------------------===//

#include "MessageJSON.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace llvm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t minLength = 1 + data[0] % 32;
  StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  Expected<json::Value> fast = tosa_lsp::parseMessage(text, minLength);
  Expected<json::Value> slow = json::parse(text);
  bool same = bool(fast) == bool(slow) && (!fast || *fast == *slow);
  // llvm::json 22 decodes an escaped surrogate pair as 0x10000 | high << 10
  // | low, which is wrong from \uD840 on (planes 2-16: \ud84d\ude01 gives
  // U+13601, not U+23601); MessageJSON.cpp adds. Such inputs are outside
  // this oracle (MessageJSONTest checks the right value).
  if (!same && fast && slow) {
    std::string lower = text.lower();
    for (const char *high : {"\\ud84", "\\ud85", "\\ud86", "\\ud87", "\\ud88",
                             "\\ud89", "\\ud8a", "\\ud8b", "\\ud8c", "\\ud8d",
                             "\\ud8e", "\\ud8f", "\\ud9", "\\uda", "\\udb"})
      if (StringRef(lower).contains(high))
        same = true;
  }
  if (!fast)
    consumeError(fast.takeError());
  if (!slow)
    consumeError(slow.takeError());
  if (!same) {
    std::fprintf(stderr, "message-fuzzer: parseMessage and json::parse "
                         "differ\n");
    std::abort();
  }
  return 0;
}
