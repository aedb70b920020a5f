//===- MigrateCheck.cpp - the migrated file, checked ----------------------===//

#include "MigrateCheck.h"

#include "TextEdit.h"

#include <algorithm>
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
                                 const std::string &text,
                                 const Config &config) {
  MigrationOutcome out;
  out.plan = planMigration(text);
  out.text = applyMigration(text, out.plan);
  std::vector<TextEditData> edits;
  for (const MigrationFix &f : out.plan.fixes)
    edits.insert(edits.end(), f.edits.begin(), f.edits.end());
  FileAnalysis now =
      out.plan.fixes.empty() ? fa : analyzer.analyze(out.text, fa.path, config);
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

} // namespace tosa_lsp
