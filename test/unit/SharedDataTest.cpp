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
  Counted(Counted &&o) : v(o.v) { ++live; }
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

TEST(SharedText, CopiesShareOneTextThatLivesAsLongAsTheLast) {
  SharedText a = std::string("tensor<4x?xf32>"), none;
  SharedText b = a, c;
  c = b;
  EXPECT_EQ(&a.str(), &c.str()); // one text, three owners
  EXPECT_EQ(c, "tensor<4x?xf32>");
  a = SharedText();
  b = std::move(c);
  EXPECT_EQ(b.str(), "tensor<4x?xf32>"); // still held
  EXPECT_TRUE(c.empty());                // moved from
  EXPECT_EQ(none, SharedText(""));       // empty texts are equal, shared
  EXPECT_EQ(&none.str(), &SharedText("").str());
  // Equal texts compare equal whether shared or not.
  EXPECT_EQ(b, SharedText("tensor<4x?xf32>"));
  EXPECT_NE(b, SharedText("tensor<4xf32>"));
}

TEST(CachedValue, ComputedOnceSharedByCopiesFreedWithTheLast) {
  {
    CachedValue<Counted> a;
    int made = 0;
    auto make = [&] { return Counted(++made); };
    CachedValue<Counted> before = a; // copied before: its own
    EXPECT_EQ(a.get(make).v, 1);
    EXPECT_EQ(a.get(make).v, 1); // once
    CachedValue<Counted> b = a, c;
    c = b;
    EXPECT_EQ(&c.get(make), &a.get(make)); // shared
    EXPECT_EQ(before.get(make).v, 2);
    EXPECT_EQ(Counted::live, 2);
    a.forget();
    EXPECT_EQ(Counted::live, 2); // b and c hold it
    EXPECT_EQ(a.get(make).v, 3); // computed again
    b.set(Counted(7));
    EXPECT_EQ(b.get(make).v, 7);
    EXPECT_EQ(c.get(make).v, 1); // c's copy is untouched
  }
  EXPECT_EQ(Counted::live, 0); // nothing leaks
}

// Every op, value and span of a file is one of these (10^5-10^6 per
// version): a pointer for a text or a cached value, not a std::shared_ptr
// (16 bytes, and a flag beside the cached value).
TEST(SharedData, ItemsStayCompact) {
  EXPECT_EQ(sizeof(SharedText), sizeof(void *));
  EXPECT_EQ(sizeof(CachedValue<int>), sizeof(void *));
  EXPECT_LE(sizeof(OpReport), 128u);
  EXPECT_LE(sizeof(ValueInfo), 72u);
  EXPECT_EQ(sizeof(ShortText), sizeof(void *));
  EXPECT_LE(sizeof(OpSpan), 56u);
  EXPECT_LE(sizeof(Diagnostic), 72u);
}

// SSA names up to 7 bytes live in the item; longer ones are shared by
// copies; either reads back as written.
TEST(ShortText, InlineUpToSevenBytesSharedBeyond) {
  for (const std::string &s :
       std::vector<std::string>{"", "%", "%0", "%arg12", "%v12345", "%v123456",
                                "%a_long_ssa_name#3", std::string(300, 'x')}) {
    ShortText t(s);
    EXPECT_EQ(t.view(), s);
    EXPECT_EQ(t.str(), s);
    EXPECT_EQ(t.size(), s.size());
    EXPECT_EQ(t.empty(), s.empty());
    ShortText copy = t, assigned;
    assigned = copy;
    EXPECT_EQ(assigned.view(), s);
    // Shared beyond 7 bytes, in the item up to 7.
    EXPECT_EQ(copy.view().data() == t.view().data(), s.size() > 7) << s;
    ShortText moved = std::move(copy);
    EXPECT_EQ(moved.view(), s);
    EXPECT_TRUE(copy.empty());
    EXPECT_TRUE(t == s && !(t != s) && t == ShortText(s));
    EXPECT_EQ("<" + t + ">", "<" + s + ">");
  }
  EXPECT_FALSE(ShortText("%0") == ShortText("%00"));
}
