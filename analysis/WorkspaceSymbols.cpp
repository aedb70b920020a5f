//===- WorkspaceSymbols.cpp - find functions and globals by name ----------===//

#include "WorkspaceSymbols.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <cctype>

namespace tosa_lsp {

namespace {
char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}
bool wordStart(std::string_view s, size_t i) {
  if (i == 0)
    return true;
  char p = s[i - 1], c = s[i];
  return p == '_' || p == '.' || p == '$' || p == '-' ||
         (std::islower(static_cast<unsigned char>(p)) &&
          std::isupper(static_cast<unsigned char>(c))) ||
         (!std::isdigit(static_cast<unsigned char>(p)) &&
          std::isdigit(static_cast<unsigned char>(c)));
}
/// Ops that define a symbol by convention (`func.call @f` uses one).
bool definesSymbols(std::string_view op) {
  if (op == "module")
    return true;
  size_t dot = op.rfind('.');
  if (dot == std::string_view::npos)
    return false;
  std::string_view last = op.substr(dot + 1);
  return last == "func" || last == "global" || last == "module" ||
         last == "variable" || last == "subgraph";
}
} // namespace

std::optional<double> fuzzyMatch(std::string_view query,
                                 std::string_view name) {
  if (!query.empty() && query[0] == '@')
    query.remove_prefix(1);
  if (query.empty())
    return 1.0;
  // Greedy, preferring word starts: for each query character the next
  // word start holding it when there is one before the next plain match.
  double score = 0;
  size_t at = 0, run = 0;
  for (size_t q = 0; q < query.size(); ++q) {
    char c = lower(query[q]);
    size_t plain = std::string_view::npos, word = std::string_view::npos;
    for (size_t i = at; i < name.size(); ++i)
      if (lower(name[i]) == c) {
        if (plain == std::string_view::npos)
          plain = i;
        if (wordStart(name, i)) {
          word = i;
          break;
        }
      }
    if (plain == std::string_view::npos)
      return std::nullopt;
    size_t i = plain;
    if (word != std::string_view::npos && !(q && plain == at && run))
      i = word;
    run = (q && i == at) ? run + 1 : 0;
    score += 1.0 + (wordStart(name, i) ? 1.0 : 0) + (run ? 1.0 : 0) +
             (i == 0 && q == 0 ? 2.0 : 0);
    at = i + 1;
  }
  double best = 5.0 + 3.0 * (query.size() - 1);
  double s = score / best;
  if (query.size() == name.size())
    s = std::min(1.0, s + 0.1);
  return std::max(0.01, std::min(1.0, s));
}

std::vector<ScannedSymbol> scanSymbols(std::string_view text,
                                       const LineIndex &lines) {
  std::vector<ScannedSymbol> out;
  for (size_t l = 0; l < lines.lineCount(); ++l) {
    size_t start = lines.lineStart(l);
    size_t end =
        l + 1 < lines.lineCount() ? lines.lineStart(l + 1) : text.size();
    Lexer lex(text.substr(0, end), start);
    Token op = lex.next();
    if (op.kind != TokKind::BareId || !definesSymbols(op.text(text)))
      continue;
    Token t = lex.next();
    while (t.kind == TokKind::BareId &&
           (t.text(text) == "private" || t.text(text) == "public" ||
            t.text(text) == "nested"))
      t = lex.next();
    if (t.kind != TokKind::SymbolId)
      continue;
    std::string_view name = t.text(text).substr(1);
    if (!name.empty() && name.front() == '"' && name.size() >= 2)
      name = name.substr(1, name.size() - 2);
    out.push_back(
        {std::string(name),
         std::string(op.text(text)),
         {lines.position(t.offset), lines.position(t.offset + t.length)}});
  }
  return out;
}

} // namespace tosa_lsp
