//===- FixCommand.cpp - `fix`: quick fixes, migration, refinement ---------===//

#include "FixCommand.h"

#include "CommandSupport.h"

#include "Analysis.h"
#include "CodeActions.h"
#include "Input.h"
#include "Migrate.h"
#include "MigrateCheck.h"
#include "ShapeInference.h"

#include "llvm/ADT/STLExtras.h"

#include <nlohmann/json.hpp>

using namespace llvm;

namespace tosa_lsp::cli {

namespace {

/// What `fix` works on: the file, its analysis and the options.
struct FixInput {
  Analyzer &analyzer;
  const FileAnalysis &fa;
  const std::string &text;
  const Config &config;
  const std::string &format;
};

/// `fix --migrate FILE`: the file with every pre-MLIR-22 TOSA form
/// rewritten, unless that re-analyses worse (exit 1, nothing printed).
/// When the result still does not verify it is printed all the same, every
/// op left is named on `err` with its line and the reason, and the exit
/// code is 1: nothing is left silently.
int migrateFile(const FixInput &in, raw_ostream &out, raw_ostream &err) {
  MigrationOutcome m = migrateAndCheck(in.analyzer, in.fa, in.text, in.config);
  if (m.worse) {
    for (const MigrationNote &n : m.plan.manual)
      err << in.fa.path << ":" << n.nameRange.begin.line << ":"
          << n.nameRange.begin.column << ": warning: " << n.message << "\n";
    printError(err, "the migrated file does not re-analyse better than " +
                        in.fa.path +
                        " (a section stops parsing or errors are added); "
                        "not printed");
    return 1;
  }
  for (const MigrationNote &n : m.left)
    err << in.fa.path << ":" << n.nameRange.begin.line << ":"
        << n.nameRange.begin.column
        << ": error: " << (n.opName.empty() ? "" : n.opName + " not migrated: ")
        << n.message << "\n";
  if (!m.left.empty())
    err << in.fa.path << ": migrated " << m.plan.fixes.size() << " ops; "
        << m.left.size()
        << " left that do not verify with MLIR 22 (listed above)\n";
  if (in.format == "json") {
    nlohmann::ordered_json left = nlohmann::ordered_json::array();
    for (const MigrationNote &n : m.left)
      left.push_back({{"line", n.nameRange.begin.line},
                      {"column", n.nameRange.begin.column},
                      {"op", n.opName},
                      {"message", n.message}});
    out << nlohmann::ordered_json{{"text", m.text},
                                  {"migrated", m.plan.fixes.size()},
                                  {"verifies", m.verifies()},
                                  {"manual", left}}
               .dump(1)
        << "\n";
  } else {
    out << m.text;
  }
  return m.verifies() ? 0 : 1;
}

/// `fix --refine-all [--function=F] FILE`: the file with every result type
/// MLIR's shape inference refines written in (what the server's "Refine all
/// shapes" action applies), checked by re-analysis.
int refineAll(const FixInput &in, const std::string &function, raw_ostream &out,
              raw_ostream &err) {
  ShapeInferrer inferrer;
  ShapeInference shapes = inferrer.infer(in.text, in.fa);
  if (!function.empty()) {
    auto it = llvm::find_if(shapes.functions, [&](const FunctionInference &f) {
      return f.name == function;
    });
    if (it == shapes.functions.end()) {
      printError(err, "no function @" + function + " with inferable shapes");
      return 2;
    }
    if (!it->skipped.empty() || !it->refineProblem.empty()) {
      printError(err,
                 "@" + function + ": " +
                     (it->skipped.empty() ? it->refineProblem : it->skipped));
      return 2;
    }
  }
  for (const FunctionInference &f : shapes.functions)
    if (!f.refineProblem.empty() && function.empty())
      err << "tosa-lsp: note: @" << f.name
          << " is left as it is: " << f.refineProblem << "\n";
  std::vector<TextEditData> edits = refineAllEdits(shapes, function);
  if (!edits.empty() &&
      !refinedTextVerifies(in.analyzer, in.fa, in.text, in.config, edits)) {
    printError(err, "the refined file does not re-analyse cleanly; not "
                    "applied");
    return 2;
  }
  std::string fixed = applyEdits(in.text, edits);
  if (in.format == "json")
    out << nlohmann::ordered_json{{"text", fixed}, {"edits", edits.size()}}
               .dump(1)
        << "\n";
  else
    out << fixed;
  return 0;
}

/// `fix FILE`: lists the validated quick fixes; `--apply=N` prints the file
/// with fix N applied (what an editor gets through the server).
int quickFixes(const FixInput &in, bool candidates,
               std::optional<unsigned> apply, raw_ostream &out,
               raw_ostream &err) {
  // `--candidates` lists (and `--apply=N` indexes) the unvalidated
  // candidates, each marked with whether it passes validation, so the
  // numbers of a listing are always the ones `--apply` takes.
  std::vector<FixData> fixes =
      candidates ? candidateFixes(in.fa, in.text)
                 : validatedFixes(in.analyzer, in.fa, in.text, in.config);
  if (apply) {
    if (*apply >= fixes.size()) {
      printError(err, "no fix #" + std::to_string(*apply) + " (there are " +
                          std::to_string(fixes.size()) +
                          (candidates ? " candidates"
                                      : " validated fixes; --candidates "
                                        "lists unvalidated ones too") +
                          ")");
      return 2;
    }
    std::string fixed = applyEdits(in.text, fixes[*apply].edits);
    if (in.format == "json")
      out << nlohmann::ordered_json{{"text", fixed}}.dump(1) << "\n";
    else
      out << fixed;
    return 0;
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < fixes.size(); ++i) {
    const Diagnostic &d = in.fa.diagnostics[fixes[i].diagnostic];
    if (in.format == "json") {
      list.push_back({{"index", i},
                      {"file", in.fa.path},
                      {"line", d.range.begin.line},
                      {"column", d.range.begin.column},
                      {"title", fixes[i].title},
                      {"code", d.code}});
      continue;
    }
    out << i << ": " << in.fa.path << ":" << d.range.begin.line << ":"
        << d.range.begin.column << ": " << fixes[i].title << " [" << d.code
        << "]";
    if (candidates &&
        !validateFix(in.analyzer, in.fa, in.text, in.config, fixes[i]))
      out << " (rejected: the fixed file does not re-analyse better)";
    out << "\n";
  }
  if (in.format == "json")
    out << nlohmann::ordered_json{{"fixes", list}}.dump(1) << "\n";
  return 0;
}

} // namespace

int runFix(const FixOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<FunctionAndFormat> checked =
      functionAndFormatOrReport(opts.function, opts.format, err, rc);
  if (!checked)
    return rc;
  const std::string *function = &checked->function, *fmt = &checked->format;
  if (opts.migrate && opts.refineAll)
    return usageError(err, "fix: --migrate and --refine-all exclude each "
                           "other");
  std::optional<std::string> path = oneFile("fix", opts.files, err, rc);
  if (!path)
    return rc;
  auto input = readWithConfig(*path, opts.config, err);
  if (!input)
    return 2;
  const std::string &text = input->first;
  const Config &config = input->second;
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, displayName(*path), config);
  FixInput in{analyzer, fa, text, config, *fmt};
  if (opts.migrate)
    return migrateFile(in, out, err);
  if (opts.refineAll)
    return refineAll(in, *function, out, err);
  return quickFixes(in, opts.candidates, opts.apply, out, err);
}

} // namespace tosa_lsp::cli
