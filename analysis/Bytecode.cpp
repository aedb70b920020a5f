//===- Bytecode.cpp - MLIR bytecode <-> text ------------------------------===//

#include "Bytecode.h"

#include "Analysis.h"
#include "MLIRShared.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace tosa_lsp {

namespace {

const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry &r = []() -> const auto & {
    static mlir::DialectRegistry reg;
    registerFileDialects(reg);
    return reg;
  }();
  return r;
}

/// A context whose diagnostics are collected as one message.
struct Collecting {
  std::unique_ptr<mlir::MLIRContext> ctx = singleThreadedContext(registry());
  std::string errors;
  mlir::ScopedDiagnosticHandler handler{ctx.get(), [this](mlir::Diagnostic &d) {
                                          if (d.getSeverity() !=
                                              mlir::DiagnosticSeverity::Error)
                                            return mlir::success();
                                          if (!errors.empty())
                                            errors += "; ";
                                          errors += d.str();
                                          return mlir::success();
                                        }};
  Collecting() { ctx->allowUnregisteredDialects(); }
};

} // namespace

bool isBytecode(std::string_view bytes) {
  return mlir::isBytecode(llvm::MemoryBufferRef(
      llvm::StringRef(bytes.data(), bytes.size()), "input"));
}

BytecodeConversion textFromBytecode(std::string_view bytes) {
  BytecodeConversion out;
  if (!isBytecode(bytes)) {
    out.error = "not MLIR bytecode (it does not start with the bytecode "
                "magic number 'ML\\xEFR')";
    return out;
  }
  Collecting c;
  mlir::FallbackAsmResourceMap resources;
  mlir::ParserConfig config(c.ctx.get(), /*verifyAfterParse=*/true, &resources);
  mlir::Block block;
  llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()),
                               "input.mlirbc");
  if (mlir::failed(mlir::readBytecodeFile(buffer, &block, config))) {
    out.error = "cannot read the bytecode: " +
                (c.errors.empty() ? std::string("unknown error") : c.errors);
    return out;
  }
  if (block.empty()) {
    out.error = "the bytecode holds no operation";
    return out;
  }
  llvm::raw_string_ostream os(out.output);
  // The top-level op printed on its own (not inside `block`) so that
  // aliases are printed, with the locations the bytecode carries.
  while (!block.empty()) {
    mlir::OwningOpRef<mlir::Operation *> op = &block.front();
    (*op)->remove();
    mlir::AsmState state(
        *op, mlir::OpPrintingFlags().enableDebugInfo().assumeVerified(),
        /*locationMap=*/nullptr, &resources);
    (*op)->print(os, state);
    os << "\n";
  }
  return out;
}

BytecodeConversion bytecodeFromText(std::string_view text,
                                    std::string_view name) {
  BytecodeConversion out;
  std::string owned(text);
  if (splitSections(owned).size() > 1) {
    out.error = "unexpected split file, please remove all `// -----` "
                "(bytecode holds one module)";
    return out;
  }
  // The guards every parse of user text gets (the analysis' own).
  if (findExcessiveNesting(owned) ||
      findExcessiveResultNumber(owned, owned.size())) {
    out.error = "the file nests too deeply or uses result numbers beyond "
                "what it defines; fix its errors first";
    return out;
  }
  if (auto wide =
          findExcessiveIntegerWidth(owned, owned.size(), owned.size())) {
    out.error = describeWideIntegers(*wide) + "; not converted";
    return out;
  }
  Collecting c;
  mlir::FallbackAsmResourceMap resources;
  mlir::ParserConfig config(c.ctx.get(), /*verifyAfterParse=*/true, &resources);
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(
                            owned, llvm::StringRef(name.data(), name.size())),
                        llvm::SMLoc());
  mlir::Block block;
  if (mlir::failed(mlir::parseSourceFile(sm, &block, config))) {
    out.error = "the file has errors; fix them first: " + c.errors;
    return out;
  }
  if (block.empty()) {
    out.error = "the file holds no operation";
    return out;
  }
  mlir::OwningOpRef<mlir::Operation *> top;
  if (llvm::hasSingleElement(block)) {
    top = &block.front();
    (*top)->remove();
  } else {
    // Several top-level ops: in a module, as mlir-opt would wrap them.
    auto module = mlir::ModuleOp::create(mlir::UnknownLoc::get(c.ctx.get()));
    mlir::Block *body = module.getBody();
    body->getOperations().splice(body->end(), block.getOperations());
    top = module.getOperation();
    if (mlir::failed(mlir::verify(*top))) {
      out.error =
          "the top-level ops do not verify inside one module: " + c.errors;
      return out;
    }
  }
  llvm::raw_string_ostream os(out.output);
  mlir::BytecodeWriterConfig writer(resources);
  if (mlir::failed(mlir::writeBytecodeToFile(*top, os, writer))) {
    out.output.clear();
    out.error = "cannot write bytecode: " + c.errors;
  }
  return out;
}

} // namespace tosa_lsp
