//===- Lenient.h - custom syntax of dialects MLIR 22 lacks ------*- C++ -*-===//
//
// Private to analysis/. MLIR parses an unknown dialect's ops in generic form
// only; their custom syntax (`util.unfoldable_constant dense<1> :
// tensor<4xi32>` in IREE's tests) fails with "Dialect `util' not found", losing
// the whole section. A *lenient dialect* is an MLIR dialect registered for such
// a namespace whose parse hook (Dialect::getParseOperationHook) accepts the
// common shapes `ns.op OPERANDS ATTRS : TYPES`, `ns.op(OPERANDS, ATTRS) :
// TYPES` and `ns.op %x : type`; the ops it builds are unregistered ops,
// positions come from MLIR's parser as for any op.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_LENIENT_H
#define TOSA_LSP_ANALYSIS_LENIENT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <string>
#include <string_view>

namespace tosa_lsp::detail {

/// The namespace in MLIR's "Dialect `util' not found for custom op ...".
std::optional<std::string> missingDialect(std::string_view message);

/// Loads the lenient dialect for `ns` into `ctx` (once). Never for a
/// namespace the context's registry has.
void loadLenientDialect(mlir::MLIRContext &ctx, llvm::StringRef ns);

bool isLenientDialect(const mlir::Dialect *dialect);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_LENIENT_H
