//===- main.cpp - the tosa-lsp command-line tool --------------------------===//
//
// The commands (llvm::cl subcommands) and their options; `tosa-lsp --help`.
//
// Exit codes: 0 clean (explain: explained), 1 `check` found errors, 2
// unusable input or usage error.
//
//===----------------------------------------------------------------------===//

#include "CheckCommand.h"
#include "CommandSupport.h"
#include "FixCommand.h"
#include "LowerCommand.h"
#include "Version.h"

#include "LSPServer.h"
#include "Runtime.h"
#include "TaskThread.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

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

int usageError(const std::string &msg) {
  return cli::usageError(llvm::errs(), msg);
}

/// `--function` as given (std::nullopt when not).
std::optional<std::string> functionGiven() {
  if (!function.getNumOccurrences())
    return std::nullopt;
  return function.getValue();
}

cli::CheckOptions checkOptions() {
  cli::CheckOptions o;
  o.files = files;
  o.format = format;
  o.config = configPath;
  o.lenient = lenient;
  o.showInfo = showInfo;
  o.inferShapes = inferShapes;
  return o;
}

cli::ExplainOptions explainOptions() {
  cli::ExplainOptions o;
  o.files = files;
  o.format = format;
  o.config = configPath;
  o.lenient = lenient;
  return o;
}

cli::FixOptions fixOptions() {
  cli::FixOptions o;
  o.files = files;
  o.format = format;
  o.config = configPath;
  o.candidates = candidates;
  if (applyFix.getNumOccurrences())
    o.apply = applyFix;
  o.migrate = migrate;
  o.refineAll = refineAll;
  o.function = functionGiven();
  return o;
}

cli::LowerCommandOptions lowerOptions() {
  cli::LowerCommandOptions o;
  o.files = files;
  o.format = format;
  o.function = functionGiven();
  o.stage = stage;
  o.mode = mode;
  o.strided = strided;
  o.annotate = annotate;
  return o;
}

cli::CompileCommandOptions compileOptions() {
  cli::CompileCommandOptions o;
  o.files = files;
  o.format = format;
  o.function = functionGiven();
  o.output = output;
  o.emit = emit;
  o.mode = mode;
  o.strided = strided;
  o.cpu = cpu;
  o.streamingStores = streamingStores;
  o.optLevel = optLevel;
  o.header = header;
  o.force = force;
  o.newName = newName;
  o.quiet = quiet;
  o.headerIfPossible = headerIfPossible;
  o.protect = protect;
  o.displayName = shownName;
  return o;
}

cli::RunCommandOptions runOptions() {
  cli::RunCommandOptions o;
  o.files = files;
  o.format = format;
  o.function = functionGiven();
  if (inputs.getNumOccurrences())
    o.inputs = inputs.getValue();
  if (randomSeed.getNumOccurrences())
    o.seed = randomSeed;
  o.shapes = shapes;
  o.mode = mode;
  o.optLevel = optLevel;
  if (maxBytes.getNumOccurrences())
    o.maxBytes = maxBytes.getValue();
  return o;
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

  raw_ostream &out = llvm::outs(), &err = llvm::errs();
  if (checkCmd) {
    cli::CheckOptions opts = checkOptions();
    opts.disableFree = true;
    int rc = cli::runCheck(opts, out, err);
    out.flush();
    // Like clang's -disable-free (see CheckOptions).
    llvm::sys::Process::Exit(rc, /*NoCleanup=*/true);
  }
  if (explainCmd)
    return cli::runExplain(explainOptions(), out, err);
  if (fixCmd)
    return cli::runFix(fixOptions(), out, err);
  if (lowerCmd)
    return cli::runLower(lowerOptions(), out, err);
  if (compileCmd)
    return cli::runCompile(compileOptions(), out, err);
  if (runCmd)
    return cli::runRun(runOptions(), out, err);
  return runServe();
}
