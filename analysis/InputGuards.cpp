//===- InputGuards.cpp - input refused before any parse -------------------===//
//
// What MLIR's parser must not see: text nested so deeply that its recursion
// would overflow even the analysis thread's big stack (a table-driven scan,
// one lookup per ordinary byte: it runs on every section of every version),
// and text that would cost memory out of proportion to its size: result
// numbers beyond what it defines, numbers of a huge integer type.
//
//===----------------------------------------------------------------------===//

#include "Analysis.h"
#include "TextScan.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

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

static bool wordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.' || c == '-' || c == '%' || c == '@' || c == '^' || c == '#' ||
         c == '!';
}

/// The width of the integer type whose `i` is at `i`, if one starts there
/// (`i32`, `si8`, `ui64`, also after a dimension: `4xi32`, `?xi8`); 0 if
/// not. Not a value, symbol or attribute name that looks like one.
static uint64_t integerTypeAt(std::string_view text, size_t i) {
  size_t j = i + 1;
  uint64_t width = 0;
  for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]));
       ++j)
    width = std::min<uint64_t>(width * 10 + (text[j] - '0'), UINT32_MAX);
  if (j == i + 1 || (j < text.size() && wordChar(text[j])))
    return 0;
  size_t start = i;
  if (start > 0 && (text[start - 1] == 's' || text[start - 1] == 'u'))
    --start;
  if (start == 0 || !wordChar(text[start - 1]))
    return width;
  // A shape's last dimension: `<4xi32`, `?xi32`.
  if (text[start - 1] == 'x' && start >= 2 &&
      (std::isdigit(static_cast<unsigned char>(text[start - 2])) ||
       text[start - 2] == '?'))
    return width;
  return 0;
}

/// Number literals: digit runs that start a token (`-1` counts, `%12`,
/// `#3`, `1.5`'s `5` and a shape's `4x4`'s second `4` do not).
static uint64_t countNumbers(std::string_view text) {
  uint64_t n = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(text[i])) &&
        (i == 0 || (!wordChar(text[i - 1]) || text[i - 1] == '-')))
      ++n;
  return n;
}

WideIntegers scanWideIntegers(std::string_view text) {
  // MLIR refuses wider types (a parse error, nothing allocated).
  constexpr uint64_t kMaxWidth = (1u << 24) - 1;
  WideIntegers w;
  const char *p = text.data();
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    const void *at = std::memchr(p + i, 'i', text.size() - i - 1);
    if (!at)
      break;
    i = static_cast<const char *>(at) - p;
    if (!std::isdigit(static_cast<unsigned char>(text[i + 1])))
      continue;
    uint64_t width = integerTypeAt(text, i);
    if (width > std::max<uint64_t>(w.width, 64) && width <= kMaxWidth &&
        !quotedOrComment(text, i)) {
      w.width = width;
      w.offset =
          i > 0 && (text[i - 1] == 's' || text[i - 1] == 'u') ? i - 1 : i;
    }
  }
  if (w.width <= 64)
    return w;
  w.numbers = countNumbers(text);
  w.bytes = w.numbers * ((w.width + 63) / 64 * 8) * 2;
  return w;
}

std::optional<WideIntegers> findExcessiveIntegerWidth(std::string_view text,
                                                      size_t sectionBytes,
                                                      size_t fileBytes) {
  WideIntegers w = scanWideIntegers(text);
  if (w.bytes == 0)
    return std::nullopt;
  const double share =
      fileBytes ? std::min(1.0, double(sectionBytes) / double(fileBytes)) : 1;
  const double budget = 32.0 * (1 << 20) * share + 50.0 * sectionBytes;
  if (double(w.bytes) <= budget)
    return std::nullopt;
  return w;
}

/// "2 MB", "1.2 GB": a size for a message.
static std::string roughSize(uint64_t bytes) {
  const char *units[] = {"bytes", "KB", "MB", "GB", "TB"};
  double v = double(bytes);
  unsigned u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 && u ? "%.1f %s" : "%.0f %s", v,
                units[u]);
  return buf;
}

std::string describeWideIntegers(const WideIntegers &w) {
  return "integer type i" + std::to_string(w.width) + " with " +
         std::to_string(w.numbers) +
         " numbers: MLIR would keep each at its full width (" +
         roughSize((w.width + 63) / 64 * 8) + "), ~" + roughSize(w.bytes) +
         " in all";
}

} // namespace tosa_lsp
