//===- Lowering.cpp - TOSA -> linalg/scf/LLVM preview ---------------------===//

#include "Lowering.h"
#include "MLIRShared.h"

#include "LoweringIR.h"

#include "Analysis.h"
#include "Config.h"
#include "CrashGuard.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

using namespace mlir;

namespace tosa_lsp {

std::optional<LowerStage> parseStage(const std::string &s) {
  if (s == "linalg")
    return LowerStage::Linalg;
  if (s == "vector")
    return LowerStage::Vector;
  if (s == "loops")
    return LowerStage::Loops;
  if (s == "llvm")
    return LowerStage::LLVM;
  return std::nullopt;
}

std::optional<LowerMode> parseMode(const std::string &s) {
  if (s == "upstream")
    return LowerMode::Upstream;
  if (s == "safe")
    return LowerMode::Safe;
  if (s == "versioned")
    return LowerMode::Versioned;
  if (s == "fast")
    return LowerMode::Fast;
  return std::nullopt;
}

const char *stageName(LowerStage s) {
  switch (s) {
  case LowerStage::Linalg:
    return "linalg";
  case LowerStage::Vector:
    return "vector";
  case LowerStage::Loops:
    return "loops";
  case LowerStage::LLVM:
    return "llvm";
  }
  return "";
}

const char *modeName(LowerMode m) {
  switch (m) {
  case LowerMode::Upstream:
    return "upstream";
  case LowerMode::Safe:
    return "safe";
  case LowerMode::Versioned:
    return "versioned";
  case LowerMode::Fast:
    return "fast";
  }
  return "";
}

std::string pipelineFor(LowerStage stage, LowerMode mode, bool strided,
                        bool kernels, uint64_t streamThreshold,
                        unsigned threads) {
  // The upstream TOSA pipeline (see ENVIRONMENT.md), cut at each stage,
  // plus what it misses to compile control flow (tosa-to-scf: cond_if and
  // while_loop; a no-op elsewhere) and every element-wise op: tosa.apply_scale
  // (integer tosa.mul with a shift), clones from buffer deallocation, and
  // math ops LLVM has no intrinsic for (math.erf -> libm).
  bool upstream = mode == LowerMode::Upstream;
  unsigned lanes = upstream || !kernels ? 0 : detail::hostKernelLanes();
  bool parallel = lanes && threads != 1; // 0: the running machine's
  // With kernels, conv2d weights as HWCF (a transpose of the weights, once
  // per call): the output channels are then contiguous in the weights too,
  // the vector dimension of the convolution kernel.
  std::string p = std::string("func.func(tosa-to-scf,tosa-to-linalg-named") +
                  (lanes ? "{prefer-conv2d-kernel-layout-hwcf=true}" : "") +
                  ",tosa-to-linalg,tosa-to-arith{include-apply-rescale=true},"
                  "tosa-to-tensor)";
  // Beyond upstream: fold the size-1 tests that an enclosing version already
  // decided (cse makes them the same value, canonicalize propagates scf.if
  // conditions), then fuse element-wise chains on tensors, so a chain is one
  // loop nest and broadcast operands are read in place (projected maps).
  // With kernels, small depthwise and max-pool windows unrolled into
  // element-wise ops first (WindowOps.cpp), so a bias add fuses into them.
  if (!upstream)
    p += std::string(",canonicalize,cse,canonicalize") +
         (lanes ? ",func.func(tosa-lsp-unroll-windows)" : "") +
         ",linalg-fuse-elementwise-ops";
  if (stage == LowerStage::Linalg)
    return "builtin.module(" + p + ")";
  // Matmuls and convolutions tiled, packed and vectorised (Kernels.cpp).
  if (lanes)
    p += ",tosa-lsp-kernels{lanes=" + std::to_string(lanes) +
         (streamThreshold
              ? " stream-threshold=" + std::to_string(streamThreshold)
              : "") +
         (parallel ? " threads=" + std::to_string(threads) : "") +
         "},canonicalize,cse";
  if (stage == LowerStage::Vector)
    return "builtin.module(" + p + ")";
  if (upstream) {
    p += ",one-shot-bufferize{bufferize-function-boundaries "
         "allow-return-allocs-from-loops}";
  } else {
    // Results written straight into `F_into`'s destination argument;
    // contiguous memrefs at function boundaries give unit-stride inner
    // loops that LLVM vectorises. Identity layouts for the buffers of
    // scf.if results too: a fully dynamic one there makes the function
    // copy its result into an identity-layout buffer before returning.
    // Strided copies (a padded input's interior) as loops, not calls.
    p += std::string(",eliminate-empty-tensors,one-shot-bufferize{"
                     "bufferize-function-boundaries "
                     "function-boundary-type-conversion=") +
         (strided ? "fully-dynamic-layout-map" : "identity-layout-map") +
         " unknown-type-conversion=identity-layout-map"
         " allow-return-allocs-from-loops}"
         ",drop-equivalent-buffer-results,func.func(tosa-lsp-copy-loops)";
  }
  p += ",convert-linalg-to-loops";
  // The kernels' vector transfers as 1-D loads and stores (no stack
  // buffers: an alloca per tile, inside loops, overflows the stack).
  if (!upstream)
    p += ",convert-vector-to-scf{full-unroll=true}";
  // The kernels' tagged loops on threads: scf.parallel here, OpenMP's
  // parallel loops once buffer deallocation is done (its canonicalisations
  // would put ops between omp.wsloop and its loop nest).
  if (parallel)
    p += ",func.func(tosa-lsp-parallel-loops)";
  if (stage == LowerStage::Loops)
    return "builtin.module(" + p + ")";
  // lower-affine again after expand-strided-metadata: the offsets of
  // subviews (tosa.slice, tosa.scatter's loops) become affine.apply there,
  // which nothing else converts (they reached the LLVM IR translation as
  // unrealized casts: "LLVM Translation failed").
  p += ",buffer-deallocation-pipeline,convert-bufferization-to-memref,";
  if (parallel)
    p += "convert-scf-to-openmp{num-threads=" + std::to_string(threads) +
         "},func.func(tosa-lsp-finish-omp-loops),";
  p += "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
       "finalize-memref-to-llvm,";
  if (!upstream)
    // Float reductions reassociated (MemoryKernels.cpp: a row's sum as a
    // tree of vector adds, not one lane after the other).
    p += "convert-vector-to-llvm{reassociate-fp-reductions},"
         "convert-ub-to-llvm,";
  p += "convert-math-to-llvm,convert-math-to-libm,"
       "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
       "convert-index-to-llvm,";
  if (parallel)
    p += "convert-openmp-to-llvm,";
  p += "reconcile-unrealized-casts";
  return "builtin.module(" + p + ")";
}

std::string pipelineFor(const LowerOptions &options) {
  return pipelineFor(options.stage, options.mode, options.strided,
                     options.kernels, options.streamThreshold, options.threads);
}

namespace detail {

static llvm::Error noFunctionError(const std::string &function,
                                   const std::string &path) {
  return makeError("no function @" + function + " in " + path);
}

DialectRegistry &loweringRegistry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerFileDialects(*r); // what the analysis parses with
    registerBuiltinDialectTranslation(*r);
    registerLLVMDialectTranslation(*r);
    registerOpenMPDialectTranslation(*r); // --threads
    return r;
  }();
  return *registry;
}

void registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerKernelPasses();
  });
}

const Section *sectionDefining(const std::string &text,
                               const std::vector<Section> &sections,
                               const std::string &function) {
  for (const Section &s : sections) {
    std::string_view body = std::string_view(text).substr(
        s.beginOffset, s.endOffset - s.beginOffset);
    if (body.find("@" + function + "(") != std::string_view::npos ||
        body.find("@\"" + function + "\"(") != std::string_view::npos)
      return &s;
  }
  return nullptr;
}

/// Whether `body` has `func.func [public] @function(`: a definition, not a
/// call or a (private) declaration.
static bool definesFunction(std::string_view body,
                            const std::string &function) {
  auto endsWithWord = [](std::string_view s, std::string_view word) {
    size_t end = s.find_last_not_of(" \t\r\n");
    if (end == std::string_view::npos || end + 1 < word.size())
      return std::string_view::npos;
    size_t begin = end + 1 - word.size();
    return s.substr(begin, word.size()) == word ? begin
                                                : std::string_view::npos;
  };
  for (const std::string &name :
       {"@" + function + "(", "@\"" + function + "\"("}) {
    for (size_t at = body.find(name); at != std::string_view::npos;
         at = body.find(name, at + 1)) {
      std::string_view before = body.substr(0, at);
      if (size_t pub = endsWithWord(before, "public");
          pub != std::string_view::npos)
        before = before.substr(0, pub);
      if (endsWithWord(before, "func.func") != std::string_view::npos)
        return true;
    }
  }
  return false;
}

llvm::Error lowerForNative(const std::string &text, const std::string &path,
                           const std::string &function, LowerMode mode,
                           bool strided, bool kernels, LoweredSection &out,
                           const std::function<void()> &before) {
  std::vector<Section> sections = splitSections(text);
  if (function.empty() && sections.size() > 1)
    return makeError(ErrorTopic::Function,
                     path + " has " + std::to_string(sections.size()) +
                         " `// -----` sections; choose a function");
  // Two sections defining @function: taking the first would run code the
  // user may not mean.
  std::vector<const Section *> defining;
  for (const Section &s : sections)
    if (!function.empty() &&
        definesFunction(std::string_view(text).substr(
                            s.beginOffset, s.endOffset - s.beginOffset),
                        function))
      defining.push_back(&s);
  if (defining.size() > 1) {
    std::string where;
    for (const Section *s : defining)
      where += (where.empty() ? "" : ", ") + std::string("section ") +
               std::to_string(s->index + 1) + " (line " +
               std::to_string(s->firstLine) + ")";
    return makeError(ErrorTopic::Function,
                     "@" + function +
                         " is ambiguous: " + std::to_string(defining.size()) +
                         " `// -----` sections of " + path +
                         " define it: " + where + "; rename all but one");
  }
  const Section *sec = function.empty() ? &sections.front()
                       : defining.size() == 1
                           ? defining.front()
                           : sectionDefining(text, sections, function);
  if (!sec)
    return noFunctionError(function, path);
  if (before)
    before();
  LowerOptions lowerOpts;
  lowerOpts.function = function;
  lowerOpts.stage = LowerStage::LLVM;
  lowerOpts.mode = mode;
  lowerOpts.cInterface = true;
  lowerOpts.strided = strided;
  lowerOpts.kernels = kernels;
  lowerOpts.streamThreshold = out.streamThreshold;
  lowerOpts.threads = out.threads;
  lowerOpts.elided = out.elidedFill;
  return lowerSection(text, path, *sec, lowerOpts, out);
}

/// Some MLIR 22 custom parsers fail without a diagnostic; the analysis
/// knows how to place an error for that, so ask it (failure path only).
static SourceDiagnostic silentParseError(const std::string &text,
                                         const std::string &path,
                                         const Section &sec) {
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, path, Config());
  for (const Diagnostic &d : fa.diagnostics)
    if (d.severity == Severity::Error && d.section == sec.index &&
        d.range.begin.valid())
      return {path, d.range.begin.line, d.range.begin.column, d.message};
  return {path, 0, 0,
          "the input did not parse and MLIR's parser gave no reason (a "
          "custom parser failed silently)"};
}

/// Text MLIR's parser would overflow its stack on, or allocate without
/// bound for: refused before parsing, at its file position.
static llvm::Error refuseBeforeParsing(const std::string &text,
                                       const std::string &path,
                                       const Section &sec) {
  std::string_view secView = std::string_view(text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  // The 1-based line and column of an offset in the section.
  auto at = [&](size_t inSection) {
    size_t off = sec.beginOffset + inSection;
    unsigned line = 1 + std::count(text.begin(), text.begin() + off, '\n');
    size_t lineStart = text.rfind('\n', off);
    unsigned column =
        off - (lineStart == std::string::npos ? 0 : lineStart + 1) + 1;
    return std::make_pair(line, column);
  };
  if (auto deep = findExcessiveNesting(secView))
    return sourceError(path, at(*deep).first, 0,
                       "nesting deeper than " + std::to_string(kMaxNesting) +
                           " levels; not lowered (the MLIR parser would "
                           "overflow its stack)");
  if (auto big = findExcessiveResultNumber(secView, secView.size())) {
    auto [line, column] = at(big->first);
    return sourceError(path, line, column,
                       "result number #" + std::to_string(big->second) +
                           " is more than this text can define; not lowered "
                           "(MLIR's parser would allocate 16 bytes for every "
                           "result number up to it)");
  }
  if (auto wide =
          findExcessiveIntegerWidth(secView, secView.size(), text.size())) {
    auto [line, column] = at(wide->offset);
    return sourceError(path, line, column,
                       describeWideIntegers(*wide) + "; not lowered");
  }
  return llvm::Error::success();
}

/// Erases the module's symbols `fn` does not reference (transitively).
static void keepOnly(ModuleOp module, Operation *fn) {
  llvm::SmallPtrSet<Operation *, 8> keep;
  SmallVector<Operation *> work{fn};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!keep.insert(op).second)
      continue;
    if (auto uses = SymbolTable::getSymbolUses(op))
      for (const SymbolTable::SymbolUse &use : *uses)
        if (Operation *callee =
                SymbolTable::lookupNearestSymbolFrom(op, use.getSymbolRef()))
          if (callee->getParentOp() == module.getOperation())
            work.push_back(callee);
  }
  // tosa.variable stays: variable_read/write name it by a string, not a
  // symbol reference, so the walk above cannot see the use.
  for (Operation &op :
       llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (isa<SymbolOpInterface>(op) && !keep.contains(&op) &&
        op.getName().getStringRef() != "tosa.variable")
      op.erase();
}

/// Which arguments index a tosa.gather or tosa.scatter, with their bound
/// (LoweredSection::indexBounds).
static void
recordIndexBounds(ModuleOp module,
                  std::map<std::string, std::map<unsigned, int64_t>> &bounds) {
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if ((name != "tosa.gather" && name != "tosa.scatter") ||
        op->getNumOperands() < 2)
      return;
    auto idx = dyn_cast<BlockArgument>(op->getOperand(1));
    auto fn = op->getParentOfType<func::FuncOp>();
    if (!idx || !fn || idx.getOwner() != &fn.getBody().front())
      return;
    Value values = op->getOperand(0);
    auto type = dyn_cast<RankedTensorType>(values.getType());
    int64_t bound = 0;
    if (type && type.getRank() == 3 && !type.isDynamicDim(1))
      bound = type.getDimSize(1);
    else if (auto v = dyn_cast<BlockArgument>(values);
             v && v.getOwner() == idx.getOwner())
      bound = -1 - static_cast<int64_t>(v.getArgNumber());
    else
      return;
    auto &fnBounds = bounds[fn.getSymName().str()];
    auto [it, inserted] = fnBounds.emplace(idx.getArgNumber(), bound);
    // Indices of two ops: the smaller static bound holds for both.
    if (!inserted && bound > 0 && (it->second < 0 || bound < it->second))
      it->second = bound;
  });
}

/// C interfaces for the public functions (with --function, only F: the
/// others become private, so symbol-dce drops those F does not call and they
/// are neither exported nor able to break F's build); outside upstream mode
/// each gets its `F_into` twin.
static void addEntryPoints(LoweredSection &out, const LowerOptions &options) {
  MLIRContext *ctx = &out.context;
  out.module->walk([&](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    if (!options.function.empty() && fn.getSymName() != options.function)
      fn.setPrivate();
    if (fn.isPublic()) {
      fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
      out.entryPoints.push_back(fn.getSymName().str());
      out.signatures[fn.getSymName().str()] = fn.getFunctionType();
    }
  });
  if (options.mode != LowerMode::Upstream)
    for (const std::string &name : std::vector<std::string>(out.entryPoints))
      addDestinationTwin(out, out.module->lookupSymbol<func::FuncOp>(name));
}

/// A conversion gap leaves ops of other dialects behind without an error;
/// the LLVM IR translation would reject them later, and a preview of this
/// stage would pass for LLVM dialect. Reports the first; false if any.
static bool allConvertedToLLVM(ModuleOp module) {
  Operation *left = nullptr;
  unsigned count = 0;
  Dialect *llvmDialect =
      module.getContext()->getLoadedDialect<LLVM::LLVMDialect>();
  // --threads: OpenMP's ops have a translation to LLVM IR of their own.
  Dialect *ompDialect = module.getContext()->getLoadedDialect("omp");
  module.walk([&](Operation *op) {
    if (op == module.getOperation() || op->getDialect() == llvmDialect ||
        (ompDialect && op->getDialect() == ompDialect))
      return;
    if (!left)
      left = op;
    ++count;
  });
  if (left)
    emitError(left->getLoc())
        << "the LLVM stage left " << count << " op(s) unconverted, first '"
        << left->getName()
        << "': MLIR 22's conversions do not cover this program";
  return !left;
}

LoweredSection::LoweredSection()
    : context(loweringRegistry(), MLIRContext::Threading::DISABLED) {}

llvm::Error lowerSection(const std::string &text, const std::string &path,
                         const Section &sec, const LowerOptions &options,
                         LoweredSection &out) {
  registerPassesOnce();
  if (llvm::Error e = refuseBeforeParsing(text, path, sec))
    return e;
  MLIRContext &ctx = out.context;
  ctx.allowUnregisteredDialects();
  out.firstLine = sec.firstLine;
  std::string body =
      text.substr(sec.beginOffset, sec.endOffset - sec.beginOffset);
  out.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(body, path), llvm::SMLoc());

  // At file positions: the section's first line (and column) added.
  auto at = [firstLine = sec.firstLine, firstColumn = sec.firstColumn,
             path](Location loc, std::string message) {
    SourceDiagnostic d{path, 0, 0, std::move(message)};
    if (auto f = fileLocOf(loc); f && f->getLine() != 0) {
      d.file = f->getFilename().str();
      d.line = f->getLine() + firstLine - 1;
      d.column =
          f->getLine() == 1 ? f->getColumn() + firstColumn - 1 : f->getColumn();
    }
    return d;
  };
  // Registered for the section's lifetime: LLVM IR translation, later,
  // reports through it too.
  out.handlerId =
      ctx.getDiagEngine().registerHandler([&out, at](mlir::Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Error)
          out.diagnostics.push_back(at(d.getLocation(), d.str()));
        return success();
      });
  // What failed: the diagnostics reported so far (taken: later failures
  // of this section report only their own), else "lowering failed".
  auto failure = [&] {
    std::vector<SourceDiagnostic> diags = std::move(out.diagnostics);
    out.diagnostics.clear();
    // Once each: a function's versions (fast mode) fail at the same op.
    std::set<std::tuple<std::string, unsigned, unsigned, std::string>> seen;
    llvm::erase_if(diags, [&](const SourceDiagnostic &d) {
      return !seen.emplace(d.file, d.line, d.column, d.message).second;
    });
    if (diags.empty())
      diags.push_back({path, 0, 0, "lowering failed"});
    return sourceErrors(std::move(diags));
  };

  // With --function, errors elsewhere in the file must not stop the
  // preview: parse without verifying, keep the function and what it
  // references, then verify that.
  ParserConfig config(&ctx, /*verifyAfterParse=*/options.function.empty());
  out.module = parseSourceFile<ModuleOp>(out.sourceMgr, config);
  if (!out.module) {
    if (out.diagnostics.empty())
      out.diagnostics.push_back(silentParseError(text, path, sec));
    return failure();
  }
  if (!options.function.empty()) {
    Operation *fn = out.module->lookupSymbol(options.function);
    if (!fn)
      return noFunctionError(options.function, path);
    keepOnly(*out.module, fn);
    if (failed(verify(*out.module)))
      return failure();
  }
  // Remember which source op each location names, before passes rewrite.
  out.module->walk([&](Operation *op) {
    if (auto f = fileLocOf(op->getLoc()))
      out.sourceOps.emplace(std::make_pair(f->getLine(), f->getColumn()),
                            op->getName().getStringRef().str());
  });
  // Up front: LLVM IR translation would fail at the last one, later.
  if (llvm::Error e = handleElided(*out.module, options.elided, path, at,
                                   out.elided, out.elidedKey))
    return e;
  if (!options.function.empty()) {
    auto fn = out.module->lookupSymbol<func::FuncOp>(options.function);
    if (!fn)
      return noFunctionError(options.function, path);
    if (out.checkEntry)
      if (llvm::Error e = out.checkEntry(fn.getFunctionType()))
        return e;
  }
  // Before the passes: which arguments index a gather or scatter (for
  // `run`'s random inputs; it lowers with the C interface).
  if (options.cInterface)
    recordIndexBounds(*out.module, out.indexBounds);
  if (options.cInterface)
    addEntryPoints(out, options);

  // Beyond upstream, result types are refined first (MLIR's shape
  // inference), before the versions are made from them: MLIR 22's lowering
  // builds some results from the declared type, not the operands (a conv2d
  // declared `?x?x?x?` got the input's channel count for its output's:
  // wrong numbers; a depthwise conv, transpose, cond_if or reduce_max
  // declared with `?`, or an element-wise op declared less static than its
  // operands, failed to lower or crashed).
  if (options.mode != LowerMode::Upstream) {
    PassManager refine(&ctx);
    OpPassManager &fpm = refine.nest<func::FuncOp>();
    if (failed(parsePassPipeline("tosa-infer-shapes", fpm)) ||
        failed(refine.run(*out.module)))
      return failure();
  }
  if (options.mode == LowerMode::Safe) {
    insertBroadcastAssertions(*out.module, sec.firstLine);
    insertIndexAssertions(*out.module, sec.firstLine);
  }
  // Function-level versions (at most 5 copies) in every mode beyond
  // upstream: in safe mode after the assertions, which every version keeps;
  // versioned mode then versions, per op, what could still be 1.
  if (options.mode != LowerMode::Upstream)
    versionFunctions(*out.module, /*maxDims=*/4);
  if (options.mode == LowerMode::Versioned)
    versionBroadcasts(*out.module, /*maxDims=*/3); // at most 8 versions

  PassManager pm(&ctx);
  std::string pipelineErrors;
  llvm::raw_string_ostream perr(pipelineErrors);
  // `pm` is already anchored on builtin.module: parse what goes inside it.
  std::string pipeline = pipelineFor(options);
  if (options.cInterface && !options.function.empty())
    pipeline = "builtin.module(symbol-dce," +
               pipeline.substr(std::string("builtin.module(").size());
  llvm::StringRef inner(pipeline);
  inner.consume_front("builtin.module(");
  inner.consume_back(")");
  if (failed(parsePassPipeline(inner, pm, perr)))
    return makeError("bad pass pipeline: " + pipelineErrors);
  if (failed(pm.run(*out.module)))
    return failure();
  if (options.stage == LowerStage::LLVM) {
    if (!allConvertedToLLVM(*out.module))
      return failure();
    flushBeforeAbort(*out.module);
  }
  return llvm::Error::success();
}

} // namespace detail

static llvm::Expected<LowerResult> lowerUnguarded(const std::string &text,
                                                  const std::string &path,
                                                  const LowerOptions &options);

llvm::Expected<LowerResult> lower(const std::string &text,
                                  const std::string &path,
                                  const LowerOptions &options) {
  std::optional<llvm::Expected<LowerResult>> result;
  // MLIR's own passes crash on some valid input (tosa.reduce_max with a
  // dynamic result dim in MLIR 22): report it, never take the caller down.
  std::optional<std::string> crash = runContained(
      [&] { result.emplace(lowerUnguarded(text, path, options)); });
  if (!crash)
    return std::move(*result);
  if (result) // cannot happen: the crash came before the result
    llvm::consumeError(result->takeError());
  return sourceError(
      path, 0, 0,
      "MLIR crashed while lowering (" + *crash +
          "), a bug in the upstream pass pipeline on this input; no preview "
          "is available for it. Pipeline: " +
          pipelineFor(options));
}

static llvm::Expected<LowerResult> lowerUnguarded(const std::string &text,
                                                  const std::string &path,
                                                  const LowerOptions &options) {
  LowerResult result;
  result.pipeline = pipelineFor(options);
  std::vector<Section> sections = splitSections(text);
  bool foundFunction = options.function.empty();
  std::ostringstream os;
  unsigned previewLine = 1;
  bool first = true;
  // Diagnostics of sections that mention @F but do not define it, reported
  // with the failure that ends the search, if one does.
  llvm::Error skipped = llvm::Error::success();
  for (const Section &sec : sections) {
    // With --function, only the section that defines it.
    if (!options.function.empty()) {
      std::string body =
          text.substr(sec.beginOffset, sec.endOffset - sec.beginOffset);
      if (body.find("@" + options.function + "(") == std::string::npos &&
          body.find("@\"" + options.function + "\"(") == std::string::npos)
        continue;
    }
    detail::LoweredSection ls;
    if (llvm::Error err = detail::lowerSection(text, path, sec, options, ls)) {
      if (!ls.module || options.function.empty() ||
          ls.module->lookupSymbol<func::FuncOp>(options.function))
        return llvm::joinErrors(std::move(skipped), std::move(err));
      // Another function of that name pattern; keep looking. Its
      // diagnostics are kept; "no function" is said once, below.
      skipped = llvm::joinErrors(
          std::move(skipped),
          llvm::handleErrors(
              std::move(err),
              [](std::unique_ptr<SourceErrors> e) -> llvm::Error {
                return llvm::Error(std::move(e));
              },
              [](const llvm::ErrorInfoBase &) {}));
      continue;
    }
    if (!ls.elided.empty() && result.elidedWarning.empty())
      result.elidedWarning =
          detail::elidedSummary(ls.elided, ls.elidedKey, path).str();
    Operation *root = ls.module->getOperation();
    if (!options.function.empty()) {
      root = ls.module->lookupSymbol(options.function);
      if (!root) // Renamed/removed by the pipeline (e.g. LLVM stage).
        root = ls.module->getOperation();
      // The function's matmuls and convolutions were outlined into kernel
      // functions (Kernels.cpp), its versions may be functions F__v*, and
      // F__generic its fallback (FastPath.cpp): the module, which then holds
      // only F and them, shows where the time goes.
      for (Operation &op : *ls.module->getBody())
        if (auto sym = dyn_cast<SymbolOpInterface>(op);
            sym && (sym.getName().starts_with(detail::kKernelPrefix) ||
                    sym.getName().starts_with(options.function + "__")))
          root = ls.module->getOperation();
      foundFunction = true;
    }
    if (!first) {
      os << "\n// -----\n";
      previewLine += 2;
    }
    first = false;

    AsmState::LocationMap locMap;
    OpPrintingFlags flags;
    AsmState state(root, flags, &locMap);
    std::string printed;
    llvm::raw_string_ostream pos(printed);
    root->print(pos, state);
    pos.flush();

    std::vector<std::string> lines;
    {
      std::istringstream is(printed);
      for (std::string l; std::getline(is, l);)
        lines.push_back(l);
    }
    std::vector<PreviewMapping> maps;
    for (auto &[op, lc] : locMap) {
      auto f = fileLocOf(op->getLoc());
      if (!f || f->getLine() == 0)
        continue;
      PreviewMapping m;
      m.previewLine = previewLine + lc.first - 1;
      m.previewColumn = lc.second;
      m.sourceLine = f->getLine() + sec.firstLine - 1;
      m.sourceColumn = f->getLine() == 1 ? f->getColumn() + sec.firstColumn - 1
                                         : f->getColumn();
      auto it = ls.sourceOps.find({f->getLine(), f->getColumn()});
      m.sourceOp = it == ls.sourceOps.end() ? "" : it->second;
      maps.push_back(m);
    }
    std::sort(maps.begin(), maps.end(), [](const auto &a, const auto &b) {
      return a.previewLine != b.previewLine ? a.previewLine < b.previewLine
                                            : a.previewColumn < b.previewColumn;
    });
    if (options.annotate) {
      // Every line that holds a lowered op says where it came from (not
      // only the first of a run), so any line can be traced on its own.
      for (const PreviewMapping &m : maps) {
        if (m.sourceOp.empty() || m.sourceOp == "func.func" ||
            m.sourceOp == "builtin.module")
          continue;
        unsigned idx = m.previewLine - previewLine;
        if (idx >= lines.size() ||
            lines[idx].find("  // from ") != std::string::npos)
          continue;
        lines[idx] += "  // from " + m.sourceOp + " @ " +
                      std::to_string(m.sourceLine) + ":" +
                      std::to_string(m.sourceColumn);
      }
    }
    for (const std::string &l : lines)
      os << l << "\n";
    previewLine += lines.size();
    result.mappings.insert(result.mappings.end(), maps.begin(), maps.end());
  }
  if (!foundFunction)
    return llvm::joinErrors(std::move(skipped),
                            detail::noFunctionError(options.function, path));
  llvm::consumeError(std::move(skipped));
  result.text = os.str();
  return result;
}

} // namespace tosa_lsp
