//===- PositionMapTest.cpp - positions between a text and its edit --------===//

#include "PositionMap.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace tosa_lsp;

namespace {

// A migration's two edits of one op: constants inserted before the
// statement, the op rewritten from its name to its end.
const char *kOld = "func.func @f(%a: tensor<2xi32>) {\n"
                   "  %0 = tosa.mul %a, %a {shift = 1 : i8} : (tensor<2xi32>, "
                   "tensor<2xi32>) -> tensor<2xi32>\n"
                   "  return %0 : tensor<2xi32>\n"
                   "}\n";

std::vector<TextEditData> mulEdits() {
  return {{{{2, 3}, {2, 3}},
           "%s = \"tosa.const\"() <{values = dense<1> : tensor<1xi8>}> : () "
           "-> tensor<1xi8>\n  "},
          {{{2, 8}, {2, 90}},
           "tosa.mul %a, %a, %s : (tensor<2xi32>, tensor<2xi32>, "
           "tensor<1xi8>) -> tensor<2xi32>"}};
}

TEST(PositionMap, AppliesLikeApplyEdits) {
  PositionMap map;
  std::string now = PositionMap::apply(kOld, mulEdits(), &map);
  EXPECT_EQ(now, applyEdits(kOld, mulEdits()));
  EXPECT_EQ(map.spans().size(), 2u);
}

TEST(PositionMap, TextOutsideTheEditsMovesByWhatTheyAdded) {
  PositionMap map;
  PositionMap::apply(kOld, mulEdits(), &map);
  bool exact = false;
  // Before the edits: unchanged.
  EXPECT_EQ(map.toNew({1, 11}, &exact)->line, 1u);
  EXPECT_TRUE(exact);
  // The result name sits where the constants were inserted: after them.
  std::optional<Position> result = map.toNew({2, 3}, &exact);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->line, 3u);
  EXPECT_EQ(result->column, 3u);
  EXPECT_TRUE(exact);
  // The next line moves down by the inserted one.
  std::optional<Position> ret = map.toNew({3, 10}, &exact);
  EXPECT_EQ(ret->line, 4u);
  EXPECT_EQ(ret->column, 10u);
  EXPECT_TRUE(exact);
  // And back.
  EXPECT_EQ(map.toOld(*ret)->line, 3u);
  EXPECT_EQ(map.toOld(*result)->column, 3u);
}

TEST(PositionMap, SharedStartAndEndOfAnEditMapExactly) {
  PositionMap map;
  std::string now = PositionMap::apply(kOld, mulEdits(), &map);
  bool exact = false;
  // `tosa.mul %a, %a` is shared: the op name maps exactly.
  std::optional<Position> name = map.toNew({2, 10}, &exact);
  EXPECT_EQ(name->line, 3u);
  EXPECT_EQ(name->column, 10u);
  EXPECT_TRUE(exact);
  // The end of the result type too (where inlay hints go), both ways.
  std::optional<Position> end = map.toNew({2, 90}, &exact);
  EXPECT_TRUE(exact);
  EXPECT_EQ(end->line, 3u);
  EXPECT_EQ(now.substr(now.find("-> tensor<2xi32>") + 16, 1), "\n");
  std::optional<Position> back = map.toOld(*end, &exact);
  EXPECT_TRUE(exact);
  EXPECT_EQ(back->line, 2u);
  EXPECT_EQ(back->column, 90u);
  // Inside the shared end: the result type's first character.
  std::optional<Position> type = map.toNew({2, 77}, &exact);
  EXPECT_TRUE(exact);
  std::string line3 = now.substr(now.find("  %0 = tosa.mul"));
  line3 = line3.substr(0, line3.find('\n'));
  EXPECT_EQ(type->line, 3u);
  EXPECT_EQ(type->column, line3.rfind("tensor<2xi32>") + 1);
  EXPECT_EQ(map.toOld(*type)->column, 77u);
  // The attribute that became an operand: the edit's start, inexact.
  std::optional<Position> attr = map.toNew({2, 25}, &exact);
  EXPECT_FALSE(exact);
  EXPECT_EQ(attr->column, 8u);
  // An inserted constant maps to where it was inserted.
  std::optional<Position> constant = map.toOld({2, 10}, &exact);
  EXPECT_FALSE(exact);
  EXPECT_EQ(constant->line, 2u);
  EXPECT_EQ(constant->column, 3u);
}

TEST(PositionMap, NoEditsIsTheIdentity) {
  PositionMap map;
  std::string text = "a\nbc\n";
  EXPECT_EQ(PositionMap::apply(text, {}, &map), text);
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.toNew(Position{2, 2})->column, 2u);
  EXPECT_FALSE(map.toNew(Position{9, 1}));
}

/// Random edits: every character outside them maps to the same character
/// in the new text, and back to itself.
TEST(PositionMap, UneditedCharactersRoundTrip) {
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::string text;
    for (int i = 0; i < 400; ++i)
      text += "ab\nc xyz"[rng() % 8];
    std::vector<TextEditData> edits;
    LineIndex lines(text);
    std::vector<bool> edited(text.size() + 1, false);
    size_t at = 0;
    while (true) {
      at += rng() % 40;
      size_t len = rng() % 6;
      if (at + len > text.size())
        break;
      std::string insert(rng() % 5, 'Q');
      if (rng() % 2)
        insert += "\nQQ";
      edits.push_back({{lines.position(at), lines.position(at + len)}, insert});
      for (size_t k = at; k < at + len; ++k)
        edited[k] = true;
      at += len + 1;
    }
    std::shuffle(edits.begin(), edits.end(), rng);
    PositionMap map;
    std::string now = PositionMap::apply(text, edits, &map);
    for (size_t i = 0; i < text.size(); ++i) {
      if (edited[i])
        continue;
      bool exact = false;
      size_t n = map.offsetToNew(i, &exact);
      ASSERT_TRUE(exact);
      ASSERT_LT(n, now.size());
      ASSERT_EQ(now[n], text[i]) << "offset " << i;
      ASSERT_EQ(map.offsetToOld(n, &exact), i);
      ASSERT_TRUE(exact);
    }
  }
}

// Two versions of a document as one edit between their common prefix and
// suffix: lines below it move by the lines it added; inside it, inexact.
TEST(PositionMap, BetweenTwoVersions) {
  std::string before = kOld;
  std::string after = before;
  after.insert(after.find("  return"), "  // a comment\n  // another\n");
  PositionMap map = PositionMap::between(before, after);
  bool exact = false;
  std::optional<Position> p = map.toNew(Position{3, 3}, &exact);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 5u);
  EXPECT_EQ(p->column, 3u);
  EXPECT_TRUE(exact);
  p = map.toNew(Position{1, 5}, &exact);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 1u);
  EXPECT_TRUE(exact);
  PositionMap same = PositionMap::between(before, before);
  EXPECT_TRUE(same.empty());
  EXPECT_EQ(same.toNew(Position{2, 4})->line, 2u);
}

} // namespace
