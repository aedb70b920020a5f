//===- Convert.cpp - analysis positions <-> LSP positions -----------------===//

#include "Convert.h"

#include "llvm/Support/ConvertUTF.h"

namespace tosa_lsp {

/// Byte length of the UTF-8 sequence starting with `lead`; 1 for bytes
/// that cannot start a valid sequence, so malformed text cannot stall or
/// overrun the walk.
static size_t seqLength(unsigned char lead) {
  unsigned n = llvm::getNumBytesForUTF8(lead);
  return n <= 4 ? n : 1;
}

size_t utf16Length(std::string_view s) {
  size_t units = 0;
  for (size_t i = 0; i < s.size();) {
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

LineTable::LineTable(const std::string &text) : text(text), lines(text) {}

std::string_view LineTable::line(unsigned index0) const {
  size_t b = lines.lineStart(index0);
  size_t e = index0 + 1 < lines.lineCount() ? lines.lineStart(index0 + 1) - 1
                                            : text.size();
  std::string_view l(text.data() + b, e - b);
  if (!l.empty() && l.back() == '\r')
    l.remove_suffix(1);
  return l;
}

llvm::lsp::Position LineTable::toLsp(Position p) const {
  if (!p.valid())
    return llvm::lsp::Position(0, 0);
  unsigned l = std::min<unsigned>(p.line - 1, lines.lineCount() - 1);
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
  if (p.line < 0 || static_cast<size_t>(p.line) >= lines.lineCount() ||
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
      static_cast<size_t>(r.end.line) >= lines.lineCount())
    e = Position{static_cast<unsigned>(lines.lineCount()),
                 static_cast<unsigned>(line(lines.lineCount() - 1).size() + 1)};
  if (!b || !e)
    return std::nullopt;
  return Range{*b, *e};
}

std::optional<size_t> LineTable::offset(llvm::lsp::Position p) const {
  if (p.line < 0 || p.character < 0)
    return std::nullopt;
  if (static_cast<size_t>(p.line) >= lines.lineCount())
    return std::nullopt;
  // A character past the end of its line means the end of the line (LSP).
  std::string_view s = line(p.line);
  return lines.lineStart(p.line) + byteOffsetOfUtf16(s, p.character);
}

std::optional<std::string>
applyChange(std::string &text,
            const llvm::lsp::TextDocumentContentChangeEvent &change) {
  if (!change.range) {
    text = change.text;
    return std::nullopt;
  }
  LineTable table(text);
  auto b = table.offset(change.range->start);
  auto e = table.offset(change.range->end);
  if (!b || !e || *e < *b)
    return "change range " + std::to_string(change.range->start.line) + ":" +
           std::to_string(change.range->start.character) + "-" +
           std::to_string(change.range->end.line) + ":" +
           std::to_string(change.range->end.character) +
           " is outside the document";
  text.replace(*b, *e - *b, change.text);
  return std::nullopt;
}

} // namespace tosa_lsp
