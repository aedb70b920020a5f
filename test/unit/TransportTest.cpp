//===- TransportTest.cpp - the allocator policy of the message loop -------===//
//
// runServer on a standard-framed input: while a message is read and
// answered, free pages stay with the allocator (a request's reply frees
// what the next one allocates again); while waiting for input, and for a
// document's long text, they go back at once (what an analysis frees).
//
//===----------------------------------------------------------------------===//

#include "Allocator.h"
#include "LSPServer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tosa_lsp;

namespace {

std::FILE *input = nullptr;
/// (pages go back at once, bytes of the input read so far) per switch.
std::vector<std::pair<bool, long>> switches;
void recordSwitch(bool atOnce) {
  switches.push_back({atOnce, input ? std::ftell(input) : -1});
}

std::string frame(const std::string &json) {
  return "Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + json;
}

TEST(Transport, RequestsKeepFreePagesDocumentTextsDoNot) {
  // A document of ~100 KB (its newlines escaped as JSON has them).
  std::string text = "// " + std::string(100000, 'x') +
                     "\\nfunc.func @f() {\\n  return\\n}\\n";
  std::vector<std::string> messages = {
      frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"),
      frame(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":)"
            R"({"textDocument":{"uri":"file:///t.mlir","languageId":"mlir",)"
            R"("version":1,"text":")" +
            text + R"("}}})"),
      frame(R"({"jsonrpc":"2.0","id":2,"method":"shutdown"})"),
      frame(R"({"jsonrpc":"2.0","method":"exit"})")};
  std::string all;
  std::vector<long> ends; // where each message ends in the input
  for (const std::string &m : messages) {
    all += m;
    ends.push_back(static_cast<long>(all.size()));
  }
  input = fmemopen(all.data(), all.size(), "r");
  ASSERT_NE(input, nullptr);
  switches.clear();
  setGiveBackFreePagesHook(recordSwitch);
  decommitFreePagesByDefault(true);
  // The replies go nowhere.
  std::fflush(stdout);
  int savedOut = dup(STDOUT_FILENO);
  int devNull = open("/dev/null", O_WRONLY);
  dup2(devNull, STDOUT_FILENO);
  ServerOptions options;
  options.sync = true;
  int rc = runServer(input, options);
  std::fflush(stdout);
  dup2(savedOut, STDOUT_FILENO);
  close(savedOut);
  close(devNull);
  std::vector<std::pair<bool, long>> seenSwitches = switches;
  decommitFreePagesByDefault(false);
  setGiveBackFreePagesHook(nullptr);
  std::fclose(input);
  input = nullptr;
  EXPECT_EQ(rc, 0);

  // At once from the start; then per message, kept from its first byte
  // until it is answered, except the long text: at once again before its
  // body is read (the analysis it starts frees a parse).
  switches = seenSwitches;
  // The didOpen's analysis (inline: sync) keeps the pages it frees and
  // frees its IR in bulk (FreeInBulk): pairs of its own once the long text
  // is read, before the next message.
  std::string seen;
  for (auto &[atOnce, at] : switches)
    seen += (atOnce ? " back@" : " kept@") + std::to_string(at);
  while (switches.size() > 6 && !switches[5].first &&
         switches[5].second <= ends[1] && switches[6].first &&
         switches[6].second <= ends[1])
    switches.erase(switches.begin() + 5, switches.begin() + 7);
  seen += " ->";
  for (auto &[atOnce, at] : switches)
    seen += (atOnce ? " back@" : " kept@") + std::to_string(at);
  ASSERT_EQ(switches.size(), 1u + 2 * messages.size()) << seen;
  EXPECT_TRUE(switches[0].first);
  for (size_t m = 0; m < messages.size(); ++m) {
    const auto &kept = switches[1 + 2 * m], &back = switches[2 + 2 * m];
    long begin = m ? ends[m - 1] : 0;
    EXPECT_FALSE(kept.first) << "message " << m;
    EXPECT_TRUE(back.first) << "message " << m;
    EXPECT_GE(kept.second, begin) << "message " << m;
    EXPECT_LE(kept.second, begin + 32) << "kept only at its header";
    if (m == 1)
      EXPECT_LT(back.second, begin + 64) << "the long text was kept";
    else
      EXPECT_GE(back.second, ends[m]) << "message " << m << " not kept";
  }
}

} // namespace
