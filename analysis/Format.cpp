//===- Format.cpp - indentation and spacing as mlir-opt prints ------------===//

#include "Format.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <algorithm>

namespace tosa_lsp {

namespace {

/// The state carried from one line to the next.
struct State {
  std::vector<char> open; // the open brackets
  /// Depth in `open` where a dialect body (kept verbatim) began, or -1.
  int verbatimFrom = -1;
  bool verbatim() const { return verbatimFrom >= 0; }
};

bool isBlank(char c) { return c == ' ' || c == '\t'; }

/// Updates the bracket state for token `t` (`next` follows it).
void track(State &st, std::string_view text, const Token &t,
           const Token &next) {
  if (t.kind != TokKind::Punct) {
    // `#d.x<` / `!d.x<` right after the name opens a dialect body.
    if ((t.kind == TokKind::HashId || t.kind == TokKind::BangId) &&
        !st.verbatim() && next.kind == TokKind::Punct &&
        next.offset == t.offset + t.length && next.first(text) == '<')
      st.verbatimFrom = static_cast<int>(st.open.size());
    return;
  }
  char c = t.first(text);
  if (c == '{' || c == '(' || c == '[' || c == '<') {
    st.open.push_back(c);
    return;
  }
  char want = c == '}'   ? '{'
              : c == ')' ? '('
              : c == ']' ? '['
              : c == '>' ? '<'
                         : 0;
  if (!want)
    return;
  // Close back to the matching bracket (a stray closer is ignored).
  auto it = std::find(st.open.rbegin(), st.open.rend(), want);
  if (it == st.open.rend())
    return;
  st.open.erase(std::prev(it.base()), st.open.end());
  if (st.verbatim() && static_cast<int>(st.open.size()) <= st.verbatimFrom)
    st.verbatimFrom = -1;
}

bool isPunct(std::string_view text, const Token &t, char c) {
  return t.kind == TokKind::Punct && t.first(text) == c;
}

/// Whether a blank precedes token `i` of `toks` (on its line).
bool gapBefore(const std::vector<Token> &toks, size_t i) {
  return i > 0 && toks[i].offset > toks[i - 1].offset + toks[i - 1].length;
}

/// `->` outside `<...>` is spaced; `=` and `->` in `<...>` are spaced
/// on both sides once either side is (`%0 =x`, `(d0) ->d0`); ` :` gets a space
/// after it (`%a :(f32)`, the type of an op;
/// `%a: f32` and `array<i32: 1>` keep theirs). Tokens written together
/// stay together: `==` and `>=` of integer sets, `(d0)->(d0)`.
bool spacedAfter(std::string_view text, const std::vector<Token> &toks,
                 size_t i, bool inAngle, bool nextInAngle) {
  const Token &t = toks[i], &next = toks[i + 1];
  // An op's type: `(f32)->f32` is `(f32) -> f32` as mlir-opt prints it.
  if ((t.kind == TokKind::Arrow && !inAngle) ||
      (next.kind == TokKind::Arrow && !nextInAngle))
    return true;
  auto symmetric = [&](size_t k) {
    const Token &s = toks[k];
    if (!(isPunct(text, s, '=') || s.kind == TokKind::Arrow))
      return false;
    bool before = gapBefore(toks, k),
         after = k + 1 < toks.size() && gapBefore(toks, k + 1);
    auto glued = [&](const Token &o) {
      return o.kind == TokKind::Punct &&
             std::string_view("=<>!").find(o.first(text)) !=
                 std::string_view::npos;
    };
    if ((k > 0 && !before && glued(toks[k - 1])) ||
        (k + 1 < toks.size() && !after && glued(toks[k + 1])))
      return false;
    return before || after;
  };
  if (symmetric(i) || symmetric(i + 1))
    return true;
  return isPunct(text, t, ':') && gapBefore(toks, i) &&
         next.kind != TokKind::Comment;
}

/// The formatted text of one line [b, e) (without its line break), and the
/// state after it.
std::string formatLine(std::string_view text, size_t b, size_t e, State &st) {
  const State start = st;
  std::vector<Token> toks;
  Lexer lex(text.substr(0, e), b);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next())
    toks.push_back(t);
  if (toks.empty())
    return start.verbatim() ? std::string(text.substr(b, e - b)) : "";
  // Keep the line as written where its start is not ours to move.
  bool continuation =
      start.verbatim() || (!start.open.empty() && start.open.back() != '{');
  std::string out;
  if (continuation) {
    size_t first = toks.front().offset;
    out.append(text.substr(b, first - b));
  } else {
    int depth =
        static_cast<int>(std::count(start.open.begin(), start.open.end(), '{'));
    const Token &f = toks.front();
    bool closer = f.kind == TokKind::Punct && f.first(text) == '}';
    bool label = f.kind == TokKind::BlockId && toks.size() > 1 &&
                 toks[1].kind == TokKind::Punct &&
                 (toks[1].first(text) == ':' || toks[1].first(text) == '(');
    if (closer || label)
      --depth;
    out.append(static_cast<size_t>(std::max(depth, 0)) * 2, ' ');
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    const Token &t = toks[i];
    const Token next = i + 1 < toks.size() ? toks[i + 1] : Token();
    bool verbatim = st.verbatim();
    auto angle = [&] { return !st.open.empty() && st.open.back() == '<'; };
    bool inAngle = angle();
    track(st, text, t, next);
    std::string_view tok = t.text(text);
    // A comment's trailing blanks go, unless a dialect body goes on.
    if (t.kind == TokKind::Comment && !verbatim && !st.verbatim())
      while (!tok.empty() && isBlank(tok.back()))
        tok.remove_suffix(1);
    out.append(tok);
    if (i + 1 == toks.size())
      break;
    std::string_view gap =
        text.substr(t.offset + t.length, next.offset - t.offset - t.length);
    bool comma = isPunct(text, t, ',');
    bool beforeComma = isPunct(text, next, ',');
    if (verbatim || st.verbatim() || next.kind == TokKind::Comment)
      out.append(gap);
    else if (beforeComma)
      ; // `%a , %b` -> `%a, %b`
    else if (comma || !gap.empty() ||
             spacedAfter(text, toks, i, inAngle, angle()))
      out.push_back(' ');
  }
  // Blanks after the last token belong to a dialect body that goes on.
  if (st.verbatim()) {
    size_t last = toks.back().offset + toks.back().length;
    out.append(text.substr(last, e - last));
  }
  return out;
}

} // namespace

FormatResult formatText(std::string_view text, const LineIndex &lines,
                        const FileAnalysis &fa, unsigned firstLine,
                        unsigned lastLine) {
  FormatResult result;
  unsigned numLines = static_cast<unsigned>(lines.lineCount());
  if (firstLine == 0 && lastLine == 0) {
    firstLine = 1;
    lastLine = numLines;
  }
  lastLine = std::min(lastLine, numLines);
  for (const Section &s : fa.sections)
    if (!s.parsed && s.firstLine <= lastLine && s.lastLine >= firstLine) {
      size_t b = s.beginOffset;
      while (b < text.size() && (text[b] == '\n' || text[b] == '\r'))
        ++b;
      result.error =
          "not formatted: the section at line " +
          std::to_string(lines.position(b).line) +
          " does not parse (formatting text MLIR cannot read could change "
          "its meaning); fix its error first";
      return result;
    }
  State st;
  for (unsigned line = 1; line <= lastLine; ++line) {
    size_t b = lines.lineStart(line - 1);
    size_t e = line < numLines ? lines.lineStart(line) : text.size();
    // Without the line break.
    size_t contentEnd = e;
    if (contentEnd > b && text[contentEnd - 1] == '\n')
      --contentEnd;
    if (contentEnd > b && text[contentEnd - 1] == '\r')
      --contentEnd;
    std::string_view original = text.substr(b, contentEnd - b);
    // Each `// -----` section starts afresh.
    if (original.substr(0, 8) == "// -----")
      st = State();
    std::string formatted = formatLine(text, b, contentEnd, st);
    if (line < firstLine)
      continue;
    if (formatted != original)
      result.edits.push_back(
          {{{line, 1}, {line, static_cast<unsigned>(original.size() + 1)}},
           std::move(formatted)});
  }
  return result;
}

} // namespace tosa_lsp
