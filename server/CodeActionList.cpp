//===- CodeActionList.cpp - TosaServer's code actions ---------------------===//
//
// Quick fixes (validated by re-analysis on the pool, verdicts cached per
// version), upstream's expected-* checks, whole-file rewrites for review,
// and the preview and compile actions of the function at the cursor.
//
//===----------------------------------------------------------------------===//

#include "TosaServer.h"

#include "OldSyntax.h"
#include "ServerSupport.h"

#include "ExpectedChecks.h"
#include "Query.h"

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// Code actions
//===----------------------------------------------------------------------===//

Analyzer &TosaServer::validator(unsigned worker) {
  // Each slot is touched by one thread only (its pool worker, or the
  // inline caller in sync mode).
  std::unique_ptr<Analyzer> &a = validators[worker];
  if (!a)
    a = std::make_unique<Analyzer>();
  return *a;
}

bool TosaServer::isValid(OpenDocument *doc, const Scheduler::SnapshotPtr &s,
                         size_t fix, unsigned worker) {
  std::string config = s->config.fingerprint();
  if (doc)
    if (std::optional<bool> known = doc->verdict(s->version, config, fix))
      return *known;
  // Outside any lock: validations of different documents, versions or
  // fixes run side by side on their workers' own Analyzers. Two requests
  // racing for the same fix compute the same verdict twice.
  bool ok = validateFix(validator(worker), s->analysis, s->text, s->config,
                        s->fixes()[fix]);
  ++validationCount;
  if (doc)
    doc->setVerdict(s->version, config, fix, ok);
  return ok;
}

/// "Add expected-* diagnostic checks" on each MLIR diagnostic (parser,
/// verifier) of `r`, as mlir-lsp-server offers: how MLIR tests are written.
static void addExpectedChecks(const Snapshot &s, const tosa_lsp::Range &r,
                              std::string_view newline, CodeActions &out) {
  for (const Diagnostic &d : s.analysis.diagnostics) {
    if (d.source == DiagSource::Broadcast || !overlaps(d.range, r))
      continue;
    std::vector<TextEditData> edits =
        expectedChecks(d, s.text, s.lines.index());
    if (edits.empty())
      continue;
    CodeActionItem item;
    item.title = kExpectedChecksTitle;
    item.kind = "quickfix";
    item.version = s.version;
    item.diagnostic = &d;
    item.edits = toLspEdits(s, edits, newline);
    out.items.push_back(std::move(item));
  }
}

CodeActions TosaServer::computeCodeActions(Scheduler::SnapshotPtr s,
                                           lsp::Range range,
                                           const std::vector<std::string> &only,
                                           unsigned worker) {
  CodeActions out;
  out.snapshot = s;
  auto wants = [&](StringRef kind) {
    return only.empty() || llvm::any_of(only, [&](const std::string &k) {
             return kind.starts_with(k);
           });
  };
  std::optional<tosa_lsp::Range> r = s->lines.fromLsp(range);
  if (!r)
    return out;
  // Null once closed: nothing is kept for it then.
  std::shared_ptr<OpenDocument> doc = scheduler->document(s->uri);
  // How the edits write new lines: looked up once, when an edit needs it.
  std::optional<std::string> newlineText;
  auto newline = [&]() -> std::string_view {
    if (!newlineText)
      newlineText =
          doc ? doc->newline(*s) : std::string(firstLineBreak(s->text));
    return *newlineText;
  };
  // Quick fixes first: editors show the first action most prominently.
  // Migrating the whole file is a source action offered anywhere in it,
  // and a quick fix (after the op's own) on every diagnostic a migration
  // repairs, so that editors which keep source actions out of their
  // lightbulb (VS Code) still show it where the old forms are.
  std::optional<size_t> migrateFile;
  bool onOldForm = false;
  for (size_t i = 0; i < s->fixes().size(); ++i) {
    const FixData &fix = s->fixes()[i];
    if (fix.kind == FixData::MigrateFile)
      migrateFile = i;
    else if (fix.kind == FixData::Migrate &&
             overlaps(s->analysis.diagnostics[fix.diagnostic].range, *r))
      onOldForm = true;
  }
  // The migration checked (migrateAndCheck: the background's, or made
  // here): its title names every op left, also those only the migrated
  // text's analysis finds, and its verdict needs no validation of its own.
  std::shared_ptr<const MigratedView> migrated =
      migrateFile ? migratedView(*s) : nullptr;
  if (migrated && migrated->summary && overlaps(migrated->summary->range, *r))
    onOldForm = true;
  if (migrateFile && !migrated && (onOldForm || wants("source.migrate")))
    migrated = migrateNow(s, worker);
  auto wholeFileMigration = [&](StringRef kind) {
    CodeActionItem item;
    item.title = migrated
                     ? migrateFileTitle(migrated->outcome.plan.fixes.size(),
                                        migrated->outcome.left)
                     : s->fixes()[*migrateFile].title;
    item.kind = kind.str();
    item.review = true;
    item.version = s->version;
    item.edits = toLspEdits(*s, s->fixes()[*migrateFile].edits, newline());
    out.items.push_back(std::move(item));
  };
  if (wants("quickfix"))
    for (size_t i = 0; i < s->fixes().size(); ++i) {
      const FixData &fix = s->fixes()[i];
      const Diagnostic &d = s->analysis.diagnostics[fix.diagnostic];
      if (fix.kind == FixData::MigrateFile || !overlaps(d.range, *r) ||
          !isValid(doc.get(), s, i, worker))
        continue;
      CodeActionItem item;
      item.title = fix.title;
      item.kind = "quickfix";
      item.version = s->version;
      item.preferred = fix.preferred;
      item.diagnostic = &d;
      item.edits = toLspEdits(*s, fix.edits, newline());
      out.items.push_back(std::move(item));
    }
  if (wants("quickfix"))
    addExpectedChecks(*s, *r, newline(), out);
  bool migrateValid = migrateFile && (onOldForm || wants("source.migrate")) &&
                      (migrated ? !migrated->outcome.worse
                                : isValid(doc.get(), s, *migrateFile, worker));
  if (migrateValid && onOldForm && wants("quickfix"))
    wholeFileMigration("quickfix");
  const SymbolInfo *fn = functionAt(s->analysis, r->begin);
  // Lowering and compiling a function fail when it has errors (its quick
  // fixes are offered), or leniently parsed ops (MLIR has no lowering for a
  // dialect it does not have): not offered then.
  bool lowerable =
      fn && llvm::none_of(s->analysis.diagnostics, [&](const Diagnostic &d) {
        return (d.severity == Severity::Error || d.code == "lenient-parse") &&
               d.range.begin.line >= fn->scope.begin.line &&
               d.range.begin.line <= fn->scope.end.line;
      });
  if (lowerable && wants("refactor.rewrite")) {
    CodeActionItem item;
    item.title = "Preview lowering of @" + fn->name + " (TOSA -> linalg)";
    item.kind = "refactor.rewrite";
    item.command = "tosa.previewLowering";
    item.commandTitle = "Preview lowering";
    item.function = fn->name;
    item.stage = "linalg";
    item.mode = "fast";
    out.items.push_back(std::move(item));
  }
  if (fn && doc && wants("source.refineShapes")) {
    // "Refine all shapes in this function": MLIR's tosa-infer-shapes
    // written into the text, offered when the result re-analyses cleanly.
    std::shared_ptr<const ShapeInference> shapes =
        background->infer(doc, s, worker, fn->scope.begin.line,
                          fn->scope.end.line, /*refineEdits=*/true);
    std::vector<TextEditData> edits = shapes ? refineAllEdits(*shapes, fn->name)
                                             : std::vector<TextEditData>();
    if (!edits.empty() && refinedTextVerifies(validator(worker), s->analysis,
                                              s->text, s->config, edits)) {
      CodeActionItem item;
      item.title = "Refine all shapes in @" + fn->name + " (tosa-infer-shapes)";
      item.kind = "source.refineShapes";
      item.review = true;
      item.version = s->version;
      item.edits = toLspEdits(*s, edits, newline());
      out.items.push_back(std::move(item));
    }
  }
  if (migrateValid && wants("source.migrate"))
    wholeFileMigration("source.migrate");
  if (lowerable && wants("source")) {
    CodeActionItem item;
    item.title = "Compile @" + fn->name + " to native code (shared library)";
    item.kind = "source";
    item.command = "tosa.compile";
    item.commandTitle = "Compile to native code";
    item.function = fn->name;
    item.emit = "shared";
    out.items.push_back(std::move(item));
  }
  return out;
}

void TosaServer::codeActions(const std::string &uri, lsp::Range range,
                             std::vector<std::string> only,
                             Callback<CodeActions> cb) {
  withCurrentSnapshot(
      uri, [this, range, only = std::move(only),
            cb = std::move(cb)](Expected<Scheduler::SnapshotPtr> s) mutable {
        if (!s)
          return cb(s.takeError());
        // Validation re-analyses a section: on the pool, off the caller.
        runHeavy([this, range, only = std::move(only), cb = std::move(cb),
                  s = std::move(*s)](unsigned worker) mutable {
          cb(computeCodeActions(std::move(s), range, only, worker));
        });
      });
}

} // namespace tosa_lsp
