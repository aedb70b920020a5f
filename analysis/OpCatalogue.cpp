//===- OpCatalogue.cpp - the dialects and ops MLIR registers --------------===//

#include "OpCatalogue.h"

#include "MLIRShared.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <algorithm>

namespace tosa_lsp {

const CompletionCatalogue &completionCatalogue() {
  static const CompletionCatalogue catalogue = [] {
    mlir::DialectRegistry registry;
    registerFileDialects(registry);
    mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
    CompletionCatalogue c;
    for (llvm::StringRef d : ctx.getAvailableDialects())
      c.dialects.push_back(d.str());
    ctx.loadAllAvailableDialects();
    for (mlir::RegisteredOperationName op : ctx.getRegisteredOperations())
      c.ops.push_back(op.getStringRef().str());
    std::sort(c.dialects.begin(), c.dialects.end());
    std::sort(c.ops.begin(), c.ops.end());
    return c;
  }();
  return catalogue;
}

} // namespace tosa_lsp
