//===- Aliases.cpp - `#name = ...` and `!name = ...` in the text ----------===//

#include "Aliases.h"

#include "Lexer.h"
#include "LineIndex.h"
#include "Query.h"

#include <unordered_map>

namespace tosa_lsp {

namespace {

/// Aliases of one section [begin, end).
void scanSection(std::string_view text, size_t begin, size_t end,
                 unsigned section, const LineIndex &lines,
                 std::vector<AliasInfo> &out) {
  auto range = [&](size_t from, size_t to) {
    return Range{lines.position(from), lines.position(to)};
  };
  std::string_view sec = text.substr(0, end);
  Lexer lex(sec, begin);
  struct Use {
    std::string_view name;
    Range range;
  };
  std::vector<Use> uses;
  std::unordered_map<std::string_view, size_t> defined; // name -> index
  int depth = 0;
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind == TokKind::Punct) {
      char c = t.first(sec);
      if (c == '{' || c == '(' || c == '[' || c == '<')
        ++depth;
      else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth > 0)
        --depth;
      continue;
    }
    if (t.kind != TokKind::HashId && t.kind != TokKind::BangId)
      continue;
    std::string_view name = t.text(sec);
    Range r = range(t.offset, t.offset + t.length);
    if (depth == 0 && !defined.count(name)) {
      Lexer after(sec, t.offset + t.length);
      Token eq = after.next();
      if (eq.kind == TokKind::Punct && eq.first(sec) == '=') {
        // The value: up to the end of its line once its brackets close.
        int d = 0;
        size_t valueBegin = eq.offset + 1, valueEnd = valueBegin;
        for (Token v = after.next(); v.kind != TokKind::End; v = after.next()) {
          bool newLine = sec.substr(valueEnd, v.offset - valueEnd).find('\n') !=
                         std::string_view::npos;
          if (newLine && d <= 0 && valueEnd > valueBegin)
            break;
          if (v.kind == TokKind::Comment)
            break;
          if (v.kind == TokKind::Punct) {
            char c = v.first(sec);
            if (c == '{' || c == '(' || c == '[' || c == '<')
              ++d;
            else if (c == '}' || c == ')' || c == ']' || c == '>')
              --d;
          }
          valueEnd = v.offset + v.length;
        }
        size_t valueStart = valueBegin;
        while (valueStart < valueEnd && sec[valueStart] == ' ')
          ++valueStart;
        AliasInfo a;
        a.name = std::string(name);
        a.def = r;
        a.value = range(valueStart, valueEnd);
        a.valueText =
            std::string(sec.substr(valueStart, valueEnd - valueStart));
        a.section = section;
        defined[name] = out.size();
        out.push_back(std::move(a));
        // Aliases used in the value are uses too.
        lex = Lexer(sec, eq.offset + 1);
        continue;
      }
    }
    uses.push_back({name, r});
  }
  for (const Use &u : uses)
    if (auto it = defined.find(u.name); it != defined.end())
      out[it->second].uses.push_back(u.range);
}

/// Whether some line of [begin, end) starts (after blanks) with `#` or `!`:
/// a section without one defines no alias and is not lexed (a model's
/// 4 MB would cost ~15 ms a version).
bool mayDefineAliases(std::string_view text, size_t begin, size_t end) {
  for (size_t at = begin; at < end;) {
    size_t i = at;
    while (i < end && (text[i] == ' ' || text[i] == '\t'))
      ++i;
    if (i < end && (text[i] == '#' || text[i] == '!'))
      return true;
    size_t nl = text.find('\n', i);
    if (nl == std::string_view::npos)
      break;
    at = nl + 1;
  }
  return false;
}

} // namespace

std::vector<AliasInfo> scanAliases(std::string_view text,
                                   const LineIndex &lines,
                                   const std::vector<Section> &sections) {
  std::vector<AliasInfo> out;
  if (sections.empty()) {
    if (mayDefineAliases(text, 0, text.size()))
      scanSection(text, 0, text.size(), 0, lines, out);
    return out;
  }
  for (const Section &s : sections) {
    size_t end = std::min(s.endOffset, text.size());
    if (mayDefineAliases(text, s.beginOffset, end))
      scanSection(text, s.beginOffset, end, s.index, lines, out);
  }
  return out;
}

const AliasInfo *aliasAt(const std::vector<AliasInfo> &aliases, Position pos,
                         bool *onDef) {
  for (const AliasInfo &a : aliases) {
    if (contains(a.def, pos)) {
      if (onDef)
        *onDef = true;
      return &a;
    }
    for (const Range &u : a.uses)
      if (contains(u, pos)) {
        if (onDef)
          *onDef = false;
        return &a;
      }
  }
  return nullptr;
}

} // namespace tosa_lsp
