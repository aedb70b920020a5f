//===- FramedOutputTest.cpp - whole frames, no big buffer kept -----------===//

#include "FramedOutput.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace tosa_lsp;

namespace {

std::string frame(const std::string &json) {
  return "Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + json;
}

// Frames written in pieces go out whole, in order; a big one (a lowering
// preview of megabytes) is not kept as the buffer of the small ones after
// it: it stayed resident for the rest of the session.
TEST(FramedOutput, WholeFramesAndNoBigBufferKept) {
  std::string sent;
  llvm::raw_string_ostream out(sent);
  {
    FramedOutput framed(out);
    std::string big = "{\"result\":\"" + std::string(4 << 20, 'x') + "\"}";
    std::string small = "{\"id\":1}";
    std::string both = frame(big) + frame(small);
    // In pieces, as raw_ostream may write them.
    for (size_t at = 0; at < both.size(); at += 100000)
      framed.write(both.data() + at,
                   std::min<size_t>(100000, both.size() - at));
    framed.flush();
    EXPECT_EQ(sent, both);
    EXPECT_LE(framed.retainedBytes(), size_t(1) << 20);
    framed.sendRaw(small);
    EXPECT_EQ(sent, both + frame(small));
  }
}

// A message buffer grown by a 10k-line didOpen (0.9 MB) is not kept for
// the small messages after it; one a small message grew is.
TEST(FramedOutput, ABufferOfOneBigMessageIsNotKept) {
  std::string opened(900 << 10, 'x');
  releaseBigBuffer(opened);
  EXPECT_EQ(opened.capacity(), std::string().capacity());
  std::string small(4 << 10, 'x');
  releaseBigBuffer(small);
  EXPECT_GE(small.capacity(), size_t(4) << 10);
}

} // namespace
