//===- main.cpp - the tosa-lsp command-line tool --------------------------===//
//
// The commands (llvm::cl subcommands) and their options, declared here and
// nowhere else: llvm::cl prints the help (`tosa-lsp --help`, `tosa-lsp
// COMMAND --help`) from them. main fills the command's options struct and
// calls it (CheckCommand.h, FixCommand.h, LowerCommand.h); without a
// command, tosa-lsp is the language server.
//
// Exit codes: 0 ok, 1 `check` found errors or the command failed, 2
// unusable input or usage error (`tosa-lsp: error: ...`).
//
//===----------------------------------------------------------------------===//

#include "CheckCommand.h"
#include "CommandSupport.h"
#include "FixCommand.h"
#include "FormatCommand.h"
#include "GraphCommand.h"
#include "LowerCommand.h"
#include "Version.h"

#include "Allocator.h"
#include "Choices.h"
#include "LSPServer.h"
#include "Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace tosa_lsp;
using namespace llvm;

namespace {

/// "a, b (default) or c": the names of a table, for an option's help.
std::string choiceHelp(const std::vector<std::string> &names,
                       const std::string &defaultName) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    s += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    s += names[i] + (names[i] == defaultName ? " (default)" : "");
  }
  return s;
}

/// Numbers in the one error wording, `tosa-lsp: error: invalid value ...`
/// (cl's own parser has a wording of its own).
struct NumberParser : cl::parser<unsigned> {
  using cl::parser<unsigned>::parser;
  bool parse(cl::Option &, StringRef name, StringRef arg, unsigned &value) {
    if (!arg.getAsInteger(10, value))
      return false;
    cli::printError(errs(), "invalid value '" + arg.str() + "' for " +
                                (name.size() == 1 ? "-" : "--") + name.str() +
                                " (expected an integer from 0 to 4294967295)");
    return true;
  }
};
using NumberOption = cl::opt<unsigned, false, NumberParser>;

/// Every command and option. Built in main (not at static initialisation:
/// the help texts read the lowering's name table).
struct CommandLine {
  cl::OptionCategory category{"tosa-lsp options"};
  cl::OptionCategory serverCategory{"Language server options"};
  cl::SubCommand &topLevel = cl::SubCommand::getTopLevel();

  // The defaults are the options structs' own.
  const cli::CompileCommandOptions compileDefaults;
  const cli::LowerCommandOptions lowerDefaults;
  const ServerOptions serverDefaults;
  const std::string stageHelp =
      "Stage: " + choiceHelp(choices().stages, lowerDefaults.stage);
  const std::string modeHelp =
      "Pipeline: " + choiceHelp(choices().modes, lowerDefaults.mode) +
      ";\nfast fuses element-wise ops and uses contiguous memrefs at\n"
      "boundaries; upstream is MLIR's tosa-to-linalg-pipeline without its\n"
      "tosa-validate step (so dynamic shapes lower; `check --validate`\n"
      "runs that step)";
  const std::string emitHelp =
      "Output kind: " + choiceHelp(choices().emits, compileDefaults.emit);
  const std::string optLevelHelp = "Optimisation level 0-3 (default " +
                                   std::to_string(compileDefaults.optLevel) +
                                   ")";
  const std::string debounceHelp =
      "Quiet period after an edit before analysing (default " +
      std::to_string(serverDefaults.debounceMs) + ")";

  cl::SubCommand check{"check",
                       "Parse and verify each FILE (`-`: standard input), "
                       "split on `// -----`; print every parse, verifier and "
                       "broadcast error in mlir-opt's format"};
  cl::SubCommand explain{"explain",
                         "Per-dimension broadcast table of each Broadcastable "
                         "op of FILE (or the op at LINE[:COL]), then the "
                         "types MLIR's shape inference gives every op"};
  cl::SubCommand fix{"fix", "The validated quick fixes of FILE (the server's "
                            "code actions); or FILE with one applied, "
                            "migrated, or with every refinable `?` set"};
  cl::SubCommand formatCmd{"format",
                           "FILE with its indentation and spacing as "
                           "mlir-opt prints them (names, comments and line "
                           "breaks kept); refused when a section does not "
                           "parse"};
  cl::SubCommand lowerCmd{"lower",
                          "The lowered IR (MLIR's own passes) of FILE or of "
                          "one function"};
  cl::SubCommand compileCmd{"compile",
                            "Native code from FILE: TOSA -> linalg -> "
                            "bufferized loops -> LLVM -> x86-64"};
  cl::SubCommand runCmd{"run",
                        "JIT-compile one function of FILE, call it and print "
                        "inputs and results as JSON"};
  cl::SubCommand graphCmd{"graph",
                          "One function of FILE (or the one at FILE:LINE) "
                          "as a graph: json (what editors draw), dot, html "
                          "(one page, offline) or svg (laid out by node)"};
  cl::SubCommand serve{"serve", "Language server on stdin/stdout (also "
                                "without a command)"};

  // Anything unknown, reported in the one wording after parsing.
  cl::list<std::string> unknown{
      cl::Sink,         cl::Hidden,     cl::sub(topLevel),  cl::sub(check),
      cl::sub(explain), cl::sub(fix),   cl::sub(lowerCmd),  cl::sub(compileCmd),
      cl::sub(runCmd),  cl::sub(serve), cl::sub(formatCmd), cl::sub(graphCmd)};

  cl::list<std::string> checkFiles{cl::Positional, cl::desc("FILE..."),
                                   cl::sub(check), cl::cat(category)};
  cl::list<std::string> explainFile{cl::Positional,
                                    cl::desc("FILE[:LINE[:COL]]"),
                                    cl::sub(explain), cl::cat(category)};
  cl::list<std::string> file{
      cl::Positional,    cl::desc("FILE"),   cl::sub(fix),
      cl::sub(lowerCmd), cl::sub(formatCmd), cl::sub(compileCmd),
      cl::sub(runCmd),   cl::sub(graphCmd),  cl::cat(category)};
  // The server takes none: an argument there is not a command.
  cl::list<std::string> strayArgs{cl::Positional, cl::Hidden, cl::sub(topLevel),
                                  cl::sub(serve)};

  cl::opt<std::string> format{"format",
                              cl::desc("Output format: text (default) or "
                                       "json"),
                              cl::value_desc("format"),
                              cl::sub(check),
                              cl::sub(fix),
                              cl::cat(category)};
  cl::opt<std::string> lowerFormat{"format",
                                   cl::desc("Output format: text (default) "
                                            "or json (with the source "
                                            "mappings)"),
                                   cl::value_desc("format"), cl::sub(lowerCmd),
                                   cl::cat(category)};
  cl::opt<std::string> compileFormat{"format",
                                     cl::desc("Output format: text (default) "
                                              "or json (the outputs, the log "
                                              "and the errors)"),
                                     cl::value_desc("format"),
                                     cl::sub(compileCmd), cl::cat(category)};
  cl::opt<std::string> explainFormat{
      "format", cl::desc("Output format: text (default), markdown or json"),
      cl::value_desc("format"), cl::sub(explain), cl::cat(category)};
  cl::opt<std::string> runFormat{"format",
                                 cl::desc("Output format: json (the only "
                                          "one)"),
                                 cl::value_desc("format"), cl::sub(runCmd),
                                 cl::cat(category)};
  cl::opt<std::string> graphFormat{"format",
                                   cl::desc("Output format: json (default), "
                                            "dot, html or svg"),
                                   cl::value_desc("format"), cl::sub(graphCmd),
                                   cl::cat(category)};
  cl::opt<std::string> graphOutput{"o",
                                   cl::desc("Output file (default: standard "
                                            "output); an existing one is an\n"
                                            "error unless --force"),
                                   cl::value_desc("file"), cl::sub(graphCmd),
                                   cl::cat(category)};
  cl::opt<std::string> config{"config",
                              cl::desc("The .tosa-lsp.json to use instead of "
                                       "the one found next to FILE"),
                              cl::value_desc("file"),
                              cl::sub(graphCmd),
                              cl::sub(check),
                              cl::sub(explain),
                              cl::sub(fix),
                              cl::cat(category)};
  cl::opt<bool> lenient{"lenient",
                        cl::desc("Parse the custom syntax of ops of dialects "
                                 "MLIR 22 lacks (util.*, check.*)\nas "
                                 "unregistered ops (lenientDialects of "
                                 ".tosa-lsp.json says which)"),
                        cl::sub(check), cl::sub(explain), cl::cat(category)};
  cl::opt<bool> showInfo{"show-info",
                         cl::desc("Also print informational findings "
                                  "(as remark:)"),
                         cl::sub(check), cl::cat(category)};
  cl::opt<bool> inferShapes{
      "infer-shapes",
      cl::desc("Also run MLIR's shape inference (tosa-infer-shapes) on "
               "every function\nand report the declared sizes it "
               "contradicts"),
      cl::sub(check), cl::cat(category)};

  cl::opt<std::string> validate{
      "validate",
      cl::ValueOptional,
      cl::desc("Also run MLIR 22's TOSA validation (tosa-validate: "
               "profiles, extensions,\nlevels) on each section that "
               "verifies. ITEMS, comma-separated:\npro_int, pro_fp, "
               "extensions (int16, bf16, ...), level=8k|none,\n"
               "version=1.0|1.1.draft (= mlir-opt-22 --tosa-attach-target="
               "...), strict\n(= --tosa-validate=strict-op-spec-alignment, "
               "which checks profiles\nand extensions); none: the module's "
               "tosa.target_env or MLIR's default\n(TOSA 1.0, level 8k, "
               "pro_int and pro_fp)"),
      cl::value_desc("ITEMS"),
      cl::sub(check),
      cl::cat(category)};

  cl::opt<bool> candidates{"candidates",
                           cl::desc("List (and number) every candidate fix, "
                                    "each marked with whether it\npasses "
                                    "validation"),
                           cl::sub(fix), cl::cat(category)};
  NumberOption apply{"apply",
                     cl::desc("Print FILE with fix N of the listing applied"),
                     cl::value_desc("N"), cl::sub(fix), cl::cat(category)};
  cl::opt<bool> migrate{"migrate",
                        cl::desc("Print FILE migrated to MLIR 22 TOSA (every "
                                 "pre-MLIR-22 form rewritten;\nops with no "
                                 "mechanical rewrite are named on stderr)"),
                        cl::sub(fix), cl::cat(category)};
  cl::opt<bool> refineAll{
      "refine-all",
      cl::desc("Print FILE with every `?` MLIR's shape inference "
               "(tosa-infer-shapes) refines\nset to its size (tensor.cast "
               "back to the declared type where the pass\ninserts one), in "
               "every function or only --function's"),
      cl::sub(fix), cl::cat(category)};

  cl::opt<std::string> function{
      "function",
      cl::desc("Only this function (a leading @ is allowed)"),
      cl::value_desc("name"),
      cl::sub(fix),
      cl::sub(lowerCmd),
      cl::sub(compileCmd),
      cl::sub(runCmd),
      cl::sub(graphCmd),
      cl::cat(category)};
  cl::opt<std::string> stage{"stage",
                             cl::desc(stageHelp),
                             cl::value_desc("name"),
                             cl::init(lowerDefaults.stage),
                             cl::sub(lowerCmd),
                             cl::sub(graphCmd),
                             cl::cat(category)};
  cl::opt<std::string> mode{"mode",
                            cl::desc(modeHelp),
                            cl::value_desc("name"),
                            cl::init(lowerDefaults.mode),
                            cl::sub(lowerCmd),
                            cl::sub(compileCmd),
                            cl::sub(runCmd),
                            cl::sub(graphCmd),
                            cl::cat(category)};
  cl::opt<bool> strided{"strided",
                        cl::desc("Entry points accept any strides (outside "
                                 "upstream mode; slower)"),
                        cl::sub(lowerCmd), cl::sub(compileCmd),
                        cl::cat(category)};
  cl::opt<std::string> fillElided{
      "fill-elided",
      cl::desc("Constants whose data is elided (dense_resource<__elided__>): "
               "fill them\nwith zeros, ones or random values (from SEED, "
               "default 0), for shape\nand timing checks; without it "
               "compile and run refuse them"),
      cl::value_desc("zeros|ones|random[:SEED]"),
      cl::sub(lowerCmd),
      cl::sub(compileCmd),
      cl::sub(runCmd),
      cl::cat(category)};
  cl::opt<bool> annotate{"annotate",
                         cl::desc("Mark lines with their source op (`// from "
                                  "tosa.add @ L:C`)"),
                         cl::sub(lowerCmd), cl::cat(category)};

  cl::opt<std::string> output{"o",
                              cl::desc("Output file (required); an existing "
                                       "one is an error, FILE is never\n"
                                       "replaced"),
                              cl::value_desc("file"), cl::sub(compileCmd),
                              cl::cat(category)};
  cl::opt<std::string> emit{"emit",
                            cl::desc(emitHelp),
                            cl::value_desc("kind"),
                            cl::init(compileDefaults.emit),
                            cl::sub(compileCmd),
                            cl::cat(category)};
  cl::opt<std::string> cpu{"cpu",
                           cl::desc("LLVM CPU name (native (default): this "
                                    "machine; x86-64: any x86-64)"),
                           cl::value_desc("name"),
                           cl::init(compileDefaults.cpu),
                           cl::sub(compileCmd),
                           cl::cat(category)};
  cl::opt<std::string> streamingStores{
      "streaming-stores",
      cl::desc("Non-temporal stores in loop nests that store more than: "
               "auto (default:\nthis machine's L2 cache), off, or a size "
               "(4096, 512K, 4M, 1G)"),
      cl::value_desc("size"),
      cl::init(compileDefaults.streamingStores),
      cl::sub(compileCmd),
      cl::cat(category)};
  NumberOption optLevel{"O",
                        cl::desc(optLevelHelp),
                        cl::value_desc("level"),
                        cl::Prefix,
                        cl::init(compileDefaults.optLevel),
                        cl::sub(compileCmd),
                        cl::sub(runCmd),
                        cl::cat(category)};
  NumberOption threads{
      "threads",
      cl::desc("Matmuls and convolutions on N threads (OpenMP; the library "
               "then needs\nlibomp, Debian's libomp5); 0: as many as the "
               "running machine has\n(or OMP_NUM_THREADS). Default 1"),
      cl::value_desc("N"),
      cl::init(1),
      cl::sub(lowerCmd),
      cl::sub(compileCmd),
      cl::sub(runCmd),
      cl::cat(category)};
  cl::opt<bool> header{
      "header",
      cl::desc("Also write OUT's C header (.h): the _mlir_ciface_* entry "
               "points (outside\nupstream mode contiguous inputs, unless "
               "--strided, and a twin F_into\nwriting into a "
               "caller-provided result)"),
      cl::sub(compileCmd), cl::cat(category)};
  cl::opt<bool> force{"force", cl::desc("Replace existing outputs"),
                      cl::sub(compileCmd), cl::sub(graphCmd),
                      cl::cat(category)};
  cl::opt<bool> newName{"new-name",
                        cl::desc("Write OUT-1, OUT-2, ... instead of "
                                 "replacing"),
                        cl::sub(compileCmd), cl::cat(category)};
  cl::opt<bool> quiet{"quiet", cl::desc("No progress on stderr"),
                      cl::sub(compileCmd), cl::cat(category)};
  // For the server's compile jobs, which compile a temp copy of a buffer.
  cl::opt<bool> headerIfPossible{"header-if-possible",
                                 cl::desc("A header unless a name is not a C "
                                          "identifier"),
                                 cl::Hidden, cl::sub(compileCmd),
                                 cl::cat(category)};
  cl::list<std::string> protect{"protect",
                                cl::desc("A path never to write (the "
                                         "buffer's file)"),
                                cl::value_desc("path"),
                                cl::Hidden,
                                cl::sub(compileCmd),
                                cl::cat(category)};
  cl::opt<std::string> shownName{
      "display-name",         cl::desc("The name diagnostics give FILE"),
      cl::value_desc("name"), cl::Hidden,
      cl::sub(compileCmd),    cl::cat(category)};

  cl::opt<std::string> formatLines{
      "lines", cl::desc("Format only lines FIRST to LAST (1-based)"),
      cl::value_desc("FIRST:LAST"), cl::sub(formatCmd), cl::cat(category)};
  cl::opt<bool> inPlace{"in-place",
                        cl::desc("Write the result back to FILE (through a "
                                 "temporary file beside it)"),
                        cl::sub(formatCmd), cl::cat(category)};
  cl::alias inPlaceShort{"i", cl::desc("Alias for --in-place"),
                         cl::aliasopt(inPlace), cl::cat(category)};
  cl::opt<bool> formatCheck{"check",
                            cl::desc("Print nothing; exit 1 and name the "
                                     "lines when FILE is not formatted"),
                            cl::sub(formatCmd), cl::cat(category)};

  cl::opt<std::string> inputs{"inputs",
                              cl::desc("Arguments as a JSON array (NaN and "
                                       "infinities: \"nan\", \"inf\",\n"
                                       "\"-inf\", as in the output)"),
                              cl::value_desc("json"), cl::sub(runCmd),
                              cl::cat(category)};
  NumberOption randomSeed{"random",
                          cl::desc("Random arguments from SEED (instead of "
                                   "--inputs)"),
                          cl::value_desc("seed"), cl::sub(runCmd),
                          cl::cat(category)};
  cl::list<std::string> shapes{"shape",
                               cl::desc("Shapes of dynamic arguments, with "
                                        "--random (otherwise the inputs'\n"
                                        "give them); a size not given is 2, "
                                        "and a note on stderr\nand "
                                        "\"chosenSizes\" in the output say "
                                        "so"),
                               cl::value_desc("2x3,..."),
                               cl::CommaSeparated,
                               cl::sub(runCmd),
                               cl::cat(category)};
  cl::opt<std::string> maxBytes{
      "max-bytes",
      cl::desc("Limit on the arguments' and results' buffers of static "
               "shape, in all\n(default 4G; K, M, G)"),
      cl::value_desc("size"), cl::sub(runCmd), cl::cat(category)};

  // The server's options are also the top level's: `tosa-lsp --stdio`.
  cl::opt<bool> litTest{"lit-test",
                        cl::desc("`// -----` delimited input, pretty output, "
                                 "synchronous (tests)"),
                        cl::sub(topLevel), cl::sub(serve),
                        cl::cat(serverCategory)};
  cl::opt<bool> syncMode{
      "sync", cl::desc("Analyse before reading the next message"),
      cl::sub(topLevel), cl::sub(serve), cl::cat(serverCategory)};
  NumberOption debounceMs{"debounce",
                          cl::desc(debounceHelp),
                          cl::value_desc("ms"),
                          cl::init(serverDefaults.debounceMs),
                          cl::sub(topLevel),
                          cl::sub(serve),
                          cl::cat(serverCategory)};
  cl::opt<bool> inferInAnalysis{
      "infer-in-analysis",
      cl::desc("Infer shapes on the analysis' own IR (false: each inference "
               "parses its function again; benchmarks)"),
      cl::init(true),
      cl::Hidden,
      cl::sub(topLevel),
      cl::sub(serve),
      cl::cat(serverCategory)};
  cl::opt<bool> inferAfterPublish{
      "infer-after-publish",
      cl::desc("An open's inference on the analysis' IR after its publish "
               "(false: before it; benchmarks)"),
      cl::init(true),
      cl::Hidden,
      cl::sub(topLevel),
      cl::sub(serve),
      cl::cat(serverCategory)};
  cl::opt<bool> verbose{"verbose", cl::desc("Log to stderr"), cl::sub(topLevel),
                        cl::sub(serve), cl::cat(serverCategory)};
  cl::opt<bool> stdio{"stdio",
                      cl::desc("What editors pass; stdio is the only "
                               "transport"),
                      cl::sub(topLevel), cl::sub(serve),
                      cl::cat(serverCategory)};

  /// `--function` as given (std::nullopt when not).
  std::optional<std::string> functionGiven() {
    if (!function.getNumOccurrences())
      return std::nullopt;
    return function.getValue();
  }

  cli::CheckOptions checkOptions() {
    cli::CheckOptions o;
    o.files = checkFiles;
    o.format = format;
    o.config = config;
    o.lenient = lenient;
    o.showInfo = showInfo;
    o.inferShapes = inferShapes;
    if (validate.getNumOccurrences())
      o.validate = validate.getValue();
    return o;
  }
  cli::ExplainOptions explainOptions() {
    cli::ExplainOptions o;
    o.files = explainFile;
    o.format = explainFormat;
    o.config = config;
    o.lenient = lenient;
    return o;
  }
  cli::FixOptions fixOptions() {
    cli::FixOptions o;
    o.files = file;
    o.format = format;
    o.config = config;
    o.candidates = candidates;
    if (apply.getNumOccurrences())
      o.apply = apply;
    o.migrate = migrate;
    o.refineAll = refineAll;
    o.function = functionGiven();
    return o;
  }
  cli::LowerCommandOptions lowerOptions() {
    cli::LowerCommandOptions o;
    o.files = file;
    o.format = lowerFormat;
    o.function = functionGiven();
    o.stage = stage;
    o.mode = mode;
    o.strided = strided;
    o.annotate = annotate;
    o.threads = threads;
    if (fillElided.getNumOccurrences())
      o.fillElided = fillElided.getValue();
    return o;
  }
  cli::CompileCommandOptions compileOptions() {
    cli::CompileCommandOptions o;
    o.files = file;
    o.format = compileFormat;
    o.function = functionGiven();
    o.output = output;
    o.emit = emit;
    o.mode = mode;
    o.strided = strided;
    o.cpu = cpu;
    o.streamingStores = streamingStores;
    o.optLevel = optLevel;
    o.threads = threads;
    o.header = header;
    o.force = force;
    o.newName = newName;
    o.quiet = quiet;
    o.headerIfPossible = headerIfPossible;
    o.protect = protect;
    o.displayName = shownName;
    if (fillElided.getNumOccurrences())
      o.fillElided = fillElided.getValue();
    return o;
  }
  cli::FormatOptions formatOptions() {
    cli::FormatOptions o;
    o.files = file;
    o.lines = formatLines;
    o.inPlace = inPlace;
    o.check = formatCheck;
    return o;
  }
  cli::RunCommandOptions runOptions() {
    cli::RunCommandOptions o;
    o.files = file;
    o.format = runFormat;
    o.function = functionGiven();
    if (inputs.getNumOccurrences())
      o.inputs = inputs.getValue();
    if (randomSeed.getNumOccurrences())
      o.seed = randomSeed;
    o.shapes = shapes;
    o.mode = mode;
    o.optLevel = optLevel;
    o.threads = threads;
    if (maxBytes.getNumOccurrences())
      o.maxBytes = maxBytes.getValue();
    if (fillElided.getNumOccurrences())
      o.fillElided = fillElided.getValue();
    return o;
  }
  cli::GraphOptions graphOptions() {
    cli::GraphOptions o;
    o.files = file;
    o.function = functionGiven();
    o.format = graphFormat;
    o.output = graphOutput;
    o.config = config;
    o.force = force;
    if (stage.getNumOccurrences()) // graph: the function itself without it
      o.stage = stage;
    o.mode = mode;
    return o;
  }
  ServerOptions serverOptions() {
    ServerOptions o;
    o.litTest = litTest;
    o.sync = syncMode;
    o.verbose = verbose;
    o.debounceMs = debounceMs;
    o.inferInAnalysis = inferInAnalysis;
    o.inferAfterPublish = inferAfterPublish;
    o.exitAtOnce = true;
    o.version = std::string(kVersion) + " (" + kGitRevision + ")";
    return o;
  }
};

/// `tosa-lsp --version`.
void printVersion(raw_ostream &out) {
  out << "tosa-lsp " << kVersion << "\n"
      << "git revision: " << kGitRevision << "\n"
      << "built against: MLIR " << kMLIRVersion << " (" << kMLIRPrefix
      << (*kMLIRPackage ? std::string(", Debian ") + kMLIRPackage
                        : std::string())
      << ")\n";
  // What `run` loads and `compile --emit=shared` links, and whether it is
  // there.
  std::string runtime = mlirRuntimePath(), pkg = mlirRuntimePackage();
  out << "MLIR runtime: " << runtime;
  if (!sys::fs::exists(runtime))
    out << " (missing: install "
        << (pkg.empty() ? std::string("it") : "the Debian package " + pkg)
        << ")";
  else if (!pkg.empty())
    out << " (" << pkg << ")";
  out << "\n";
  // What --threads code calls.
  Expected<std::string> omp = requireOpenMPRuntime("--threads");
  if (omp)
    out << "OpenMP runtime: " << *omp << "\n";
  else
    out << "OpenMP runtime: missing (--threads needs libomp.so.5: install "
           "the Debian package libomp5)\n";
  consumeError(omp.takeError());
}

bool isSubcommand(StringRef name) {
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    if (!name.empty() && sub->getName() == name)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  configureAllocator();
  static CommandLine flags;
  raw_ostream &out = outs(), &err = errs();

  std::vector<const char *> args(argv, argv + argc);
  // `tosa-lsp help [COMMAND]` is `tosa-lsp [COMMAND] --help`; -h is --help.
  if (args.size() > 1 && StringRef(args[1]) == "help") {
    args.erase(args.begin() + 1);
    args.push_back("--help");
  }
  for (const char *&arg : args)
    if (StringRef(arg) == "-h")
      arg = "--help";
  // A word first is a command (options alone start the server).
  if (args.size() > 1 && (args[1][0] != '-' || StringRef(args[1]) == "-") &&
      !isSubcommand(args[1]))
    return cli::usageError(err,
                           "unknown command '" + std::string(args[1]) + "'");

  cl::HideUnrelatedOptions({&flags.category, &flags.serverCategory});
  cl::SetVersionPrinter(printVersion);
  // cl reports a bad value of an option itself (ours in the one wording,
  // see NumberParser); unknown arguments are left to us.
  if (!cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                   "TOSA MLIR checker and language server\n",
                                   &err)) {
    err << "run 'tosa-lsp --help' for usage\n";
    return 2;
  }
  if (!flags.unknown.empty())
    return cli::usageError(err, "unknown command line argument '" +
                                    flags.unknown.front() + "'");
  if (!flags.strayArgs.empty())
    return cli::usageError(err, "unexpected argument '" +
                                    flags.strayArgs.front() +
                                    "' (the language server takes no FILE)");

  if (flags.check) {
    cli::CheckOptions opts = flags.checkOptions();
    opts.disableFree = true;
    int rc = cli::runCheck(opts, out, err);
    out.flush();
    // Like clang's -disable-free (see CheckOptions).
    sys::Process::Exit(rc, /*NoCleanup=*/true);
  }
  if (flags.explain)
    return cli::runExplain(flags.explainOptions(), out, err);
  if (flags.fix)
    return cli::runFix(flags.fixOptions(), out, err);
  if (flags.formatCmd)
    return cli::runFormat(flags.formatOptions(), out, err);
  if (flags.lowerCmd)
    return cli::runLower(flags.lowerOptions(), out, err);
  if (flags.compileCmd)
    return cli::runCompile(flags.compileOptions(), out, err);
  if (flags.runCmd)
    return cli::runRun(flags.runOptions(), out, err);
  if (flags.graphCmd)
    return cli::runGraph(flags.graphOptions(), out, err);
  return runServer(stdin, flags.serverOptions());
}
