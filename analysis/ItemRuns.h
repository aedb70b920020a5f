//===- ItemRuns.h - a file's items in shared runs ---------------*- C++ -*-===//
//
// The ops and values of a FileAnalysis, read like one vector but held as
// runs of storage that versions share: an edit inside one function of a
// many-function file makes a version of the previous one's runs before and
// after that function and a new run for it, instead of copying every item
// of the file (which was the largest part of such an edit, and kept two
// copies of the file's items live while it was merged).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_ITEMRUNS_H
#define TOSA_LSP_ANALYSIS_ITEMRUNS_H

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

namespace tosa_lsp {

template <typename T> class ItemRuns {
  struct Run {
    std::shared_ptr<std::vector<T>> store; // never changed once shared
    size_t begin, end;                     // in `store`
  };

public:
  ItemRuns() = default;
  ItemRuns(std::vector<T> items) { append(std::move(items)); }
  ItemRuns(const ItemRuns &) = default;
  ItemRuns &operator=(const ItemRuns &) = default;
  ItemRuns(ItemRuns &&o) noexcept
      : runs(std::move(o.runs)), starts(std::move(o.starts)), total(o.total) {
    o.clear();
  }
  ItemRuns &operator=(ItemRuns &&o) noexcept {
    if (this != &o) {
      runs = std::move(o.runs);
      starts = std::move(o.starts);
      total = o.total;
      o.clear();
    }
    return *this;
  }

  size_t size() const { return total; }
  bool empty() const { return total == 0; }
  /// O(log runs): a version has a run or three per section and edit.
  const T &operator[](size_t i) const {
    assert(i < total && "index out of range");
    size_t r = runAt(i);
    return (*runs[r].store)[runs[r].begin + (i - starts[r])];
  }
  const T &front() const { return (*this)[0]; }
  const T &back() const { return (*this)[total - 1]; }
  size_t runCount() const { return runs.size(); }
  /// Whether item `i` here and item `j` of `o` are one object (a run
  /// shared, not copied).
  bool sharesItem(size_t i, const ItemRuns &o, size_t j) const {
    return &(*this)[i] == &o[j];
  }

  class const_iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T *;
    using reference = const T &;

    const_iterator() = default;
    reference operator*() const { return *p; }
    pointer operator->() const { return p; }
    reference operator[](difference_type n) const { return *(*this + n); }
    const_iterator &operator++() {
      if (++i < runEnd)
        ++p;
      else
        seek();
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    const_iterator &operator--() { return *this -= 1; }
    const_iterator operator--(int) {
      const_iterator t = *this;
      --*this;
      return t;
    }
    const_iterator &operator+=(difference_type n) {
      i += n;
      seek();
      return *this;
    }
    const_iterator &operator-=(difference_type n) { return *this += -n; }
    friend const_iterator operator+(const_iterator a, difference_type n) {
      return a += n;
    }
    friend const_iterator operator+(difference_type n, const_iterator a) {
      return a += n;
    }
    friend const_iterator operator-(const_iterator a, difference_type n) {
      return a -= n;
    }
    friend difference_type operator-(const const_iterator &a,
                                     const const_iterator &b) {
      return static_cast<difference_type>(a.i) -
             static_cast<difference_type>(b.i);
    }
    friend bool operator==(const const_iterator &a, const const_iterator &b) {
      return a.i == b.i;
    }
    friend bool operator!=(const const_iterator &a, const const_iterator &b) {
      return a.i != b.i;
    }
    friend bool operator<(const const_iterator &a, const const_iterator &b) {
      return a.i < b.i;
    }
    friend bool operator>(const const_iterator &a, const const_iterator &b) {
      return a.i > b.i;
    }
    friend bool operator<=(const const_iterator &a, const const_iterator &b) {
      return a.i <= b.i;
    }
    friend bool operator>=(const const_iterator &a, const const_iterator &b) {
      return a.i >= b.i;
    }

  private:
    friend class ItemRuns;
    const_iterator(const ItemRuns *o, size_t i) : o(o), i(i) { seek(); }
    /// Points `p` at item `i`, the rest of its run cached for `++`.
    void seek() {
      if (i >= o->total) {
        p = nullptr;
        runEnd = i + 1;
        return;
      }
      size_t r = o->runAt(i);
      const Run &run = o->runs[r];
      p = run.store->data() + run.begin + (i - o->starts[r]);
      runEnd = o->starts[r] + (run.end - run.begin);
    }
    const ItemRuns *o = nullptr;
    size_t i = 0;
    const T *p = nullptr;
    size_t runEnd = 0; // the index after the last of `p`'s run
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, total); }

  /// Appends `items` as a run of their own.
  void append(std::vector<T> &&items) {
    if (items.empty())
      return;
    size_t n = items.size();
    addRun({std::make_shared<std::vector<T>>(std::move(items)), 0, n});
  }
  /// Appends items [from, to) of `o`, sharing its storage (no copy).
  void appendShared(const ItemRuns &o, size_t from, size_t to) {
    assert(from <= to && to <= o.total && "range out of bounds");
    if (from == to)
      return;
    for (size_t r = o.runAt(from); r < o.runs.size() && o.starts[r] < to; ++r) {
      const Run &run = o.runs[r];
      size_t first = std::max(from, o.starts[r]) - o.starts[r];
      size_t last =
          std::min(to, o.starts[r] + (run.end - run.begin)) - o.starts[r];
      addRun({run.store, run.begin + first, run.begin + last});
    }
  }
  /// Items [from, to) as runs of their own, sharing the storage.
  ItemRuns slice(size_t from, size_t to) const {
    ItemRuns s;
    s.appendShared(*this, from, to);
    return s;
  }
  void clear() {
    runs.clear();
    starts.clear();
    total = 0;
  }
  /// A copy of every item, in one vector.
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  /// The items to change in place (not to add or remove), copied into one
  /// run of their own first unless they already are one. For tests: the
  /// pipeline never changes a finished version's items.
  std::vector<T> &mut() {
    if (runs.size() != 1 || runs[0].store.use_count() != 1 ||
        runs[0].begin != 0 || runs[0].end != runs[0].store->size()) {
      std::vector<T> own = vec();
      clear();
      size_t n = own.size();
      addRun({std::make_shared<std::vector<T>>(std::move(own)), 0, n});
    }
    return *runs[0].store;
  }

  /// Calls `f` with each store that only this holds (the count of the
  /// shared pointer is its runs here), and forgets all the items.
  template <typename F> void releaseStores(F f) {
    forEachStore([&](std::vector<T> &store, long usesHere, long uses) {
      // No one else holds it, and no one can take it but from a holder:
      // the count cannot grow behind this check.
      if (uses == usesHere) {
        std::atomic_thread_fence(std::memory_order_acquire);
        f(store);
      }
    });
    clear();
  }
  /// The items kept alive by this version's stores, live or not (an edit
  /// leaves the replaced function's old items in the store around it).
  size_t storedItems() const {
    size_t n = 0;
    forEachStore(
        [&](const std::vector<T> &store, long, long) { n += store.size(); });
    return n;
  }

private:
  /// `f(store, its runs here, its holders)` once per store of the runs.
  template <typename F> void forEachStore(F f) const {
    for (size_t r = 0; r < runs.size(); ++r) {
      const Run &run = runs[r];
      auto same = [&](const Run &x) { return x.store == run.store; };
      if (std::any_of(runs.begin(), runs.begin() + r, same))
        continue; // counted at its first run
      f(*run.store,
        static_cast<long>(std::count_if(runs.begin(), runs.end(), same)),
        run.store.use_count());
    }
  }
  size_t runAt(size_t i) const {
    return static_cast<size_t>(
               std::upper_bound(starts.begin(), starts.end(), i) -
               starts.begin()) -
           1;
  }
  void addRun(Run run) {
    // Adjacent parts of one store stay one run.
    if (!runs.empty() && runs.back().store == run.store &&
        runs.back().end == run.begin) {
      total += run.end - run.begin;
      runs.back().end = run.end;
      return;
    }
    starts.push_back(total);
    total += run.end - run.begin;
    runs.push_back(std::move(run));
  }

  std::vector<Run> runs;
  std::vector<size_t> starts; // index of each run's first item
  size_t total = 0;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_ITEMRUNS_H
