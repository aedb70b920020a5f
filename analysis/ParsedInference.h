//===- ParsedInference.h - tosa-infer-shapes on parsed IR -------*- C++ -*-===//
//
// Private to analysis/. The per-function shape inference of ShapeInference
// on a section already parsed (ParsedSection), in the context it was parsed
// in: the inferrer's own re-parse, or the analysis' IR once its results are
// copied out (the pass changes the IR). Results are plain data.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_PARSEDINFERENCE_H
#define TOSA_LSP_ANALYSIS_PARSEDINFERENCE_H

#include "IR.h"
#include "ShapeInference.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace tosa_lsp::detail {

/// Which top-level functions of a parsed section to infer, and how.
struct FunctionsToInfer {
  unsigned section = 0;
  /// Those overlapping these lines (and in the file: not a unit's stubs).
  unsigned firstLine = 1, lastLine = ~0u;
  /// A function holding one of these (errors) is listed, not inferred.
  std::vector<Position> errors;
  bool withRefineEdits = false;
};

/// A top-level function `what` names, before its inference: its name,
/// place and, when it is not to be inferred, why (`fi.skipped`).
struct ListedFunction {
  mlir::Operation *fn = nullptr; // a func.func
  FunctionInference fi;
};
std::vector<ListedFunction> listTopLevelFunctions(const ParsedSection &ps,
                                                  const FunctionsToInfer &what);

/// The ops a request waits for inside a function (a hover's line): right
/// after the function's pass, the ops on `lines` and those defining their
/// operands are recorded alone, in a pool of their own, and handed to
/// `deliver` (a function of those ops only) before the rest is recorded.
struct EarlyOps {
  std::vector<unsigned> lines; // file lines
  llvm::function_ref<void(FunctionInference)> deliver;
};

/// tosa-infer-shapes on one listed function, recorded into `f.fi` (nothing
/// for a skipped one). False once `stopped` said yes. `betweenOps`, if
/// given, is called before the pass and between every two ops' records:
/// it may infer other functions of the same context meanwhile (one that a
/// request waits for), not this one.
bool inferListed(const ParsedSection &ps, mlir::MLIRContext &ctx,
                 ListedFunction &f, bool withRefineEdits,
                 llvm::function_ref<bool()> stopped, InferredOpWriter *shared,
                 llvm::function_ref<void()> betweenOps = {},
                 const EarlyOps *early = nullptr);

/// Upstream's tosa-infer-shapes on each function `what` names, each then
/// recorded op by op (FunctionInference), appended to `out` in text order.
/// The ops' strings go to `shared` when given, else to a pool of each
/// function's own (a document's cache then frees a function's with it).
/// False once `stopped` said yes (what is in `out` is then incomplete). A
/// crash inside MLIR is the caller's to contain.
bool inferTopLevelFunctions(const ParsedSection &ps, mlir::MLIRContext &ctx,
                            const FunctionsToInfer &what,
                            llvm::function_ref<bool()> stopped,
                            InferredOpWriter *shared,
                            std::vector<FunctionInference> &out);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_PARSEDINFERENCE_H
