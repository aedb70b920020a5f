//===- GenericForm.h - what a text means, for meaning-preserving edits ----===//
//
// The generic form of every `// -----` section of a text, without
// locations: two texts mean the same when these are equal (rename and
// formatting tests). Empty optional when a section does not parse.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TEST_UNIT_GENERICFORM_H
#define TOSA_LSP_TEST_UNIT_GENERICFORM_H

#include "Analysis.h"
#include "MLIRShared.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace tosa_lsp {

inline std::optional<std::string> genericForm(const std::string &text) {
  static mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    registerFileDialects(r);
    return r;
  }();
  std::string out;
  for (const Section &s : splitSections(text)) {
    mlir::MLIRContext ctx(registry);
    ctx.allowUnregisteredDialects();
    ctx.getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    mlir::ParserConfig config(&ctx);
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        text.substr(s.beginOffset, s.endOffset - s.beginOffset), config);
    if (!module)
      return std::nullopt;
    llvm::raw_string_ostream os(out);
    module->print(os, mlir::OpPrintingFlags().printGenericOpForm());
    out += "\n// -----\n";
  }
  return out;
}

} // namespace tosa_lsp

#endif // TOSA_LSP_TEST_UNIT_GENERICFORM_H
