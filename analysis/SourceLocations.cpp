//===- SourceLocations.cpp - where an op says it came from ----------------===//

#include "SourceLocations.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <cstdlib>

namespace tosa_lsp {

namespace {

/// The `"file":line:col` triples in `loc` (a location's text), following
/// `#alias` references (at most `depth` deep: aliases may not cycle, but
/// text being typed may).
void collect(std::string_view loc, const std::vector<AliasInfo> &aliases,
             unsigned section, std::vector<FileLineCol> &out,
             unsigned depth = 0) {
  if (depth > 8)
    return;
  std::vector<Token> toks;
  Lexer lex(loc);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next())
    toks.push_back(t);
  for (size_t i = 0; i < toks.size(); ++i) {
    const Token &t = toks[i];
    if (t.kind == TokKind::HashId) {
      for (const AliasInfo &a : aliases)
        if (a.section == section && a.name == t.text(loc))
          collect(a.valueText, aliases, section, out, depth + 1);
      continue;
    }
    if (t.kind != TokKind::String)
      continue;
    auto punct = [&](size_t k, char c) {
      return k < toks.size() && toks[k].kind == TokKind::Punct &&
             toks[k].first(loc) == c;
    };
    auto number = [&](size_t k) -> unsigned {
      if (k >= toks.size() || toks[k].kind != TokKind::Number)
        return 0;
      return static_cast<unsigned>(
          std::strtoul(std::string(toks[k].text(loc)).c_str(), nullptr, 10));
    };
    if (punct(i + 1, ':') && number(i + 2) && punct(i + 3, ':') &&
        number(i + 4)) {
      std::string_view s = t.text(loc);
      if (s.size() >= 2)
        out.push_back({std::string(s.substr(1, s.size() - 2)), number(i + 2),
                       number(i + 4)});
      i += 4;
    }
  }
}

} // namespace

std::vector<FileLineCol>
opSourceLocations(std::string_view text, const LineIndex &lines,
                  const std::vector<AliasInfo> &aliases, Range scope,
                  unsigned section) {
  std::vector<FileLineCol> out;
  auto b = lines.offset(scope.begin), e = lines.offset(scope.end);
  if (!b || !e || *e <= *b)
    return out;
  // The op's own location follows its text: `... loc(...)` before the line
  // ends (a nested op's would be inside a region, before the last `}`).
  size_t lineEnd = text.find('\n', *e);
  std::string_view tail = text.substr(
      *e, (lineEnd == std::string_view::npos ? text.size() : lineEnd) - *e);
  std::string_view opText = text.substr(*b, *e - *b);
  size_t at = tail.find("loc(");
  std::string_view loc;
  if (at != std::string_view::npos) {
    loc = tail.substr(at);
  } else if (size_t last = opText.rfind("loc(");
             last != std::string_view::npos &&
             opText.find('}', last) == std::string_view::npos) {
    loc = opText.substr(last);
  }
  if (!loc.empty())
    collect(loc, aliases, section, out);
  return out;
}

} // namespace tosa_lsp
