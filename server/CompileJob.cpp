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

CompileJobResult
runCompileJob(const CompileJob &job,
              const std::function<void(const std::string &)> &progress,
              const std::atomic<bool> &cancel) {
  CompileJobResult r;
  // Work files live in a directory of their own, removed on every path;
  // outputs go to the chosen directory or to a temp one kept only when the
  // compile succeeds.
  TempDir work("tosa-lsp-work");
  if (work.error()) {
    r.error = "cannot create a temp directory: " + work.error().message();
    return r;
  }
  std::optional<TempDir> tempOut;
  std::string outDir;
  if (job.outputDir.empty()) {
    tempOut.emplace("tosa-lsp-compile");
    if (tempOut->error()) {
      r.error = "cannot create a temp directory: " + tempOut->error().message();
      return r;
    }
    outDir = tempOut->path();
  } else {
    Expected<std::string> dir =
        resolveOutputDir(job.outputDir, job.outputDirRoot);
    if (!dir) {
      r.error = toString(dir.takeError());
      return r;
    }
    outDir = *dir;
  }
  // Function names may hold "/", ".." or any byte: the file name is
  // sanitised so the output stays in outDir.
  std::string stem = sys::path::stem(job.name).str();
  if (!job.function.empty())
    stem += "_" + job.function;
  stem = sanitizeFileName(stem);
  const char *ext = job.emit == "shared"    ? ".so"
                    : job.emit == "obj"     ? ".o"
                    : job.emit == "asm"     ? ".s"
                    : job.emit == "llvm-ir" ? ".ll"
                                            : ".mlir";
  SmallString<256> input(work.path()), output(outDir), out(work.path()),
      err(work.path());
  sys::path::append(input, "input.mlir");
  sys::path::append(output, stem + ext);
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
  std::vector<std::string> argStore = {job.self,
                                       "compile",
                                       std::string(input),
                                       "-o",
                                       std::string(output),
                                       "--emit",
                                       job.emit,
                                       "--header-if-possible",
                                       "--format=json",
                                       "--display-name",
                                       job.name,
                                       "--mode",
                                       job.mode};
  if (!job.function.empty()) {
    argStore.push_back("--function");
    argStore.push_back(job.function);
  }
  // Never write over an existing file unless the user's settings say so;
  // never over the document, whatever they say.
  argStore.push_back(job.overwrite ? "--force" : "--new-name");
  if (!job.source.empty()) {
    argStore.push_back("--protect");
    argStore.push_back(job.source);
  }
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

  auto start = std::chrono::steady_clock::now();
  size_t seen = 0;
  auto pumpProgress = [&] {
    std::string log = readAll(std::string(err));
    while (true) {
      size_t nl = log.find('\n', seen);
      if (nl == std::string::npos)
        break;
      StringRef line = StringRef(log).slice(seen, nl);
      if (line.consume_front("tosa-lsp: "))
        progress(line.str());
      seen = nl + 1;
    }
  };
  sys::ProcessInfo done;
  while (true) {
    std::string waitError;
    done = sys::Wait(pi, /*SecondsToWait=*/0, &waitError);
    if (done.Pid == pi.Pid)
      break; // exited (or crashed)
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
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pumpProgress();
  std::string stdoutText = readAll(std::string(out));
  std::string stderrText = readAll(std::string(err));
  if (done.ReturnCode < 0 || done.ReturnCode > 1) {
    r.error = "the compiler process failed (exit code " +
              std::to_string(done.ReturnCode) + ")" +
              (stderrText.empty() ? "" : ": " + stderrText);
    return r;
  }
  Expected<json::Value> parsed = json::parse(stdoutText);
  json::Object *obj = parsed ? parsed->getAsObject() : nullptr;
  if (!obj) {
    if (!parsed)
      consumeError(parsed.takeError());
    r.error = "the compiler process gave no result" +
              (stderrText.empty() ? std::string() : ": " + stderrText);
    return r;
  }
  if (obj->getBoolean("ok") != std::optional<bool>(true)) {
    std::string msg = "compilation failed";
    if (const json::Array *errs = obj->getArray("errors"))
      for (const json::Value &e : *errs)
        if (auto s = e.getAsString())
          msg += "\n" + s->str();
    r.error = msg;
    return r;
  }
  json::Path::Root root("the compiler's report");
  if (!fromJSON(*parsed, r.result, root)) {
    r.error = "the compiler process gave an unreadable result: " +
              toString(root.getError());
    return r;
  }
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
