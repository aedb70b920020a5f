//===- Folding.cpp - foldable ranges of MLIR text -------------------------===//

#include "Folding.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <algorithm>

namespace tosa_lsp {

namespace {

bool isSectionMarker(std::string_view comment) {
  // `// -----` exactly, as --split-input-file splits on.
  return comment.substr(0, 8) == "// -----" &&
         comment.find_first_not_of(" \t\r", 8) == std::string_view::npos;
}

} // namespace

std::vector<FoldRange> foldingRanges(std::string_view text,
                                     const LineIndex &lines) {
  std::vector<FoldRange> out;
  struct Open {
    char close;
    size_t offset;
  };
  std::vector<Open> open;
  // A run of comment lines: its first comment and last comment.
  size_t runBegin = 0, runEnd = 0;
  unsigned runFirstLine = 0, runLastLine = 0;
  auto endRun = [&] {
    if (runFirstLine && runLastLine > runFirstLine)
      out.push_back({FoldRange::Comment, lines.position(runBegin),
                     lines.position(runEnd)});
    runFirstLine = runLastLine = 0;
  };
  size_t sectionBegin = 0;
  bool sawMarker = false;
  auto endSection = [&](size_t end) {
    Position b = lines.position(sectionBegin), e = lines.position(end);
    if (e.line > b.line)
      out.push_back({FoldRange::Section, b, e});
  };
  Lexer lex(text);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind == TokKind::Comment) {
      std::string_view c = t.text(text);
      if (isSectionMarker(c)) {
        endRun();
        // The section ends with the line before its marker.
        size_t end = t.offset;
        while (end > sectionBegin &&
               (text[end - 1] == '\n' || text[end - 1] == '\r'))
          --end;
        endSection(end);
        sectionBegin = t.offset + t.length;
        sawMarker = true;
        continue;
      }
      unsigned line = lines.position(t.offset).line;
      // Only comments alone on their lines make a block.
      size_t lineStart = lines.lineStart(line - 1);
      bool alone = text.substr(lineStart, t.offset - lineStart)
                       .find_first_not_of(" \t") == std::string_view::npos;
      if (!alone || (runLastLine && line != runLastLine + 1))
        endRun();
      if (alone) {
        if (!runFirstLine) {
          runFirstLine = line;
          runBegin = t.offset;
        }
        runLastLine = line;
        runEnd = t.offset + t.length;
      }
      continue;
    }
    if (runFirstLine && lines.position(t.offset).line != runLastLine)
      endRun();
    if (t.kind != TokKind::Punct)
      continue;
    char c = t.first(text);
    if (c == '{' || c == '(' || c == '[' || c == '<') {
      open.push_back({c == '{'   ? '}'
                      : c == '(' ? ')'
                      : c == '[' ? ']'
                                 : '>',
                      t.offset});
    } else if (c == '}' || c == ')' || c == ']' || c == '>') {
      // Unbalanced text: close back to the matching bracket, if any.
      auto it = std::find_if(open.rbegin(), open.rend(),
                             [&](const Open &o) { return o.close == c; });
      if (it == open.rend())
        continue;
      size_t from = it->offset;
      open.erase(std::prev(it.base()), open.end());
      Position b = lines.position(from + 1), e = lines.position(t.offset);
      if (e.line > b.line)
        out.push_back({FoldRange::Region, b, e});
    }
  }
  endRun();
  if (sawMarker) {
    size_t end = text.size();
    while (end > sectionBegin &&
           (text[end - 1] == '\n' || text[end - 1] == '\r'))
      --end;
    endSection(end);
  }
  // One range a line (editors keep one): the longest.
  std::stable_sort(out.begin(), out.end(),
                   [](const FoldRange &a, const FoldRange &b) {
                     if (a.begin.line != b.begin.line)
                       return a.begin.line < b.begin.line;
                     return a.end.line > b.end.line;
                   });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const FoldRange &a, const FoldRange &b) {
                          return a.begin.line == b.begin.line;
                        }),
            out.end());
  return out;
}

} // namespace tosa_lsp
