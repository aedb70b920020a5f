//===- LowerCommand.cpp - `lower`, `compile` and `run` --------------------===//

#include "LowerCommand.h"

#include "CommandSupport.h"

#include "Choices.h"
#include "Compile.h"
#include "Config.h"
#include "CrashGuard.h"
#include "Errors.h"
#include "Input.h"
#include "Lowering.h"
#include "Run.h"

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

using namespace llvm;

namespace tosa_lsp::cli {

namespace {

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

/// --mode checked against the lowering's table.
std::optional<LowerMode> modeOrReport(const std::string &mode, raw_ostream &err,
                                      int &rc) {
  std::optional<LowerMode> m = parseMode(mode);
  if (!m)
    rc = usageError(err, unknownChoiceMessage("mode", mode, choices().modes));
  return m;
}

bool checkOptLevel(unsigned optLevel, raw_ostream &err, int &rc) {
  if (optLevel <= 3)
    return true;
  rc = usageError(err, "-O" + std::to_string(optLevel) +
                           ": the optimisation level is 0 to 3");
  return false;
}

bool checkThreads(unsigned threads, raw_ostream &err, int &rc) {
  // The bound of the editors' compile.threads too.
  if (threads <= Config::Compile::maxThreads)
    return true;
  rc = usageError(err, "--threads=" + std::to_string(threads) +
                           ": the thread count is 1 to " +
                           std::to_string(Config::Compile::maxThreads) +
                           ", or 0 for the running machine's");
  return false;
}

/// --fill-elided, when given; `fallback` (Keep or Refuse) otherwise.
std::optional<ElidedFill>
elidedOrReport(const char *command, const std::optional<std::string> &given,
               ElidedData fallback, raw_ostream &err, int &rc) {
  if (!given)
    return ElidedFill{fallback, 0};
  std::optional<ElidedFill> fill = parseElidedFill(*given);
  if (!fill)
    rc = usageError(err, std::string(command) + ": --fill-elided takes " +
                             kElidedFillSyntax + ", not '" + *given + "'");
  return fill;
}

} // namespace

int runLower(const LowerCommandOptions &opts, raw_ostream &out,
             raw_ostream &err) {
  int rc = 0;
  std::optional<FunctionAndFormat> checked =
      functionAndFormatOrReport(opts.function, opts.format, err, rc);
  if (!checked)
    return rc;
  const std::string *function = &checked->function, *fmt = &checked->format;
  tosa_lsp::LowerOptions lowering;
  lowering.function = *function;
  lowering.annotate = opts.annotate;
  lowering.strided = opts.strided;
  std::optional<LowerStage> stage = parseStage(opts.stage);
  if (!stage)
    return usageError(
        err, unknownChoiceMessage("stage", opts.stage, choices().stages));
  lowering.stage = *stage;
  std::optional<LowerMode> mode = modeOrReport(opts.mode, err, rc);
  if (!mode)
    return rc;
  lowering.mode = *mode;
  if (!checkThreads(opts.threads, err, rc))
    return rc;
  lowering.threads = opts.threads;
  std::optional<ElidedFill> fill =
      elidedOrReport("lower", opts.fillElided, ElidedData::Keep, err, rc);
  if (!fill)
    return rc;
  lowering.elided = *fill;
  std::optional<std::string> path = oneFile("lower", opts.files, err, rc);
  if (!path)
    return rc;
  std::optional<std::string> text = readOrReport(*path, err);
  if (!text)
    return 2;
  Expected<LowerResult> lowered = lower(*text, displayName(*path), lowering);
  if (!lowered) {
    printError(err, lowered.takeError());
    return 1;
  }
  const LowerResult &r = *lowered;
  // The preview is fine without the data; what is built from it is not.
  if (!r.elidedWarning.empty()) {
    std::string w = r.elidedWarning;
    if (size_t at = w.find(": error: "); at != std::string::npos)
      w.replace(at, 9, ": warning: ");
    err << w << "\n";
  }
  if (*fmt == "text") {
    out << r.text;
    return 0;
  }
  nlohmann::ordered_json json;
  json["pipeline"] = r.pipeline;
  json["text"] = r.text;
  json["mappings"] = nlohmann::ordered_json::array();
  for (const PreviewMapping &m : r.mappings)
    json["mappings"].push_back({{"previewLine", m.previewLine},
                                {"previewColumn", m.previewColumn},
                                {"sourceLine", m.sourceLine},
                                {"sourceColumn", m.sourceColumn},
                                {"sourceOp", m.sourceOp}});
  out << json.dump(1) << "\n";
  return 0;
}

int runCompile(const CompileCommandOptions &opts, raw_ostream &out,
               raw_ostream &err) {
  int rc = 0;
  std::optional<FunctionAndFormat> checked =
      functionAndFormatOrReport(opts.function, opts.format, err, rc);
  if (!checked)
    return rc;
  const std::string *function = &checked->function, *fmt = &checked->format;
  tosa_lsp::CompileOptions compiling;
  compiling.function = *function;
  compiling.output = opts.output;
  std::optional<EmitKind> emit = parseEmit(opts.emit);
  if (!emit)
    return usageError(
        err, unknownChoiceMessage("emit kind", opts.emit, choices().emits));
  compiling.emit = *emit;
  std::optional<LowerMode> mode = modeOrReport(opts.mode, err, rc);
  if (!mode || !checkOptLevel(opts.optLevel, err, rc))
    return rc;
  compiling.mode = *mode;
  compiling.optLevel = opts.optLevel;
  if (!checkThreads(opts.threads, err, rc))
    return rc;
  compiling.threads = opts.threads;
  compiling.strided = opts.strided;
  compiling.cpu = opts.cpu;
  compiling.header = opts.header || opts.headerIfPossible;
  compiling.headerIfPossible = opts.headerIfPossible;
  if (opts.streamingStores == "off") {
    compiling.streamThreshold = UINT64_MAX;
  } else if (opts.streamingStores != "auto") {
    std::optional<uint64_t> size = parseSize(opts.streamingStores);
    if (!size)
      return usageError(err, "compile: --streaming-stores takes auto, off or "
                             "a positive size (4096, 512K, 4M, 1G), not '" +
                                 opts.streamingStores + "'");
    compiling.streamThreshold = *size;
  }
  if (opts.force && opts.newName)
    return usageError(err, "compile: --force and --new-name exclude each "
                           "other");
  if (opts.force)
    compiling.onExisting = OnExisting::Replace;
  if (opts.newName)
    compiling.onExisting = OnExisting::NewName;
  compiling.protectedPaths = opts.protect;
  std::optional<ElidedFill> fill =
      elidedOrReport("compile", opts.fillElided, ElidedData::Refuse, err, rc);
  if (!fill)
    return rc;
  compiling.elided = *fill;
  std::optional<std::string> path = oneFile("compile", opts.files, err, rc);
  if (!path)
    return rc;
  if (compiling.output.empty())
    return usageError(err, "compile: expected -o OUTPUT");
  std::optional<std::string> text = readOrReport(*path, err);
  if (!text)
    return 2;
  if (*path != "-")
    compiling.protectedPaths.push_back(*path);
  std::string name =
      opts.displayName.empty() ? displayName(*path) : opts.displayName;
  std::string log; // the steps, also when compile fails
  std::optional<Expected<CompileResult>> compiled;
  if (std::optional<std::string> crash = runContained([&] {
        compiled.emplace(
            compile(*text, name, compiling, [&](const std::string &step) {
              log += step + "\n";
              if (!opts.quiet) {
                err << "tosa-lsp: " << step << "\n";
                err.flush();
              }
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
  for (const std::string &line : errors)
    err << line << "\n";
  if (*fmt == "json") {
    nlohmann::ordered_json json;
    json["ok"] = ok;
    json["output"] = ok ? r->output : compiling.output;
    json["header"] = ok ? r->headerPath : "";
    json["symbols"] = ok ? r->symbols : std::vector<std::string>();
    json["bytes"] = ok ? r->bytes : 0;
    json["log"] = log;
    json["errors"] = errors;
    out << json.dump(1) << "\n";
  }
  return ok ? 0 : 1;
}

int runRun(const RunCommandOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<std::string> function =
      functionOrReport(opts.function, err, rc);
  if (!function)
    return rc;
  if (!formatOrReport(opts.format, {"json"}, err, rc))
    return rc;
  tosa_lsp::RunOptions running;
  running.function = *function;
  running.inputs = opts.inputs.value_or("");
  running.seed = opts.seed.value_or(0);
  running.shapes = opts.shapes;
  std::optional<LowerMode> mode = modeOrReport(opts.mode, err, rc);
  if (!mode || !checkOptLevel(opts.optLevel, err, rc))
    return rc;
  running.mode = *mode;
  running.optLevel = opts.optLevel;
  if (!checkThreads(opts.threads, err, rc))
    return rc;
  running.threads = opts.threads;
  std::optional<ElidedFill> fill =
      elidedOrReport("run", opts.fillElided, ElidedData::Refuse, err, rc);
  if (!fill)
    return rc;
  running.elided = *fill;
  if (opts.maxBytes) {
    std::optional<uint64_t> size = parseSize(*opts.maxBytes);
    if (!size)
      return usageError(err, "run: --max-bytes takes a positive size (4096, "
                             "512K, 4M, 1G), not '" +
                                 *opts.maxBytes + "'");
    running.maxBytes = *size;
  }
  if (opts.files.size() != 1 || running.function.empty())
    return usageError(err, "run: expected FILE and --function F");
  if (opts.inputs.has_value() == opts.seed.has_value())
    return usageError(err, "run: give either --inputs JSON or --random SEED");
  std::string path = opts.files[0];
  std::optional<std::string> text = readOrReport(path, err);
  if (!text)
    return 2;
  std::optional<Expected<RunResult>> ran;
  if (std::optional<std::string> crash = runContained(
          [&] { ran.emplace(runFunction(*text, displayName(path), running)); }))
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
    printError(err, ran->takeError());
    return 1;
  }
  // A size nobody asked for is said, not silently used.
  for (const std::string &note : (*ran)->chosen)
    err << "tosa-lsp: note: " << note << "\n";
  out << (*ran)->json << "\n";
  return 0;
}

} // namespace tosa_lsp::cli
