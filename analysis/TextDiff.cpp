//===- TextDiff.cpp - what an edit changed, and moving items past it ------===//

#include "TextDiff.h"

#include "LineIndex.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstring>

namespace tosa_lsp::detail {

size_t commonPrefix(std::string_view a, std::string_view b, size_t limit) {
  constexpr size_t kBlock = 4096;
  size_t n = 0;
  while (n + kBlock <= limit &&
         !std::memcmp(a.data() + n, b.data() + n, kBlock))
    n += kBlock;
  while (n < limit && a[n] == b[n])
    ++n;
  return n;
}

size_t commonSuffix(std::string_view a, std::string_view b, size_t limit) {
  constexpr size_t kBlock = 4096;
  const char *ea = a.data() + a.size(), *eb = b.data() + b.size();
  size_t n = 0;
  while (n + kBlock <= limit &&
         !std::memcmp(ea - n - kBlock, eb - n - kBlock, kBlock))
    n += kBlock;
  while (n < limit && ea[-1 - static_cast<ptrdiff_t>(n)] ==
                          eb[-1 - static_cast<ptrdiff_t>(n)])
    ++n;
  return n;
}

void shiftSection(SectionResult &s, int delta, unsigned index) {
  auto move = [&](auto &items) {
    for (auto &item : items) {
      forEachRange(item, [&](Range &r) { shiftLines(r, delta); });
      item.section = index;
    }
  };
  move(s.diagnostics);
  move(s.ops);
  move(s.values);
  move(s.blocks);
  move(s.opSpans);
  move(s.symbols);
}

namespace {
/// The position of `offset` in a section's `text` that begins at `sec`'s
/// first line and column.
Position positionIn(std::string_view text, const Section &sec, size_t offset) {
  std::string_view head = text.substr(0, offset);
  size_t lines = std::count(head.begin(), head.end(), '\n');
  if (!lines)
    return {sec.firstLine, static_cast<unsigned>(sec.firstColumn + offset)};
  return {static_cast<unsigned>(sec.firstLine + lines),
          static_cast<unsigned>(offset - head.rfind('\n'))};
}
} // namespace

void remapStale(SectionResult &s, std::string_view was, const Section &old,
                std::string_view now, const Section &sec,
                const LineIndex &lines) {
  // The edit between the common prefix and suffix, widened to whole tokens
  // of the old text: inserting `  %z = ...\n` before `  %0` would otherwise
  // split `%0` after its `%`, and stretch its range over the new lines.
  auto inToken = [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("_$.%#@^!").contains(c);
  };
  size_t limit = std::min(was.size(), now.size());
  size_t prefix = commonPrefix(was, now, limit);
  while (prefix && prefix < was.size() && inToken(was[prefix]) &&
         inToken(was[prefix - 1]))
    --prefix;
  size_t suffix = commonSuffix(was, now, limit - prefix);
  while (suffix && was.size() - suffix > prefix &&
         inToken(was[was.size() - suffix]) &&
         inToken(was[was.size() - suffix - 1]))
    --suffix;
  Position oldBegin = positionIn(was, old, prefix);
  Position oldEnd = positionIn(was, old, was.size() - suffix);
  Position newEnd = lines.position(sec.beginOffset + now.size() - suffix);
  int delta = static_cast<int>(sec.firstLine) - static_cast<int>(old.firstLine);
  auto map = [&](Position &x, bool isEnd) {
    if (!x.valid())
      return;
    if (before(x, oldBegin) || (isEnd && !before(oldBegin, x))) {
      x.line += delta;
    } else if (before(x, oldEnd)) {
      x = newEnd;
    } else {
      if (x.line == oldEnd.line)
        x.column = newEnd.column + (x.column - oldEnd.column);
      x.line = x.line - oldEnd.line + newEnd.line;
    }
  };
  auto move = [&](auto &items) {
    for (auto &item : items) {
      forEachRange(item, [&](Range &r) {
        map(r.begin, false);
        map(r.end, true);
      });
      item.section = sec.index;
    }
  };
  move(s.ops);
  move(s.values);
  move(s.blocks);
  move(s.opSpans);
  move(s.symbols);
}

} // namespace tosa_lsp::detail
