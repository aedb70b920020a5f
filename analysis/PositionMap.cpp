//===- PositionMap.cpp - positions between a text and its edited form
//------===//

#include "PositionMap.h"
#include "TextDiff.h"

#include <algorithm>

namespace tosa_lsp {

std::string PositionMap::apply(const std::string &text,
                               const std::vector<TextEditData> &edits,
                               PositionMap *map) {
  LineIndex off(text);
  std::vector<std::pair<std::pair<size_t, size_t>, const std::string *>> spans;
  for (const TextEditData &e : edits) {
    auto b = off.offset(e.range.begin), en = off.offset(e.range.end);
    if (!b || !en)
      continue;
    spans.push_back({{*b, *en}, &e.newText});
  }
  // One forward pass (a migration has an edit per op of a model: replacing
  // in place would move the file's tail once per edit).
  std::stable_sort(
      spans.begin(), spans.end(),
      [](const auto &x, const auto &y) { return x.first < y.first; });
  std::string out;
  out.reserve(text.size());
  std::vector<Span> applied;
  size_t at = 0;
  for (const auto &[r, t] : spans) {
    if (r.first < at)
      continue; // Overlaps the previous edit.
    out.append(text, at, r.first - at);
    if (map) {
      std::string_view was(text.data() + r.first, r.second - r.first);
      size_t most = std::min(was.size(), t->size()), prefix = 0, suffix = 0;
      while (prefix < most && was[prefix] == (*t)[prefix])
        ++prefix;
      while (suffix < most - prefix &&
             was[was.size() - 1 - suffix] == (*t)[t->size() - 1 - suffix])
        ++suffix;
      applied.push_back({r.first, r.second, out.size(), out.size() + t->size(),
                         prefix, suffix});
    }
    out += *t;
    at = r.second;
  }
  out.append(text, at, std::string::npos);
  if (map) {
    map->edits = std::move(applied);
    map->oldLines = std::move(off);
    map->newLines = LineIndex(out);
  }
  return out;
}

PositionMap PositionMap::between(const std::string &before,
                                 const std::string &after) {
  size_t most = std::min(before.size(), after.size());
  size_t prefix = detail::commonPrefix(before, after, most);
  size_t suffix = detail::commonSuffix(before, after, most - prefix);
  PositionMap map;
  if (prefix == before.size() && prefix == after.size()) {
    map.oldLines = LineIndex(before);
    map.newLines = LineIndex(after);
    return map;
  }
  LineIndex lines(before);
  TextEditData edit{
      {lines.position(prefix), lines.position(before.size() - suffix)},
      after.substr(prefix, after.size() - suffix - prefix)};
  apply(before, {edit}, &map);
  return map;
}

namespace {
/// `at` of one side mapped through the spans, whose begin/end on that side
/// and the other are read by `from` and `to`.
template <typename From, typename To>
size_t mapOffset(const std::vector<PositionMap::Span> &spans, size_t at,
                 bool *exact, From from, To to) {
  if (exact)
    *exact = true;
  // The last span starting at or before `at`.
  auto it = std::upper_bound(
      spans.begin(), spans.end(), at,
      [&](size_t v, const PositionMap::Span &s) { return v < from(s).first; });
  if (it == spans.begin())
    return at;
  const PositionMap::Span &s = *std::prev(it);
  auto [b, e] = from(s);
  auto [tb, te] = to(s);
  if (at >= e)
    return te + (at - e);
  if (at - b < s.prefix)
    return tb + (at - b);
  if (e - at <= s.suffix)
    return te - (e - at);
  if (exact)
    *exact = false;
  return tb;
}
} // namespace

size_t PositionMap::offsetToNew(size_t old, bool *exact) const {
  return mapOffset(
      edits, old, exact,
      [](const Span &s) { return std::make_pair(s.oldBegin, s.oldEnd); },
      [](const Span &s) { return std::make_pair(s.newBegin, s.newEnd); });
}

size_t PositionMap::offsetToOld(size_t now, bool *exact) const {
  return mapOffset(
      edits, now, exact,
      [](const Span &s) { return std::make_pair(s.newBegin, s.newEnd); },
      [](const Span &s) { return std::make_pair(s.oldBegin, s.oldEnd); });
}

std::optional<Position> PositionMap::toNew(Position p, bool *exact) const {
  std::optional<size_t> off = oldLines.offset(p);
  if (!off)
    return std::nullopt;
  return newLines.position(offsetToNew(*off, exact));
}

std::optional<Position> PositionMap::toOld(Position p, bool *exact) const {
  std::optional<size_t> off = newLines.offset(p);
  if (!off)
    return std::nullopt;
  return oldLines.position(offsetToOld(*off, exact));
}

std::optional<Range> PositionMap::toOld(Range r) const {
  std::optional<Position> b = toOld(r.begin), e = toOld(r.end);
  if (!b || !e)
    return std::nullopt;
  return Range{*b, before(*e, *b) ? *b : *e};
}

std::optional<Range> PositionMap::toNew(Range r) const {
  std::optional<Position> b = toNew(r.begin), e = toNew(r.end);
  if (!b || !e)
    return std::nullopt;
  return Range{*b, before(*e, *b) ? *b : *e};
}

} // namespace tosa_lsp
