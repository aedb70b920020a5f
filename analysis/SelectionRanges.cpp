//===- SelectionRanges.cpp - expand selection: token to section -----------===//

#include "SelectionRanges.h"

#include "Lexer.h"
#include "LineIndex.h"
#include "Query.h"

#include <algorithm>

namespace tosa_lsp {

namespace {

using Span = std::pair<size_t, size_t>; // [begin, end) byte offsets

/// Ops bigger than this are not lexed for their brackets: a 50k-line
/// function's body is its lines between the signature and the `}`.
constexpr size_t kMaxLexedOp = 64 << 10;

void addToken(std::string_view text, const LineIndex &lines, size_t p,
              unsigned line, std::vector<Span> &out) {
  size_t start = lines.lineStart(line - 1);
  size_t end = line < lines.lineCount() ? lines.lineStart(line) : text.size();
  Lexer lex(text.substr(0, end), start);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.offset > p)
      break;
    if (p <= t.offset + t.length && t.kind != TokKind::Comment) {
      out.push_back({t.offset, t.offset + t.length});
      // `tosa.add`'s dialect or `%x#1`'s name alone first? No: one token.
      return;
    }
  }
}

/// The bracket pairs of [b, e) around `p`: inside and with the brackets.
void addBrackets(std::string_view text, size_t b, size_t e, size_t p,
                 std::vector<Span> &out) {
  std::vector<size_t> open;
  Lexer lex(text.substr(0, e), b);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind != TokKind::Punct)
      continue;
    char c = t.first(text);
    if (c == '{' || c == '(' || c == '[' || c == '<') {
      open.push_back(t.offset);
    } else if ((c == '}' || c == ')' || c == ']' || c == '>') &&
               !open.empty()) {
      size_t o = open.back();
      open.pop_back();
      if (o < p && p <= t.offset) {
        // Inside without the blanks at its ends, then with the brackets.
        size_t ib = o + 1, ie = t.offset;
        while (ib < ie && (text[ib] == ' ' || text[ib] == '\n' ||
                           text[ib] == '\r' || text[ib] == '\t'))
          ++ib;
        while (ie > ib && (text[ie - 1] == ' ' || text[ie - 1] == '\n' ||
                           text[ie - 1] == '\r' || text[ie - 1] == '\t'))
          --ie;
        if (ib <= p && p <= ie)
          out.push_back({ib, ie});
        out.push_back({o, t.offset + 1});
      }
    }
  }
}

/// An op and, when it is too big to lex, its body by lines.
void addOp(std::string_view text, const LineIndex &lines, const Range &scope,
           size_t p, std::vector<Span> &out) {
  auto b = lines.offset(scope.begin), e = lines.offset(scope.end);
  if (!b || !e || !(*b <= p && p <= *e))
    return;
  out.push_back({*b, *e});
  // With its results: `%0 = ` or `%0:2 = ` before the name on its line.
  size_t lineStart = lines.lineStart(scope.begin.line - 1);
  std::string_view head = text.substr(lineStart, *b - lineStart);
  size_t first = head.find_first_not_of(" \t");
  if (first != std::string_view::npos && head[first] == '%' &&
      head.find('=') != std::string_view::npos)
    out.push_back({lineStart + first, *e});
  if (*e - *b <= kMaxLexedOp) {
    addBrackets(text, *b, *e, p, out);
    return;
  }
  if (scope.end.line > scope.begin.line + 1) {
    size_t bodyBegin = lines.lineStart(scope.begin.line);
    size_t bodyEnd = lines.lineStart(scope.end.line - 1);
    if (bodyBegin <= p && p < bodyEnd)
      out.push_back({bodyBegin, bodyEnd});
  }
}

} // namespace

std::vector<Range> selectionRanges(const FileAnalysis &fa,
                                   std::string_view text,
                                   const LineIndex &lines, Position pos) {
  std::vector<Range> result;
  auto off = lines.offset(pos);
  if (!off)
    return result;
  size_t p = *off;
  std::vector<Span> spans;
  addToken(text, lines, p, pos.line, spans);
  for (unsigned i : fa.positionIndex().opsOverlapping(fa, pos.line, pos.line))
    if (contains(fa.ops[i].scope, pos))
      addOp(text, lines, fa.ops[i].scope, p, spans);
  for (const OpSpan &s : fa.opSpans)
    if (s.scope.begin.line <= pos.line && pos.line <= s.scope.end.line &&
        contains(s.scope, pos))
      addOp(text, lines, s.scope, p, spans);
  for (const Section &s : fa.sections)
    if (s.beginOffset <= p && p <= s.endOffset) {
      size_t b = s.beginOffset, e = std::min(s.endOffset, text.size());
      // Without the marker's line break and the blank lines around it.
      while (b < e && (text[b] == '\n' || text[b] == '\r'))
        ++b;
      while (e > b && (text[e - 1] == '\n' || text[e - 1] == '\r'))
        --e;
      if (b <= p && p <= e)
        spans.push_back({b, e});
    }
  // Smallest first; keep each that contains the one before.
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return a.second - a.first < b.second - b.first;
  });
  Span last{p, p};
  bool any = false;
  for (const Span &s : spans) {
    if (any && (s == last || s.first > last.first || s.second < last.second))
      continue;
    result.push_back({lines.position(s.first), lines.position(s.second)});
    last = s;
    any = true;
  }
  return result;
}

} // namespace tosa_lsp
