//===- MessageJSONTest.cpp - messages with long strings, as json::parse ---===//

#include "MessageJSON.h"

#include <gtest/gtest.h>

#include <random>

using namespace tosa_lsp;
using namespace llvm;

namespace {

/// parseMessage (strings of `minLength` bytes and more taken out) gives
/// what json::parse gives: the same value, or an error.
void expectAsJsonParse(StringRef text, size_t minLength) {
  Expected<json::Value> fast = parseMessage(text, minLength);
  Expected<json::Value> slow = json::parse(text);
  ASSERT_EQ(bool(fast), bool(slow)) << text.str();
  if (!fast) {
    consumeError(fast.takeError());
    consumeError(slow.takeError());
    return;
  }
  EXPECT_EQ(*fast, *slow) << text.str();
}

TEST(MessageJSON, LongStringsAreTakenOutAndPutBack) {
  std::string msg =
      R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":)"
      R"({"textDocument":{"uri":"file:///a.mlir","version":1,"text":)"
      R"("func.func @f() {\n  \"tosa.x\"() : () -> ()\t\\ \/ \b\f\r)"
      R"( \u00e9 \u20AC \ud83d\ude00 é €\n}\n"}}})";
  std::optional<LongStrings> taken = takeLongStrings(msg, 40);
  ASSERT_TRUE(taken);
  ASSERT_EQ(taken->values.size(), 1u);
  EXPECT_EQ(taken->values[0],
            "func.func @f() {\n  \"tosa.x\"() : () -> ()\t\\ / "
            "\b\f\r \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 "
            "\xC3\xA9 \xE2\x82\xAC\n}\n");
  EXPECT_LT(taken->rest.size(), msg.size());
  expectAsJsonParse(msg, 40);
  // Keys and values alike (a long key is left to json::parse).
  expectAsJsonParse(msg, 8);
  // Short strings stay: nothing to take out.
  EXPECT_FALSE(takeLongStrings(msg, 1 << 16));
  expectAsJsonParse(msg, 1 << 16);
}

// A didOpen's text is moved aside (never copied out of a json::Value),
// "" in its place; every other long string is put back; a path that is
// not a long string leaves nothing aside.
TEST(MessageJSON, TheDocumentTextIsMovedAside) {
  std::string text(100, 'x'), other(80, 'y');
  std::string msg =
      R"({"method":"textDocument/didOpen","params":{"textDocument":)"
      R"({"uri":"file:///a.mlir","text":")" +
      text + R"("},"extra":[")" + other + R"("]}})";
  static constexpr StringRef kPath[] = {"params", "textDocument", "text"};
  std::optional<std::string> aside;
  std::optional<LongStrings> taken = takeLongStrings(msg, 40);
  ASSERT_TRUE(taken);
  Expected<json::Value> v = parseMessage(msg, std::move(*taken), kPath, aside);
  ASSERT_TRUE(bool(v));
  ASSERT_TRUE(aside);
  EXPECT_EQ(*aside, text);
  const json::Object *params = v->getAsObject()->getObject("params");
  EXPECT_EQ(params->getObject("textDocument")->getString("text"),
            std::optional<StringRef>(""));
  EXPECT_EQ((*params->getArray("extra"))[0].getAsString(),
            std::optional<StringRef>(other));

  // The text short, the other string long: nothing aside, all as written.
  std::string shortText =
      R"({"params":{"textDocument":{"text":"abc"},"extra":[")" + other +
      R"("]}})";
  taken = takeLongStrings(shortText, 40);
  ASSERT_TRUE(taken);
  v = parseMessage(shortText, std::move(*taken), kPath, aside);
  ASSERT_TRUE(bool(v));
  EXPECT_FALSE(aside);
  EXPECT_EQ(*v, *json::parse(shortText));
}

// A long string's value is allocated once, at most as long as written,
// also when its first quote is an escaped one (`"tosa.const"` in a model):
// grown by doubling, a document's text had up to twice its size.
TEST(MessageJSON, ALongStringIsAllocatedOnce) {
  std::string body = "%0 = \\\"tosa.const\\\"() \\n";
  for (int i = 0; i < 3000; ++i) // a run between escapes per line
    body += "  %1 = tosa.add %0, %0 : tensor<2xf32>\\n";
  std::string msg = R"({"text":")" + body + R"("})";
  std::optional<LongStrings> taken = takeLongStrings(msg, 40);
  ASSERT_TRUE(taken);
  ASSERT_EQ(taken->values.size(), 1u);
  EXPECT_EQ(taken->values[0].substr(0, 17), "%0 = \"tosa.const\"");
  EXPECT_LE(taken->values[0].capacity(), body.size());
}

TEST(MessageJSON, SeveralLongStringsInArrays) {
  std::string msg =
      R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{)"
      R"("textDocument":{"uri":"file:///a.mlir","version":2},)"
      R"("contentChanges":[{"text":"the first long string\n"},{"range":)"
      R"({"start":{"line":0,"character":0},"end":{"line":0,"character":1}},)"
      R"("text":"the second long string\n"},["a third, nested long string", "x"]]}})";
  std::optional<LongStrings> taken = takeLongStrings(msg, 23);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->values.size(), 3u);
  expectAsJsonParse(msg, 23);
  // A message that is one long string is that string.
  expectAsJsonParse(R"("a long string at the top level")", 8);
}

// Anything that is not plain valid JSON is left to json::parse, which
// gives its own value or error.
TEST(MessageJSON, WhatItDoesNotTakeJsonParseDecides) {
  for (const char *body : {
           R"(bad \x escape here)",
           R"(a lone \ud800 surrogate)",
           R"(a lone low \udc00 surrogate)",
           R"(a short \u12 escape here)",
           "a raw\ncontrol character",
           "bytes that are not UTF-8: \xC3\x28 here",
       }) {
    std::string msg =
        std::string(R"({"a":[1,"short"],"text":")") + body + R"(","b":null})";
    EXPECT_FALSE(takeLongStrings(msg, 8)) << body;
    expectAsJsonParse(msg, 8);
  }
  for (const char *msg :
       {R"({"text":"unterminated long string)", R"({"text":"ok long string"]})",
        R"({"text":"ok long string" "x":1})"})
    expectAsJsonParse(msg, 8);
}

// A surrogate pair beyond plane 1 (a CJK extension B character): the code
// point it stands for. llvm::json 22 computes 0x10000 | high << 10 | low,
// which is wrong from \uD840 on (U+13601 here): a document's text is read
// right, the rest of a message as llvm::json reads it.
TEST(MessageJSON, SurrogatePairsBeyondPlaneOneAreDecodedRight) {
  std::string msg = R"({"text":"x \ud84d\ude01 and \ud83d\ude00 y"})";
  std::optional<LongStrings> taken = takeLongStrings(msg, 8);
  ASSERT_TRUE(taken);
  ASSERT_EQ(taken->values.size(), 1u);
  EXPECT_EQ(taken->values[0], "x \xF0\xA3\x98\x81 and \xF0\x9F\x98\x80 y");
  Expected<json::Value> v = parseMessage(msg, 8);
  ASSERT_TRUE(bool(v));
  EXPECT_EQ(*v->getAsObject()->getString("text"),
            "x \xF0\xA3\x98\x81 and \xF0\x9F\x98\x80 y");
}

// A client's string that reads as a placeholder, however it is escaped,
// is not taken for one: the message is left to json::parse. Inside a long
// string it is only text.
TEST(MessageJSON, AStringLikeAPlaceholderIsNotTakenForOne) {
  for (const char *spelled : {R"(\u0000tosa-lsp-long-string:0)",
                              R"(\u0000\u0074osa-lsp-long-string:0)"}) {
    std::string msg =
        std::string(R"({"a":")") + spelled +
        R"(","text":"a long string, taken out since it is long enough"})";
    ASSERT_TRUE(takeLongStrings(
        R"({"text":"a long string, taken out since it is long enough"})", 40));
    EXPECT_FALSE(takeLongStrings(msg, 40)) << spelled;
    expectAsJsonParse(msg, 40);
  }
  std::string inside =
      R"({"text":"it says \u0000tosa-lsp-long-string:0 in a long one"})";
  EXPECT_TRUE(takeLongStrings(inside, 40));
  expectAsJsonParse(inside, 40);
}

// Random strings of every kind of character, written by llvm::json (as a
// client writes them) and read back both ways.
TEST(MessageJSON, RandomStringsReadAsJsonParseReadsThem) {
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {"a",
                                           "%0",
                                           " ",
                                           "\n",
                                           "\t",
                                           "\"",
                                           "\\",
                                           "/",
                                           "\x01",
                                           "\x1f",
                                           "\xC3\xA9",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "tosa.add",
                                           "\r",
                                           "{["};
  for (int trial = 0; trial < 200; ++trial) {
    json::Array changes;
    for (int k = 0, n = 1 + rng() % 3; k < n; ++k) {
      std::string s;
      for (int i = 0, m = rng() % 40; i < m; ++i)
        s += pieces[rng() % pieces.size()];
      changes.push_back(json::Object{{"text", std::move(s)}});
    }
    std::string msg;
    raw_string_ostream os(msg);
    os << json::Value(json::Object{
        {"jsonrpc", "2.0"},
        {"params", json::Object{{"contentChanges", std::move(changes)}}}});
    os.flush();
    expectAsJsonParse(msg, 1 + rng() % 24);
  }
}

} // namespace
