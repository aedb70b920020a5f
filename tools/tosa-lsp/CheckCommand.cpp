//===- CheckCommand.cpp - `check` and `explain` ---------------------------===//

#include "CheckCommand.h"

#include "CommandSupport.h"
#include "Output.h"

#include "Analysis.h"
#include "Input.h"
#include "MigrateCheck.h"
#include "Render.h"
#include "ShapeInference.h"
#include "Timing.h"
#include "ValidateTarget.h"

#include "llvm/Support/BuryPointer.h"

#include <nlohmann/json.hpp>

using namespace llvm;

namespace tosa_lsp::cli {

int runCheck(const CheckOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<std::string> fmt =
      formatOrReport(opts.format, {"text", "json"}, err, rc);
  if (!fmt)
    return rc;
  if (opts.files.empty())
    return usageError(err, "check: no input files");
  std::optional<ValidateTarget> validate;
  if (opts.validate) {
    Expected<ValidateTarget> t = parseValidateTarget(*opts.validate);
    if (!t)
      return usageError(err, "check: --validate: " + toString(t.takeError()));
    validate = *t;
  }

  auto analyzer = std::make_unique<Analyzer>();
  // The last file's parse is left to the end, like the rest.
  analyzer->setDeferIRDestruction(true);
  // Diagnostics only: no hover or navigation index, unless shape inference
  // runs (it finds the functions through the index's symbols).
  analyzer->setCollectIndex(opts.inferShapes);
  nlohmann::ordered_json json;
  json["files"] = nlohmann::ordered_json::array();
  bool anyError = false, inputError = false;
  std::unique_ptr<FileAnalysis> kept; // the last file's: see the end
  for (const std::string &path : opts.files) {
    std::optional<PhaseTimer> reading(std::in_place, "read and validate input");
    auto input = readWithConfig(path, opts.config, err);
    reading.reset();
    if (!input) {
      inputError = true;
      continue;
    }
    const std::string &text = input->first;
    Config config = input->second;
    // mlir-opt-22's behaviour unless asked (the server's default is on).
    if (!opts.lenient)
      config.lenient.enabled = false;
    // --show-info asks for every informational finding, including the
    // runtime checks that are off by default.
    if (opts.showInfo)
      config.info.refinable = config.info.runtimeChecks =
          config.info.dynamicToStatic = true;
    if (validate)
      config.validate = *validate;
    kept = std::make_unique<FileAnalysis>(
        analyzer->analyze(text, displayName(path), config));
    FileAnalysis &fa = *kept;
    if (opts.inferShapes) {
      ShapeInferrer inferrer;
      for (Diagnostic &d : contradictionDiagnostics(inferrer.infer(text, fa)))
        fa.diagnostics.push_back(std::move(d));
    }
    anyError |= fa.hasErrors();
    if (*fmt == "json") {
      json["files"].push_back(fileToJson(fa));
      continue;
    }
    LineIndex lines(text);
    for (const Diagnostic &d : fa.diagnostics)
      if (d.severity != Severity::Info || opts.showInfo)
        printDiagnosticText(out, fa, text, lines, d);
  }
  if (*fmt == "json")
    out << json.dump(1) << "\n";
  if (opts.disableFree) {
    // Like clang's -disable-free: the OS takes back the last analysis and
    // MLIR's contexts at once instead of freeing their 10^6 objects one by
    // one (the caller exits without cleanup).
    llvm::BuryPointer(std::move(kept));
    llvm::BuryPointer(std::move(analyzer));
  }
  return inputError ? 2 : anyError ? 1 : 0;
}

/// An old-syntax file (errors of pre-MLIR-22 forms that a migration
/// rewrites): MLIR 22 stops at its first old form, so `explain` explains
/// the migrated text, with this file's positions (as the server's hover).
static std::optional<MigrationOutcome>
migratedForExplain(Analyzer &analyzer, const FileAnalysis &fa,
                   const std::string &text, const Config &config) {
  if (!fa.hasErrors() || !mayNeedMigration(text) || !hasOldFormErrors(fa))
    return std::nullopt;
  MigrationOutcome m = migrateAndCheck(analyzer, fa, text, config);
  if (!m.analysis)
    return std::nullopt;
  return m;
}

int runExplain(const ExplainOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<std::string> fmt =
      formatOrReport(opts.format, {"text", "markdown", "json"}, err, rc);
  if (!fmt)
    return rc;
  if (opts.files.size() != 1)
    return usageError(err, "explain: expected exactly one FILE[:LINE[:COL]]");

  std::string path = opts.files[0];
  Position pos;
  Expected<std::string> text = readInput(path);
  if (!text) {
    std::string p;
    splitPosition(opts.files[0], p, pos);
    if (pos.valid()) {
      consumeError(text.takeError());
      path = p;
      text = readInput(path);
    }
  }
  if (!text) {
    printError(err, text.takeError());
    return 2;
  }
  Expected<Config> config = loadConfig(opts.config, path);
  if (!config) {
    printError(err, config.takeError());
    return 2;
  }
  if (!opts.lenient)
    config->lenient.enabled = false;
  Analyzer analyzer;
  FileAnalysis original = analyzer.analyze(*text, displayName(path), *config);
  std::optional<MigrationOutcome> migrated =
      migratedForExplain(analyzer, original, *text, *config);
  // What is explained: the file, or its migrated form; positions printed
  // are always the file's.
  const FileAnalysis &fa = migrated ? *migrated->analysis : original;
  const std::string &source = migrated ? migrated->text : *text;
  auto at = [&](Position p) {
    return migrated ? migrated->map.toOld(p).value_or(p) : p;
  };
  Position asked = pos;
  if (migrated && pos.valid())
    asked = migrated->map.toNew(pos).value_or(pos);

  std::vector<const OpReport *> selected;
  // MLIR's shape inference (tosa-infer-shapes) over the functions asked
  // about: every op it can infer, not only the Broadcastable ones.
  ShapeInferrer inferrer;
  ShapeInference shapes =
      asked.valid() ? inferrer.infer(source, fa, asked.line, asked.line)
                    : inferrer.infer(source, fa);
  std::vector<const InferredOp *> inferred;
  if (pos.valid()) {
    int i = fa.findOp(asked);
    const InferredOp *io = shapes.opAt(asked);
    if (i < 0 && !io) {
      printError(err, fa.path + ":" + std::to_string(pos.line) +
                          (pos.column ? ":" + std::to_string(pos.column) : "") +
                          ": no Broadcastable op and no op with an inferable "
                          "shape at this position");
      return 2;
    }
    if (i >= 0)
      selected.push_back(&fa.ops[i]);
    if (io)
      inferred.push_back(io);
  } else {
    // Not the ops a migration inserted (its constants and reshapes): they
    // are nowhere in this file.
    auto inFile = [&](Position p) {
      bool exact = true;
      if (migrated)
        (void)migrated->map.toOld(p, &exact);
      return exact;
    };
    for (const OpReport &op : fa.ops)
      if (inFile(op.range.begin))
        selected.push_back(&op);
    for (const InferredOp *op : shapes.allOps())
      if (inFile(op->range.begin))
        inferred.push_back(op);
  }

  std::optional<Diagnostic> summary =
      migrated ? oldFormsSummary(*migrated) : std::nullopt;
  if (*fmt == "json") {
    nlohmann::ordered_json json = fileToJson(original);
    // The ops' and shapes' positions are the migrated text's.
    if (migrated)
      json["explainedAs"] = "migrated";
    json["ops"] = nlohmann::ordered_json::array();
    for (const OpReport *op : selected)
      json["ops"].push_back(opToJson(*op));
    json["shapes"] = nlohmann::ordered_json::array();
    for (const InferredOp *op : inferred)
      json["shapes"].push_back(inferredToJson(*op));
    json["skipped"] = nlohmann::ordered_json::array();
    for (const FunctionInference &f : shapes.functions)
      if (!f.skipped.empty())
        json["skipped"].push_back(
            {{"function", f.name}, {"reason", f.skipped}});
    out << json.dump(1) << "\n";
    return 0;
  }

  RenderStyle style =
      *fmt == "markdown" ? RenderStyle::Markdown : RenderStyle::Text;
  // Diagnostics first (like `check`), then one explanation per op.
  LineIndex lines(*text);
  if (!pos.valid())
    for (const Diagnostic &d : original.diagnostics)
      printDiagnosticText(out, original, *text, lines, d);
  if (summary)
    printDiagnosticText(out, original, *text, lines, *summary);
  if (migrated)
    out << fa.path << ": explained as migrated to MLIR 22 TOSA (lines are "
        << "this file's)\n";
  if (selected.empty() && !pos.valid())
    out << fa.path << ": no Broadcastable ops\n";
  for (const OpReport *op : selected)
    out << "\n"
        << fa.path << ":" << at(op->range.begin).line << ":"
        << at(op->range.begin).column << ": " << renderExplanation(*op, style);
  if (!pos.valid() && !shapes.functions.empty())
    out << "\nshape inference (tosa-infer-shapes):\n";
  for (const FunctionInference &f : shapes.functions)
    if (!f.skipped.empty() && !pos.valid())
      out << fa.path << ":" << at(f.scope.begin).line << ":"
          << at(f.scope.begin).column << ": @" << f.name
          << ": not inferred: " << f.skipped << "\n";
  for (const InferredOp *op : inferred)
    out << "\n"
        << fa.path << ":" << at(op->range.begin).line << ":"
        << at(op->range.begin).column << ": " << renderInferred(*op, style);
  return 0;
}

} // namespace tosa_lsp::cli
