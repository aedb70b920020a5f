//===- MLIRShared.cpp - MLIR-level helpers shared with the lowering -------===//

#include "MLIRShared.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Support/StorageUniquer.h"

#include <algorithm>

using namespace mlir;

namespace tosa_lsp {

void registerFileDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

std::unique_ptr<MLIRContext>
singleThreadedContext(const DialectRegistry &registry) {
  auto ctx =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  ctx->disableMultithreading();
  return ctx;
}

/// Only the uniquers: with the context's own flag set, MLIR code that
/// checks it would start a thread pool.
static void setThreadSafeUniquers(MLIRContext &ctx, bool safe) {
  for (StorageUniquer *u : {&ctx.getAffineUniquer(), &ctx.getTypeUniquer(),
                            &ctx.getAttributeUniquer()})
    u->disableMultithreading(!safe);
}

ConcurrentUse::ConcurrentUse(MLIRContext &ctx) : ctx(ctx) {
  setThreadSafeUniquers(ctx, true);
}

ConcurrentUse::~ConcurrentUse() { setThreadSafeUniquers(ctx, false); }

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
