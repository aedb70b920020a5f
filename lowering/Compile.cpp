//===- Compile.cpp - TOSA to native code ----------------------------------===//

#include "Compile.h"

#include "FloatMaxima.h"
#include "LoweringIR.h"
#include "Runtime.h"
#include "StreamingStores.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <cstring>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace mlir;

namespace tosa_lsp {

std::optional<EmitKind> parseEmit(const std::string &s) {
  if (s == "obj")
    return EmitKind::Object;
  if (s == "shared")
    return EmitKind::Shared;
  if (s == "llvm-ir")
    return EmitKind::LLVMIR;
  if (s == "asm")
    return EmitKind::Asm;
  if (s == "mlir-llvm")
    return EmitKind::MLIRLLVM;
  return std::nullopt;
}

namespace {

/// The C spelling of a tensor element type in a memref descriptor.
std::optional<std::string> cElementType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isF16() || t.isBF16())
    return "uint16_t";
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
    case 8:
      return "int8_t"; // i1 is stored as a byte
    case 16:
      return "int16_t";
    case 32:
      return "int32_t";
    case 64:
      return "int64_t";
    }
  }
  if (isa<IndexType>(t))
    return "int64_t";
  return std::nullopt;
}

/// Whether `name` can follow `_mlir_ciface_` in C: [A-Za-z0-9_]* (the
/// prefix supplies the leading letter).
bool isCIdentifier(llvm::StringRef name) {
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

struct HeaderWriter {
  std::ostringstream structs, decls;
  std::set<std::string> defined;
  std::string error;

  /// `tosa_memref_f32_2d`, defining the struct on first use.
  /// `what` names the value for an error ("@f argument #1").
  std::optional<std::string> descriptor(Type type, const std::string &what) {
    std::string typeText;
    llvm::raw_string_ostream ts(typeText);
    type.print(ts);
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked) {
      error = what + " has type " + typeText +
              ": unranked or non-tensor types have no C descriptor";
      return std::nullopt;
    }
    auto elem = cElementType(ranked.getElementType());
    if (!elem) {
      error = what + " has type " + typeText + ": no C type for its elements";
      return std::nullopt;
    }
    std::string tname;
    llvm::raw_string_ostream os(tname);
    ranked.getElementType().print(os);
    std::string name =
        "tosa_memref_" + tname + "_" + std::to_string(ranked.getRank()) + "d";
    if (defined.insert(name).second) {
      structs << "/* memref<" << (ranked.getRank() ? "..." : "") << tname
              << "> descriptor, rank " << ranked.getRank() << " */\n"
              << "typedef struct {\n  " << *elem << " *allocated;\n  " << *elem
              << " *aligned;\n  int64_t offset;\n";
      if (ranked.getRank())
        structs << "  int64_t sizes[" << ranked.getRank() << "];\n"
                << "  int64_t strides[" << ranked.getRank() << "];\n";
      structs << "} " << name << ";\n\n";
    }
    return name;
  }

  /// Results are returned (allocated by the callee) unless `destination`:
  /// then the last `numDest` parameters are the caller's result buffers.
  bool function(const std::string &name, FunctionType type, bool contiguous,
                unsigned numDest) {
    std::vector<std::string> params;
    if (type.getNumResults() == 1) {
      auto d = descriptor(type.getResult(0), "@" + name + " result");
      if (!d)
        return false;
      params.push_back(*d + " *result");
    } else if (type.getNumResults() > 1) {
      std::ostringstream rs;
      rs << "typedef struct {\n";
      for (unsigned i = 0; i < type.getNumResults(); ++i) {
        auto d = descriptor(type.getResult(i),
                            "@" + name + " result #" + std::to_string(i));
        if (!d)
          return false;
        rs << "  " << *d << " r" << i << ";\n";
      }
      rs << "} " << name << "_results;\n\n";
      structs << rs.str();
      params.push_back(name + "_results *result");
    }
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      unsigned firstDest = type.getNumInputs() - numDest;
      auto d =
          descriptor(type.getInput(i),
                     "@" + name +
                         (i < firstDest ? " argument #" + std::to_string(i)
                                        : " result buffer out" +
                                              std::to_string(i - firstDest)));
      if (!d)
        return false;
      params.push_back(*d + " *arg" + std::to_string(i));
    }
    for (unsigned i = type.getNumInputs() - numDest; i < type.getNumInputs();
         ++i)
      params[params.size() - type.getNumInputs() + i] =
          *descriptor(type.getInput(i), "") + " *out" +
          std::to_string(i - (type.getNumInputs() - numDest));
    decls << "/* " << name << ": ";
    if (numDest)
      decls << "writes its result into out* (allocated by the caller\n"
               "   with the result's sizes, contiguous, not overlapping an "
               "input);\n   nothing is allocated for the result.";
    else if (type.getNumResults() == 1)
      decls << "the result is allocated by the callee with malloc;\n"
               "   free(result->allocated) when done, unless it is an "
               "input's\n   allocated pointer (a returned argument).";
    else if (type.getNumResults() > 1)
      decls << "results are allocated by the callee with malloc;\n"
               "   free each distinct rN.allocated once, after reading every "
               "result:\n   results may share one buffer (a value returned "
               "twice). Do not\n   free one that is an input's allocated "
               "pointer (a returned argument).";
    else
      decls << "no results.";
    if (contiguous)
      decls << "\n   Inputs must be contiguous (row-major: strides[rank-1] = "
               "1,\n   strides[i] = strides[i+1] * sizes[i+1]); their "
               "strides are not read.";
    else
      decls << "\n   Inputs may have any strides and offset.";
    decls << " */\n"
          << "void _mlir_ciface_" << name << "(";
    for (size_t i = 0; i < params.size(); ++i)
      decls << (i ? ", " : "") << params[i];
    decls << ");\n\n";
    return true;
  }

  std::string text(const std::string &guard) const {
    return "/* Generated by tosa-lsp compile. Entry points of MLIR's C "
           "interface\n   (llvm.emit_c_interface): memrefs are passed as "
           "pointers to descriptors. */\n#ifndef " +
           guard + "\n#define " + guard +
           "\n\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" "
           "{\n#endif\n\n" +
           structs.str() + decls.str() +
           "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  }
};

/// Large results are written once, end to end: with 4 KiB pages that is a
/// page fault per 4 KiB (a 64 MiB result costs more in faults than in
/// stores). Like numpy, ask for transparent huge pages for allocations of
/// 4 MiB or more (MADV_HUGEPAGE; a no-op where THP is off), and unlike
/// numpy align them to 2 MiB so that all of the result, not only its
/// aligned interior, is in huge pages (measured: 64 MiB fresh result
/// 10.7 -> 10.0 ms). Still memory for free(): posix_memalign.
void useHugePagesForLargeAllocations(llvm::Module &m) {
  llvm::Function *malloc = m.getFunction("malloc");
  if (!malloc || malloc->arg_size() != 1)
    return;
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptr);
  auto *wrap = llvm::Function::Create(malloc->getFunctionType(),
                                      llvm::GlobalValue::InternalLinkage,
                                      "__tosa_lsp_malloc", m);
  // Not inlined, and noalias like malloc: streamLargeStores recognises a
  // fresh allocation by a noalias call (a load from posix_memalign's slot
  // would look like any pointer).
  wrap->addRetAttr(llvm::Attribute::NoAlias);
  wrap->addFnAttr(llvm::Attribute::NoInline);
  malloc->replaceAllUsesWith(wrap);
  constexpr uint64_t kHugePage = 2 << 20;
  llvm::FunctionCallee memalign = m.getOrInsertFunction(
      "posix_memalign", llvm::FunctionType::get(i32, {ptr, i64, i64}, false));
  llvm::FunctionCallee madvise = m.getOrInsertFunction(
      "madvise", llvm::FunctionType::get(i32, {ptr, i64, i32}, false));
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", wrap);
  auto *small = llvm::BasicBlock::Create(ctx, "small", wrap);
  auto *large = llvm::BasicBlock::Create(ctx, "large", wrap);
  auto *advise = llvm::BasicBlock::Create(ctx, "advise", wrap);
  auto *done = llvm::BasicBlock::Create(ctx, "done", wrap);
  llvm::IRBuilder<> b(entry);
  llvm::Value *size = wrap->getArg(0);
  llvm::Value *slot = b.CreateAlloca(ptr);
  b.CreateCondBr(b.CreateICmpUGE(size, b.getInt64(4 << 20)), large, small);

  b.SetInsertPoint(small);
  llvm::Value *plain = b.CreateCall(malloc, {size});
  b.CreateBr(done);

  b.SetInsertPoint(large);
  b.CreateStore(null, slot);
  llvm::Value *rc = b.CreateCall(memalign, {slot, b.getInt64(kHugePage), size});
  llvm::Value *aligned = b.CreateLoad(ptr, slot);
  b.CreateCondBr(b.CreateAnd(b.CreateICmpEQ(rc, b.getInt32(0)),
                             b.CreateIsNotNull(aligned)),
                 advise, done);

  b.SetInsertPoint(advise);
  llvm::Value *end = b.CreateAnd(size, b.getInt64(~4095ULL));
  b.CreateCall(madvise, {aligned, end, b.getInt32(14)});
  b.CreateBr(done);

  b.SetInsertPoint(done);
  llvm::PHINode *p = b.CreatePHI(ptr, 3);
  p->addIncoming(plain, small);
  p->addIncoming(null, large);
  p->addIncoming(aligned, advise);
  b.CreateRet(p);
}

/// convert-scf-to-cf carries an scf.for's `llvm.loop_annotation`
/// (WindowPrefetch.cpp's vector width) to its latch branch as a discardable
/// attribute, which the translation ignores: it reads the branch's own
/// `loop_annotation`.
void adoptLoopAnnotations(mlir::ModuleOp module) {
  constexpr llvm::StringLiteral kName = "llvm.loop_annotation";
  module.walk([&](mlir::Operation *op) {
    auto a = op->getDiscardableAttr(kName);
    auto loop = llvm::dyn_cast_or_null<mlir::LLVM::LoopAnnotationAttr>(a);
    if (!loop)
      return;
    if (auto br = llvm::dyn_cast<mlir::LLVM::BrOp>(op))
      br.setLoopAnnotationAttr(loop);
    else if (auto cbr = llvm::dyn_cast<mlir::LLVM::CondBrOp>(op))
      cbr.setLoopAnnotationAttr(loop);
    op->removeDiscardableAttr(kName);
  });
}

/// MLIR stores an i1 element as one byte, but LLVM's loop vectoriser does
/// not widen loads and stores of i1 (not a byte-sized type): it gathers
/// them byte by byte. Accessing the byte as i8 (trunc after the load, zext
/// before the store: the same 0/1 bytes) gives plain vector loads/stores.
void widenBooleanMemoryAccesses(llvm::Module &m) {
  llvm::SmallVector<llvm::Instruction *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if ((isa<llvm::LoadInst>(i) && i.getType()->isIntegerTy(1)) ||
          (isa<llvm::StoreInst>(i) &&
           cast<llvm::StoreInst>(i).getValueOperand()->getType()->isIntegerTy(
               1)))
        work.push_back(&i);
  for (llvm::Instruction *i : work) {
    llvm::IRBuilder<> b(i);
    if (auto *load = dyn_cast<llvm::LoadInst>(i)) {
      llvm::LoadInst *byte =
          b.CreateAlignedLoad(b.getInt8Ty(), load->getPointerOperand(),
                              load->getAlign(), load->isVolatile());
      byte->copyMetadata(*load);
      load->replaceAllUsesWith(b.CreateTrunc(byte, b.getInt1Ty()));
    } else {
      auto *store = cast<llvm::StoreInst>(i);
      llvm::StoreInst *byte = b.CreateAlignedStore(
          b.CreateZExt(store->getValueOperand(), b.getInt8Ty()),
          store->getPointerOperand(), store->getAlign(), store->isVolatile());
      byte->copyMetadata(*store);
    }
    i->eraseFromParent();
  }
}

/// Appends a compile step's line to the log and reports it.
using Step = llvm::function_ref<void(const std::string &)>;

/// The header of the entry points, from the TOSA-level signatures
/// lowerSection recorded before lowering; `wanted` is cleared (with a step
/// saying why) when a name is not a C identifier and the options allow
/// going on without it.
llvm::Error writeHeader(const detail::LoweredSection &ls,
                        const std::string &path, const CompileOptions &options,
                        Step step, HeaderWriter &header, bool &wanted) {
  if (!wanted)
    return llvm::Error::success();
  for (const std::string &name : ls.entryPoints) {
    if (isCIdentifier(name))
      continue;
    std::string why = "the name of function @\"" + name +
                      "\" is not a C identifier (_mlir_ciface_" + name +
                      " would not compile)";
    if (!options.headerIfPossible)
      return sourceError(path, 0, 0,
                         "cannot write a C header: " + why +
                             "; rename the function, or compile without a "
                             "header");
    step("no C header: " + why);
    wanted = false;
    return llvm::Error::success();
  }
  bool ok = true;
  for (const std::string &name : ls.entryPoints)
    ok &= header.function(
        name, ls.signatures.at(name),
        options.mode != LowerMode::Upstream && !options.strided,
        ls.destinationEntries.count(name)
            ? ls.signatures
                  .at(name.substr(0, name.size() - strlen(kIntoSuffix)))
                  .getNumResults()
            : 0);
  if (!ok)
    return sourceError(path, 0, 0, "cannot write a C header: " + header.error);
  return llvm::Error::success();
}

/// The machine code is for: the host's CPU and features for "native"
/// (AVX2/AVX-512 vector loops), or e.g. x86-64 for an object that runs on
/// any x86-64 machine.
struct Target {
  std::unique_ptr<llvm::TargetMachine> machine;
  llvm::Triple triple;
  std::string cpu, features;
};

llvm::Expected<Target> targetFor(const CompileOptions &options) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  Target t;
  t.triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  std::string targetError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(t.triple, targetError);
  if (!target)
    return makeError("no target for " + t.triple.str() + ": " + targetError);
  llvm::CodeGenOptLevel cgLevel =
      options.optLevel == 0   ? llvm::CodeGenOptLevel::None
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::Aggressive;
  t.cpu = options.cpu;
  if (t.cpu == "native") {
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &kv : llvm::sys::getHostCPUFeatures())
      f.AddFeature(kv.getKey(), kv.getValue());
    t.features = f.getString();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(t.triple, t.cpu, t.features));
  if (!sti || !sti->isCPUStringValid(t.cpu))
    return makeError("unknown CPU '" + t.cpu + "'");
  t.machine.reset(target->createTargetMachine(
      t.triple, t.cpu, t.features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, cgLevel));
  return t;
}

/// Exports only the entry points (helpers such as dealloc_helper and
/// private functions get internal linkage, so several objects from
/// tosa-lsp link together), then optimises for `tm` and, outside upstream
/// mode, makes big loop nests store non-temporally.
llvm::Error optimise(llvm::Module &m, const detail::LoweredSection &ls,
                     const Target &t, const CompileOptions &options,
                     Step step) {
  std::set<std::string> exported;
  for (const std::string &e : ls.entryPoints) {
    exported.insert(e);
    exported.insert("_mlir_ciface_" + e);
  }
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && !exported.count(f.getName().str()))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (options.mode != LowerMode::Upstream) {
    useHugePagesForLargeAllocations(m);
    widenBooleanMemoryAccesses(m);
  }
  m.setTargetTriple(t.triple);
  m.setDataLayout(t.machine->createDataLayout());
  // The optimiser's cost model reads the CPU from each function.
  for (llvm::Function &f : m)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", t.cpu);
      if (!t.features.empty())
        f.addFnAttr("target-features", t.features);
    }
  step("optimizing: -O" + std::to_string(options.optLevel) + " for " +
       t.triple.str() + " (cpu " + t.cpu + ")");
  if (llvm::Error e =
          makeOptimizingTransformer(options.optLevel, 0, t.machine.get())(&m))
    return makeError("optimization failed: " + llvm::toString(std::move(e)));
  if (options.mode != LowerMode::Upstream && options.optLevel > 0 &&
      t.triple.isX86()) {
    const llvm::MCSubtargetInfo *sti = t.machine->getMCSubtargetInfo();
    if (unsigned n = lowerFloatMaxima(m, sti->checkFeatures("+avx512dq"),
                                      sti->checkFeatures("+avx512vl")))
      step("float maxima: " + std::to_string(n) +
           " tree(s) of maximum/minimum on VRANGE");
  }
  if (options.mode != LowerMode::Upstream)
    settleNontemporalStores(m, options.streamThreshold != UINT64_MAX);
  if (options.mode != LowerMode::Upstream &&
      options.streamThreshold != UINT64_MAX && options.optLevel > 0) {
    uint64_t from = options.streamThreshold
                        ? options.streamThreshold
                        : defaultStreamThreshold(options.cpu);
    if (unsigned n = streamLargeStores(m, from))
      step("streaming stores: " + std::to_string(n) +
           " loop nest(s) store non-temporally from " + std::to_string(from) +
           " bytes");
    // The versioning is our own code on optimised IR: a mistake must be an
    // error here, not a miscompiled library.
    std::string broken;
    llvm::raw_string_ostream why(broken);
    if (llvm::verifyModule(m, &why))
      return makeError("internal error after streaming stores: " + broken);
  }
  return llvm::Error::success();
}

/// Object code (or assembly) for `m`.
llvm::Expected<std::string> emitCode(llvm::Module &m, const Target &t,
                                     const CompileOptions &options, Step step) {
  step(options.emit == EmitKind::Asm ? "emitting assembly"
                                     : "emitting object code");
  llvm::SmallString<0> code;
  llvm::raw_svector_ostream os(code);
  llvm::legacy::PassManager pm;
  if (t.machine->addPassesToEmitFile(pm, os, nullptr,
                                     options.emit == EmitKind::Asm
                                         ? llvm::CodeGenFileType::AssemblyFile
                                         : llvm::CodeGenFileType::ObjectFile))
    return makeError("the target cannot emit this file type");
  pm.run(m);
  return code.str().str();
}

/// A shared library of `object`, linked by `cc` in a private directory
/// (removed on every path); with MLIR's runtime and libomp when the code
/// calls them.
llvm::Expected<std::string> linkShared(llvm::StringRef object,
                                       bool needsRuntime, bool needsOpenMP,
                                       Step step) {
  TempDir work("tosa-lsp-link");
  if (work.error())
    return makeError("cannot create a temp directory: " +
                     work.error().message());
  llvm::SmallString<256> objPath(work.path()), soPath(work.path());
  llvm::sys::path::append(objPath, "code.o");
  llvm::sys::path::append(soPath, "code.so");
  {
    std::error_code ec;
    llvm::raw_fd_ostream obj(objPath, ec);
    obj << object;
    obj.close();
    if (ec || obj.has_error()) {
      std::string why = (ec ? ec : obj.error()).message();
      obj.clear_error();
      return makeError("cannot write " + objPath + ": " + why);
    }
  }
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return makeError(missingCompilerMessage());
  std::vector<llvm::StringRef> args = {*cc,    "-shared", "-o",
                                       soPath, objPath,   "-lm"};
  // Libraries the code calls, linked by path with their directory as the
  // run path: MLIR's runtime (memref.copy of strided memrefs calls
  // memrefCopy; the runtime package's versioned file, the unversioned
  // libmlir_c_runner_utils.so is only in the -dev package) and libomp
  // (--threads).
  std::string libs[4]; // path, -rpath, path, -rpath: args refer to them
  unsigned used = 0;
  auto link = [&](llvm::Expected<std::string> found) -> llvm::Error {
    if (!found)
      return found.takeError();
    libs[used] = *found;
    libs[used + 1] =
        "-Wl,-rpath," + llvm::sys::path::parent_path(libs[used]).str();
    args.push_back(libs[used]);
    args.push_back(libs[used + 1]);
    used += 2;
    return llvm::Error::success();
  };
  if (needsRuntime)
    if (llvm::Error e =
            link(requireMlirRuntime("the shared library (memrefCopy)")))
      return std::move(e);
  if (needsOpenMP)
    if (llvm::Error e =
            link(requireOpenMPRuntime("the shared library (--threads)")))
      return std::move(e);
  std::string cmd;
  for (llvm::StringRef a : args)
    cmd += (cmd.empty() ? "" : " ") + a.str();
  step("linking: " + cmd);
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 120, 0,
                                     &linkError);
  if (rc != 0)
    return makeError("linking failed (" + std::to_string(rc) +
                     "): " + linkError);
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
  if (!so)
    return makeError("cannot read the linked library: " +
                     so.getError().message());
  return (*so)->getBuffer().str();
}

/// The bytes of the output file for `ls` (executable: a shared library);
/// `r.symbols` the functions it exports.
llvm::Expected<std::string> translate(detail::LoweredSection &ls,
                                      const std::string &path,
                                      const CompileOptions &options, Step step,
                                      CompileResult &r, bool &executable) {
  std::string out;
  if (options.emit == EmitKind::MLIRLLVM) {
    llvm::raw_string_ostream os(out);
    ls.module->print(os);
    return out;
  }
  step("translating to LLVM IR");
  adoptLoopAnnotations(*ls.module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*ls.module, llvmContext, path);
  if (!llvmModule) {
    ls.diagnostics.push_back({path, 0, 0, "translation to LLVM IR failed"});
    return sourceErrors(std::move(ls.diagnostics));
  }
  llvm::Expected<Target> target = targetFor(options);
  if (!target)
    return target.takeError();
  if (llvm::Error e = optimise(*llvmModule, ls, *target, options, step))
    return std::move(e);
  bool needsRuntime = false, needsOpenMP = false;
  for (const llvm::Function &f : *llvmModule) {
    if (!f.isDeclaration() && f.hasExternalLinkage())
      r.symbols.push_back(f.getName().str());
    if (f.isDeclaration() && f.getName() == "memrefCopy")
      needsRuntime = true;
    if (f.isDeclaration() && f.getName().starts_with("__kmpc_"))
      needsOpenMP = true;
  }
  if (needsRuntime)
    step("uses MLIR's runtime (memrefCopy from libmlir_c_runner_utils)");
  if (needsOpenMP)
    step(options.emit == EmitKind::Shared
             ? "uses LLVM's OpenMP runtime (__kmpc_* from libomp.so.5)"
             : "uses LLVM's OpenMP runtime (__kmpc_*): link the program "
               "with libomp.so.5 (Debian's libomp5; -lomp with libomp-dev)");
  if (options.emit == EmitKind::LLVMIR) {
    llvm::raw_string_ostream os(out);
    llvmModule->print(os, nullptr);
    return out;
  }
  llvm::Expected<std::string> code =
      emitCode(*llvmModule, *target, options, step);
  if (!code || options.emit != EmitKind::Shared)
    return code;
  executable = true;
  return linkShared(*code, needsRuntime, needsOpenMP, step);
}

} // namespace

llvm::Expected<CompileResult>
compile(const std::string &text, const std::string &path,
        const CompileOptions &options,
        const std::function<void(const std::string &)> &progress) {
  CompileResult r;
  auto step = [&](const std::string &s) {
    r.log += s + "\n";
    if (progress)
      progress(s);
  };
  if (options.output.empty())
    return makeError(ErrorTopic::Output, "no output path given");

  detail::LoweredSection ls;
  ls.elidedFill = options.elided;
  ls.streamThreshold = options.streamThreshold;
  // The kernels' vectors are sized for the host (Kernels.cpp).
  bool kernels = options.cpu == "native";
  ls.threads = options.threads;
  if (options.threads != 1)
    step(kernels && options.mode != LowerMode::Upstream
             ? "threads: " +
                   (options.threads
                        ? std::to_string(options.threads)
                        : std::string("the running machine's "
                                      "(OpenMP's default: its "
                                      "cores, or OMP_NUM_THREADS)")) +
                   " for matmuls and convolutions of 2^24 FLOP and more "
                   "(OpenMP)"
             : std::string("threads: 1 (--threads applies to the host's "
                           "kernels: not in upstream mode or with --cpu)"));
  if (llvm::Error err = detail::lowerForNative(
          text, path, options.function, options.mode, options.strided, kernels,
          ls, [&] {
            step("lowering: " + pipelineFor(LowerStage::LLVM, options.mode,
                                            options.strided, kernels,
                                            options.streamThreshold,
                                            options.threads));
          }))
    return std::move(err);
  // An empty object or library would look like success.
  if (ls.entryPoints.empty())
    return options.function.empty()
               ? makeError(path + " defines no public function with a body; "
                                  "nothing to compile")
               : makeError(ErrorTopic::Function,
                           "@" + options.function +
                               " is not a public function with a body; "
                               "nothing to compile");
  HeaderWriter header;
  bool wantHeader = options.header;
  if (llvm::Error e = writeHeader(ls, path, options, step, header, wantHeader))
    return std::move(e);

  // Everything is produced in memory or in a private temp directory first;
  // the user-visible files are only created at the end (writeOutputs).
  bool executable = false;
  llvm::Expected<std::string> outData =
      translate(ls, path, options, step, r, executable);
  if (!outData)
    return outData.takeError();

  std::string stem = options.output;
  llvm::StringRef ext = llvm::sys::path::extension(options.output);
  stem.resize(stem.size() - ext.size());
  std::vector<OutputFile> files = {{ext.str(), *outData, executable}};
  std::string headerText;
  if (wantHeader) {
    std::string guard =
        "TOSA_LSP_" + llvm::sys::path::filename(stem).upper() + "_H";
    for (char &c : guard)
      if (!std::isalnum(static_cast<unsigned char>(c)))
        c = '_';
    headerText = header.text(guard);
    files.push_back({".h", headerText, false});
  }
  llvm::Expected<std::vector<std::string>> written =
      writeOutputs(stem, files, options.onExisting, options.protectedPaths);
  if (!written)
    return written.takeError();
  r.output = (*written)[0];
  step("output: " + r.output);
  if (wantHeader) {
    r.headerPath = (*written)[1];
    step("header: " + r.headerPath);
  }
  r.bytes = outData->size();
  return r;
}

} // namespace tosa_lsp
