//===- OpInference.h - One function's inference records --------*- C++ -*-===//
//
// Private to analysis/. After MLIR's tosa-infer-shapes ran on a function of
// a parsed section (ShapeInference.cpp), the records of its ops
// (OpInference.cpp) and its refine-all edits (RefineEdits.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_OPINFERENCE_H
#define TOSA_LSP_ANALYSIS_OPINFERENCE_H

#include "IR.h"
#include "ShapeInference.h"
#include "TextEdit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <string>
#include <vector>

namespace tosa_lsp::detail {

/// A ranked tensor type's shape, dynamic sizes as kDynamic (std::nullopt
/// when unranked or not a tensor).
MaybeShape shapeOf(mlir::Type t);
MaybeShape shapeOf(const mlir::ShapedTypeComponents &c);
/// The text a parser range covers.
std::string textOf(llvm::SMRange r);

/// The inference records of one function's ops, after the pass ran on it:
/// `declared` holds every value's type from before. Types, op names and
/// SSA names go into the run's pool once (`writer`).
class OpInference {
public:
  OpInference(const detail::ParsedSection &ps, mlir::func::FuncOp fn,
              const llvm::DenseMap<mlir::Value, mlir::Type> &declared,
              InferredOpWriter &writer, mlir::MLIRContext &ctx,
              const std::string &functionName)
      : ps(ps), fn(fn), declared(declared), writer(writer), ctx(ctx),
        functionId(writer.intern(functionName)) {}

  InferredOp infer(mlir::Operation *op, unsigned section);

private:
  using Result = InferredOpWriter::Result;
  /// The op's results: declared and inferred types, the shape function's
  /// shapes and where they contradict the declared ones.
  std::vector<Result> results(mlir::Operation *op,
                              const std::optional<std::vector<MaybeShape>> &fn,
                              std::vector<MaybeShape> &declaredShapes,
                              std::vector<MaybeShape> &inferredShapes);
  /// The shapes of the shape function with the inputs `isUnknown` names
  /// made unknown (operands, then the `yielded` values).
  std::optional<std::vector<MaybeShape>>
  shapesWithUnknown(mlir::Operation *op,
                    llvm::ArrayRef<mlir::OpOperand *> yielded,
                    llvm::function_ref<bool(unsigned)> isUnknown);
  /// Sources of refined dims: which inputs, made unknown, lose them.
  void findDimSources(mlir::Operation *op,
                      llvm::ArrayRef<mlir::OpOperand *> yielded,
                      std::vector<Result> &results,
                      const std::vector<MaybeShape> &declaredShapes,
                      const std::vector<MaybeShape> &inferredShapes);
  /// What mlir-opt reports after the pass: the op's own verifier on the
  /// refined types (it verified as declared).
  uint32_t rejection(mlir::Operation *op);
  std::string nameOf(mlir::Value v) const;
  uint32_t typeId(mlir::Type t);
  mlir::Value unknown(mlir::Type t);

  const detail::ParsedSection &ps;
  mlir::func::FuncOp fn;
  const llvm::DenseMap<mlir::Value, mlir::Type> &declared;
  InferredOpWriter &writer;
  mlir::MLIRContext &ctx;
  uint32_t functionId;
  llvm::DenseMap<mlir::Type, uint32_t> typeIds;
  /// rejection's capture of the verifier's first error.
  std::unique_ptr<mlir::ScopedDiagnosticHandler> verifierMessages;
  bool capturing = false;
  std::string message;
  /// Interned op names, by the name's identity (not hashed per op).
  llvm::DenseMap<void *, uint32_t> opNameIds;
  /// An operand made unknown: same rank, every size dynamic, and not a
  /// constant any more (a block argument). One argument per type, for
  /// the whole function (a block per operand of each op was a fifth of
  /// the per-op work).
  mlir::Block scratch;
  llvm::DenseMap<mlir::Type, mlir::Value> unknowns;
};

/// The refine-all edits of `fn` after the pass (see
/// FunctionInference::refineEdits), or the problem in `fi.refineProblem`.
void refineEdits(const ParsedSection &ps, mlir::func::FuncOp fn,
                 const llvm::DenseMap<mlir::Value, mlir::Type> &declared,
                 FunctionInference &fi, std::vector<TextEditData> &edits);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_OPINFERENCE_H
