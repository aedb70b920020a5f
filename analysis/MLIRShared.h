//===- MLIRShared.h - MLIR-level helpers shared with the lowering -*- C++
//-*-===//
//
// The public MLIR-level interface of the analysis library, for `lowering/`
// (which parses and rewrites the same files): one copy each of the dialects
// both parse with, where a location points in the file, and which operands
// of an element-wise op broadcast. Everything else MLIR-level in analysis/
// is private (IR.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_MLIRSHARED_H
#define TOSA_LSP_ANALYSIS_MLIRSHARED_H

#include "mlir/IR/Location.h"

#include <memory>
#include <optional>

namespace mlir {
class DialectRegistry;
class MLIRContext;
class Operation;
} // namespace mlir

namespace tosa_lsp {

/// All upstream dialects and their interface extensions: files mix TOSA
/// with whatever else they use, and a promised-but-missing interface would
/// abort at verification time.
void registerFileDialects(mlir::DialectRegistry &registry);

/// A context that one thread at a time uses: no thread pool, and uniquers
/// that take no locks. MLIR 22's constructor with Threading::DISABLED
/// leaves its type, attribute and location uniquers thread-safe (a
/// read-write lock and a thread-local cache at every type, attribute and
/// location the parser makes: ~2.5 % of an open's time); only
/// disableMultithreading() switches them. Code that lets two threads use
/// one such context at once holds a ConcurrentUse while they do.
std::unique_ptr<mlir::MLIRContext>
singleThreadedContext(const mlir::DialectRegistry &registry);

/// Makes `ctx`'s uniquers thread-safe while it lives (two threads read and
/// build in one context: verifiers beside op reports).
class ConcurrentUse {
public:
  explicit ConcurrentUse(mlir::MLIRContext &ctx);
  ~ConcurrentUse();
  ConcurrentUse(const ConcurrentUse &) = delete;
  ConcurrentUse &operator=(const ConcurrentUse &) = delete;

private:
  mlir::MLIRContext &ctx;
};

/// The file position a location refers to: through names, call sites (the
/// callee), fused locations (the first with one) and opaque locations.
std::optional<mlir::FileLineColLoc> fileLocOf(mlir::Location loc);

/// Number of leading operands that take part in broadcasting; the rest are
/// scalar-like parameters (tosa.mul's shift, tosa.negate's zero points).
unsigned numDataOperands(mlir::Operation *op);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_MLIRSHARED_H
