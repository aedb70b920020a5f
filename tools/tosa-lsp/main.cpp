//===- main.cpp - the tosa-lsp command-line tool --------------------------===//
//
// The commands (llvm::cl subcommands) and their options; `tosa-lsp --help`.
//
// Exit codes: 0 clean (explain: explained), 1 `check` found errors, 2
// unusable input or usage error.
//
//===----------------------------------------------------------------------===//

#include "Input.h"
#include "Output.h"

#include "Analysis.h"
#include "Choices.h"
#include "CodeActions.h"
#include "Compile.h"
#include "Config.h"
#include "CrashGuard.h"
#include "Errors.h"
#include "LSPServer.h"
#include "Lowering.h"
#include "Migrate.h"
#include "Render.h"
#include "Run.h"
#include "Runtime.h"
#include "ShapeInference.h"
#include "TaskThread.h"
#include "Timing.h"
#include "Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <iostream>

using namespace tosa_lsp;
using namespace llvm;

namespace {

constexpr const char *kUsage =
    R"(usage: tosa-lsp <command> [options]

commands:
  check [--format=text|json] [--show-info] [--lenient] [--infer-shapes]
        [--config=FILE] FILE...
      Parse and verify each file (split on `// -----`), report every parse,
      verifier and broadcast error in mlir-opt's format (or JSON);
      --infer-shapes adds the declared sizes MLIR's shape inference
      (tosa-infer-shapes, propagated through each function) contradicts.
      FILE may be `-` for standard input. Exit 1 if any error.
  explain [--format=text|markdown|json] [--config=FILE] FILE[:LINE[:COL]]
      Per-dimension inferred-vs-declared table for each Broadcastable op in
      FILE, then declared vs inferred types of every op MLIR's shape
      inference (tosa-infer-shapes) covers; or only the op at LINE (and COL).
  lower [--function=F] [--stage=linalg|loops|llvm]
        [--mode=fast|upstream|safe|versioned] [--strided] [--annotate]
        [--format=text|json] FILE
      The lowered IR (MLIR's own passes) of FILE or of function F;
      --annotate adds `// from tosa.add @ L:C` to lines; JSON adds mappings.
      --mode=upstream is exactly upstream's pipeline; the default, fast,
      fuses element-wise ops and uses contiguous memrefs at boundaries.
  compile [--function=F] -o OUT [--emit=obj|shared|llvm-ir|asm|mlir-llvm]
          [--mode=...] [--strided] [--cpu=CPU] [--header] [-O0..3]
          [--streaming-stores=auto|off|SIZE]
          [--format=text|json] [--quiet] [--force | --new-name] FILE
      Native code: TOSA -> linalg -> bufferized loops -> LLVM -> x86-64
      for the host CPU (--cpu=x86-64: any x86-64 machine). Loop nests
      that store more than the L2 cache (or SIZE) use non-temporal stores.
      --header writes OUT with .h: the _mlir_ciface_* entry points (outside
      upstream mode contiguous inputs, unless --strided, and a twin F_into
      writing into a caller-provided result).
      An existing OUT (or header) is an error; --force replaces it,
      --new-name writes OUT-1, OUT-2, ... instead. FILE is never replaced.
  run --function=F (--inputs=JSON | --random=SEED [--shape=2x3,...])
      [--mode=...] [-O0..3] [--max-bytes=SIZE] [--format=json] FILE
      JIT-compile F (MLIR ExecutionEngine), call it, print inputs and
      results as JSON; dynamic dims come from the inputs (or --shape).
      NaN and infinities are the strings "nan", "inf" and "-inf", in the
      output and in --inputs. The arguments and the results of static
      shape may take at most SIZE bytes in all (default 4G; K, M, G).
  fix [--candidates] [--apply=N] [--migrate] [--format=text|json] [--config=FILE] FILE
      List the validated quick fixes (those the server offers), or print
      FILE with fix N applied.
  fix --refine-all [--function=F] [--format=text|json] FILE
      Print FILE with every `?` MLIR's shape inference (tosa-infer-shapes)
      can refine set to its size, in every function or only F; tensor.cast
      back to the declared type where the pass inserts one.
  serve [--lit-test] [--sync] [--debounce=MS] [--verbose]
      Language server on stdin/stdout (also: no command, or --stdio).
      --lit-test: `// -----` delimited input, pretty output, synchronous.
  COMMAND --help   the options of COMMAND
  help, --help     this text
  --version        version, git revision, the MLIR it was built against and
                   the MLIR runtime library run/compile use
)";

//===----------------------------------------------------------------------===//
// Options: one set, each declared once and attached to the commands that
// read it (llvm::cl subcommands). Numbers are parsed and range-checked by
// llvm::cl; names (formats, stages, modes, emit kinds) against one table.
//===----------------------------------------------------------------------===//

cl::OptionCategory category("tosa-lsp options");

/// cl's own number parser prints its complaint straight to stderr in a
/// wording of its own; this one keeps it for the one error format.
std::string optionError;
struct NumberParser : cl::parser<unsigned> {
  using cl::parser<unsigned>::parser;
  bool parse(cl::Option &o, StringRef name, StringRef arg, unsigned &value) {
    if (!arg.getAsInteger(10, value))
      return false;
    optionError = "invalid value '" + arg.str() + "' for " +
                  (name.size() == 1 ? "-" : "--") + name.str() +
                  " (expected an integer from 0 to 4294967295)";
    return true;
  }
};
using NumberOption = cl::opt<unsigned, false, NumberParser>;

cl::SubCommand checkCmd("check", "Parse and verify each FILE; report every "
                                 "parse, verifier and broadcast error");
cl::SubCommand explainCmd("explain", "Per-dimension broadcast explanation of "
                                     "FILE[:LINE[:COL]]");
cl::SubCommand fixCmd("fix", "List the validated quick fixes of FILE, or "
                             "print FILE with fix N applied");
cl::SubCommand lowerCmd("lower", "The lowered IR of FILE or one function");
cl::SubCommand compileCmd("compile", "Native code from FILE");
cl::SubCommand runCmd("run", "JIT-compile and call one function of FILE");
cl::SubCommand serveCmd("serve", "Language server on stdin/stdout");

cl::list<std::string> files(cl::Positional, cl::desc("FILE..."),
                            cl::sub(checkCmd), cl::sub(explainCmd),
                            cl::sub(fixCmd), cl::sub(lowerCmd),
                            cl::sub(compileCmd), cl::sub(runCmd),
                            cl::cat(category));
cl::opt<std::string> format("format",
                            cl::desc("Output format (text, json; explain also "
                                     "markdown; run only json)"),
                            cl::value_desc("format"), cl::sub(checkCmd),
                            cl::sub(explainCmd), cl::sub(fixCmd),
                            cl::sub(lowerCmd), cl::sub(compileCmd),
                            cl::sub(runCmd), cl::cat(category));
cl::opt<std::string> configPath("config",
                                cl::desc("The .tosa-lsp.json to use instead "
                                         "of the one found next to FILE"),
                                cl::value_desc("file"), cl::sub(checkCmd),
                                cl::sub(explainCmd), cl::sub(fixCmd),
                                cl::cat(category));
cl::opt<bool> lenient("lenient",
                      cl::desc("Parse the custom syntax of ops of dialects "
                               "MLIR 22 lacks (util.*, check.*) as "
                               "unregistered ops (lenientDialects of "
                               ".tosa-lsp.json says which)"),
                      cl::sub(checkCmd), cl::sub(explainCmd),
                      cl::cat(category));
cl::opt<bool> showInfo("show-info",
                       cl::desc("Also print informational "
                                "findings"),
                       cl::sub(checkCmd), cl::cat(category));

cl::opt<bool> inferShapes(
    "infer-shapes",
    cl::desc("Also run MLIR's shape inference (tosa-infer-shapes) on every "
             "function and report declared sizes it contradicts"),
    cl::sub(checkCmd), cl::cat(category));

cl::opt<bool> candidates("candidates",
                         cl::desc("All candidate fixes, not only validated"),
                         cl::sub(fixCmd), cl::cat(category));
NumberOption applyFix("apply", cl::desc("Print FILE with fix N applied"),
                      cl::value_desc("N"), cl::sub(fixCmd), cl::cat(category));
cl::opt<bool> migrate("migrate",
                      cl::desc("Print FILE migrated to MLIR 22 TOSA (every "
                               "pre-MLIR-22 form rewritten)"),
                      cl::sub(fixCmd), cl::cat(category));

cl::opt<bool> refineAll(
    "refine-all",
    cl::desc("Print FILE with every refinable `?` set to the size MLIR's "
             "shape inference (tosa-infer-shapes) gives it"),
    cl::sub(fixCmd), cl::cat(category));

cl::opt<std::string> function("function",
                              cl::desc("Only this function (a leading @ is "
                                       "allowed)"),
                              cl::value_desc("name"), cl::sub(fixCmd),
                              cl::sub(lowerCmd), cl::sub(compileCmd),
                              cl::sub(runCmd), cl::cat(category));
cl::opt<std::string> stage("stage", cl::desc("linalg, loops or llvm"),
                           cl::init("linalg"), cl::sub(lowerCmd),
                           cl::cat(category));
cl::opt<std::string> mode("mode",
                          cl::desc("fast (default), upstream, safe or "
                                   "versioned"),
                          cl::init("fast"), cl::sub(lowerCmd),
                          cl::sub(compileCmd), cl::sub(runCmd),
                          cl::cat(category));
cl::opt<bool> strided("strided",
                      cl::desc("Entry points accept any strides (outside "
                               "upstream mode; slower)"),
                      cl::sub(lowerCmd), cl::sub(compileCmd),
                      cl::cat(category));
cl::opt<std::string> cpu("cpu",
                         cl::desc("LLVM CPU name (native: this machine; "
                                  "x86-64: any x86-64)"),
                         cl::init("native"), cl::sub(compileCmd),
                         cl::cat(category));
cl::opt<std::string> streamingStores(
    "streaming-stores",
    cl::desc("auto (default: loop nests storing more than this machine's L2 "
             "cache), off, or a size such as 4M: use non-temporal stores"),
    cl::init("auto"), cl::sub(compileCmd), cl::cat(category));
cl::opt<bool> annotate("annotate", cl::desc("Mark lines with their source op"),
                       cl::sub(lowerCmd), cl::cat(category));
NumberOption optLevel("O", cl::desc("Optimisation level 0-3"), cl::Prefix,
                      cl::init(2), cl::sub(compileCmd), cl::sub(runCmd),
                      cl::cat(category));

cl::opt<std::string> output("o", cl::desc("Output file"),
                            cl::value_desc("file"), cl::sub(compileCmd),
                            cl::cat(category));
cl::opt<std::string> emit("emit",
                          cl::desc("shared, obj, asm, llvm-ir or mlir-llvm"),
                          cl::init("obj"), cl::sub(compileCmd),
                          cl::cat(category));
cl::opt<bool> header("header", cl::desc("Also write the C header (OUT.h)"),
                     cl::sub(compileCmd), cl::cat(category));
cl::opt<bool> force("force", cl::desc("Replace existing outputs"),
                    cl::sub(compileCmd), cl::cat(category));
cl::opt<bool> newName("new-name",
                      cl::desc("Write OUT-1, OUT-2, ... instead of replacing"),
                      cl::sub(compileCmd), cl::cat(category));
cl::opt<bool> quiet("quiet", cl::desc("No progress on stderr"),
                    cl::sub(compileCmd), cl::cat(category));
// For the server's compile jobs: a header unless a name is not a C
// identifier (a compile job always asks for one).
cl::opt<bool> headerIfPossible("header-if-possible", cl::Hidden,
                               cl::sub(compileCmd), cl::cat(category));
// For the server's compile jobs, which compile a temp copy of a buffer.
cl::list<std::string> protect("protect", cl::Hidden, cl::sub(compileCmd),
                              cl::cat(category));
cl::opt<std::string> shownName("display-name", cl::Hidden, cl::sub(compileCmd),
                               cl::cat(category));

cl::opt<std::string> inputs("inputs",
                            cl::desc("Arguments as a JSON array (NaN and "
                                     "infinities: \"nan\", \"inf\", "
                                     "\"-inf\")"),
                            cl::value_desc("json"), cl::sub(runCmd),
                            cl::cat(category));
NumberOption randomSeed("random", cl::desc("Random arguments from SEED"),
                        cl::value_desc("seed"), cl::sub(runCmd),
                        cl::cat(category));
cl::opt<std::string> maxBytes(
    "max-bytes",
    cl::desc("Limit on the arguments' and results' buffers (default 4G)"),
    cl::value_desc("size"), cl::sub(runCmd), cl::cat(category));
cl::list<std::string> shapes("shape", cl::desc("Shapes of dynamic arguments"),
                             cl::value_desc("2x3,..."), cl::CommaSeparated,
                             cl::sub(runCmd), cl::cat(category));

cl::opt<bool> litTest("lit-test",
                      cl::desc("Delimited input, pretty output, "
                               "synchronous (tests)"),
                      cl::sub(serveCmd), cl::cat(category));
cl::opt<bool> syncMode("sync", cl::desc("Analyse before reading on"),
                       cl::sub(serveCmd), cl::cat(category));
NumberOption debounceMs("debounce",
                        cl::desc("Quiet period after an "
                                 "edit (ms)"),
                        cl::init(50), cl::sub(serveCmd), cl::cat(category));
cl::opt<bool> verbose("verbose", cl::desc("Log to stderr"), cl::sub(serveCmd),
                      cl::cat(category));
cl::opt<bool> stdio("stdio",
                    cl::desc("What editors pass; stdio is the only "
                             "transport"),
                    cl::sub(serveCmd), cl::cat(category));

/// The one wording of every CLI error: `tosa-lsp: error: MESSAGE`.
std::string errorLine(const std::string &msg) {
  return "tosa-lsp: error: " + msg;
}

void printError(const std::string &msg) { std::cerr << errorLine(msg) << "\n"; }

/// The option a library error is about (Errors.h), as a hint to add.
std::string optionHint(const ErrorInfoBase &e) {
  std::optional<ErrorTopic> topic = topicOf(e);
  if (!topic)
    return "";
  switch (*topic) {
  case ErrorTopic::Function:
    return " (--function)";
  case ErrorTopic::Inputs:
    return " (--inputs)";
  case ErrorTopic::Shapes:
    return " (--shape)";
  case ErrorTopic::Output:
    return " (-o)";
  case ErrorTopic::OutputExists:
    return " (--force replaces it)";
  }
  return "";
}

/// The lines a library error prints as: diagnostics about the input in
/// mlir-opt's form `file:line:col: error: ...`, anything else in the one
/// wording, with the option it is about.
std::vector<std::string> errorLines(Error e) {
  std::vector<std::string> lines;
  handleAllErrors(
      std::move(e),
      [&](const SourceErrors &s) {
        for (const SourceDiagnostic &d : s.diagnostics())
          lines.push_back(d.str());
      },
      [&](const ErrorInfoBase &other) {
        lines.push_back(errorLine(other.message() + optionHint(other)));
      });
  return lines;
}

void printError(Error e) {
  for (const std::string &line : errorLines(std::move(e)))
    std::cerr << line << "\n";
}

int usageError(const std::string &msg) {
  printError(msg);
  std::cerr << "run 'tosa-lsp --help' for usage\n";
  return 2;
}

/// Checks `--format` against what the command prints; "" is the first.
std::optional<std::string>
formatOrReport(const std::vector<std::string> &allowed, int &rc) {
  if (format.empty())
    return allowed.front();
  if (std::find(allowed.begin(), allowed.end(), format) != allowed.end())
    return format;
  rc = usageError(unknownChoiceMessage("format", format, allowed));
  return std::nullopt;
}

/// The file's text and configuration, or std::nullopt after printing why
/// they are unusable.
std::optional<std::pair<std::string, Config>>
readWithConfig(const std::string &path) {
  Expected<std::string> text = readInput(path);
  if (!text) {
    printError(text.takeError());
    return std::nullopt;
  }
  Expected<Config> config = loadConfig(configPath, path);
  if (!config) {
    printError(config.takeError());
    return std::nullopt;
  }
  return std::make_pair(std::move(*text), std::move(*config));
}

int runCheck() {
  int rc = 0;
  std::optional<std::string> fmt = formatOrReport({"text", "json"}, rc);
  if (!fmt)
    return rc;
  if (files.empty())
    return usageError("check: no input files");

  Analyzer analyzer;
  // The last file's parse is left to the exit below, like the rest.
  analyzer.setDeferIRDestruction(true);
  // Diagnostics only: no hover or navigation index, unless shape inference
  // runs (it finds the functions through the index's symbols).
  analyzer.setCollectIndex(inferShapes);
  nlohmann::ordered_json out;
  out["files"] = nlohmann::ordered_json::array();
  bool anyError = false, inputError = false;
  std::unique_ptr<FileAnalysis> kept; // the last file's: see the end
  for (const std::string &path : files) {
    std::optional<PhaseTimer> reading(std::in_place, "read and validate input");
    auto input = readWithConfig(path);
    reading.reset();
    if (!input) {
      inputError = true;
      continue;
    }
    const std::string &text = input->first;
    Config config = input->second;
    // mlir-opt-22's behaviour unless asked (the server's default is on).
    if (!lenient)
      config.lenient.enabled = false;
    // --show-info asks for every informational finding, including the
    // runtime checks that are off by default.
    if (showInfo)
      config.info.refinable = config.info.runtimeChecks =
          config.info.dynamicToStatic = true;
    kept = std::make_unique<FileAnalysis>(
        analyzer.analyze(text, displayName(path), config));
    FileAnalysis &fa = *kept;
    if (inferShapes) {
      ShapeInferrer inferrer;
      for (Diagnostic &d : contradictionDiagnostics(inferrer.infer(text, fa)))
        fa.diagnostics.push_back(std::move(d));
    }
    anyError |= fa.hasErrors();
    if (*fmt == "json") {
      out["files"].push_back(fileToJson(fa));
      continue;
    }
    for (const Diagnostic &d : fa.diagnostics)
      if (d.severity != Severity::Info || showInfo)
        printDiagnosticText(std::cout, fa, text, d);
  }
  if (*fmt == "json")
    std::cout << out.dump(1) << "\n";
  std::cout.flush();
  llvm::outs().flush();
  llvm::errs().flush();
  // Like clang's -disable-free: the OS takes back the last analysis and
  // MLIR's context at once instead of freeing their 10^6 objects one by
  // one.
  llvm::sys::Process::Exit(inputError ? 2
                           : anyError ? 1
                                      : 0,
                           /*NoCleanup=*/true);
}

/// Splits "file.mlir:12:8" into path and position, preferring an existing
/// file of the full name (paths may contain ':').
void splitPosition(const std::string &arg, std::string &path, Position &pos) {
  path = arg;
  pos = {};
  auto isNum = [](const std::string &s) {
    return !s.empty() && s.size() < 10 &&
           s.find_first_not_of("0123456789") == std::string::npos;
  };
  size_t c1 = arg.rfind(':');
  if (c1 == std::string::npos || !isNum(arg.substr(c1 + 1)))
    return;
  std::string rest = arg.substr(0, c1);
  unsigned last = std::stoul(arg.substr(c1 + 1));
  size_t c2 = rest.rfind(':');
  if (c2 != std::string::npos && isNum(rest.substr(c2 + 1))) {
    path = rest.substr(0, c2);
    pos.line = std::stoul(rest.substr(c2 + 1));
    pos.column = last;
  } else {
    path = rest;
    pos.line = last;
  }
}

int runExplain() {
  int rc = 0;
  std::optional<std::string> fmt =
      formatOrReport({"text", "markdown", "json"}, rc);
  if (!fmt)
    return rc;
  if (files.size() != 1)
    return usageError("explain: expected exactly one FILE[:LINE[:COL]]");

  std::string path = files[0];
  Position pos;
  Expected<std::string> text = readInput(path);
  if (!text) {
    std::string p;
    splitPosition(files[0], p, pos);
    if (pos.valid()) {
      consumeError(text.takeError());
      path = p;
      text = readInput(path);
    }
  }
  if (!text) {
    printError(text.takeError());
    return 2;
  }
  Expected<Config> config = loadConfig(configPath, path);
  if (!config) {
    printError(config.takeError());
    return 2;
  }
  if (!lenient)
    config->lenient.enabled = false;
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(*text, displayName(path), *config);

  std::vector<const OpReport *> selected;
  // MLIR's shape inference (tosa-infer-shapes) over the functions asked
  // about: every op it can infer, not only the Broadcastable ones.
  ShapeInferrer inferrer;
  ShapeInference shapes = pos.valid()
                              ? inferrer.infer(*text, fa, pos.line, pos.line)
                              : inferrer.infer(*text, fa);
  std::vector<const InferredOp *> inferred;
  if (pos.valid()) {
    int i = fa.findOp(pos);
    const InferredOp *io = shapes.opAt(pos);
    if (i < 0 && !io) {
      printError(fa.path + ":" + std::to_string(pos.line) +
                 (pos.column ? ":" + std::to_string(pos.column) : "") +
                 ": no Broadcastable op and no op with an inferable shape "
                 "at this position");
      return 2;
    }
    if (i >= 0)
      selected.push_back(&fa.ops[i]);
    if (io)
      inferred.push_back(io);
  } else {
    for (const OpReport &op : fa.ops)
      selected.push_back(&op);
    inferred = shapes.allOps();
  }

  // `explain` is a report: errors in the input are part of it, so only
  // unusable input makes it fail.
  if (*fmt == "json") {
    nlohmann::ordered_json out = fileToJson(fa);
    out["ops"] = nlohmann::ordered_json::array();
    for (const OpReport *op : selected)
      out["ops"].push_back(opToJson(*op));
    out["shapes"] = nlohmann::ordered_json::array();
    for (const InferredOp *op : inferred)
      out["shapes"].push_back(inferredToJson(*op));
    out["skipped"] = nlohmann::ordered_json::array();
    for (const FunctionInference &f : shapes.functions)
      if (!f.skipped.empty())
        out["skipped"].push_back({{"function", f.name}, {"reason", f.skipped}});
    std::cout << out.dump(1) << "\n";
    return 0;
  }

  RenderStyle style =
      *fmt == "markdown" ? RenderStyle::Markdown : RenderStyle::Text;
  // Diagnostics first (like `check`), then one explanation per op.
  if (!pos.valid())
    for (const Diagnostic &d : fa.diagnostics)
      printDiagnosticText(std::cout, fa, *text, d);
  if (selected.empty() && !pos.valid())
    std::cout << fa.path << ": no Broadcastable ops\n";
  for (const OpReport *op : selected) {
    std::cout << "\n"
              << fa.path << ":" << op->range.begin.line << ":"
              << op->range.begin.column << ": "
              << renderExplanation(*op, style);
  }
  if (!pos.valid() && !shapes.functions.empty())
    std::cout << "\nshape inference (tosa-infer-shapes):\n";
  for (const FunctionInference &f : shapes.functions)
    if (!f.skipped.empty() && !pos.valid())
      std::cout << fa.path << ":" << f.scope.begin.line << ":"
                << f.scope.begin.column << ": @" << f.name
                << ": not inferred: " << f.skipped << "\n";
  for (const InferredOp *op : inferred) {
    std::cout << "\n"
              << fa.path << ":" << op->range.begin.line << ":"
              << op->range.begin.column << ": " << renderInferred(*op, style);
  }
  return 0;
}

/// The file's text, or std::nullopt after printing why it is unusable.
std::optional<std::string> readOrReport(const std::string &path) {
  Expected<std::string> text = readInput(path);
  if (!text) {
    printError(text.takeError());
    return std::nullopt;
  }
  return std::move(*text);
}

/// Exactly one FILE, or a usage error.
std::optional<std::string> oneFile(const char *command, int &rc) {
  if (files.size() == 1)
    return files[0];
  rc = usageError(std::string(command) +
                  (files.empty() ? ": expected a FILE"
                                 : ": expected one FILE, got " +
                                       std::to_string(files.size())));
  return std::nullopt;
}

/// `fix --migrate FILE`: the file with every pre-MLIR-22 TOSA form
/// rewritten, when that re-analyses no worse; ops with no mechanical
/// rewrite are named on stderr.
int runMigrate(Analyzer &analyzer, const FileAnalysis &fa,
               const std::string &text, const Config &config,
               const std::string &fmt) {
  MigrationPlan plan = planMigration(text);
  FixData all;
  all.kind = FixData::MigrateFile;
  for (const MigrationFix &f : plan.fixes)
    all.edits.insert(all.edits.end(), f.edits.begin(), f.edits.end());
  for (const MigrationNote &n : plan.manual)
    std::cerr << fa.path << ":" << n.nameRange.begin.line << ":"
              << n.nameRange.begin.column << ": warning: " << n.message << "\n";
  if (!plan.fixes.empty() && !validateFix(analyzer, fa, text, config, all)) {
    printError("the migrated file does not re-analyse better than " + fa.path +
               " (a section stops parsing or errors are added); "
               "not printed");
    return 1;
  }
  std::string migrated = applyEdits(text, all.edits);
  if (fmt == "json") {
    nlohmann::ordered_json manual = nlohmann::ordered_json::array();
    for (const MigrationNote &n : plan.manual)
      manual.push_back({{"line", n.nameRange.begin.line},
                        {"column", n.nameRange.begin.column},
                        {"op", n.opName},
                        {"message", n.message}});
    std::cout << nlohmann::ordered_json{{"text", migrated},
                                        {"migrated", plan.fixes.size()},
                                        {"manual", manual}}
                     .dump(1)
              << "\n";
    return 0;
  }
  std::cout << migrated;
  return 0;
}

/// `fix --refine-all [--function=F] FILE`: the file with every result type
/// MLIR's shape inference refines written in (what the server's "Refine all
/// shapes" action applies), checked by re-analysis.
int runRefineAll(Analyzer &analyzer, const FileAnalysis &fa,
                 const std::string &text, const Config &config,
                 const std::string &fmt) {
  ShapeInferrer inferrer;
  ShapeInference shapes = inferrer.infer(text, fa);
  if (!function.empty()) {
    auto it = llvm::find_if(shapes.functions, [](const FunctionInference &f) {
      return f.name == function;
    });
    if (it == shapes.functions.end()) {
      printError("no function @" + function + " with inferable shapes");
      return 2;
    }
    if (!it->skipped.empty() || !it->refineProblem.empty()) {
      printError("@" + function + ": " +
                 (it->skipped.empty() ? it->refineProblem : it->skipped));
      return 2;
    }
  }
  for (const FunctionInference &f : shapes.functions)
    if (!f.refineProblem.empty() && function.empty())
      std::cerr << "tosa-lsp: note: @" << f.name
                << " is left as it is: " << f.refineProblem << "\n";
  std::vector<TextEditData> edits = refineAllEdits(shapes, function);
  if (!edits.empty() &&
      !refinedTextVerifies(analyzer, fa, text, config, edits)) {
    printError("the refined file does not re-analyse cleanly; not applied");
    return 2;
  }
  std::string fixed = applyEdits(text, edits);
  if (fmt == "json")
    std::cout << nlohmann::ordered_json{{"text", fixed},
                                        {"edits", edits.size()}}
                     .dump(1)
              << "\n";
  else
    std::cout << fixed;
  return 0;
}

/// `fix FILE`: lists the validated quick fixes; `--apply=N` prints the file
/// with fix N applied (what an editor gets through the server).
int runFix() {
  int rc = 0;
  std::optional<std::string> fmt = formatOrReport({"text", "json"}, rc);
  if (!fmt)
    return rc;
  std::optional<std::string> path = oneFile("fix", rc);
  if (!path)
    return rc;
  auto input = readWithConfig(*path);
  if (!input)
    return 2;
  const std::string &text = input->first;
  const Config &config = input->second;
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, displayName(*path), config);
  if (migrate && refineAll)
    return usageError("fix: --migrate and --refine-all exclude each other");
  if (migrate)
    return runMigrate(analyzer, fa, text, config, *fmt);
  if (refineAll)
    return runRefineAll(analyzer, fa, text, config, *fmt);
  // `--candidates` lists (and `--apply=N` indexes) the unvalidated
  // candidates, each marked with whether it passes validation, so the
  // numbers of a listing are always the ones `--apply` takes.
  std::vector<FixData> fixes = candidates
                                   ? candidateFixes(fa, text)
                                   : validatedFixes(analyzer, fa, text, config);
  if (applyFix.getNumOccurrences()) {
    if (applyFix >= fixes.size()) {
      printError("no fix #" + std::to_string(applyFix) + " (there are " +
                 std::to_string(fixes.size()) +
                 (candidates ? " candidates"
                             : " validated fixes; --candidates lists "
                               "unvalidated ones too") +
                 ")");
      return 2;
    }
    std::string fixed = applyEdits(text, fixes[applyFix].edits);
    if (*fmt == "json")
      std::cout << nlohmann::ordered_json{{"text", fixed}}.dump(1) << "\n";
    else
      std::cout << fixed;
    return 0;
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < fixes.size(); ++i) {
    const Diagnostic &d = fa.diagnostics[fixes[i].diagnostic];
    if (*fmt == "json") {
      out.push_back({{"index", i},
                     {"file", fa.path},
                     {"line", d.range.begin.line},
                     {"column", d.range.begin.column},
                     {"title", fixes[i].title},
                     {"code", d.code}});
      continue;
    }
    std::cout << i << ": " << fa.path << ":" << d.range.begin.line << ":"
              << d.range.begin.column << ": " << fixes[i].title << " ["
              << d.code << "]";
    if (candidates && !validateFix(analyzer, fa, text, config, fixes[i]))
      std::cout << " (rejected: the fixed file does not re-analyse better)";
    std::cout << "\n";
  }
  if (*fmt == "json")
    std::cout << nlohmann::ordered_json{{"fixes", out}}.dump(1) << "\n";
  return 0;
}

/// A positive size: bytes, or with a K, M or G suffix (powers of 1024).
std::optional<uint64_t> parseSize(StringRef size) {
  uint64_t unit = size.consume_back("K")   ? 1ull << 10
                  : size.consume_back("M") ? 1ull << 20
                  : size.consume_back("G") ? 1ull << 30
                                           : 1;
  uint64_t n;
  if (size.getAsInteger(10, n) || n == 0 || n > (UINT64_MAX >> 30))
    return std::nullopt;
  return n * unit;
}

/// Parses --mode (and --stage) against the one table.
bool parseModeOrReport(LowerMode &out, int &rc) {
  std::optional<LowerMode> m = parseMode(mode);
  if (!m) {
    rc = usageError(unknownChoiceMessage("mode", mode, choices().modes));
    return false;
  }
  out = *m;
  return true;
}

bool checkOptLevel(int &rc) {
  if (optLevel <= 3)
    return true;
  rc = usageError("-O" + std::to_string(optLevel) +
                  ": the optimisation level is 0 to 3");
  return false;
}

/// `lower FILE`: the lowered IR of the file or one function.
int runLower() {
  int rc = 0;
  std::optional<std::string> fmt = formatOrReport({"text", "json"}, rc);
  if (!fmt)
    return rc;
  LowerOptions opts;
  opts.function = function;
  opts.annotate = annotate;
  opts.strided = strided;
  std::optional<LowerStage> st = parseStage(stage);
  if (!st)
    return usageError(unknownChoiceMessage("stage", stage, choices().stages));
  opts.stage = *st;
  if (!parseModeOrReport(opts.mode, rc))
    return rc;
  std::optional<std::string> path = oneFile("lower", rc);
  if (!path)
    return rc;
  std::optional<std::string> text = readOrReport(*path);
  if (!text)
    return 2;
  Expected<LowerResult> lowered = lower(*text, displayName(*path), opts);
  if (!lowered) {
    printError(lowered.takeError());
    return 1;
  }
  const LowerResult &r = *lowered;
  if (*fmt == "text") {
    std::cout << r.text;
    return 0;
  }
  nlohmann::ordered_json out;
  out["pipeline"] = r.pipeline;
  out["text"] = r.text;
  out["mappings"] = nlohmann::ordered_json::array();
  for (const PreviewMapping &m : r.mappings)
    out["mappings"].push_back({{"previewLine", m.previewLine},
                               {"previewColumn", m.previewColumn},
                               {"sourceLine", m.sourceLine},
                               {"sourceColumn", m.sourceColumn},
                               {"sourceOp", m.sourceOp}});
  std::cout << out.dump(1) << "\n";
  return 0;
}

/// `compile FILE -o OUT`: native code through MLIR and LLVM.
int runCompile() {
  int rc = 0;
  std::optional<std::string> fmt = formatOrReport({"text", "json"}, rc);
  if (!fmt)
    return rc;
  CompileOptions opts;
  opts.function = function;
  opts.output = output;
  std::optional<EmitKind> e = parseEmit(emit);
  if (!e)
    return usageError(unknownChoiceMessage("emit kind", emit, choices().emits));
  opts.emit = *e;
  if (!parseModeOrReport(opts.mode, rc) || !checkOptLevel(rc))
    return rc;
  opts.optLevel = optLevel;
  opts.strided = strided;
  opts.cpu = cpu;
  opts.header = header || headerIfPossible;
  opts.headerIfPossible = headerIfPossible;
  if (streamingStores == "off") {
    opts.streamThreshold = UINT64_MAX;
  } else if (streamingStores != "auto") {
    std::optional<uint64_t> size = parseSize(streamingStores);
    if (!size)
      return usageError("compile: --streaming-stores takes auto, off or a "
                        "positive size (4096, 512K, 4M, 1G), not '" +
                        streamingStores + "'");
    opts.streamThreshold = *size;
  }
  if (force && newName)
    return usageError("compile: --force and --new-name exclude each other");
  if (force)
    opts.onExisting = OnExisting::Replace;
  if (newName)
    opts.onExisting = OnExisting::NewName;
  for (const std::string &p : protect)
    opts.protectedPaths.push_back(p);
  std::optional<std::string> path = oneFile("compile", rc);
  if (!path)
    return rc;
  if (opts.output.empty())
    return usageError("compile: expected -o OUTPUT");
  std::optional<std::string> text = readOrReport(*path);
  if (!text)
    return 2;
  if (*path != "-")
    opts.protectedPaths.push_back(*path);
  std::string name = shownName.empty() ? displayName(*path) : shownName;
  std::string log; // the steps, also when compile fails
  std::optional<Expected<CompileResult>> compiled;
  if (std::optional<std::string> crash = runContained([&] {
        compiled.emplace(
            compile(*text, name, opts, [&](const std::string &stepText) {
              log += stepText + "\n";
              if (!quiet)
                std::cerr << "tosa-lsp: " << stepText << "\n";
            }));
      }))
    compiled.emplace(
        sourceError(name, 0, 0,
                    "MLIR/LLVM crashed while compiling (" + *crash +
                        "), a bug in the upstream pipeline on this input"));
  Expected<CompileResult> &r = *compiled;
  bool ok = static_cast<bool>(r);
  // The JSON's "errors" are the lines printed (the server shows them).
  std::vector<std::string> errors;
  if (!ok)
    errors = errorLines(r.takeError());
  for (const std::string &err : errors)
    std::cerr << err << "\n";
  if (*fmt == "json") {
    nlohmann::ordered_json out;
    out["ok"] = ok;
    out["output"] = ok ? r->output : opts.output;
    out["header"] = ok ? r->headerPath : "";
    out["symbols"] = ok ? r->symbols : std::vector<std::string>();
    out["bytes"] = ok ? r->bytes : 0;
    out["log"] = log;
    out["errors"] = errors;
    std::cout << out.dump(1) << "\n";
  }
  return ok ? 0 : 1;
}

/// `run FILE --function F`: JIT and print the results as JSON.
int runRun() {
  int rc = 0;
  if (!formatOrReport({"json"}, rc))
    return rc;
  RunOptions opts;
  opts.function = function;
  bool haveInputs = inputs.getNumOccurrences() > 0;
  bool haveSeed = randomSeed.getNumOccurrences() > 0;
  opts.inputs = inputs;
  opts.seed = randomSeed;
  for (const std::string &s : shapes)
    opts.shapes.push_back(s);
  if (!parseModeOrReport(opts.mode, rc) || !checkOptLevel(rc))
    return rc;
  opts.optLevel = optLevel;
  if (maxBytes.getNumOccurrences()) {
    std::optional<uint64_t> size = parseSize(maxBytes);
    if (!size)
      return usageError("run: --max-bytes takes a positive size (4096, "
                        "512K, 4M, 1G), not '" +
                        maxBytes + "'");
    opts.maxBytes = *size;
  }
  if (files.size() != 1 || opts.function.empty())
    return usageError("run: expected FILE and --function F");
  if (haveInputs == haveSeed)
    return usageError("run: give either --inputs JSON or --random SEED");
  std::string path = files[0];
  std::optional<std::string> text = readOrReport(path);
  if (!text)
    return 2;
  std::optional<Expected<RunResult>> ran;
  if (std::optional<std::string> crash = runContained(
          [&] { ran.emplace(runFunction(*text, displayName(path), opts)); }))
    ran.emplace(
        sourceError(displayName(path), 0, 0,
                    "MLIR/LLVM crashed while running (" + *crash +
                        "), a bug in the upstream pipeline on this input" +
                        (text->find("tosa.gather") != std::string::npos ||
                                 text->find("tosa.scatter") != std::string::npos
                             ? ", or an index input out of range (tosa.gather "
                               "and tosa.scatter indices must be in [0, K); "
                               "nothing checks them)"
                             : "")));
  if (!*ran) {
    printError(ran->takeError());
    return 1;
  }
  std::cout << (*ran)->json << "\n";
  return 0;
}

int runServe() {
  ServerOptions options;
  options.litTest = litTest;
  options.sync = syncMode;
  options.verbose = verbose;
  options.debounceMs = debounceMs;
  return runServer(stdin, options);
}

/// llvm::cl's messages ("tosa-lsp check: Unknown command line argument
/// '--x'.  Try: 'tosa-lsp check --help'") in the one wording.
int reportParseErrors(const std::string &messages) {
  if (!optionError.empty())
    return usageError(optionError);
  StringRef first = StringRef(messages).split('\n').first;
  // Drop the program (and command) name cl puts first.
  size_t colon = first.find(": ");
  if (colon != StringRef::npos && first.starts_with("tosa-lsp"))
    first = first.drop_front(colon + 2);
  std::string msg = first.split("  Try:").first.rtrim(" .").str();
  if (!msg.empty())
    msg[0] = std::tolower(static_cast<unsigned char>(msg[0]));
  return usageError(msg);
}

} // namespace

int main(int argc, char **argv) {
  configureAllocator();
  std::vector<const char *> args(argv, argv + argc);
  // No command (or only server flags): editors start us as a server.
  std::string first = argc > 1 ? argv[1] : "";
  if (argc < 2 || (first.rfind("-", 0) == 0 && first != "--help" &&
                   first != "-h" && first != "--version" && first != "-"))
    args.insert(args.begin() + 1, "serve");
  else if (first == "help" || first == "--help" || first == "-h") {
    std::cout << kUsage;
    return 0;
  } else if (first == "--version") {
    std::cout << "tosa-lsp " << kVersion << "\n"
              << "git revision: " << kGitRevision << "\n"
              << "built against: MLIR " << kMLIRVersion << " (" << kMLIRPrefix
              << (*kMLIRPackage ? std::string(", Debian ") + kMLIRPackage
                                : std::string())
              << ")\n";
    // What `run` loads and `compile --emit=shared` links, and whether it
    // is there.
    std::string runtime = mlirRuntimePath(), pkg = mlirRuntimePackage();
    std::cout << "MLIR runtime: " << runtime;
    if (!llvm::sys::fs::exists(runtime))
      std::cout << " (missing: install "
                << (pkg.empty() ? std::string("it")
                                : "the Debian package " + pkg)
                << ")";
    else if (!pkg.empty())
      std::cout << " (" << pkg << ")";
    std::cout << "\n";
    return 0;
  }
  std::string command = args[1];
  if (!llvm::is_contained(
          std::initializer_list<StringRef>{"check", "explain", "fix", "lower",
                                           "compile", "run", "serve"},
          command))
    return usageError("unknown command '" + command + "'");

  cl::HideUnrelatedOptions(category);
  std::string messages;
  raw_string_ostream errs(messages);
  if (!cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                   "tosa-lsp: TOSA MLIR checker and language "
                                   "server\n",
                                   &errs))
    return reportParseErrors(messages);

  if (checkCmd)
    return runCheck();
  if (explainCmd)
    return runExplain();
  // `--function=@add` as MLIR spells it; `--function=` names nothing.
  if (function.getNumOccurrences()) {
    if (StringRef(function).starts_with("@"))
      function = function.substr(1);
    if (function.empty())
      return usageError("--function needs a function name");
  }
  if (fixCmd)
    return runFix();
  if (lowerCmd)
    return runLower();
  if (compileCmd)
    return runCompile();
  if (runCmd)
    return runRun();
  return runServe();
}
