//===- CodeActions.cpp - quick fixes for broadcast problems ---------------===//

#include "CodeActions.h"

#include "DroppedNanModes.h"
#include "LineIndex.h"
#include "Migrate.h"
#include "MigrateCheck.h"
#include "Query.h"
#include "TextScan.h"

#include <algorithm>
#include <map>
#include <set>

namespace tosa_lsp {
namespace {

/// Bracket depth change of s[i] in MLIR type/attribute text: +1 opens, -1
/// closes, 0 otherwise. Skips over `->` (whose '>' closes nothing) by
/// advancing `i`.
int bracketStep(const std::string &s, size_t &i, size_t e) {
  char c = s[i];
  if (c == '-' && i + 1 < e && s[i + 1] == '>') {
    ++i;
    return 0;
  }
  if (c == '<' || c == '(' || c == '[' || c == '{')
    return 1;
  if (c == '>' || c == ')' || c == ']' || c == '}')
    return -1;
  return 0;
}

/// Splits `s` on `sep` at bracket depth 0; returns [begin, end) pairs with
/// surrounding spaces trimmed.
std::vector<std::pair<size_t, size_t>>
splitTopLevel(const std::string &s, size_t b, size_t e, char sep = ',') {
  std::vector<std::pair<size_t, size_t>> out;
  int depth = 0;
  size_t start = b;
  auto push = [&](size_t from, size_t to) {
    while (from < to && std::isspace(static_cast<unsigned char>(s[from])))
      ++from;
    while (to > from && std::isspace(static_cast<unsigned char>(s[to - 1])))
      --to;
    out.push_back({from, to});
  };
  for (size_t i = b; i < e; ++i) {
    int step = bracketStep(s, i, e);
    depth += step;
    if (step == 0 && s[i] == sep && depth == 0) {
      push(start, i);
      start = i + 1;
    }
  }
  push(start, e);
  return out;
}

/// Offset of the bracket closing the one at `open`, or npos.
size_t matching(const std::string &s, size_t open, size_t limit) {
  int depth = 0;
  for (size_t i = open; i < limit; ++i) {
    int step = bracketStep(s, i, limit);
    depth += step;
    if (step < 0 && depth == 0)
      return i;
  }
  return std::string::npos;
}

/// Offset of the last `:` at depth 0 in [b, e) (the op's type signature).
size_t lastTopLevelColon(const std::string &s, size_t b, size_t e) {
  int depth = 0;
  size_t found = std::string::npos;
  for (size_t i = b; i < e; ++i) {
    char c = s[i];
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(std::string_view(s).substr(0, e), i);
      continue;
    }
    int step = bracketStep(s, i, e);
    depth += step;
    if (step == 0 && s[i] == ':' && depth == 0 &&
        (i + 1 >= e || s[i + 1] != ':'))
      found = i;
  }
  return found;
}

/// The type text of operand `index` in an op's signature, as [b, e).
std::optional<std::pair<size_t, size_t>>
operandTypeSlot(const std::string &text, size_t opBegin, size_t opEnd,
                unsigned index, unsigned numOperands) {
  size_t colon = lastTopLevelColon(text, opBegin, opEnd);
  if (colon == std::string::npos)
    return std::nullopt;
  size_t b = colon + 1;
  while (b < opEnd && std::isspace(static_cast<unsigned char>(text[b])))
    ++b;
  if (b < opEnd && text[b] == '(') { // functional type (T0, T1) -> R
    size_t close = matching(text, b, opEnd);
    if (close == std::string::npos)
      return std::nullopt;
    auto slots = splitTopLevel(text, b + 1, close);
    if (slots.size() != numOperands || index >= slots.size())
      return std::nullopt;
    return slots[index];
  }
  // A plain type list (`return %0, %1 : T0, T1`), up to `->` or ` to `.
  size_t e = opEnd;
  for (size_t i = b; i + 1 < opEnd; ++i)
    if ((text[i] == '-' && text[i + 1] == '>') ||
        text.compare(i, 4, " to ") == 0) {
      e = i;
      break;
    }
  auto slots = splitTopLevel(text, b, e);
  if (slots.size() != numOperands || index >= slots.size())
    return std::nullopt;
  return slots[index];
}

/// `tensor<4x?xf32>` with its shape replaced; std::nullopt for types we do
/// not rewrite (unranked, non tensor/vector).
std::optional<std::string> withShape(const std::string &type,
                                     const Shape &shape) {
  size_t lt = type.find('<');
  if (lt == std::string::npos || type.back() != '>')
    return std::nullopt;
  std::string head = type.substr(0, lt);
  if (head != "tensor" && head != "vector")
    return std::nullopt;
  std::string body = type.substr(lt + 1, type.size() - lt - 2);
  if (!body.empty() && body[0] == '*')
    return std::nullopt;
  // Skip the dimension list: (digits | '?') 'x', repeated.
  size_t i = 0;
  while (true) {
    size_t j = i;
    if (j < body.size() && body[j] == '?')
      ++j;
    else
      while (j < body.size() &&
             std::isdigit(static_cast<unsigned char>(body[j])))
        ++j;
    if (j == i || j >= body.size() || body[j] != 'x')
      break;
    i = j + 1;
  }
  std::string dims;
  for (int64_t d : shape)
    dims += formatDim(d) + "x";
  return head + "<" + dims + body.substr(i) + ">";
}

std::string lineIndent(const std::string &text, size_t off) {
  size_t start = text.rfind('\n', off == 0 ? 0 : off - 1);
  start = start == std::string::npos ? 0 : start + 1;
  size_t e = start;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t'))
    ++e;
  return text.substr(start, e - start);
}

/// Lookups built once per file, so that finding fixes for thousands of ops
/// stays linear.
struct FixIndex {
  std::map<std::pair<unsigned, unsigned>, std::vector<size_t>> diagnosticsAt;
  std::map<unsigned, std::set<std::string>> namesBySection;
  std::map<const OpReport *, const ValueInfo *> resultOf;
  explicit FixIndex(const FileAnalysis &fa) {
    for (size_t i = 0; i < fa.diagnostics.size(); ++i) {
      const Position &p = fa.diagnostics[i].range.begin;
      diagnosticsAt[{p.line, p.column}].push_back(i);
    }
    for (const ValueInfo &v : fa.values) {
      namesBySection[v.section].insert(v.name.str());
      if (const OpReport *op = fa.opOf(v))
        resultOf[op] = &v;
    }
  }
};

/// A value name not used in the section yet: `%base`, `%base_1`, ...
std::string freshName(const FixIndex &ix, const FileAnalysis &fa,
                      unsigned section, const std::string &base) {
  const std::set<std::string> &taken = ix.namesBySection.at(section);
  std::string name = "%" + base;
  for (int n = 1; taken.count(name); ++n)
    name = "%" + base + "_" + std::to_string(n);
  return name;
}

/// Identifier-safe part of a value name, for derived names.
std::string stem(const std::string &name) {
  std::string s;
  for (char c : name.substr(1))
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

/// The diagnostic at `op` with one of `codes` (or any error when empty).
std::optional<size_t> diagnosticAt(const FixIndex &ix, const FileAnalysis &fa,
                                   const OpReport &op,
                                   std::initializer_list<const char *> codes,
                                   bool errorsOnly) {
  auto it = ix.diagnosticsAt.find({op.range.begin.line, op.range.begin.column});
  if (it == ix.diagnosticsAt.end())
    return std::nullopt;
  for (size_t i : it->second) {
    const Diagnostic &d = fa.diagnostics[i];
    if (errorsOnly && d.severity != Severity::Error)
      continue;
    if (codes.size() == 0)
      return i;
    for (const char *c : codes)
      if (d.code == c)
        return i;
  }
  return std::nullopt;
}

/// The innermost op (any op) whose text contains `r`: a span, or the
/// report of an op that has one (and no span).
std::optional<OpSpan> userOf(const FileAnalysis &fa, const Range &r) {
  std::optional<OpSpan> best;
  auto consider = [&](const auto &op, const Range &nameRange) {
    if (contains(op.scope, r.begin) && contains(op.scope, r.end))
      if (!best || contains(best->scope, op.scope.begin))
        best = OpSpan{op.name,        nameRange,     op.scope,
                      op.numOperands, op.hasRegions, op.section};
  };
  for (const OpSpan &s : fa.opSpans)
    consider(s, s.nameRange);
  for (const OpReport &o : fa.ops)
    consider(o, o.range);
  return best;
}

/// Operand number of the use at `use` inside `user`: the number of value
/// uses that come before it in the op's text (ops without regions).
std::optional<unsigned> operandIndex(const FileAnalysis &fa, const OpSpan &user,
                                     const Range &use) {
  if (user.hasRegions)
    return std::nullopt;
  std::vector<Position> uses;
  for (const ValueInfo &v : fa.values)
    for (const Range &u : v.uses)
      if (contains(user.scope, u.begin))
        uses.push_back(u.begin);
  std::sort(uses.begin(), uses.end(), [](Position a, Position b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  if (uses.size() != user.numOperands)
    return std::nullopt;
  for (unsigned i = 0; i < uses.size(); ++i)
    if (uses[i].line == use.begin.line && uses[i].column == use.begin.column)
      return i;
  return std::nullopt;
}

const ValueInfo *resultValue(const FixIndex &ix, const FileAnalysis &fa,
                             const OpReport &op) {
  auto it = ix.resultOf.find(&op);
  return it == ix.resultOf.end() ? nullptr : it->second;
}

/// (a) The declared result type with its static dims replaced by the
/// inferred ones; users and the function signature follow.
std::optional<FixData> resultTypeFix(const FixIndex &ix, const FileAnalysis &fa,
                                     const std::string &text,
                                     const LineIndex &off, const OpReport &op) {
  const BroadcastAnalysis &a = op.implicit();
  bool wrong = false;
  for (const Violation &v : a.violations)
    wrong |= v.kind == ViolationKind::ResultDimMismatch ||
             v.kind == ViolationKind::ResultBroadcast;
  if (!wrong || !a.inferred || !a.declared)
    return std::nullopt;
  for (const Violation &v : a.violations)
    if (v.kind != ViolationKind::ResultDimMismatch &&
        v.kind != ViolationKind::ResultBroadcast)
      return std::nullopt; // Other problems first: this alone won't verify.
  std::optional<size_t> diag =
      diagnosticAt(ix, fa, op, {}, /*errorsOnly=*/true);
  auto tb = off.offset(op.resultTypeRange.begin),
       te = off.offset(op.resultTypeRange.end);
  if (!diag || !tb || !te)
    return std::nullopt;
  std::string oldType = text.substr(*tb, *te - *tb);
  Shape fixed = *a.declared;
  for (const DimReport &d : a.dims)
    if (d.resultConflict)
      fixed[d.index] = d.inferred;
  std::optional<std::string> newType = withShape(oldType, fixed);
  if (!newType)
    return std::nullopt;

  FixData fix;
  fix.kind = FixData::ResultType;
  fix.title = "Change result type to " + *newType + " (inferred)";
  fix.diagnostic = *diag;
  fix.preferred = true;
  fix.edits.push_back({op.resultTypeRange, *newType});
  // Users spell the old type too; so does the signature of a function that
  // returns the value.
  if (const ValueInfo *v = resultValue(ix, fa, op)) {
    for (const Range &use : v->uses) {
      std::optional<OpSpan> user = userOf(fa, use);
      if (!user)
        return std::nullopt;
      std::optional<unsigned> idx = operandIndex(fa, *user, use);
      auto ub = off.offset(user->scope.begin), ue = off.offset(user->scope.end);
      if (!idx || !ub || !ue)
        return std::nullopt;
      auto slot = operandTypeSlot(text, *ub, *ue, *idx, user->numOperands);
      if (!slot ||
          text.substr(slot->first, slot->second - slot->first) != oldType)
        return std::nullopt;
      fix.edits.push_back(
          {{off.position(slot->first), off.position(slot->second)}, *newType});
      if (user->name != "func.return")
        continue;
      const SymbolInfo *fn = functionAt(fa, use.begin);
      auto nb = fn ? off.offset(fn->nameRange.end) : std::nullopt;
      auto fe = fn ? off.offset(fn->scope.end) : std::nullopt;
      if (!nb || !fe)
        return std::nullopt;
      // `(args) -> results {` : the results after the argument list.
      size_t open = text.find('(', *nb);
      size_t close =
          open == std::string::npos ? open : matching(text, open, *fe);
      size_t body = close == std::string::npos ? close : text.find('{', close);
      size_t arrow =
          close == std::string::npos ? close : text.find("->", close);
      if (body == std::string::npos || arrow == std::string::npos ||
          arrow > body)
        return std::nullopt;
      size_t rb = arrow + 2, re = body;
      size_t attrs = text.find(" attributes", rb);
      if (attrs != std::string::npos && attrs < re)
        re = attrs;
      std::vector<std::pair<size_t, size_t>> results;
      while (rb < re && std::isspace(static_cast<unsigned char>(text[rb])))
        ++rb;
      if (rb < re && text[rb] == '(') {
        size_t rc = matching(text, rb, re);
        if (rc == std::string::npos)
          return std::nullopt;
        results = splitTopLevel(text, rb + 1, rc);
      } else {
        results = splitTopLevel(text, rb, re);
      }
      if (*idx >= results.size())
        return std::nullopt;
      auto [sb, se] = results[*idx];
      // Drop a result attribute dictionary: `tensor<..> {attr}`.
      std::string spelled = text.substr(sb, se - sb);
      if (spelled.rfind(oldType, 0) != 0)
        return std::nullopt;
      fix.edits.push_back(
          {{off.position(sb), off.position(sb + oldType.size())}, *newType});
    }
  }
  return fix;
}

/// (b) Refine `?` result dims; users keep the old type via tensor.cast.
std::optional<FixData> refineFix(const FixIndex &ix, const FileAnalysis &fa,
                                 const std::string &text, const LineIndex &off,
                                 const OpReport &op) {
  const BroadcastAnalysis &a = op.implicit();
  auto nb = off.offset(op.resultNameRange.begin),
       ne = off.offset(op.resultNameRange.end);
  if (!a.ok() || !a.anyRefinable() || !a.declared || !a.inferred || !nb ||
      !ne || *ne <= *nb)
    return std::nullopt;
  std::string resultName = text.substr(*nb, *ne - *nb);
  if (resultName.find_first_of(":#") != std::string::npos)
    return std::nullopt;
  std::optional<size_t> diag =
      diagnosticAt(ix, fa, op, {"refinable-result"}, /*errorsOnly=*/false);
  auto tb = off.offset(op.resultTypeRange.begin),
       te = off.offset(op.resultTypeRange.end);
  auto se = off.offset(op.scope.end), ob = off.offset(op.range.begin);
  if (!diag || !tb || !te || !se || !ob)
    return std::nullopt;
  std::string oldType = text.substr(*tb, *te - *tb);
  Shape refined = *a.declared;
  for (const DimReport &d : a.dims)
    if (d.refinable)
      refined[d.index] = d.inferred;
  std::optional<std::string> newType = withShape(oldType, refined);
  if (!newType)
    return std::nullopt;
  std::string fresh =
      freshName(ix, fa, op.section, "refined_" + stem(resultName));
  FixData fix;
  fix.kind = FixData::RefineResult;
  fix.title = "Refine result type to " + *newType + " (users keep " + oldType +
              " via tensor.cast)";
  fix.diagnostic = *diag;
  fix.edits.push_back({op.resultNameRange, fresh});
  fix.edits.push_back({op.resultTypeRange, *newType});
  fix.edits.push_back({{off.position(*se), off.position(*se)},
                       "\n" + lineIndent(text, *ob) + resultName +
                           " = tensor.cast " + fresh + " : " + *newType +
                           " to " + oldType});
  return fix;
}

/// (c) TOSA: reshape lower-rank operands with leading 1s.
std::optional<FixData> reshapeFix(const FixIndex &ix, const FileAnalysis &fa,
                                  const std::string &text, const LineIndex &off,
                                  const OpReport &op) {
  const BroadcastAnalysis &a = op.implicit();
  if (!op.tosa || a.rankExpanded.empty())
    return std::nullopt;
  for (const Violation &v : a.violations)
    if (v.kind != ViolationKind::OperandRanksDiffer)
      return std::nullopt; // The reshape alone would not make it verify.
  std::optional<size_t> diag =
      diagnosticAt(ix, fa, op, {}, /*errorsOnly=*/true);
  std::optional<OpSpan> span = userOf(fa, op.range);
  auto ob = off.offset(op.scope.begin), oe = off.offset(op.scope.end);
  if (!diag || !span || !ob || !oe)
    return std::nullopt;
  // The statement starts at the result name (`%0 = tosa.add ...`).
  size_t stmt = op.resultNameRange.begin.valid()
                    ? off.offset(op.resultNameRange.begin).value_or(*ob)
                    : *ob;
  std::string indent = lineIndent(text, stmt);

  FixData fix;
  fix.kind = FixData::ReshapeOperand;
  fix.diagnostic = *diag;
  fix.preferred = true;
  std::string prologue, names;
  // Operand uses inside the op, in operand order.
  std::vector<std::pair<Range, const ValueInfo *>> uses;
  for (const ValueInfo &v : fa.values)
    for (const Range &u : v.uses)
      if (contains(op.scope, u.begin))
        uses.push_back({u, &v});
  std::sort(uses.begin(), uses.end(), [](const auto &x, const auto &y) {
    return x.first.begin.line != y.first.begin.line
               ? x.first.begin.line < y.first.begin.line
               : x.first.begin.column < y.first.begin.column;
  });
  for (unsigned i : a.rankExpanded) {
    unsigned operand = i; // The data operands come first.
    if (operand >= uses.size())
      return std::nullopt;
    const auto &[useRange, value] = uses[operand];
    Shape target(a.rank - a.operands[i]->size(), 1);
    target.insert(target.end(), a.operands[i]->begin(), a.operands[i]->end());
    std::optional<std::string> newType = withShape(op.operandTypes[i], target);
    auto slot = operandTypeSlot(text, *ob, *oe, operand, span->numOperands);
    if (!newType || !slot)
      return std::nullopt;
    // `%0_shape` does not parse (a suffix-id is all digits or starts with a
    // letter): numeric names, how MLIR prints IR, get a `v` in front.
    std::string base = stem(value->name.str());
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])))
      base = "v" + base;
    std::string shapeName = freshName(ix, fa, op.section, base + "_shape");
    std::string newName = freshName(ix, fa, op.section, base + "_reshaped");
    std::string dims;
    for (size_t k = 0; k < target.size(); ++k)
      dims += (k ? ", " : "") + formatDim(target[k]);
    std::string rank = std::to_string(target.size());
    prologue += shapeName + " = tosa.const_shape {values = dense<[" + dims +
                "]> : tensor<" + rank + "xindex>} : () -> !tosa.shape<" + rank +
                ">\n" + indent;
    prologue += newName + " = tosa.reshape " + value->name + ", " + shapeName +
                " : (" + op.operandTypes[i] + ", !tosa.shape<" + rank +
                ">) -> " + *newType + "\n" + indent;
    fix.edits.push_back({useRange, newName});
    fix.edits.push_back(
        {{off.position(slot->first), off.position(slot->second)}, *newType});
    names += (names.empty() ? "" : ", ") + std::string("operand #") +
             std::to_string(i) + " to " + *newType;
  }
  fix.edits.push_back({{off.position(stmt), off.position(stmt)}, prologue});
  fix.title = "Reshape " + names + " (tosa.reshape) to equalise ranks";
  return fix;
}

/// (d) Pre-MLIR-22 TOSA: one fix per old-form op that has an error (the
/// diagnostic at its name, or on its line), then the whole file.
void migrationFixes(const FixIndex &ix, const FileAnalysis &fa,
                    const std::string &text, std::vector<FixData> &out) {
  if (!fa.hasErrors() || !mayNeedMigration(text))
    return;
  MigrationPlan plan = planMigration(text);
  if (plan.fixes.empty())
    return;
  std::map<std::pair<unsigned, unsigned>, size_t> errorOnLine;
  for (size_t i = 0; i < fa.diagnostics.size(); ++i) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.severity == Severity::Error)
      errorOnLine.try_emplace({d.section, d.range.begin.line}, i);
  }
  FixData all;
  all.kind = FixData::MigrateFile;
  // Never silent: ops the migration cannot rewrite are named in the title
  // (the server's title also names what the migrated text still fails on).
  all.title = migrateFileTitle(plan.fixes.size(), plan.manual);
  std::optional<size_t> first;
  std::vector<FixData> perOp;
  for (const MigrationFix &m : plan.fixes) {
    all.edits.insert(all.edits.end(), m.edits.begin(), m.edits.end());
    std::optional<size_t> diag;
    auto at = ix.diagnosticsAt.find(
        {m.nameRange.begin.line, m.nameRange.begin.column});
    if (at != ix.diagnosticsAt.end())
      for (size_t i : at->second)
        if (fa.diagnostics[i].severity == Severity::Error) {
          diag = i;
          break;
        }
    if (!diag)
      if (auto it = errorOnLine.find({m.section, m.nameRange.begin.line});
          it != errorOnLine.end())
        diag = it->second;
    if (!first || (diag && *diag < *first))
      first = diag;
    if (!diag)
      continue;
    FixData fix;
    fix.kind = FixData::Migrate;
    fix.title = m.title;
    fix.edits = m.edits;
    fix.diagnostic = *diag;
    fix.preferred = true;
    fix.target = m.nameRange.begin;
    if (m.edits.size() > 1)
      fix.target.line += static_cast<unsigned>(std::count(
          m.edits[0].newText.begin(), m.edits[0].newText.end(), '\n'));
    perOp.push_back(std::move(fix));
  }
  if (!first) // No error at any old op: attach to the file's first error.
    for (size_t i = 0; i < fa.diagnostics.size() && !first; ++i)
      if (fa.diagnostics[i].severity == Severity::Error)
        first = i;
  all.diagnostic = *first;
  // The file first: `validatedFixes` tries a bounded number of candidates.
  out.push_back(std::move(all));
  for (FixData &f : perOp)
    out.push_back(std::move(f));
}

} // namespace

/// `nan_mode = "IGNORE"` as MLIR 22 writes it, where MLIR 22 dropped the
/// string (DroppedNanModes.h): validated like a migrated op, which must
/// then have no error on its line.
static void nanModeFixes(const FileAnalysis &fa, std::vector<FixData> &out) {
  for (size_t i = 0; i < fa.diagnostics.size(); ++i) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.code != "dropped-nan-mode")
      continue;
    FixData fix;
    fix.kind = FixData::Migrate;
    fix.title = detail::kNanModeFixTitle;
    fix.edits.push_back({d.range, detail::kNanModeEnum});
    fix.diagnostic = i;
    fix.preferred = true;
    fix.target = d.range.begin;
    out.push_back(std::move(fix));
  }
}

std::vector<FixData> candidateFixes(const FileAnalysis &fa,
                                    const std::string &text) {
  LineIndex off(text);
  FixIndex index(fa);
  std::vector<FixData> out;
  for (const OpReport &op : fa.ops) {
    if (op.kind != OpKind::Implicit || op.section >= fa.sections.size() ||
        fa.sections[op.section].stale)
      continue;
    // Every fix repairs a violation or refines a result: the summary says
    // which ops can have one without building every op's full analysis.
    if (op.summary && op.summary->ok && !op.summary->anyRefinable)
      continue;
    for (auto make : {resultTypeFix, refineFix, reshapeFix})
      if (std::optional<FixData> f = make(index, fa, text, off, op))
        out.push_back(std::move(*f));
  }
  migrationFixes(index, fa, text, out);
  nanModeFixes(fa, out);
  return out;
}

namespace {
/// The whole file migrated: every section that parsed still parses and the
/// file has no more errors than before.
bool validateMigration(Analyzer &analyzer, const FileAnalysis &fa,
                       const std::string &text, const Config &config,
                       const FixData &fix) {
  auto isError = [](const Diagnostic &d) {
    return d.severity == Severity::Error;
  };
  FileAnalysis now =
      analyzer.analyze(applyEdits(text, fix.edits), fa.path, config);
  if (now.sections.size() != fa.sections.size())
    return false;
  for (size_t i = 0; i < fa.sections.size(); ++i)
    if (fa.sections[i].parsed && !now.sections[i].parsed)
      return false;
  return std::count_if(now.diagnostics.begin(), now.diagnostics.end(),
                       isError) <=
         std::count_if(fa.diagnostics.begin(), fa.diagnostics.end(), isError);
}
} // namespace

bool validateFix(Analyzer &analyzer, const FileAnalysis &fa,
                 const std::string &text, const Config &config,
                 const FixData &fix) {
  if (fix.kind == FixData::MigrateFile)
    return validateMigration(analyzer, fa, text, config, fix);
  if (fix.diagnostic >= fa.diagnostics.size())
    return false;
  unsigned section = fa.diagnostics[fix.diagnostic].section;
  if (section >= fa.sections.size())
    return false;
  const Section &sec = fa.sections[section];
  auto isError = [](const Diagnostic &d) {
    return d.severity == Severity::Error;
  };
  // Sections are analysed independently: the file's analysis already has
  // this section's "before".
  long before = std::count_if(
      fa.diagnostics.begin(), fa.diagnostics.end(),
      [&](const Diagnostic &d) { return isError(d) && d.section == section; });
  std::string edited = applyEdits(text, fix.edits);
  long delta =
      static_cast<long>(edited.size()) - static_cast<long>(text.size());
  std::string after =
      edited.substr(sec.beginOffset, sec.endOffset - sec.beginOffset + delta);
  FileAnalysis now = analyzer.analyze(after, fa.path, config);
  bool parsed = !now.sections.empty() &&
                std::all_of(now.sections.begin(), now.sections.end(),
                            [](const Section &s) { return s.parsed; });
  long errorsNow =
      std::count_if(now.diagnostics.begin(), now.diagnostics.end(), isError);
  if (fix.kind == FixData::Migrate) {
    // The rewritten op verifies; ops it fed may now report their own errors.
    unsigned line = fix.target.line + 1 - sec.firstLine;
    return parsed &&
           std::none_of(now.diagnostics.begin(), now.diagnostics.end(),
                        [&](const Diagnostic &d) {
                          return isError(d) && d.range.begin.line == line;
                        });
  }
  return parsed && (fix.kind == FixData::RefineResult ? errorsNow <= before
                                                      : errorsNow < before);
}

std::vector<FixData> validatedFixes(Analyzer &analyzer, const FileAnalysis &fa,
                                    const std::string &text,
                                    const Config &config, size_t limit) {
  std::vector<FixData> out;
  std::vector<FixData> candidates = candidateFixes(fa, text);
  if (candidates.size() > limit)
    candidates.resize(limit);
  for (FixData &fix : candidates)
    if (validateFix(analyzer, fa, text, config, fix))
      out.push_back(std::move(fix));
  return out;
}

} // namespace tosa_lsp
