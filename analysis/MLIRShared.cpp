//===- MLIRShared.cpp - MLIR-level helpers shared with the lowering -------===//

#include "MLIRShared.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

#include <algorithm>

using namespace mlir;

namespace tosa_lsp {

void registerFileDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

std::optional<FileLineColLoc> fileLocOf(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return f;
  if (auto n = dyn_cast<NameLoc>(loc))
    return fileLocOf(n.getChildLoc());
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return fileLocOf(c.getCallee());
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (auto r = fileLocOf(l))
        return r;
  if (auto o = dyn_cast<OpaqueLoc>(loc))
    return fileLocOf(o.getFallbackLocation());
  return std::nullopt;
}

unsigned numDataOperands(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (name == "tosa.mul")
    return std::min(2u, op->getNumOperands());
  if (name == "tosa.negate")
    return std::min(1u, op->getNumOperands());
  return op->getNumOperands();
}

} // namespace tosa_lsp
