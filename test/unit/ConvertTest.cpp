//===- ConvertTest.cpp - UTF-16 positions and incremental edits -----------===//

#include "Convert.h"

#include <gtest/gtest.h>

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

TEST(Convert, IncrementalChangesUseUtf16) {
  std::string text = "x = \"é😀\"\n";
  llvm::lsp::TextDocumentContentChangeEvent c;
  c.range = llvm::lsp::Range(LspPosition(0, 4), LspPosition(0, 9));
  c.text = "\"ok\"";
  EXPECT_FALSE(applyChange(text, c));
  EXPECT_EQ(text, "x = \"ok\"\n");
  c.range = llvm::lsp::Range(LspPosition(5, 0), LspPosition(5, 1));
  EXPECT_TRUE(applyChange(text, c)); // outside: an error, text unchanged
  EXPECT_EQ(text, "x = \"ok\"\n");
  c.range = std::nullopt;
  c.text = "whole";
  EXPECT_FALSE(applyChange(text, c));
  EXPECT_EQ(text, "whole");
}
