//===- LineIndexTest.cpp - byte offsets <-> positions ---------------------===//

#include "LineIndex.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace tosa_lsp;

namespace {

/// The definition, one character at a time.
Position slow(const std::string &text, size_t offset) {
  Position p{1, 1};
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

TEST(LineIndex, PositionsInAnyOrderMatchTheDefinition) {
  std::string text;
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i)
    text += std::string(rng() % 5, 'x') + "\n"; // empty lines too
  text += "last";
  LineIndex a(text), b(text);
  std::vector<size_t> offsets;
  for (size_t o = 0; o <= text.size(); ++o)
    offsets.push_back(o); // forwards: the hinted path
  for (size_t o = text.size() + 1; o-- > 0;)
    offsets.push_back(o); // backwards
  for (int i = 0; i < 2000; ++i)
    offsets.push_back(rng() % (text.size() + 1)); // random
  auto check = [&](const LineIndex &idx, size_t o) {
    Position got = idx.position(o), want = slow(text, o);
    ASSERT_EQ(got.line, want.line) << "offset " << o;
    ASSERT_EQ(got.column, want.column) << "offset " << o;
    ASSERT_EQ(idx.offset(got), o);
  };
  for (size_t o : offsets)
    check(a, o); // one index: the hint is used
  for (size_t o : offsets) {
    // Two indexes used alternately, as two sections' lookups interleave.
    check(a, o);
    check(b, o);
  }
}

} // namespace
