//===- Run.h - JIT-run a function on inputs ---------------------*- C++ -*-===//
//
// `tosa-lsp run`: compiles one function with the compile pipeline, JITs it
// with MLIR's ExecutionEngine, calls its C interface with memref descriptors
// built from JSON (or random) inputs and returns the results as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_RUN_H
#define TOSA_LSP_LOWERING_RUN_H

#include "Errors.h"
#include "Lowering.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tosa_lsp {

/// run's default limit on its buffers: 4 GiB.
constexpr uint64_t kDefaultRunMaxBytes = uint64_t(4) << 30;

struct RunOptions {
  std::string function; // required (ErrorTopic::Function when empty)
  LowerMode mode = LowerMode::Fast;
  /// JSON: an array with one nested list (or number) per argument. Float
  /// elements may be "nan", "inf" or "-inf", as results print them;
  /// integer elements must be integers in their type's range (i1: true,
  /// false, 0 or 1), or the error names the argument and index.
  std::string inputs;
  /// Without inputs: random values from this seed.
  unsigned seed = 0;
  /// Per argument "2x3"; fills the dynamic dims of random inputs. A
  /// dynamic dim it leaves open gets size 2, and RunResult::chosen says so.
  std::vector<std::string> shapes;
  unsigned optLevel = 2;
  /// Matmul and convolution kernels on this many threads (compile's
  /// --threads; libomp loaded into the JIT).
  unsigned threads = 1;
  /// The arguments' buffers and the results' of static shape may take at
  /// most this many bytes in all (ErrorTopic::Shapes or Inputs beyond):
  /// refused before anything is allocated.
  uint64_t maxBytes = kDefaultRunMaxBytes;
  /// Constants whose data is elided: an error naming them, unless filled.
  ElidedFill elided{ElidedData::Refuse, 0};
};

struct RunResult {
  /// {"function", "inputs", "inputShapes", "chosenSizes", "results"}: valid
  /// JSON, so NaN and infinities are the strings "nan", "inf" and "-inf".
  std::string json;
  /// One line per random argument whose dynamic sizes run chose (no
  /// --shape for them); also in the JSON as "chosenSizes".
  std::vector<std::string> chosen;
};

/// Errors (Errors.h): lowering's; inputs that do not fit the function's
/// signature (ErrorTopic::Inputs, or ErrorTopic::Shapes for random ones);
/// a signature run cannot call; JIT and call failures.
llvm::Expected<RunResult> runFunction(const std::string &text,
                                      const std::string &path,
                                      const RunOptions &options);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_RUN_H
