//===- LongWork.cpp - TosaServer's previews and compile jobs --------------===//
//
// The lowering preview (on the pool, in its own MLIRContext, optionally
// written to a read-only file) and compile jobs (a `tosa-lsp compile`
// child per job, cancellable, with progress).
//
//===----------------------------------------------------------------------===//

#include "TosaServer.h"

#include "ServerSupport.h"

#include "Choices.h"
#include "Compile.h"
#include "CompileJob.h"
#include "LoweredGraph.h"
#include "Lowering.h"
#include "OutputFiles.h"
#include "Query.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/Path.h"

#include <thread>

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// Lowering preview
//===----------------------------------------------------------------------===//

void TosaServer::previewLowering(PreviewRequest req,
                                 Callback<PreviewResult> cb) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(req.uri);
  if (!doc)
    return cb(invalidParams("unknown document: " + req.uri + " (not opened)"));
  LowerOptions opts;
  opts.annotate = true;
  std::optional<LowerStage> stage = parseStage(req.stage);
  if (!stage)
    return cb(invalidParams(
        unknownChoiceMessage("stage", req.stage, choices().stages)));
  std::optional<LowerMode> mode = parseMode(req.mode);
  if (!mode)
    return cb(
        invalidParams(unknownChoiceMessage("mode", req.mode, choices().modes)));
  opts.stage = *stage;
  opts.mode = *mode;
  // What a compile from here would build (compile.threads).
  opts.threads = configFor(doc->path).compile.threads;
  if (req.function) {
    opts.function = *req.function;
  } else if (req.position) {
    Scheduler::SnapshotPtr snap = doc->latest();
    if (!snap)
      return cb(invalidParams("unknown document or bad position"));
    std::optional<Position> at = snap->lines.fromLsp(*req.position);
    const SymbolInfo *fn = at ? functionAt(snap->analysis, *at) : nullptr;
    if (!fn)
      return cb(invalidParams("no function at this position"));
    opts.function = fn->name;
  }
  auto work = [this, cb = std::move(cb), doc, text = doc->current().text, opts,
               writeFile = req.writeFile](unsigned) mutable {
    Expected<LowerResult> lowered = lower(*text, doc->path, opts);
    if (!lowered)
      return cb(make_error<LSPError>("lowering failed\n" +
                                         toString(lowered.takeError()),
                                     ErrorCode::RequestFailed));
    LowerResult &r = *lowered;
    PreviewResult out;
    LineTable preview(r.text);
    LineTable source(*text); // the text that was lowered, not a snapshot
    for (const PreviewMapping &m : r.mappings)
      out.mappings.push_back(
          {preview.toLsp(Position{m.previewLine, m.previewColumn + 1}),
           source.toLsp(Position{m.sourceLine, m.sourceColumn}), m.sourceOp});
    if (writeFile) {
      std::string content;
      raw_string_ostream os(content);
      os << "// Lowering preview (" << stageName(opts.stage) << ", "
         << modeName(opts.mode)
         << (opts.threads == 1 ? std::string()
             : opts.threads ? ", " + std::to_string(opts.threads) + " threads"
                            : std::string(", the machine's threads"))
         << ") of @" << opts.function
         << " — read-only, regenerated on request\n"
         << r.text;
      out.file = writePreviewFile(*doc, opts.function, content);
    }
    out.text = std::move(r.text);
    out.pipeline = std::move(r.pipeline);
    cb(std::move(out));
  };
  runHeavy(std::move(work));
}

static Error graphFailed(const Twine &message) {
  return make_error<LSPError>(message.str(), ErrorCode::RequestFailed);
}

void TosaServer::loweredGraph(Scheduler::SnapshotPtr snap,
                              const std::string &name, const std::string &stage,
                              const std::string &mode,
                              Callback<GraphReply> cb) {
  std::optional<LowerStage> st = parseStage(stage);
  if (!st)
    return cb(
        invalidParams(unknownChoiceMessage("stage", stage, choices().stages)));
  std::optional<LowerMode> md = parseMode(mode);
  if (!md)
    return cb(
        invalidParams(unknownChoiceMessage("mode", mode, choices().modes)));
  const SymbolInfo *fn = graphFunctionNamed(snap->analysis, name);
  for (uint32_t i : snap->analysis.errorIndices())
    if (fn && contains(fn->scope, snap->analysis.diagnostics[i].range.begin))
      return cb(graphFailed("@" + name +
                            " has errors: fix them to see it after " + stage +
                            " lowering"));
  // Kept per version: the view asks again after each publish.
  std::shared_ptr<OpenDocument> doc = scheduler->document(snap->uri);
  std::string key = name + "\n" + stage + "\n" + mode;
  if (doc)
    if (std::shared_ptr<const FunctionGraph> g =
            doc->loweredGraph(snap->version, key)) {
      ++loweredGraphsReused;
      return cb(GraphReply{std::move(snap), std::move(g)});
    }
  runHeavy([this, doc, key, snap = std::move(snap), name, st = *st, md = *md,
            cb = std::move(cb)](unsigned) mutable {
    LowerOptions opts;
    opts.function = name;
    opts.stage = st;
    opts.mode = md;
    Expected<GenericFunction> lowered =
        lowerForGraph(snap->text, snap->path, opts);
    if (!lowered)
      return cb(
          graphFailed("lowering failed\n" + toString(lowered.takeError())));
    const SymbolInfo *f = graphFunctionNamed(snap->analysis, name);
    if (!f)
      return cb(graphFailed("@" + name + " is gone from the file"));
    FunctionGraph source = buildGraph(snap->analysis, *f);
    GraphReply r;
    r.graph =
        std::make_shared<const FunctionGraph>(buildGraph(*lowered, &source));
    ++loweredGraphsMade;
    if (doc)
      doc->setLoweredGraph(snap->version, key, r.graph);
    r.snapshot = std::move(snap);
    cb(std::move(r));
  });
}

/// One read-only preview file per (document, function), rewritten on each
/// request, in a directory of this server's own that is removed with it:
/// previews never pile up in the temp directory. Empty on failure.
std::string TosaServer::writePreviewFile(OpenDocument &doc,
                                         const std::string &function,
                                         StringRef content) {
  std::lock_guard<std::mutex> lock(previewMu);
  if (previewsRemoved)
    return "";
  if (!previewDir)
    previewDir.emplace("tosa-lsp-preview");
  if (previewDir->error()) {
    Logger::error("preview: {0}", previewDir->error().message());
    return "";
  }
  std::string stem = doc.previewStem(function, [&] {
    // Function names may hold "/" or "..": sanitised, and numbered so that
    // two documents named alike do not share a file.
    SmallString<256> p(previewDir->path());
    sys::path::append(p, std::to_string(++previewFiles) + "-" +
                             sanitizeFileName(sys::path::stem(doc.path).str() +
                                              "-" + function + "-lowered"));
    return std::string(p);
  });
  std::string file = stem + ".mlir";
  sys::fs::remove(file); // read-only: replaced, not written to
  Expected<std::vector<std::string>> written =
      writeOutputs(stem, {OutputFile{".mlir", content}}, OnExisting::Fail, {});
  if (!written) {
    Logger::error("preview: {0}", toString(written.takeError()));
    return "";
  }
  sys::fs::setPermissions(file, sys::fs::owner_read | sys::fs::group_read |
                                    sys::fs::others_read);
  return file;
}

void TosaServer::removePreviews() {
  std::lock_guard<std::mutex> lock(previewMu);
  previewsRemoved = true;
  previewDir.reset();
}

//===----------------------------------------------------------------------===//
// Compile jobs
//===----------------------------------------------------------------------===//

std::function<void()>
TosaServer::compile(CompileRequest req,
                    std::function<void(const CompileProgress &)> progress,
                    Callback<CompileOutputs> cb) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(req.uri);
  if (!doc) {
    cb(invalidParams("unknown document: " + req.uri + " (not opened)"));
    return [] {};
  }
  if (!parseMode(req.mode)) {
    cb(invalidParams(unknownChoiceMessage("mode", req.mode, choices().modes)));
    return [] {};
  }
  if (!parseEmit(req.emit)) {
    cb(invalidParams(
        unknownChoiceMessage("emit kind", req.emit, choices().emits)));
    return [] {};
  }
  CompileJob job;
  job.self = options.self;
  job.text = *doc->current().text;
  job.name = sys::path::filename(doc->path).str();
  job.function = req.function;
  job.emit = req.emit;
  job.mode = req.mode;
  Config config = configFor(doc->path);
  job.source = doc->path;
  job.outputDir = config.compile.outputDir;
  job.outputDirRoot = config.compile.outputDirRoot;
  job.overwrite = config.compile.overwrite;
  job.timeoutSeconds = config.compile.timeoutSeconds;
  job.memoryLimitMB = config.compile.memoryLimitMB;
  job.threads = config.compile.threads;

  auto cancel = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard<std::mutex> lock(compilesMu);
    *cancel = compilesStopped;
    compiles.insert(cancel);
  }
  std::string title =
      "Compiling " + (job.function.empty() ? job.name : "@" + job.function);
  auto work = [this, job, progress, cb = std::move(cb), cancel,
               title](unsigned) mutable {
    progress({CompileProgress::Begin, title});
    CompileJobResult r = runCompileJob(
        job,
        [&](const std::string &step) {
          progress({CompileProgress::Report, step});
        },
        *cancel);
    progress({CompileProgress::End, r.ok ? "done" : r.error});
    {
      std::lock_guard<std::mutex> lock(compilesMu);
      compiles.erase(cancel);
    }
    if (r.ok)
      cb(std::move(r.result));
    else
      cb(make_error<LSPError>(r.error, r.cancelled ? ErrorCode::RequestCancelled
                                                   : ErrorCode::RequestFailed));
  };
  if (compilePool)
    compilePool->run(std::move(work));
  else
    work(0);
  return [cancel] { *cancel = true; };
}

void TosaServer::cancelCompiles() {
  std::lock_guard<std::mutex> lock(compilesMu);
  compilesStopped = true;
  for (const auto &cancel : compiles)
    *cancel = true;
}

bool TosaServer::waitCompilesIdle(std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(compilesMu);
      if (compiles.empty())
        return true;
    }
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

} // namespace tosa_lsp
