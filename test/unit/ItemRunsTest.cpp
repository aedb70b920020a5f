//===- ItemRunsTest.cpp - a file's items in shared runs ------------------===//

#include "ItemRuns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

using namespace tosa_lsp;

namespace {

std::vector<int> iota(int from, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

/// Every way of reading: index, iteration, iterator arithmetic.
void expectReads(const ItemRuns<int> &r, const std::vector<int> &want) {
  ASSERT_EQ(r.size(), want.size());
  EXPECT_EQ(r.empty(), want.empty());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(r[i], want[i]) << i;
  EXPECT_EQ(std::vector<int>(r.begin(), r.end()), want);
  EXPECT_EQ(r.vec(), want);
  EXPECT_EQ(static_cast<size_t>(r.end() - r.begin()), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(*(r.begin() + i), want[i]);
    EXPECT_EQ(r.begin()[i], want[i]);
    EXPECT_EQ(*(r.end() - (want.size() - i)), want[i]);
  }
  if (!want.empty()) {
    EXPECT_EQ(r.front(), want.front());
    EXPECT_EQ(r.back(), want.back());
    auto it = r.end();
    --it;
    EXPECT_EQ(*it, want.back());
  }
}

TEST(ItemRuns, ReadsLikeOneVector) {
  ItemRuns<int> r;
  expectReads(r, {});
  r.append(iota(0, 5));
  r.append({});
  r.append(iota(5, 3));
  EXPECT_EQ(r.runCount(), 2u);
  expectReads(r, iota(0, 8));
  // Sorted: a binary search goes across runs.
  EXPECT_EQ(*std::lower_bound(r.begin(), r.end(), 6), 6);
  EXPECT_EQ(std::lower_bound(r.begin(), r.end(), 9), r.end());
}

TEST(ItemRuns, SharedPartsAreTheSameObjects) {
  ItemRuns<int> old;
  old.append(iota(0, 10));
  old.append(iota(10, 10));
  // Keep [0, 4), replace [4, 6) with two new items, keep [6, 20).
  ItemRuns<int> next;
  next.appendShared(old, 0, 4);
  next.append({40, 50});
  next.appendShared(old, 6, 20);
  std::vector<int> want = iota(0, 4);
  want.push_back(40);
  want.push_back(50);
  for (int i = 6; i < 20; ++i)
    want.push_back(i);
  expectReads(next, want);
  EXPECT_EQ(next.runCount(), 4u); // [0,4) [new] [6,10) [10,20)
  for (size_t i : {0u, 3u})
    EXPECT_TRUE(next.sharesItem(i, old, i));
  for (size_t i = 6; i < 20; ++i)
    EXPECT_TRUE(next.sharesItem(i, old, i)) << i;
  EXPECT_FALSE(next.sharesItem(4, old, 4));
  // What the old stores keep alive: both whole, and the new run.
  EXPECT_EQ(next.storedItems(), 22u);
  // A slice of a slice, and adjacent parts of one store join again.
  ItemRuns<int> s = next.slice(2, 12);
  expectReads(s, std::vector<int>(want.begin() + 2, want.begin() + 12));
  ItemRuns<int> joined;
  joined.appendShared(old, 0, 3);
  joined.appendShared(old, 3, 8);
  EXPECT_EQ(joined.runCount(), 1u);
  expectReads(joined, iota(0, 8));
  // The old version reads as it did.
  expectReads(old, iota(0, 20));
}

TEST(ItemRuns, CopiesAndMovesShareOrHandOver) {
  ItemRuns<std::string> a(std::vector<std::string>{"x", "y"});
  ItemRuns<std::string> b = a;
  EXPECT_TRUE(b.sharesItem(1, a, 1));
  ItemRuns<std::string> c = std::move(b);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.begin(), b.end());
  EXPECT_EQ(c.size(), 2u);
  EXPECT_TRUE(c.sharesItem(0, a, 0));
  // A change goes to a copy of its own: the other one reads as before.
  c.mut()[0] = "z";
  EXPECT_EQ(a[0], "x");
  EXPECT_EQ(c[0], "z");
  EXPECT_FALSE(c.sharesItem(1, a, 1));
}

TEST(ItemRuns, OnlyStoresNoOneElseHoldsAreReleased) {
  ItemRuns<int> old;
  old.append(iota(0, 6));
  old.append(iota(6, 6));
  ItemRuns<int> next; // shares the first store only
  next.appendShared(old, 0, 3);
  next.append({7});
  std::vector<size_t> got;
  old.releaseStores([&](std::vector<int> &v) { got.push_back(v.size()); });
  EXPECT_EQ(got, std::vector<size_t>{6});
  EXPECT_TRUE(old.empty());
  expectReads(next, {0, 1, 2, 7});
  // A store in two runs of one version is that version's alone.
  ItemRuns<int> two;
  two.appendShared(next, 0, 1);
  two.appendShared(next, 2, 3);
  next.clear();
  got.clear();
  two.releaseStores([&](std::vector<int> &v) { got.push_back(v.size()); });
  EXPECT_EQ(got, std::vector<size_t>{6});
}

} // namespace
