//===- CompileJob.cpp - native compilation in a child process -------------===//

#include "CompileJob.h"

#include "OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <optional>
#include <thread>

using namespace llvm;

namespace tosa_lsp {

static std::string readAll(const std::string &path) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/true);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

namespace {

/// Where the outputs go: the chosen directory, or a new temp one held in
/// `tempOut`, which is kept only when the compile succeeds.
Expected<std::string> outputDirectory(const CompileJob &job,
                                      std::optional<TempDir> &tempOut) {
  if (!job.outputDir.empty())
    return resolveOutputDir(job.outputDir, job.outputDirRoot);
  tempOut.emplace("tosa-lsp-compile");
  if (tempOut->error())
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a temp directory: " +
                                 tempOut->error().message());
  return tempOut->path();
}

/// The output's file name. Function names may hold "/", ".." or any byte:
/// the name is sanitised so the output stays in its directory.
std::string outputFileName(const CompileJob &job) {
  std::string stem = sys::path::stem(job.name).str();
  if (!job.function.empty())
    stem += "_" + job.function;
  stem = sanitizeFileName(stem);
  const char *ext = job.emit == "shared"    ? ".so"
                    : job.emit == "obj"     ? ".o"
                    : job.emit == "asm"     ? ".s"
                    : job.emit == "llvm-ir" ? ".ll"
                                            : ".mlir";
  return stem + ext;
}

/// The child's command line: `tosa-lsp compile` of the copied text, its
/// report as JSON on stdout.
std::vector<std::string> compileArguments(const CompileJob &job,
                                          StringRef input, StringRef output) {
  std::vector<std::string> args = {
      job.self,        "compile",        input.str(), "-o",
      output.str(),    "--emit",         job.emit,    "--header-if-possible",
      "--format=json", "--display-name", job.name,    "--mode",
      job.mode};
  if (!job.function.empty()) {
    args.push_back("--function");
    args.push_back(job.function);
  }
  if (job.threads != 1)
    args.push_back("--threads=" + std::to_string(job.threads));
  // Never write over an existing file unless the user's settings say so;
  // never over the document, whatever they say.
  args.push_back(job.overwrite ? "--force" : "--new-name");
  if (!job.source.empty()) {
    args.push_back("--protect");
    args.push_back(job.source);
  }
  return args;
}

/// Passes the child's steps (its stderr lines starting "tosa-lsp: ") on as
/// progress while it runs: stderr goes to a file, read again at each poll
/// from the first line not yet passed on.
class ProgressPump {
public:
  ProgressPump(std::string errPath,
               const std::function<void(const std::string &)> &progress)
      : errPath(std::move(errPath)), progress(progress) {}

  void operator()() {
    std::string log = readAll(errPath);
    while (true) {
      size_t nl = log.find('\n', seen);
      if (nl == std::string::npos)
        break;
      StringRef line = StringRef(log).slice(seen, nl);
      if (line.consume_front("tosa-lsp: "))
        progress(line.str());
      seen = nl + 1;
    }
  }

private:
  std::string errPath;
  const std::function<void(const std::string &)> &progress;
  size_t seen = 0;
};

/// Polls the child until it exits (or crashes): a blocking wait could not
/// see a cancellation or pass progress on. Kills it on cancellation or after
/// the job's timeout, which `r` then says (std::nullopt).
std::optional<sys::ProcessInfo> waitForChild(const sys::ProcessInfo &pi,
                                             const CompileJob &job,
                                             const std::atomic<bool> &cancel,
                                             ProgressPump &pumpProgress,
                                             CompileJobResult &r) {
  auto start = std::chrono::steady_clock::now();
  while (true) {
    std::string waitError;
    sys::ProcessInfo done = sys::Wait(pi, /*SecondsToWait=*/0, &waitError);
    if (done.Pid == pi.Pid)
      return done; // exited (or crashed)
    pumpProgress();
    bool timedOut = std::chrono::steady_clock::now() - start >
                    std::chrono::seconds(job.timeoutSeconds);
    if (cancel || timedOut) {
      ::kill(pi.Pid, SIGKILL);
      sys::Wait(pi, std::nullopt);
      if (cancel) {
        r.cancelled = true;
        r.error = "compilation cancelled";
      } else {
        r.error = "compilation took longer than " +
                  std::to_string(job.timeoutSeconds) +
                  " s and was stopped (compile.timeoutSeconds)";
      }
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Reads the finished child's JSON report into `r.result`; false with
/// `r.error` set when it failed. Exit code 1 is the compiler's own failure
/// (its report lists the errors); any other non-zero code, or no report, a
/// failure of the process (a crash, the memory limit).
bool readReport(const sys::ProcessInfo &done, StringRef outPath,
                StringRef errPath, CompileJobResult &r) {
  std::string stdoutText = readAll(outPath.str());
  std::string stderrText = readAll(errPath.str());
  if (done.ReturnCode < 0 || done.ReturnCode > 1) {
    r.error = "the compiler process failed (exit code " +
              std::to_string(done.ReturnCode) + ")" +
              (stderrText.empty() ? "" : ": " + stderrText);
    return false;
  }
  Expected<json::Value> parsed = json::parse(stdoutText);
  json::Object *obj = parsed ? parsed->getAsObject() : nullptr;
  if (!obj) {
    if (!parsed)
      consumeError(parsed.takeError());
    r.error = "the compiler process gave no result" +
              (stderrText.empty() ? std::string() : ": " + stderrText);
    return false;
  }
  if (obj->getBoolean("ok") != std::optional<bool>(true)) {
    std::string msg = "compilation failed";
    if (const json::Array *errs = obj->getArray("errors"))
      for (const json::Value &e : *errs)
        if (auto s = e.getAsString())
          msg += "\n" + s->str();
    r.error = msg;
    return false;
  }
  json::Path::Root root("the compiler's report");
  if (!fromJSON(*parsed, r.result, root)) {
    r.error = "the compiler process gave an unreadable result: " +
              toString(root.getError());
    return false;
  }
  return true;
}

} // namespace

CompileJobResult
runCompileJob(const CompileJob &job,
              const std::function<void(const std::string &)> &progress,
              const std::atomic<bool> &cancel) {
  CompileJobResult r;
  // Work files live in a directory of their own, removed on every path.
  TempDir work("tosa-lsp-work");
  if (work.error()) {
    r.error = "cannot create a temp directory: " + work.error().message();
    return r;
  }
  std::optional<TempDir> tempOut;
  Expected<std::string> outDir = outputDirectory(job, tempOut);
  if (!outDir) {
    r.error = toString(outDir.takeError());
    return r;
  }
  SmallString<256> input(work.path()), output(*outDir), out(work.path()),
      err(work.path());
  sys::path::append(input, "input.mlir");
  sys::path::append(output, outputFileName(job));
  sys::path::append(out, "stdout.json");
  sys::path::append(err, "stderr.txt");
  {
    std::error_code ec;
    raw_fd_ostream os(input, ec);
    if (ec) {
      r.error = "cannot write " + std::string(input) + ": " + ec.message();
      return r;
    }
    os << job.text;
  }

  // posix_spawn "succeeds" for a missing binary and the child exits 127:
  // say what is wrong instead of "exit code -1".
  if (!sys::fs::can_execute(job.self)) {
    r.error = "cannot start the compiler process: " + job.self +
              " is not an executable file";
    return r;
  }
  std::vector<std::string> argStore = compileArguments(job, input, output);
  std::vector<StringRef> args(argStore.begin(), argStore.end());
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(out),
                                          StringRef(err)};
  std::string execError;
  bool execFailed = false;
  sys::ProcessInfo pi =
      sys::ExecuteNoWait(job.self, args, std::nullopt, redirects,
                         job.memoryLimitMB, &execError, &execFailed);
  if (execFailed) {
    r.error = "cannot start the compiler process: " + execError;
    return r;
  }
  progress("started " + job.self + " compile");

  ProgressPump pumpProgress(std::string(err), progress);
  std::optional<sys::ProcessInfo> done =
      waitForChild(pi, job, cancel, pumpProgress, r);
  if (!done)
    return r;
  pumpProgress(); // the last steps, written before it exited
  if (!readReport(*done, out, err, r))
    return r;
  if (tempOut)
    tempOut->release(); // the outputs the user asked for
  r.ok = true;
  return r;
}

bool fromJSON(const json::Value &v, CompileOutputs &out, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("output", out.output) && o.map("header", out.header) &&
         o.map("symbols", out.symbols) && o.map("bytes", out.bytes) &&
         o.map("log", out.log);
}

} // namespace tosa_lsp
