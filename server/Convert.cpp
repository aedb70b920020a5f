//===- Convert.cpp - analysis positions <-> LSP positions -----------------===//

#include "Convert.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstdint>
#include <cstring>

namespace tosa_lsp {

/// Byte length of the UTF-8 sequence starting with `lead`; 1 for bytes
/// that cannot start a valid sequence, so malformed text cannot stall or
/// overrun the walk.
static size_t seqLength(unsigned char lead) {
  unsigned n = llvm::getNumBytesForUTF8(lead);
  return n <= 4 ? n : 1;
}

bool isAscii(std::string_view s) {
  // 64 bytes per step, OR-ed: vectorised, ~0.3 ms over a 5 MB model.
  const unsigned char *p = reinterpret_cast<const unsigned char *>(s.data());
  size_t n = s.size(), i = 0;
  for (; i + 64 <= n; i += 64) {
    unsigned char any = 0;
    for (size_t k = 0; k < 64; ++k)
      any |= p[i + k];
    if (any & 0x80)
      return false;
  }
  for (; i < n; ++i)
    if (p[i] & 0x80)
      return false;
  return true;
}

size_t utf16Length(std::string_view s) {
  // ASCII, 8 bytes at a time (diagnostics of a big file convert ~10^5
  // columns per publish): one unit per byte.
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ull)
      break;
  }
  size_t units = i;
  while (i < s.size()) {
    size_t n = seqLength(static_cast<unsigned char>(s[i]));
    units += n == 4 ? 2 : 1; // astral code points are surrogate pairs
    i += n;
  }
  return units;
}

/// Byte offset within `line` of UTF-16 column `units`, clamped to the end.
static size_t byteOffsetOfUtf16(std::string_view line, size_t units) {
  size_t i = 0, u = 0;
  while (i < line.size() && u < units) {
    size_t n = seqLength(static_cast<unsigned char>(line[i]));
    u += n == 4 ? 2 : 1;
    i += n;
  }
  return std::min(i, line.size());
}

LineTable::LineTable(const std::string &text)
    : text(text), lines(std::make_shared<const LineIndex>(text)) {}

LineTable::LineTable(const std::string &text,
                     std::shared_ptr<const LineIndex> shared)
    : text(text), lines(shared && shared->textSize() == text.size()
                            ? std::move(shared)
                            : std::make_shared<const LineIndex>(text)) {}

std::string_view LineTable::line(unsigned index0) const {
  size_t b = lines->lineStart(index0);
  size_t e = index0 + 1 < lines->lineCount() ? lines->lineStart(index0 + 1) - 1
                                             : text.size();
  std::string_view l(text.data() + b, e - b);
  if (!l.empty() && l.back() == '\r')
    l.remove_suffix(1);
  return l;
}

llvm::lsp::Position LineTable::toLsp(Position p) const {
  if (!p.valid())
    return llvm::lsp::Position(0, 0);
  unsigned l = std::min<unsigned>(p.line - 1, lines->lineCount() - 1);
  std::string_view s = line(l);
  size_t bytes = std::min<size_t>(p.column ? p.column - 1 : 0, s.size());
  return llvm::lsp::Position(static_cast<int>(l),
                             static_cast<int>(utf16Length(s.substr(0, bytes))));
}

llvm::lsp::Range LineTable::toLsp(Range r) const {
  llvm::lsp::Position b = toLsp(r.begin);
  llvm::lsp::Position e = r.end.valid() ? toLsp(r.end) : b;
  return llvm::lsp::Range(b, e);
}

std::optional<Position> LineTable::fromLsp(llvm::lsp::Position p) const {
  if (p.line < 0 || static_cast<size_t>(p.line) >= lines->lineCount() ||
      p.character < 0)
    return std::nullopt;
  std::string_view s = line(p.line);
  return Position{static_cast<unsigned>(p.line + 1),
                  static_cast<unsigned>(byteOffsetOfUtf16(s, p.character) + 1)};
}

std::optional<Range> LineTable::fromLsp(const llvm::lsp::Range &r) const {
  auto b = fromLsp(r.start), e = fromLsp(r.end);
  // Clients ask for "the whole file" with an end past the last line.
  if (b && !e && r.end.line >= 0 &&
      static_cast<size_t>(r.end.line) >= lines->lineCount())
    e = Position{
        static_cast<unsigned>(lines->lineCount()),
        static_cast<unsigned>(line(lines->lineCount() - 1).size() + 1)};
  if (!b || !e)
    return std::nullopt;
  return Range{*b, *e};
}

std::optional<size_t> LineTable::offset(llvm::lsp::Position p) const {
  if (p.line < 0 || p.character < 0)
    return std::nullopt;
  if (static_cast<size_t>(p.line) >= lines->lineCount())
    return std::nullopt;
  // A character past the end of its line means the end of the line (LSP).
  std::string_view s = line(p.line);
  return lines->lineStart(p.line) + byteOffsetOfUtf16(s, p.character);
}

bool hasLoneCR(std::string_view text) {
  const char *p = text.data(), *end = p + text.size();
  while ((p = static_cast<const char *>(std::memchr(p, '\r', end - p)))) {
    if (++p == end || *p != '\n')
      return true;
  }
  return false;
}

std::string loneCRsAsLF(std::string_view text) {
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n'))
      out[i] = '\n';
  return out;
}

std::string_view firstLineBreak(std::string_view text) {
  size_t i = text.find_first_of("\r\n");
  if (i == std::string_view::npos || text[i] == '\n')
    return "\n";
  return i + 1 < text.size() && text[i + 1] == '\n' ? "\r\n" : "\r";
}

/// End of the line that contains `from` (its break, or the end of the text);
/// with `loneCR`, a `\r` not followed by `\n` ends a line too.
static size_t lineEnd(std::string_view text, size_t from, bool loneCR) {
  if (!loneCR) {
    size_t end = text.find('\n', from);
    if (end == std::string_view::npos)
      return text.size();
    return end > from && text[end - 1] == '\r' ? end - 1 : end;
  }
  size_t end = text.find_first_of("\r\n", from);
  return end == std::string_view::npos ? text.size() : end;
}

/// Start of line `line` (0-based) of `text`, scanning from `from`, the
/// start of line `fromLine` (at or before it), instead of indexing every
/// line: an edit of a 17 MB file converts two positions.
static std::optional<size_t> lineStartOf(std::string_view text, int line,
                                         size_t from, int fromLine,
                                         bool loneCR) {
  if (line < fromLine)
    return std::nullopt;
  for (; fromLine < line; ++fromLine) {
    if (loneCR) {
      size_t brk = text.find_first_of("\r\n", from);
      if (brk == std::string_view::npos)
        return std::nullopt;
      from = brk + (text.compare(brk, 2, "\r\n") == 0 ? 2 : 1);
      continue;
    }
    const void *nl = std::memchr(text.data() + from, '\n', text.size() - from);
    if (!nl)
      return std::nullopt; // Past the last line.
    from = static_cast<const char *>(nl) - text.data() + 1;
  }
  return from;
}

/// Byte offset of UTF-16 column `character` in the line starting at
/// `start`; past the end of the line means its end (LSP).
static size_t offsetInLine(std::string_view text, size_t start,
                           size_t character, bool loneCR) {
  size_t end = lineEnd(text, start, loneCR);
  return start + byteOffsetOfUtf16(text.substr(start, end - start), character);
}

std::optional<std::string>
applyChanges(const std::string &text,
             llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent> changes,
             std::string &out, const LineIndex *lines, bool loneCR) {
  if (lines && lines->textSize() != text.size())
    lines = nullptr;
  const std::string *current = &text; // `out` once a change is applied
  for (const llvm::lsp::TextDocumentContentChangeEvent &change : changes) {
    if (!change.range) {
      out = change.text;
      current = &out;
      continue;
    }
    const llvm::lsp::Range &r = *change.range;
    std::optional<size_t> b, e;
    // The line starts of `text`, when known, answer at once (a scan to
    // the middle of a 17 MB text is ~2 ms); only for the first change.
    auto lineStart = [&](int line, size_t from,
                         int fromLine) -> std::optional<size_t> {
      if (!lines || current != &text)
        return lineStartOf(*current, line, from, fromLine, loneCR);
      if (line < fromLine || line < 0 ||
          static_cast<size_t>(line) >= lines->lineCount())
        return std::nullopt;
      return lines->lineStart(line);
    };
    if (r.start.character >= 0 && r.end.character >= 0)
      if (std::optional<size_t> first = lineStart(r.start.line, 0, 0)) {
        b = offsetInLine(*current, *first, r.start.character, loneCR);
        if (std::optional<size_t> last =
                lineStart(r.end.line, *first, r.start.line))
          e = offsetInLine(*current, *last, r.end.character, loneCR);
      }
    if (!b || !e || *e < *b)
      return "change range " + std::to_string(r.start.line) + ":" +
             std::to_string(r.start.character) + "-" +
             std::to_string(r.end.line) + ":" +
             std::to_string(r.end.character) + " is outside the document";
    if (current == &out) {
      out.replace(*b, *e - *b, change.text);
      continue;
    }
    // The first change: one copy of the text, with the change in place.
    out.clear();
    out.reserve(text.size() - (*e - *b) + change.text.size());
    out.append(text, 0, *b).append(change.text).append(text, *e);
    current = &out;
  }
  if (current != &out)
    out = text; // No change at all.
  return std::nullopt;
}

} // namespace tosa_lsp
