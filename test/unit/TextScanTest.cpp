//===- TextScanTest.cpp - the one lexer for MLIR strings and comments -----===//

#include "TextScan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace tosa_lsp::detail;

namespace {

/// A byte loop that skips what a backslash escapes: the oracle for the
/// memchr scan, with and without line breaks ending a literal.
size_t byteLoop(std::string_view t, size_t open, LineBreaks lineBreaks) {
  size_t i = open + 1;
  for (; i < t.size() && t[i] != '"' &&
         (lineBreaks == LineBreaks::Inside || t[i] != '\n');
       ++i)
    if (t[i] == '\\')
      ++i;
  return std::min(i, t.size());
}

TEST(TextScan, StringEndAgreesWithTheByteLoop) {
  std::mt19937 rng(5);
  const char alphabet[] = "ab\"\\\n";
  for (LineBreaks lb : {LineBreaks::End, LineBreaks::Inside}) {
    unsigned closed = 0;
    for (int round = 0; round < 50000; ++round) {
      std::string text = "\"";
      for (int i = 0, n = rng() % 16; i < n; ++i)
        text += alphabet[rng() % (sizeof(alphabet) - 1)];
      size_t want = byteLoop(text, 0, lb);
      EXPECT_EQ(stringEnd(text, 0, lb), want) << text;
      size_t after = want < text.size() && text[want] == '"' ? want + 1 : want;
      EXPECT_EQ(skipString(text, 0, lb), after) << text;
      closed += want < text.size() && text[want] == '"';
    }
    EXPECT_GT(closed, 10000u); // both outcomes occur
    EXPECT_LT(closed, 45000u);
  }
}

TEST(TextScan, CommentsRunToTheLineEnd) {
  std::string_view t = "a // b \"c\n// d";
  EXPECT_FALSE(commentAt(t, 0));
  EXPECT_TRUE(commentAt(t, 2));
  EXPECT_EQ(commentEnd(t, 2), t.find('\n'));
  EXPECT_TRUE(commentAt(t, 10));
  EXPECT_EQ(commentEnd(t, 10), std::string_view::npos);
  EXPECT_FALSE(commentAt(t, t.size() - 1)); // a lone `/` at the end
}

} // namespace
