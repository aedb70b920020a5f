//===- InputGuards.cpp - input refused before any parse -------------------===//
//
// What MLIR's parser must not see: text nested so deeply that its recursion
// would overflow even the analysis thread's big stack. A table-driven scan,
// one lookup per ordinary byte (it runs on every section of every version).
//
//===----------------------------------------------------------------------===//

#include "Analysis.h"
#include "TextScan.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace tosa_lsp {

/// MLIR's parser recurses once per nesting level and overflows the stack on
/// deeply nested input (mlir-opt-22 crashes at ~3000 nested regions). Refuse
/// such input up front: returns the offset where `limit` is exceeded.
std::optional<size_t> findExcessiveNesting(std::string_view text,
                                           unsigned limit) {
  // What each byte is to the scan. Most are Other, skipped by a loop that
  // looks each up in a table and nothing else (a byte at a time with every
  // comparison below was ~30 ms of a 17 MB open; the run of minus signs
  // followed at every byte, ~3 % of a 10k-line open).
  enum : uint8_t { Other, Space, Special };
  static const std::array<uint8_t, 256> kinds = [] {
    std::array<uint8_t, 256> k{};
    for (unsigned char c : {' ', '\t', '\n', '\r'})
      k[c] = Space;
    for (unsigned char c :
         {'-', '"', '/', '(', '[', '{', '<', ')', ']', '}', '>'})
      k[c] = Special;
    return k;
  }();
  auto kind = [&](size_t i) {
    return kinds[static_cast<unsigned char>(text[i])];
  };
  unsigned depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    while (i < n && kind(i) != Special)
      ++i;
    if (i == n)
      break;
    char c = text[i];
    if (c == '-') {
      // Unary minus chains in affine expressions recurse like brackets do:
      // minus signs with only blanks between them.
      unsigned run = 0;
      size_t j = i;
      for (; j < n && (text[j] == '-' || kind(j) == Space); ++j)
        if (text[j] == '-' && ++run > limit)
          return j;
      i = j - 1;
      continue;
    }
    if (c == '"') { // String literal: brackets inside do not count.
      i = detail::stringEnd(text, i);
      continue;
    }
    if (c == '/') {
      if (detail::commentAt(text, i)) {
        i = detail::commentEnd(text, i);
        if (i == std::string_view::npos)
          break;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return i;
    } else if (c != '>' || i == 0 || text[i - 1] != '-') {
      if (depth)
        --depth;
    }
  }
  return std::nullopt;
}

/// Whether `at` in `text` is inside a string or a `//` comment (neither
/// spans lines in MLIR: the line before it is enough).
static bool quotedOrComment(std::string_view text, size_t at) {
  size_t lineStart = text.rfind('\n', at);
  lineStart = lineStart == std::string_view::npos ? 0 : lineStart + 1;
  for (size_t i = lineStart; i < at; ++i) {
    if (text[i] == '"') {
      i = detail::stringEnd(text, i);
      if (i >= at)
        return true;
    } else if (detail::commentAt(text, i)) {
      return true;
    }
  }
  return false;
}

std::optional<std::pair<size_t, uint64_t>>
findExcessiveResultNumber(std::string_view text, size_t sectionBytes) {
  const uint64_t budget = std::max(sectionBytes, kMinResultSlots);
  auto nameChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$' || c == '.' || c == '-';
  };
  // The highest number per name: the parser's slots for it.
  llvm::StringMap<uint64_t> highest;
  uint64_t slots = 0;
  const char *p = text.data();
  for (size_t i = 0; i < text.size(); ++i) {
    const void *hash = std::memchr(p + i, '#', text.size() - i);
    if (!hash)
      break;
    i = static_cast<const char *>(hash) - p;
    size_t nameStart = i;
    while (nameStart > 0 && nameChar(text[nameStart - 1]))
      --nameStart;
    if (nameStart == 0 || text[nameStart - 1] != '%' || nameStart == i)
      continue;
    uint64_t n = 0;
    size_t j = i + 1;
    for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]));
         ++j)
      n = std::min<uint64_t>(n * 10 + (text[j] - '0'), UINT64_MAX / 16);
    if (j == i + 1)
      continue;
    uint64_t &high = highest[text.substr(nameStart, i - nameStart)];
    if (n + 1 <= high)
      continue;
    slots += n + 1 - high;
    high = n + 1;
    if (slots > budget && !quotedOrComment(text, nameStart - 1))
      return std::make_pair(nameStart - 1, n);
  }
  return std::nullopt;
}

} // namespace tosa_lsp
