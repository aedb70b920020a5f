//===- ConvertTest.cpp - UTF-16 positions and incremental edits -----------===//

#include "Convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tosa_lsp;
using LspPosition = llvm::lsp::Position;

TEST(Convert, Utf16Lengths) {
  EXPECT_EQ(utf16Length("abc"), 3u);
  EXPECT_EQ(utf16Length("é"), 1u);  // 2 bytes, 1 unit
  EXPECT_EQ(utf16Length("✓"), 1u);  // 3 bytes, 1 unit
  EXPECT_EQ(utf16Length("😀"), 2u); // 4 bytes, a surrogate pair
}

TEST(Convert, PositionsRoundTrip) {
  std::string text = "a é😀 b\nsecond\n";
  LineTable t(text);
  // 'b' is byte column 10 (1-based) and UTF-16 character 6 (0-based):
  // a, space, é (1 unit), 😀 (2 units), space.
  LspPosition p = t.toLsp(tosa_lsp::Position{1, 10});
  EXPECT_EQ(p.line, 0);
  EXPECT_EQ(p.character, 6);
  auto back = t.fromLsp(p);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->line, 1u);
  EXPECT_EQ(back->column, 10u);
  EXPECT_FALSE(t.fromLsp(LspPosition(7, 0)));
  // Past the end of a line clamps to it.
  auto clamped = t.fromLsp(LspPosition(1, 99));
  ASSERT_TRUE(clamped);
  EXPECT_EQ(clamped->column, 7u);
}

using Change = llvm::lsp::TextDocumentContentChangeEvent;

static Change change(int l0, int c0, int l1, int c1, std::string text) {
  Change c;
  c.range = llvm::lsp::Range(LspPosition(l0, c0), LspPosition(l1, c1));
  c.text = std::move(text);
  return c;
}

TEST(Convert, IncrementalChangesUseUtf16) {
  std::string text = "x = \"é😀\"\n", out;
  EXPECT_FALSE(applyChanges(text, {change(0, 4, 0, 9, "\"ok\"")}, out));
  EXPECT_EQ(out, "x = \"ok\"\n");
  // Outside the text: an error.
  EXPECT_TRUE(applyChanges(text, {change(5, 0, 5, 1, "")}, out));
  Change whole;
  whole.text = "whole";
  EXPECT_FALSE(applyChanges(text, {whole}, out));
  EXPECT_EQ(out, "whole");
}

TEST(Convert, ChangesApplyInOrderAcrossLines) {
  std::string text = "one\r\ntwo\nthree", out;
  // Past the end of a line is its end, before the \r.
  EXPECT_FALSE(applyChanges(
      text, {change(0, 99, 1, 1, "+"), change(1, 0, 1, 5, "3")}, out));
  EXPECT_EQ(out, "one+wo\n3");
  // The empty line after a final newline is a position; the one after is
  // not, nor is an end before the start.
  EXPECT_FALSE(applyChanges("a\n", {change(1, 0, 1, 0, "b")}, out));
  EXPECT_EQ(out, "a\nb");
  EXPECT_TRUE(applyChanges("a\n", {change(2, 0, 2, 0, "b")}, out));
  EXPECT_TRUE(applyChanges("ab\ncd", {change(1, 0, 0, 1, "")}, out));
  EXPECT_TRUE(applyChanges("ab\ncd", {change(0, 2, 0, 1, "")}, out));
  // A whole-text change, then a ranged one on its result.
  Change whole;
  whole.text = "new\ntext";
  EXPECT_FALSE(applyChanges("old", {whole, change(1, 0, 1, 1, "T")}, out));
  EXPECT_EQ(out, "new\nText");
  EXPECT_FALSE(applyChanges("same", {}, out));
  EXPECT_EQ(out, "same");
}

TEST(Convert, ChangesAgreeWithTheLineTable) {
  // The scan finds the offsets LineTable's index gives, on text with
  // CRLF, multi-byte characters and empty lines.
  std::mt19937 rng(7);
  const char *pieces[] = {"a", "é", "😀", "\n", "\r\n", " ", "\n\n"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int i = 0, n = rng() % 40; i < n; ++i)
      text += pieces[rng() % 7];
    LineTable table(text);
    int lines =
        1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    int l0 = rng() % (lines + 1), l1 = rng() % (lines + 1);
    int c0 = rng() % 6, c1 = rng() % 6;
    std::optional<size_t> b = table.offset(LspPosition(l0, c0)),
                          e = table.offset(LspPosition(l1, c1));
    std::string out, outIndexed;
    std::optional<std::string> error =
        applyChanges(text, {change(l0, c0, l1, c1, "X")}, out);
    // With the text's line starts given (a snapshot's), the same answer;
    // a second change then applies to the changed text by scanning.
    std::optional<std::string> errorIndexed = applyChanges(
        text, {change(l0, c0, l1, c1, "X"), change(0, 0, 0, 0, "Y")},
        outIndexed, &table.index());
    if (!b || !e || *e < *b) {
      EXPECT_TRUE(error) << text << " " << l0 << ":" << c0 << "-" << l1 << ":"
                         << c1;
      EXPECT_TRUE(errorIndexed);
      continue;
    }
    ASSERT_FALSE(error) << *error;
    ASSERT_FALSE(errorIndexed) << *errorIndexed;
    std::string expected = text;
    expected.replace(*b, *e - *b, "X");
    EXPECT_EQ(out, expected);
    EXPECT_EQ(outIndexed, "Y" + expected);
  }
}

TEST(Convert, LoneCarriageReturnsEndLines) {
  // Classic Mac files: LSP clients count a lone \r as a line break, MLIR
  // does not. The analysed text has them as \n, at the same offsets.
  EXPECT_TRUE(hasLoneCR("a\rb"));
  EXPECT_TRUE(hasLoneCR("a\r\nb\r"));
  EXPECT_FALSE(hasLoneCR("a\r\nb\r\n"));
  EXPECT_FALSE(hasLoneCR("a\nb"));
  EXPECT_EQ(loneCRsAsLF("a\rb\r\nc\r"), "a\nb\r\nc\n");
  EXPECT_EQ(firstLineBreak("a\rb\nc"), "\r");
  EXPECT_EQ(firstLineBreak("a\r\nb\rc"), "\r\n");
  EXPECT_EQ(firstLineBreak("a\nb\r"), "\n");
  EXPECT_EQ(firstLineBreak("one line"), "\n");

  // Changes count lines as the client does: \r, \r\n and \n each end one.
  std::string text = "one\rtwo\r\nthree\nfour", out;
  EXPECT_FALSE(applyChanges(text, {change(1, 0, 1, 3, "2")}, out, nullptr,
                            /*loneCR=*/true));
  EXPECT_EQ(out, "one\r2\r\nthree\nfour");
  EXPECT_FALSE(applyChanges(text, {change(3, 0, 3, 4, "4")}, out, nullptr,
                            /*loneCR=*/true));
  EXPECT_EQ(out, "one\rtwo\r\nthree\n4");
  // Past the end of a line is its end, before its \r.
  EXPECT_FALSE(applyChanges(text, {change(0, 99, 0, 99, "!")}, out, nullptr,
                            /*loneCR=*/true));
  EXPECT_EQ(out, "one!\rtwo\r\nthree\nfour");
  // Typing Enter (\r) and then a second change on the new line.
  EXPECT_FALSE(applyChanges(
      text, {change(0, 3, 0, 3, "\rnew"), change(1, 0, 1, 3, "NEW")}, out,
      nullptr, /*loneCR=*/true));
  EXPECT_EQ(out, "one\rNEW\rtwo\r\nthree\nfour");
  EXPECT_TRUE(applyChanges(text, {change(4, 0, 4, 0, "x")}, out, nullptr,
                           /*loneCR=*/true));
  // The analysed text's line starts serve as the client text's.
  std::string analysed = loneCRsAsLF(text);
  LineTable table(analysed);
  EXPECT_FALSE(applyChanges(text, {change(2, 1, 2, 5, "HREE")}, out,
                            &table.index(), /*loneCR=*/true));
  EXPECT_EQ(out, "one\rtwo\r\ntHREE\nfour");
}
