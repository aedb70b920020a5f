//===- SharedDataTest.cpp - CowVector and SharedText ----------------------===//

#include "Analysis.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

TEST(CowVector, CopiesShareUntilOneChanges) {
  CowVector<Range> a = std::vector<Range>{{{1, 2}, {1, 5}}, {{3, 1}, {3, 4}}};
  CowVector<Range> b = a;
  EXPECT_EQ(a.begin(), b.begin()); // one list, two owners
  for (Range &r : b.mut())
    r.begin.line += 10;
  EXPECT_NE(a.begin(), b.begin());
  EXPECT_EQ(a[0].begin.line, 1u);
  EXPECT_EQ(a[1].begin.line, 3u);
  EXPECT_EQ(b[0].begin.line, 11u);
  EXPECT_EQ(b[1].begin.line, 13u);
  // The only owner changes its own list.
  const Range *own = b.begin();
  for (Range &r : b.mut())
    r.end.column = 9;
  EXPECT_EQ(b.begin(), own);
  EXPECT_EQ(b[1].end.column, 9u);
  EXPECT_EQ(a[1].end.column, 4u);
}

TEST(CowVector, EmptyListsAndComparisons) {
  CowVector<unsigned> none, also = std::vector<unsigned>{};
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(also.empty());
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.begin(), none.end());
  EXPECT_TRUE(none.mut().begin() == none.mut().end());
  EXPECT_EQ(none, also);
  CowVector<unsigned> xs = {0, 2, 3};
  EXPECT_EQ(xs, (std::vector<unsigned>{0, 2, 3}));
  EXPECT_EQ(xs.vec(), (std::vector<unsigned>{0, 2, 3}));
  EXPECT_NE(xs, none);
  EXPECT_EQ(xs.front(), 0u);
  EXPECT_EQ(xs.back(), 3u);
  CowVector<unsigned> moved = std::move(xs);
  EXPECT_EQ(moved.size(), 3u);
}

namespace {
struct Counted {
  static int live;
  int v;
  Counted(int v) : v(v) { ++live; }
  Counted(const Counted &o) : v(o.v) { ++live; }
  ~Counted() { --live; }
};
int Counted::live = 0;
} // namespace

TEST(CowVector, ElementsLiveAsLongAsTheLastCopy) {
  {
    CowVector<Counted> a = std::vector<Counted>{1, 2};
    EXPECT_EQ(Counted::live, 2); // the list's own, not the temporaries
    CowVector<Counted> b = a, c;
    c = b;
    EXPECT_EQ(Counted::live, 2); // copies share the elements
    a = CowVector<Counted>();
    EXPECT_EQ(Counted::live, 2); // still held by b and c
    for (Counted &x : c.mut())
      x.v *= 10;
    EXPECT_EQ(Counted::live, 4); // c has its own now
    EXPECT_EQ(b[1].v, 2);
    EXPECT_EQ(c[1].v, 20);
  }
  EXPECT_EQ(Counted::live, 0); // nothing leaks
}
