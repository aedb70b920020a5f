//===- InputTest.cpp - input validation -----------------------------------===//

#include "Input.h"

#include "llvm/Support/ConvertUTF.h"

#include <gtest/gtest.h>

#include <random>

using namespace tosa_lsp;

namespace {

/// What llvm::isLegalUTF8String says: the offset of the first bad byte, or
/// the size when the whole text is valid.
size_t oracle(const std::string &s) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(s.data());
  const llvm::UTF8 *bad = begin;
  if (llvm::isLegalUTF8String(&bad, begin + s.size()))
    return s.size();
  return bad - begin;
}

TEST(Input, FirstInvalidUTF8FindsTheBadByte) {
  EXPECT_EQ(firstInvalidUTF8(""), 0u);
  std::string valid = "func.func @f() // caf\xc3\xa9";
  EXPECT_EQ(firstInvalidUTF8(valid), valid.size());
  EXPECT_EQ(firstInvalidUTF8("0123456789abcdef\xff"), 16u);
  EXPECT_EQ(firstInvalidUTF8("0123456789\xc3"), 10u);      // cut at the end
  EXPECT_EQ(firstInvalidUTF8("ab\xc0\xaf"), 2u);           // overlong '/'
  EXPECT_EQ(firstInvalidUTF8("abcdefgh\xed\xa0\x80"), 8u); // a surrogate
  EXPECT_EQ(firstInvalidUTF8("\xf0\x9f\x98\x80 ok"), 7u);
}

TEST(Input, FirstInvalidUTF8AgreesWithLLVM) {
  // Mostly ASCII runs of every length (the 8-byte steps and their tails)
  // with sequences of every kind between them, valid and not.
  const char *pieces[] = {"\xc3\xa9",
                          "\xe2\x82\xac",
                          "\xf0\x9f\x98\x80",
                          "\xc3",
                          "\xe2\x82",
                          "\x80",
                          "\xff",
                          "\xc0\xaf",
                          "\xed\xa0\x80",
                          "\xf4\x90\x80\x80",
                          "\xf8\x88\x80\x80\x80"};
  std::mt19937 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    int parts = rng() % 6;
    for (int i = 0; i < parts; ++i) {
      s.append(rng() % 20, 'a' + rng() % 26);
      if (rng() % 3 == 0)
        s += pieces[rng() % (sizeof(pieces) / sizeof(*pieces))];
    }
    ASSERT_EQ(firstInvalidUTF8(s), oracle(s)) << s;
  }
}

} // namespace
