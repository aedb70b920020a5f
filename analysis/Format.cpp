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
    bool comma = t.kind == TokKind::Punct && t.first(text) == ',';
    bool beforeComma = next.kind == TokKind::Punct && next.first(text) == ',';
    if (verbatim || st.verbatim() || next.kind == TokKind::Comment)
      out.append(gap);
    else if (beforeComma)
      ; // `%a , %b` -> `%a, %b`
    else if (comma || !gap.empty())
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
