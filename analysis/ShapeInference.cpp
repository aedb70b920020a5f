//===- ShapeInference.cpp - MLIR's shape inference, per function ----------===//
//
// Each requested section is parsed again in this inferrer's own context
// (with an AsmParserState, to map ops back to the text); on every function
// that verified, the declared types are recorded, MLIR's own
// `tosa-infer-shapes` pass runs (under runContained), and each op's records
// compare the types it leaves with the declared ones (OpInference.cpp); a
// function's refine-all edits come from RefineEdits.cpp.
//
//===----------------------------------------------------------------------===//

#include "ShapeInference.h"

#include "CrashGuard.h"
#include "IR.h"
#include "LineIndex.h"
#include "MLIRShared.h"
#include "OpInference.h"
#include "ParsedInference.h"
#include "TaskThread.h"
#include "Timing.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using tosa_lsp::detail::OpInference;
using tosa_lsp::detail::refineEdits;

namespace tosa_lsp {

namespace {

bool overlapsLines(const Range &r, unsigned first, unsigned last) {
  return r.begin.valid() && r.begin.line <= last &&
         (r.end.valid() ? r.end.line : r.begin.line) >= first;
}

bool inside(const Range &outer, Position p) {
  auto key = [](Position x) { return std::make_pair(x.line, x.column); };
  return p.valid() && key(outer.begin) <= key(p) && key(p) <= key(outer.end);
}

} // namespace

struct ShapeInferrer::Impl {
  std::unique_ptr<MLIRContext> context = makeContext();

  static std::unique_ptr<MLIRContext> makeContext() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    std::unique_ptr<MLIRContext> ctx = singleThreadedContext(registry);
    ctx->allowUnregisteredDialects();
    ctx->loadDialect<tosa::TosaDialect, func::FuncDialect>();
    return ctx;
  }

  /// Infers the functions of `sec` that overlap lines [first, last] into
  /// `out` (parsed alone, in this inferrer's context).
  void inferSection(const std::string &text, const LineIndex &lines,
                    const FileAnalysis &fa, const Section &sec, unsigned first,
                    unsigned last, ShapeInference &out,
                    llvm::function_ref<bool()> stop, bool withRefineEdits);
  /// After a crash inside MLIR: the context is abandoned with what lives in
  /// it, and each function asked for says so.
  void abandonAfterCrash(std::unique_ptr<detail::ParsedSection> ps,
                         const FileAnalysis &fa, const Section &sec,
                         unsigned first, unsigned last,
                         const std::string &crash, ShapeInference &out);
};

namespace {

/// Every SSA name the function defines: new names must not collide.
} // namespace

bool refinedTextVerifies(Analyzer &analyzer, const FileAnalysis &fa,
                         const std::string &text, const Config &config,
                         const std::vector<TextEditData> &edits) {
  FileAnalysis after =
      analyzer.analyze(applyEdits(text, edits), fa.path, config);
  auto errors = [](const FileAnalysis &a) {
    return llvm::count_if(a.diagnostics, [](const Diagnostic &d) {
      return d.severity == Severity::Error;
    });
  };
  if (after.sections.size() != fa.sections.size())
    return false;
  for (size_t i = 0; i < fa.sections.size(); ++i)
    if (fa.sections[i].parsed && !after.sections[i].parsed)
      return false;
  return errors(after) <= errors(fa);
}

ShapeInferrer::ShapeInferrer() : impl(std::make_unique<Impl>()) {}
ShapeInferrer::~ShapeInferrer() = default;

void ShapeInferrer::warmUp() {
  // What the first inference in a fresh context does besides the work:
  // load the dialects a TOSA function uses and build the pass.
  static constexpr const char *kText =
      "func.func @w(%a: tensor<2xf32>, %b: tensor<1xf32>) -> tensor<?xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<1xf32>) -> "
      "tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n"
      "}\n";
  MLIRContext &ctx = *impl->context;
  (void)runContained([&] {
    ScopedDiagnosticHandler quiet(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(kText, &ctx);
    if (!m)
      return;
    PassManager pm(&ctx, ModuleOp::getOperationName());
    pm.addNestedPass<func::FuncOp>(tosa::createTosaInferShapesPass());
    pm.enableVerifier(false);
    (void)pm.run(*m);
  });
}

namespace {
/// Asks the caller's stop condition (if any) once more unless it already
/// said yes; whether the work is cancelled.
bool stopped(ShapeInference &out, llvm::function_ref<bool()> stop) {
  if (stop && !out.cancelled && stop())
    out.cancelled = true;
  return out.cancelled;
}
} // namespace

ShapeInference ShapeInferrer::infer(const std::string &text,
                                    const FileAnalysis &fa, unsigned firstLine,
                                    unsigned lastLine) {
  return infer(text, LineIndex(text), fa, firstLine, lastLine);
}

ShapeInference ShapeInferrer::infer(const std::string &text,
                                    const LineIndex &lines,
                                    const FileAnalysis &fa, unsigned firstLine,
                                    unsigned lastLine,
                                    llvm::function_ref<bool()> stop,
                                    bool withRefineEdits) {
  PhaseTimer timer("shape inference (lazy, not in the pipeline)");
  ShapeInference out;
  for (const Section &sec : fa.sections) {
    if (stopped(out, stop))
      break;
    if (sec.lastLine < firstLine || sec.firstLine > lastLine)
      continue;
    bool wanted = llvm::any_of(fa.symbols, [&](const SymbolInfo &s) {
      return s.section == sec.index && s.opName == "func.func" &&
             overlapsLines(s.scope, firstLine, lastLine);
    });
    if (!wanted)
      continue;
    if (!sec.parsed || sec.stale || sec.endOffset > text.size())
      continue;
    // Asked for some of the section's functions: parse each of them alone
    // (its text is usually all it needs), the section only when that fails
    // (aliases, ...) or when it is nested in another symbol's op.
    // Counted, not listed: a hover asks for one or two of a file's
    // thousands of functions.
    std::vector<const SymbolInfo *> wantedFns;
    size_t fns = 0;
    bool nested = false;
    for (const SymbolInfo &s : fa.symbols) {
      if (s.section != sec.index)
        continue;
      if (s.opName != "func.func") {
        nested = true;
        continue;
      }
      ++fns;
      if (overlapsLines(s.scope, firstLine, lastLine))
        wantedFns.push_back(&s);
    }
    if (nested || wantedFns.size() == fns) {
      impl->inferSection(text, lines, fa, sec, firstLine, lastLine, out, stop,
                         withRefineEdits);
      continue;
    }
    for (const SymbolInfo *s : wantedFns) {
      std::optional<size_t> b = lines.offset(s->scope.begin),
                            e = lines.offset(s->scope.end);
      size_t before = out.functions.size();
      if (b && e && *b < *e && *b >= sec.beginOffset && *e <= sec.endOffset) {
        Section alone = sec;
        alone.beginOffset = *b;
        alone.endOffset = *e;
        alone.firstLine = s->scope.begin.line;
        alone.firstColumn = s->scope.begin.column;
        alone.lastLine = s->scope.end.line;
        impl->inferSection(text, lines, fa, alone, s->scope.begin.line,
                           s->scope.end.line, out, stop, withRefineEdits);
      }
      if (out.functions.size() == before && !out.cancelled)
        impl->inferSection(text, lines, fa, sec, s->scope.begin.line,
                           s->scope.end.line, out, stop, withRefineEdits);
      if (out.cancelled)
        break;
    }
  }
  return out;
}

namespace {

/// Like mlir-opt: a lone top-level module is the root, anything else is
/// wrapped in one.
void wrapModule(detail::ParsedSection &ps, Block &block, MLIRContext &ctx) {
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    Operation *m = &block.front();
    m->remove();
    ps.module = OwningOpRef<ModuleOp>(cast<ModuleOp>(m));
    return;
  }
  OpBuilder b(&ctx);
  ps.module = OwningOpRef<ModuleOp>(ModuleOp::create(b, b.getUnknownLoc()));
  ps.module->getBody()->getOperations().splice(ps.module->getBody()->begin(),
                                               block.getOperations());
}

/// Before the pass: the ops to report and every value's declared type.
void declaredTypes(const detail::ParsedSection &ps, func::FuncOp fn,
                   std::vector<Operation *> &ops,
                   llvm::DenseMap<Value, Type> &declared) {
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          declared[a] = a.getType();
    if (op == fn.getOperation())
      return;
    for (Value v : op->getResults())
      declared[v] = v.getType();
    if (op->getDialect() && isa<tosa::TosaDialect>(op->getDialect()) &&
        op->getNumResults() && ps.state.getOpDef(op))
      ops.push_back(op);
  });
}

/// `fi.lastLineSoFar` from its ops (appended).
void indexLastLines(FunctionInference &fi) {
  unsigned lastLine = 0;
  for (const InferredOp &op : fi.ops)
    fi.lastLineSoFar.push_back(lastLine = std::max(lastLine, op.lastLine()));
}

/// `early.lines`' ops of `fn` after the pass (`ops` in text order) and the
/// ops defining their operands, recorded alone and delivered.
void recordEarly(const detail::ParsedSection &ps, func::FuncOp fn,
                 MLIRContext &ctx, const FunctionInference &fi,
                 llvm::ArrayRef<Operation *> ops,
                 const llvm::DenseMap<Value, Type> &declared,
                 const detail::EarlyOps &early) {
  auto [lo, hi] = std::minmax_element(early.lines.begin(), early.lines.end());
  llvm::SmallPtrSet<Operation *, 8> chosen;
  for (Operation *op : ops) {
    Range r = ps.opRange(op);
    if (r.begin.line > *hi) // pre-order: by where each op begins
      break;
    if (r.end.line < *lo ||
        llvm::none_of(
            early.lines,
            [&](unsigned l) { return r.begin.line <= l && l <= r.end.line; }))
      continue;
    chosen.insert(op);
    // A hover on an operand shows the op that defines it.
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp())
        chosen.insert(d);
  }
  InferredOpWriter writer;
  OpInference inference(ps, fn, declared, writer, ctx, fi.name);
  FunctionInference out;
  out.name = fi.name;
  out.scope = fi.scope;
  out.section = fi.section;
  for (Operation *op : ops)
    if (chosen.count(op))
      out.ops.push_back(inference.infer(op, fi.section));
  indexLastLines(out);
  out.pool = writer.pool();
  early.deliver(std::move(out));
}

/// One function without errors: upstream's pass on it (in `ctx`, where it
/// was parsed), then its ops' records (and the refine-all edits). False
/// once `stopped`.
bool inferFunction(const detail::ParsedSection &ps, func::FuncOp fn,
                   MLIRContext &ctx, FunctionInference &fi,
                   InferredOpWriter &writer, llvm::function_ref<bool()> stopped,
                   bool withRefineEdits, llvm::function_ref<void()> betweenOps,
                   const detail::EarlyOps *early) {
  std::vector<Operation *> ops;
  llvm::DenseMap<Value, Type> declared;
  declaredTypes(ps, fn, ops, declared);
  PassManager pm(&ctx, func::FuncOp::getOperationName());
  pm.addPass(tosa::createTosaInferShapesPass());
  // What the pass leaves may not verify: a declared static size that
  // contradicts a propagated one stays (the pass keeps declared types
  // it cannot join) and its op then fails. Those are the
  // contradictions reported below, so no verification here.
  pm.enableVerifier(false);
  if (betweenOps)
    betweenOps();
  if (stopped())
    return false;
  if (failed(pm.run(fn))) {
    fi.skipped = "tosa-infer-shapes failed on the function";
    return true;
  }
  if (early && !early->lines.empty())
    recordEarly(ps, fn, ctx, fi, ops, declared, *early);
  OpInference inference(ps, fn, declared, writer, ctx, fi.name);
  // Sized once: grown by doubling, the records were copied and their old
  // buffers freed and faulted in again (~1.5 % of a many-function open).
  fi.ops.reserve(fi.ops.size() + ops.size());
  fi.lastLineSoFar.reserve(fi.lastLineSoFar.size() + ops.size());
  size_t done = 0;
  for (Operation *op : ops) {
    if (betweenOps)
      betweenOps();
    if (++done % 256 == 0 && stopped())
      return false;
    fi.ops.push_back(inference.infer(op, fi.section));
  }
  indexLastLines(fi);
  if (stopped())
    return false;
  if (withRefineEdits) {
    std::vector<TextEditData> edits;
    refineEdits(ps, fn, declared, fi, edits);
    // Kept as ranges and pooled texts (mostly types, repeated).
    fi.refineEdits.reserve(edits.size());
    for (const TextEditData &e : edits)
      fi.refineEdits.push_back({e.range, writer.intern(e.newText)});
    fi.refineKnown = true;
  }
  fi.pool = writer.pool();
  return true;
}

} // namespace

std::vector<detail::ListedFunction>
detail::listTopLevelFunctions(const ParsedSection &ps,
                              const FunctionsToInfer &what) {
  std::vector<ListedFunction> listed;
  for (Operation &top : *ps.module.get().getBody()) {
    auto fn = dyn_cast<func::FuncOp>(top);
    const AsmParserState::OperationDefinition *def = ps.state.getOpDef(&top);
    if (!fn || !def)
      continue;
    ListedFunction f;
    f.fn = fn;
    f.fi.name = fn.getSymName().str();
    f.fi.scope = ps.toFileRange(def->scopeLoc);
    f.fi.section = what.section;
    // Not in the file (a unit's stubs) or not asked for.
    if (!f.fi.scope.begin.valid() ||
        !overlapsLines(f.fi.scope, what.firstLine, what.lastLine))
      continue;
    if (llvm::any_of(what.errors,
                     [&](Position p) { return inside(f.fi.scope, p); }))
      f.fi.skipped = "the function has errors";
    else if (fn.isExternal())
      f.fi.skipped = "the function has no body";
    listed.push_back(std::move(f));
  }
  return listed;
}

bool detail::inferListed(const ParsedSection &ps, MLIRContext &ctx,
                         ListedFunction &f, bool withRefineEdits,
                         llvm::function_ref<bool()> stopped,
                         InferredOpWriter *shared,
                         llvm::function_ref<void()> betweenOps,
                         const EarlyOps *early) {
  if (!f.fi.skipped.empty())
    return true;
  std::optional<InferredOpWriter> own;
  if (!shared)
    own.emplace();
  InferredOpWriter &writer = shared ? *shared : *own;
  if (!inferFunction(ps, cast<func::FuncOp>(f.fn), ctx, f.fi, writer, stopped,
                     withRefineEdits, betweenOps, early))
    return false;
  if (own && f.fi.pool)
    own->shrink();
  return true;
}

bool detail::inferTopLevelFunctions(const ParsedSection &ps, MLIRContext &ctx,
                                    const FunctionsToInfer &what,
                                    llvm::function_ref<bool()> stopped,
                                    InferredOpWriter *shared,
                                    std::vector<FunctionInference> &out) {
  for (ListedFunction &f : listTopLevelFunctions(ps, what)) {
    if (stopped() ||
        !inferListed(ps, ctx, f, what.withRefineEdits, stopped, shared))
      return false;
    out.push_back(std::move(f.fi));
  }
  return true;
}

void ShapeInferrer::Impl::inferSection(
    const std::string &text, const LineIndex &lines, const FileAnalysis &fa,
    const Section &sec, unsigned first, unsigned last, ShapeInference &out,
    llvm::function_ref<bool()> stop, bool withRefineEdits) {
  // Asked between steps; once true, nothing more is done or kept.
  auto stopped = [&] { return tosa_lsp::stopped(out, stop); };
  if (stopped())
    return;
  // Errors decide what is skipped: a function with an error inside, or the
  // whole section when an error has no place in it.
  std::vector<Position> errors;
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.section == sec.index) {
      if (!d.range.begin.valid())
        return;
      errors.push_back(d.range.begin);
    }
  }

  MLIRContext &ctx = *context;
  // Owned here and intentionally leaked if MLIR crashes (see CrashGuard.h).
  auto ps = std::make_unique<detail::ParsedSection>();
  ps->section = sec;
  ps->sourceMgr.AddNewSourceBuffer(
      detail::parserBuffer(
          std::string_view(text).substr(sec.beginOffset,
                                        sec.endOffset - sec.beginOffset),
          text, fa.path),
      llvm::SMLoc());
  ps->lines = &lines;
  ps->bufferStart =
      ps->sourceMgr.getMemoryBuffer(ps->sourceMgr.getMainFileID())
          ->getBufferStart();
  ScopedDiagnosticHandler silence(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });

  std::vector<FunctionInference> results;
  InferredOpWriter writer;
  std::optional<std::string> crash = runContained([&] {
    Block block;
    ParserConfig config(&ctx, /*verifyAfterParse=*/false);
    if (failed(parseAsmSourceFile(ps->sourceMgr, &block, config, &ps->state)) ||
        stopped())
      return;
    wrapModule(*ps, block, ctx);
    detail::FunctionsToInfer what;
    what.section = sec.index;
    what.firstLine = first;
    what.lastLine = last;
    what.errors = std::move(errors);
    what.withRefineEdits = withRefineEdits;
    (void)detail::inferTopLevelFunctions(*ps, ctx, what, stopped, &writer,
                                         results);
  });
  if (crash) {
    abandonAfterCrash(std::move(ps), fa, sec, first, last, *crash, out);
    return;
  }
  writer.shrink();
  // The scratch parse is as big as the analysis' one: its pages go back
  // now, not when this pool thread next allocates, and in bulk: at once
  // only for the moment of the collect, so requests answered meanwhile
  // keep theirs.
  {
    FreeInBulk bulk;
    ps.reset();
  }
  if (out.cancelled)
    return;
  for (FunctionInference &f : results)
    out.functions.push_back(std::move(f));
}

void ShapeInferrer::Impl::abandonAfterCrash(
    std::unique_ptr<detail::ParsedSection> ps, const FileAnalysis &fa,
    const Section &sec, unsigned first, unsigned last, const std::string &crash,
    ShapeInference &out) {
  // The context may be half-updated: abandon it and what lives in it.
  (void)ps.release();
  (void)context.release();
  context = makeContext();
  for (const SymbolInfo &s : fa.symbols)
    if (s.section == sec.index && s.opName == "func.func" &&
        overlapsLines(s.scope, first, last)) {
      FunctionInference fi;
      fi.name = s.name;
      fi.scope = s.scope;
      fi.section = sec.index;
      fi.skipped = "MLIR crashed while inferring shapes (" + crash + ")";
      out.functions.push_back(std::move(fi));
    }
}

} // namespace tosa_lsp
