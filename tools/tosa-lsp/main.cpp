//===- main.cpp - the tosa-lsp command-line tool --------------------------===//
//
// tosa-lsp check FILE...       diagnostics, mlir-opt format or JSON
// tosa-lsp explain FILE[:L[:C]] per-dimension broadcast explanation
//
// Exit codes: 0 clean (explain: explained), 1 `check` found errors, 2
// unusable input or usage error.
//
//===----------------------------------------------------------------------===//

#include "Input.h"
#include "Output.h"

#include "Analysis.h"
#include "CodeActions.h"
#include "LSPServer.h"
#include "Compile.h"
#include "Lowering.h"
#include "Run.h"
#include "Config.h"
#include "CrashGuard.h"
#include "Render.h"

#include <cstring>
#include <iostream>

using namespace tosa_lsp;

namespace {

constexpr const char *kUsage =
    R"(usage: tosa-lsp <command> [options]

commands:
  check [--format=text|json] [--show-info] [--config=FILE] FILE...
      Parse and verify each file (split on `// -----`), report every parse,
      verifier and broadcast error in mlir-opt's format (or JSON).
      FILE may be `-` for standard input. Exit 1 if any error.
  explain [--format=text|markdown|json] [--config=FILE] FILE[:LINE[:COL]]
      Per-dimension inferred-vs-declared table for each Broadcastable op in
      FILE, or only for the op at LINE (and COL).
  lower [--function=F] [--stage=linalg|loops|llvm]
        [--mode=fast|upstream|safe|versioned] [--strided] [--annotate]
        [--format=json] FILE
      The lowered IR (MLIR's own passes) of FILE or of function F;
      --annotate adds `// from tosa.add @ L:C` to lines; JSON adds mappings.
      --mode=upstream is exactly upstream's pipeline; the default, fast,
      fuses element-wise ops and uses contiguous memrefs at boundaries.
  compile [--function=F] -o OUT [--emit=obj|shared|llvm-ir|asm|mlir-llvm]
          [--mode=fast|upstream|safe|versioned] [--strided] [--cpu=CPU]
          [--header] [-O0..3] [--format=json] [--quiet]
          [--force | --new-name] FILE
      Native code: TOSA -> linalg -> bufferized loops -> LLVM -> x86-64
      for the host CPU (--cpu=x86-64: any x86-64 machine).
      --header writes OUT with .h: the _mlir_ciface_* entry points (outside
      upstream mode contiguous inputs, unless --strided, and a twin F_into
      writing into a caller-provided result).
      An existing OUT (or header) is an error; --force replaces it,
      --new-name writes OUT-1, OUT-2, ... instead. FILE is never replaced.
  run --function=F (--inputs=JSON | --random=SEED [--shape=2x3,...])
      [--mode=...] [-O0..3] FILE
      JIT-compile F (MLIR ExecutionEngine), call it, print inputs and
      results as JSON; dynamic dims come from the inputs (or --shape).
  fix [--candidates] [--apply=N] FILE
      List the validated quick fixes (those the server offers), or print
      FILE with fix N applied.
  serve [--lit-test] [--sync] [--debounce=MS] [--verbose]
      Language server on stdin/stdout (also: no command, or --stdio).
      --lit-test: `// -----` delimited input, pretty output, synchronous.
  help, --help     this text
  --version        version
)";

struct Options {
  std::string format = "text";
  std::string configPath;
  bool showInfo = false;
  std::vector<std::string> files;
};

int usageError(const std::string &msg) {
  std::cerr << "tosa-lsp: error: " << msg << "\n"
            << "run 'tosa-lsp --help' for usage\n";
  return 2;
}

/// Parses the options shared by the subcommands; returns false (after
/// printing) on a bad option.
bool parseOptions(int argc, char **argv, int first, Options &o,
                  const std::vector<std::string> &formats, int &rc) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--format=", 0) == 0) {
      o.format = a.substr(9);
      bool known = false;
      for (const std::string &f : formats)
        known |= f == o.format;
      if (!known) {
        std::string list;
        for (const std::string &f : formats)
          list += (list.empty() ? "" : ", ") + f;
        rc = usageError("unknown format '" + o.format + "' (expected " + list +
                        ")");
        return false;
      }
    } else if (a == "--format" && i + 1 < argc) {
      std::string v = std::string("--format=") + argv[++i];
      char *fake[] = {v.data()};
      if (!parseOptions(1, fake, 0, o, formats, rc))
        return false;
    } else if (a.rfind("--config=", 0) == 0) {
      o.configPath = a.substr(9);
    } else if (a == "--show-info") {
      o.showInfo = true;
    } else if (a == "-" || a.empty() || a[0] != '-') {
      o.files.push_back(a);
    } else if (a == "--") {
      for (++i; i < argc; ++i)
        o.files.push_back(argv[i]);
    } else {
      rc = usageError("unknown option '" + a + "'");
      return false;
    }
  }
  return true;
}

int runCheck(int argc, char **argv) {
  Options o;
  int rc = 0;
  if (!parseOptions(argc, argv, 2, o, {"text", "json"}, rc))
    return rc;
  if (o.files.empty())
    return usageError("check: no input files");

  Analyzer analyzer;
  nlohmann::ordered_json out;
  out["files"] = nlohmann::ordered_json::array();
  bool anyError = false, inputError = false;
  for (const std::string &path : o.files) {
    std::string error;
    std::optional<std::string> text = readInput(path, error);
    std::optional<Config> config;
    if (text)
      config = loadConfig(o.configPath, path, error);
    if (!text || !config) {
      std::cerr << "tosa-lsp: error: " << error << "\n";
      inputError = true;
      continue;
    }
    FileAnalysis fa = analyzer.analyze(*text, displayName(path), *config);
    anyError |= fa.hasErrors();
    if (o.format == "json") {
      out["files"].push_back(fileToJson(fa));
      continue;
    }
    for (const Diagnostic &d : fa.diagnostics)
      if (d.severity != Severity::Info || o.showInfo)
        printDiagnosticText(std::cout, fa, *text, d);
  }
  if (o.format == "json")
    std::cout << out.dump(1) << "\n";
  std::cout.flush();
  return inputError ? 2 : anyError ? 1 : 0;
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

int runExplain(int argc, char **argv) {
  Options o;
  int rc = 0;
  if (!parseOptions(argc, argv, 2, o, {"text", "markdown", "json"}, rc))
    return rc;
  if (o.files.size() != 1)
    return usageError("explain: expected exactly one FILE[:LINE[:COL]]");

  std::string path = o.files[0];
  Position pos;
  std::string error;
  std::optional<std::string> text = readInput(path, error);
  if (!text) {
    std::string p;
    splitPosition(o.files[0], p, pos);
    if (pos.valid()) {
      path = p;
      error.clear();
      text = readInput(path, error);
    }
  }
  std::optional<Config> config;
  if (text)
    config = loadConfig(o.configPath, path, error);
  if (!text || !config) {
    std::cerr << "tosa-lsp: error: " << error << "\n";
    return 2;
  }
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(*text, displayName(path), *config);

  std::vector<const OpReport *> selected;
  if (pos.valid()) {
    int i = fa.findOp(pos);
    if (i < 0) {
      std::cerr << "tosa-lsp: error: " << fa.path << ":" << pos.line
                << (pos.column ? ":" + std::to_string(pos.column) : "")
                << ": no Broadcastable op at this position\n";
      return 2;
    }
    selected.push_back(&fa.ops[i]);
  } else {
    for (const OpReport &op : fa.ops)
      selected.push_back(&op);
  }

  // `explain` is a report: errors in the input are part of it, so only
  // unusable input makes it fail.
  if (o.format == "json") {
    nlohmann::ordered_json out = fileToJson(fa);
    out["ops"] = nlohmann::ordered_json::array();
    for (const OpReport *op : selected)
      out["ops"].push_back(opToJson(*op));
    std::cout << out.dump(1) << "\n";
    return 0;
  }

  RenderStyle style =
      o.format == "markdown" ? RenderStyle::Markdown : RenderStyle::Text;
  // Diagnostics first (like `check`), then one explanation per op.
  if (!pos.valid())
    for (const Diagnostic &d : fa.diagnostics)
      printDiagnosticText(std::cout, fa, *text, d);
  if (selected.empty())
    std::cout << fa.path << ": no Broadcastable ops\n";
  for (const OpReport *op : selected) {
    std::cout << "\n"
              << fa.path << ":" << op->range.begin.line << ":"
              << op->range.begin.column << ": "
              << renderExplanation(*op, style);
  }
  return 0;
}

/// `--flag=V` or `--flag V` at argv[i] (advancing i for the second form).
std::optional<std::string> flagValue(int argc, char **argv, int &i,
                                     const char *flag) {
  std::string a = argv[i], f = flag;
  if (a.rfind(f + "=", 0) == 0)
    return a.substr(f.size() + 1);
  if (a == f && i + 1 < argc)
    return std::string(argv[++i]);
  return std::nullopt;
}

/// The file's text, or std::nullopt after printing why it is unusable.
std::optional<std::string> readOrReport(const std::string &path) {
  std::string error;
  std::optional<std::string> text = readInput(path, error);
  if (!text)
    std::cerr << "tosa-lsp: error: " << error << "\n";
  return text;
}

/// `fix FILE`: lists the validated quick fixes; `--apply=N` prints the file
/// with fix N applied (what an editor gets through the server).
int runFix(int argc, char **argv) {
  std::string path, apply;
  bool all = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--apply=", 0) == 0)
      apply = a.substr(8);
    else if (a == "--candidates")
      all = true;
    else if (a[0] != '-' || a == "-")
      path = a;
    else
      return usageError("fix: unknown option '" + a + "'");
  }
  if (path.empty())
    return usageError("fix: expected a FILE");
  std::string error;
  std::optional<std::string> text = readInput(path, error);
  std::optional<Config> config;
  if (text)
    config = loadConfig("", path, error);
  if (!text || !config) {
    std::cerr << "tosa-lsp: error: " << error << "\n";
    return 2;
  }
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(*text, displayName(path), *config);
  std::vector<FixData> fixes =
      all ? candidateFixes(fa, *text)
          : validatedFixes(analyzer, fa, *text, *config);
  if (!apply.empty()) {
    size_t n = std::strtoul(apply.c_str(), nullptr, 10);
    if (n >= fixes.size()) {
      std::cerr << "tosa-lsp: error: no fix #" << apply << " (there are "
                << fixes.size() << ")\n";
      return 2;
    }
    std::cout << applyEdits(*text, fixes[n].edits);
    return 0;
  }
  for (size_t i = 0; i < fixes.size(); ++i) {
    const Diagnostic &d = fa.diagnostics[fixes[i].diagnostic];
    std::cout << i << ": " << fa.path << ":" << d.range.begin.line << ":"
              << d.range.begin.column << ": " << fixes[i].title << " ["
              << d.code << "]\n";
  }
  return 0;
}

/// `lower FILE`: the lowered IR of the file or one function.
int runLower(int argc, char **argv) {
  LowerOptions opts;
  opts.mode = LowerMode::Fast; // what `compile` builds
  std::string path;
  bool json = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) {
      return flagValue(argc, argv, i, flag);
    };
    if (auto v = value("--function")) {
      opts.function = *v;
    } else if (auto v = value("--stage")) {
      auto s = parseStage(*v);
      if (!s)
        return usageError("lower: unknown stage '" + *v +
                          "' (expected linalg, loops, llvm)");
      opts.stage = *s;
    } else if (auto v = value("--mode")) {
      auto m = parseMode(*v);
      if (!m)
        return usageError("lower: unknown mode '" + *v +
                          "' (expected fast, upstream, safe, versioned)");
      opts.mode = *m;
    } else if (a == "--strided") {
      opts.strided = true;
    } else if (a == "--annotate") {
      opts.annotate = true;
    } else if (a == "--format=json") {
      json = true;
    } else if (a == "-" || a[0] != '-') {
      path = a;
    } else {
      return usageError("lower: unknown option '" + a + "'");
    }
  }
  if (path.empty())
    return usageError("lower: expected a FILE");
  std::optional<std::string> text = readOrReport(path);
  if (!text)
    return 2;
  LowerResult r = lower(*text, displayName(path), opts);
  for (const std::string &e : r.errors)
    std::cerr << e << "\n";
  if (!r.ok)
    return 1;
  if (!json) {
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
int runCompile(int argc, char **argv) {
  CompileOptions opts;
  std::string path, shownName;
  bool json = false, quiet = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) {
      return flagValue(argc, argv, i, flag);
    };
    if (auto v = value("--function")) {
      opts.function = *v;
    } else if (auto v = value("-o")) {
      opts.output = *v;
    } else if (auto v = value("--emit")) {
      auto e = parseEmit(*v);
      if (!e)
        return usageError("compile: unknown --emit '" + *v +
                          "' (expected obj, shared, llvm-ir, asm, mlir-llvm)");
      opts.emit = *e;
    } else if (auto v = value("--mode")) {
      auto m = parseMode(*v);
      if (!m)
        return usageError("compile: unknown mode '" + *v + "'");
      opts.mode = *m;
    } else if (a == "--strided") {
      opts.strided = true;
    } else if (auto v = value("--cpu")) {
      opts.cpu = *v;
    } else if (a == "--header") {
      opts.header = true;
    } else if (a == "--force") {
      opts.onExisting = OnExisting::Replace;
    } else if (a == "--new-name") {
      opts.onExisting = OnExisting::NewName;
    } else if (auto v = value("--protect")) {
      // The server compiles a temp copy: this is the document itself.
      opts.protectedPaths.push_back(*v);
    } else if (a.size() == 3 && a.rfind("-O", 0) == 0 && a[2] >= '0' &&
               a[2] <= '3') {
      opts.optLevel = a[2] - '0';
    } else if (a == "--format=json") {
      json = true;
    } else if (a == "--quiet") {
      quiet = true;
    } else if (auto v = value("--display-name")) {
      shownName = *v; // the server compiles a temp copy of an editor buffer
    } else if (a == "-" || a[0] != '-') {
      path = a;
    } else {
      return usageError("compile: unknown option '" + a + "'");
    }
  }
  if (path.empty())
    return usageError("compile: expected a FILE");
  if (opts.output.empty())
    return usageError("compile: expected -o OUTPUT");
  std::optional<std::string> text = readOrReport(path);
  if (!text)
    return 2;
  if (path != "-")
    opts.protectedPaths.push_back(path);
  std::string name = shownName.empty() ? displayName(path) : shownName;
  CompileResult r;
  if (std::optional<std::string> crash = runContained([&] {
        r = compile(*text, name, opts, [&](const std::string &stepText) {
          if (!quiet)
            std::cerr << "tosa-lsp: " << stepText << "\n";
        });
      })) {
    r = CompileResult();
    r.errors.push_back(name + ": error: MLIR/LLVM crashed while compiling (" +
                       *crash + "), a bug in the upstream pipeline on this " +
                       "input");
  }
  for (const std::string &e : r.errors)
    std::cerr << e << "\n";
  if (json) {
    nlohmann::ordered_json out;
    out["ok"] = r.ok;
    out["output"] = r.output;
    out["header"] = r.headerPath;
    out["symbols"] = r.symbols;
    out["bytes"] = r.bytes;
    out["log"] = r.log;
    out["errors"] = r.errors;
    std::cout << out.dump(1) << "\n";
  }
  return r.ok ? 0 : 1;
}

/// `run FILE --function F`: JIT and print the results as JSON.
int runRun(int argc, char **argv) {
  RunOptions opts;
  std::string path;
  bool haveInputs = false, haveSeed = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) {
      return flagValue(argc, argv, i, flag);
    };
    if (auto v = value("--function")) {
      opts.function = *v;
    } else if (auto v = value("--inputs")) {
      opts.inputs = *v;
      haveInputs = true;
    } else if (auto v = value("--random")) {
      opts.seed = std::strtoul(v->c_str(), nullptr, 10);
      haveSeed = true;
    } else if (auto v = value("--shape")) {
      std::string list = *v;
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos)
          comma = list.size();
        opts.shapes.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (auto v = value("--mode")) {
      auto m = parseMode(*v);
      if (!m)
        return usageError("run: unknown mode '" + *v + "'");
      opts.mode = *m;
    } else if (a.size() == 3 && a.rfind("-O", 0) == 0 && a[2] >= '0' &&
               a[2] <= '3') {
      opts.optLevel = a[2] - '0';
    } else if (a == "-" || a[0] != '-') {
      path = a;
    } else {
      return usageError("run: unknown option '" + a + "'");
    }
  }
  if (path.empty() || opts.function.empty())
    return usageError("run: expected FILE and --function F");
  if (haveInputs == haveSeed)
    return usageError("run: give either --inputs JSON or --random SEED");
  std::optional<std::string> text = readOrReport(path);
  if (!text)
    return 2;
  RunResult r;
  if (std::optional<std::string> crash = runContained(
          [&] { r = runFunction(*text, displayName(path), opts); })) {
    r = RunResult();
    r.errors.push_back(displayName(path) +
                       ": error: MLIR/LLVM crashed while running (" + *crash +
                       "), a bug in the upstream pipeline on this input");
  }
  for (const std::string &e : r.errors)
    std::cerr << e << "\n";
  if (!r.ok)
    return 1;
  std::cout << r.json << "\n";
  return 0;
}

} // namespace

int runServe(int argc, char **argv, int first) {
  ServerOptions options;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--lit-test")
      options.litTest = true;
    else if (a == "--sync")
      options.sync = true;
    else if (a == "--verbose")
      options.verbose = true;
    else if (a == "--stdio")
      continue; // What editors pass; stdio is the only transport.
    else if (a.rfind("--debounce=", 0) == 0)
      options.debounceMs = std::atoi(a.c_str() + 11);
    else
      return usageError("serve: unknown option '" + a + "'");
  }
  return runServer(stdin, options);
}

int main(int argc, char **argv) {
  // No command (or only server flags): editors start us as a server.
  if (argc < 2 || std::string(argv[1]).rfind("--", 0) == 0 &&
                      std::string(argv[1]) != "--help" &&
                      std::string(argv[1]) != "--version")
    return runServe(argc, argv, 1);
  std::string cmd = argv[1];
  if (cmd == "serve")
    return runServe(argc, argv, 2);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "tosa-lsp 0.1.0 (MLIR 22)\n";
    return 0;
  }
  if (cmd == "check")
    return runCheck(argc, argv);
  if (cmd == "explain")
    return runExplain(argc, argv);
  if (cmd == "fix")
    return runFix(argc, argv);
  if (cmd == "lower")
    return runLower(argc, argv);
  if (cmd == "compile")
    return runCompile(argc, argv);
  if (cmd == "run")
    return runRun(argc, argv);
  return usageError("unknown command '" + cmd + "'");
}
