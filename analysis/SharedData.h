//===- SharedData.h - texts and lists that versions share -------*- C++ -*-===//
//
// The storage behind the plain-data model (Analysis.h): a 200k-line model has
// 10^5 ops and values, a handful of distinct types and names repeated across
// them, and two versions of it alive during an edit. These keep each
// distinct text once (SharedText, SharedTextPool), short names inline
// (ShortText), lists shared until changed (CowVector) and an op's analysis
// computed on first use (CachedValue), each one pointer in the item.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_SHAREDDATA_H
#define TOSA_LSP_ANALYSIS_SHAREDDATA_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tosa_lsp {

namespace detail {
/// A value and the count of those that share it, in one allocation: the
/// one pointer behind SharedText, ShortText's long texts and CachedValue.
template <typename T> struct Counted {
  std::atomic<unsigned> refs;
  const T value;
  static Counted *make(T v) { return new Counted{{1}, std::move(v)}; }
  static Counted *share(Counted *c) {
    if (c)
      c->refs.fetch_add(1, std::memory_order_relaxed);
    return c;
  }
  static void release(Counted *c) {
    if (c && c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete c;
  }
};
} // namespace detail

/// Immutable text that copies share: the types and origins of a file's
/// values and ops (a 200k-op model has a few dozen distinct types, and a
/// string per value and operand was ~60 MiB of its analysis). Reads,
/// compares and concatenates like a std::string.
class SharedText {
public:
  SharedText() = default;
  SharedText(std::string s)
      : rep(s.empty() ? nullptr : Rep::make(std::move(s))) {}
  SharedText(const char *s) : SharedText(std::string(s)) {}
  SharedText(const SharedText &o) : rep(Rep::share(o.rep)) {}
  SharedText(SharedText &&o) noexcept : rep(o.rep) { o.rep = nullptr; }
  SharedText &operator=(SharedText o) noexcept {
    std::swap(rep, o.rep);
    return *this;
  }
  ~SharedText() { Rep::release(rep); }

  const std::string &str() const { return rep ? rep->value : none(); }
  operator const std::string &() const { return str(); }
  bool empty() const { return str().empty(); }
  size_t size() const { return str().size(); }
  const char *c_str() const { return str().c_str(); }

  friend bool operator==(const SharedText &a, const SharedText &b) {
    return a.rep == b.rep || a.str() == b.str();
  }
  friend bool operator!=(const SharedText &a, const SharedText &b) {
    return !(a == b);
  }
  friend bool operator==(const SharedText &a, const std::string &b) {
    return a.str() == b;
  }
  friend bool operator==(const std::string &a, const SharedText &b) {
    return a == b.str();
  }
  friend bool operator==(const SharedText &a, const char *b) {
    return a.str() == b;
  }
  friend bool operator!=(const SharedText &a, const std::string &b) {
    return a.str() != b;
  }
  friend bool operator!=(const SharedText &a, const char *b) {
    return a.str() != b;
  }
  friend std::string operator+(std::string a, const SharedText &b) {
    return a += b.str();
  }
  friend std::string operator+(const SharedText &a, const std::string &b) {
    return a.str() + b;
  }
  friend std::string operator+(const char *a, const SharedText &b) {
    return a + b.str();
  }
  friend std::string operator+(const SharedText &a, const char *b) {
    return a.str() + b;
  }
  friend std::string operator+(const SharedText &a, char b) {
    return a.str() + b;
  }
  friend std::string operator+(char a, const SharedText &b) {
    return a + b.str();
  }
  friend std::ostream &operator<<(std::ostream &os, const SharedText &t) {
    return os << t.str();
  }

private:
  static const std::string &none() {
    static const std::string nothing;
    return nothing;
  }
  /// The count and the text in one allocation, one pointer in the item: a
  /// std::shared_ptr was two (16 bytes), and an op's report, its value and
  /// its span hold five (200k ops: ~8 MB a version).
  using Rep = detail::Counted<std::string>;
  Rep *rep = nullptr;
};

/// A text of up to 7 bytes kept in the item itself (SSA names: `%0`,
/// `%arg3`, `%v123`), a longer one in one counted allocation: 8 bytes
/// where a std::string is 32 (a 200k-line model has 200k values).
class ShortText {
public:
  ShortText() = default;
  ShortText(std::string_view s) {
    if (s.size() <= kInline) {
      unsigned char bytes[8] = {static_cast<unsigned char>(s.size() << 1 | 1)};
      std::copy(s.begin(), s.end(), bytes + 1);
      std::memcpy(&bits, bytes, sizeof bits);
    } else {
      bits = reinterpret_cast<uintptr_t>(Rep::make(std::string(s)));
    }
  }
  ShortText(const std::string &s) : ShortText(std::string_view(s)) {}
  ShortText(const char *s) : ShortText(std::string_view(s)) {}
  ShortText(const ShortText &o) : bits(o.bits) { Rep::share(rep()); }
  ShortText(ShortText &&o) noexcept : bits(o.bits) { o.bits = kEmpty; }
  ShortText &operator=(ShortText o) noexcept {
    std::swap(bits, o.bits);
    return *this;
  }
  ~ShortText() { Rep::release(rep()); }

  std::string_view view() const {
    if (Rep *r = rep())
      return r->value;
    return {reinterpret_cast<const char *>(&bits) + 1,
            static_cast<size_t>((bits & 0xff) >> 1)};
  }
  std::string str() const { return std::string(view()); }
  size_t size() const { return view().size(); }
  bool empty() const { return view().empty(); }

  friend bool operator==(const ShortText &a, std::string_view b) {
    return a.view() == b;
  }
  friend bool operator==(const ShortText &a, const char *b) {
    return a.view() == b;
  }
  friend bool operator==(const ShortText &a, const std::string &b) {
    return a.view() == b;
  }
  template <typename T> friend bool operator!=(const ShortText &a, const T &b) {
    return !(a == b);
  }
  friend bool operator==(const ShortText &a, const ShortText &b) {
    return a.view() == b.view();
  }
  friend std::string operator+(std::string a, const ShortText &b) {
    return a.append(b.view());
  }
  friend std::string operator+(const char *a, const ShortText &b) {
    return std::string(a).append(b.view());
  }
  friend std::string operator+(const ShortText &a, const char *b) {
    return a.str() + b;
  }
  friend std::string operator+(const ShortText &a, const std::string &b) {
    return a.str() + b;
  }
  friend std::ostream &operator<<(std::ostream &os, const ShortText &t) {
    return os << t.view();
  }

private:
  // The inline form: its first byte (the low one) is the length times two
  // plus one, the text after it; a Rep's address is even.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "the inline form's tag is the word's low byte");
  static constexpr size_t kInline = 7;
  static constexpr uintptr_t kEmpty = 1;
  using Rep = detail::Counted<std::string>;
  Rep *rep() const {
    return bits & 1 ? nullptr : reinterpret_cast<Rep *>(bits);
  }
  uintptr_t bits = kEmpty;
};

/// Equal texts as one SharedText: a loop that makes many (a section's
/// findings) asks it instead of making a copy each. Not thread-safe.
class SharedTextPool {
public:
  SharedText get(std::string s) {
    auto [it, added] = texts.try_emplace(std::move(s));
    if (added)
      it->second = SharedText(it->first);
    return it->second;
  }

private:
  std::unordered_map<std::string, SharedText> texts;
};

/// An immutable list that copies share until one of them changes (copy on
/// write): a reference count, the size and the elements in one allocation,
/// one pointer in the item. The incremental merge copies every item of a
/// file that it keeps: with an op's operand lists and shapes and a value's
/// uses as CowVectors, that copy is a reference count per list instead of
/// an allocation and its elements (200k-line edit: merge ~65 -> ~42 ms),
/// and each list is 16 bytes smaller than a std::vector. `mut()` gives the
/// elements to change in place, copied first when shared.
template <typename T> class CowVector {
public:
  CowVector() = default;
  CowVector(const std::vector<T> &v) : rep(make(v.data(), v.size())) {}
  CowVector(std::initializer_list<T> l) : rep(make(l.begin(), l.size())) {}
  CowVector(const T *from, size_t n) : rep(make(from, n)) {}
  CowVector(const CowVector &o) : rep(o.rep) {
    if (rep)
      rep->refs.fetch_add(1, std::memory_order_relaxed);
  }
  CowVector(CowVector &&o) noexcept : rep(o.rep) { o.rep = nullptr; }
  CowVector &operator=(CowVector o) noexcept {
    std::swap(rep, o.rep);
    return *this;
  }
  ~CowVector() { release(rep); }

  size_t size() const { return rep ? rep->size : 0; }
  bool empty() const { return !rep; }
  const T *begin() const { return rep ? elements(rep) : nullptr; }
  const T *end() const { return begin() + size(); }
  const T &operator[](size_t i) const { return begin()[i]; }
  const T &front() const { return *begin(); }
  const T &back() const { return end()[-1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  /// The elements of this copy, to change in place (copied from the
  /// shared ones first).
  struct Span {
    T *b, *e;
    T *begin() const { return b; }
    T *end() const { return e; }
  };
  Span mut() {
    if (!rep)
      return {nullptr, nullptr};
    if (rep->refs.load(std::memory_order_acquire) != 1) {
      Rep *own = make(begin(), size());
      release(rep);
      rep = own;
    }
    return {elements(rep), elements(rep) + rep->size};
  }

  friend bool operator==(const CowVector &a, const CowVector &b) {
    return a.rep == b.rep || std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const CowVector &a, const CowVector &b) {
    return !(a == b);
  }
  friend bool operator==(const CowVector &a, const std::vector<T> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

private:
  struct Rep {
    std::atomic<uint32_t> refs;
    uint32_t size;
  };
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "operator new aligns the header for the elements after it");
  static constexpr size_t kHeader =
      (sizeof(Rep) + alignof(T) - 1) / alignof(T) * alignof(T);
  static T *elements(Rep *r) {
    return reinterpret_cast<T *>(reinterpret_cast<char *>(r) + kHeader);
  }
  static Rep *make(const T *from, size_t n) {
    if (!n)
      return nullptr;
    void *mem = ::operator new(kHeader + n * sizeof(T));
    Rep *r = new (mem) Rep{{1}, static_cast<uint32_t>(n)};
    for (size_t i = 0; i < n; ++i)
      new (elements(r) + i) T(from[i]);
    return r;
  }
  static void release(Rep *r) {
    if (!r || r->refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
      return;
    for (size_t i = 0; i < r->size; ++i)
      elements(r)[i].~T();
    r->~Rep();
    ::operator delete(r);
  }
  Rep *rep = nullptr;
};

/// A value computed on first use and shared by copies: each op's
/// broadcast analysis is computed from its packed inputs (`OpReport::
/// packedShapes`) when a hover, an explanation or a finding asks for it.
/// Nothing is allocated until then: a 200k-line file holds 200k ops, and a
/// lazily computed closure per op (its captures, a mutex, the optional
/// result) was ~600 bytes of every op's ~1.2 KB. Thread-safe: the first
/// value stored wins, so a reference handed out is never replaced.
template <typename T> class CachedValue {
public:
  CachedValue() = default;
  CachedValue(const CachedValue &o) { copyFrom(o); }
  // noexcept: a growing vector of items moves them instead of copying
  // each (an op's report is ~10 counted pointers).
  CachedValue(CachedValue &&o) noexcept
      : node(o.node.exchange(nullptr, std::memory_order_acq_rel)) {}
  CachedValue &operator=(const CachedValue &o) {
    if (this != &o)
      copyFrom(o);
    return *this;
  }
  CachedValue &operator=(CachedValue &&o) noexcept { return *this = o; }
  ~CachedValue() { Node::release(node.load(std::memory_order_acquire)); }

  template <typename Make> const T &get(Make make) const {
    if (Node *n = node.load(std::memory_order_acquire))
      return n->value; // kept alive by `node`, which is never replaced
    Node *fresh = Node::make(make());
    Node *expected = nullptr;
    if (node.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                     std::memory_order_acquire))
      return fresh->value;
    delete fresh;
    return expected->value;
  }
  /// Replaces the value for this copy (before anyone reads it).
  void set(T v) {
    Node::release(
        node.exchange(Node::make(std::move(v)), std::memory_order_acq_rel));
  }
  /// Drops a computed value. Only while no other thread can see this one
  /// (references from get() die with it).
  void forget() const {
    Node::release(node.exchange(nullptr, std::memory_order_acq_rel));
  }

private:
  /// The value with the count of the copies that share it, one allocation
  /// and one pointer in the item: a std::shared_ptr and a flag were 24
  /// bytes of every op, most of which never compute the value.
  using Node = detail::Counted<T>;
  void copyFrom(const CachedValue &o) {
    Node *n = o.node.load(std::memory_order_acquire);
    if (!n && !node.load(std::memory_order_relaxed))
      return; // Nothing here, nothing there.
    Node::release(node.exchange(Node::share(n), std::memory_order_acq_rel));
  }
  mutable std::atomic<Node *> node{nullptr};
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SHAREDDATA_H
