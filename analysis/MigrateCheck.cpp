//===- MigrateCheck.cpp - the migrated file, checked ----------------------===//

#include "MigrateCheck.h"

#include "TextEdit.h"

#include <algorithm>
#include <map>
#include <set>

namespace tosa_lsp {

unsigned originalLine(const std::vector<TextEditData> &edits, unsigned line) {
  std::vector<const TextEditData *> sorted;
  for (const TextEditData &e : edits)
    sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto *a, auto *b) {
    return before(a->range.begin, b->range.begin);
  });
  long delta = 0; // new line - original line, past the edits so far
  for (const TextEditData *e : sorted) {
    long breaks = std::count(e->newText.begin(), e->newText.end(), '\n');
    long newBegin = static_cast<long>(e->range.begin.line) + delta;
    if (static_cast<long>(line) < newBegin)
      break;
    if (static_cast<long>(line) <= newBegin + breaks)
      return e->range.begin.line;
    delta +=
        breaks - static_cast<long>(e->range.end.line - e->range.begin.line);
  }
  return static_cast<unsigned>(std::max(1L, static_cast<long>(line) - delta));
}

MigrationOutcome migrateAndCheck(Analyzer &analyzer, const FileAnalysis &fa,
                                 const std::string &text, const Config &config,
                                 const std::function<bool()> &stop) {
  MigrationOutcome out;
  out.plan = planMigration(text);
  if (stop && stop()) {
    out.stopped = true;
    return out;
  }
  out.text = applyMigration(text, out.plan, &out.map);
  std::vector<TextEditData> edits;
  for (const MigrationFix &f : out.plan.fixes)
    edits.insert(edits.end(), f.edits.begin(), f.edits.end());
  if (!out.plan.fixes.empty())
    out.analysis = std::make_shared<const FileAnalysis>(
        analyzer.analyze(out.text, fa.path, config));
  const FileAnalysis &now = out.analysis ? *out.analysis : fa;
  auto isError = [](const Diagnostic &d) {
    return d.severity == Severity::Error;
  };
  // As the server's validation: no section stops parsing, no more errors.
  bool lostSection = now.sections.size() != fa.sections.size();
  for (size_t i = 0; !lostSection && i < fa.sections.size(); ++i)
    lostSection = fa.sections[i].parsed && !now.sections[i].parsed;
  out.worse =
      lostSection ||
      std::count_if(now.diagnostics.begin(), now.diagnostics.end(), isError) >
          std::count_if(fa.diagnostics.begin(), fa.diagnostics.end(), isError);
  std::set<unsigned> named;
  for (const MigrationNote &n : out.plan.manual) {
    out.left.push_back(n);
    named.insert(n.nameRange.begin.line);
  }
  for (const Diagnostic &d : now.diagnostics) {
    if (!isError(d))
      continue;
    unsigned line = originalLine(edits, d.range.begin.line);
    if (!named.insert(line).second)
      continue; // The manual list names that op already, with its reason.
    MigrationNote n;
    n.opName = "";
    n.nameRange.begin = {line, d.range.begin.column};
    n.nameRange.end = n.nameRange.begin;
    n.section = d.section;
    n.message = "still fails after the migration: " + d.message.str();
    out.left.push_back(std::move(n));
  }
  return out;
}

std::string migrateFileTitle(size_t rewritten,
                             const std::vector<MigrationNote> &left) {
  std::string title = "Migrate this file to MLIR 22 TOSA (" +
                      std::to_string(rewritten) + " ops)";
  if (left.empty())
    return title;
  const MigrationNote *first = &left[0];
  for (const MigrationNote &n : left)
    if (n.nameRange.begin.line < first->nameRange.begin.line)
      first = &n;
  return title + " - " + std::to_string(left.size()) +
         " ops left to edit by hand, first at line " +
         std::to_string(first->nameRange.begin.line) + ": " + first->message;
}

bool hasOldFormErrors(const FileAnalysis &fa) {
  // What MLIR 22 says about the forms Migrate.cpp rewrites (the OLD checks
  // of test/lit/migrate); a parse error naming TOSA may be any of them.
  static const char *const kVerifier[] = {
      "operands, but found",
      "requires attribute",
      "requires a single operand",
      "must be Shape",
      "wholly divisible by stride",
      "tosa.fully_connected",
      "symbol's parent must have the SymbolTable trait"};
  for (const Diagnostic &d : fa.diagnostics) {
    if (d.severity != Severity::Error)
      continue;
    const std::string &m = d.message.str();
    // `func @f` from before the func dialect (mayNeedMigration has seen
    // TOSA in the text).
    if (d.source == DiagSource::Parser &&
        m.find("custom op 'func' is unknown") != m.npos)
      return true;
    if (m.find("tosa") == m.npos)
      continue;
    if (d.source == DiagSource::Parser)
      return true;
    for (const char *p : kVerifier)
      if (m.find(p) != m.npos)
        return true;
  }
  return false;
}

std::optional<Diagnostic> oldFormsSummary(const MigrationOutcome &m) {
  size_t count = m.plan.fixes.size() + m.plan.manual.size();
  if (!count)
    return std::nullopt;
  std::map<std::string, size_t> byName;
  const Range *first = nullptr;
  unsigned section = 0;
  auto note = [&](const std::string &name, const Range &r, unsigned sec) {
    ++byName[name];
    if (!first || before(r.begin, first->begin)) {
      first = &r;
      section = sec;
    }
  };
  for (const MigrationFix &f : m.plan.fixes)
    note(f.opName, f.nameRange, f.section);
  for (const MigrationNote &n : m.plan.manual)
    note(n.opName, n.nameRange, n.section);
  std::vector<std::pair<size_t, std::string>> kinds;
  for (const auto &[name, n] : byName)
    kinds.push_back({n, name});
  std::stable_sort(
      kinds.begin(), kinds.end(),
      [](const auto &a, const auto &b) { return a.first > b.first; });
  std::string list;
  for (size_t i = 0; i < kinds.size() && i < 4; ++i)
    list += (i ? ", " : "") + std::to_string(kinds[i].first) + " " +
            kinds[i].second;
  if (kinds.size() > 4)
    list += ", " + std::to_string(kinds.size() - 4) + " more kinds";
  std::string message =
      std::to_string(count) + (count == 1 ? " op uses" : " ops use") +
      " pre-MLIR-22 TOSA forms (" + list +
      "); MLIR 22's errors show only the first. Migrate this file to MLIR 22 "
      "TOSA (the quick fix, or `tosa-lsp fix --migrate`)";
  if (m.worse)
    message += "; the migrated file would not re-analyse better, so the "
               "migration is not offered";
  else if (!m.left.empty())
    message += ": " + migrateFileTitle(m.plan.fixes.size(), m.left)
                          .substr(std::string("Migrate this file to MLIR 22 "
                                              "TOSA ")
                                      .size());
  message += ". Hover, inlay hints, definitions, references and the graph "
             "answer from the migrated form meanwhile";
  Diagnostic d;
  d.severity = Severity::Warning;
  d.source = DiagSource::Verifier;
  d.range = *first;
  d.message = SharedText(message);
  d.code = SharedText("pre-mlir-22");
  d.section = section;
  return d;
}

} // namespace tosa_lsp
