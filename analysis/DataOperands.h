//===- DataOperands.h - which operands of an op broadcast -------*- C++ -*-===//
//
// Shared by the analysis and the lowering modes (safe, versioned), which
// both rewrite or inspect element-wise ops on MLIR IR.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_DATAOPERANDS_H
#define TOSA_LSP_ANALYSIS_DATAOPERANDS_H

namespace mlir {
class Operation;
} // namespace mlir

namespace tosa_lsp::detail {

/// Number of leading operands that take part in broadcasting; the rest are
/// scalar-like parameters (tosa.mul's shift, tosa.negate's zero points).
unsigned numDataOperands(mlir::Operation *op);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_DATAOPERANDS_H
