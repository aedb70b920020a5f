//===- Lowering.h - TOSA -> linalg/scf/LLVM preview -------------*- C++ -*-===//
//
// Runs MLIR's own passes (the upstream TOSA pipeline) on a file or one
// function and returns the lowered IR as text, with a mapping from each
// printed op back to the source op it came from (through MLIR locations).
// Plain data (or an llvm::Error, see Errors.h) out; no LSP, no server.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_LOWERING_H
#define TOSA_LSP_LOWERING_LOWERING_H

#include "Elided.h"
#include "Errors.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

/// Vector: outside upstream mode, linalg after the matmul / convolution
/// kernels were tiled, packed and vectorised (Kernels.cpp), still on tensors.
enum class LowerStage { Linalg, Vector, Loops, LLVM };
/// upstream: MLIR 22's pipeline as is (strided memrefs at function
/// boundaries, scalar loops). fast: the same front end, then element-wise
/// fusion on tensors, contiguous (identity-layout) memrefs at function
/// boundaries and caller-provided result buffers (`F_into`), so LLVM
/// vectorises unit-stride loops. safe / versioned: this project's own
/// front-end strategies (spec 002 runtime checks, spec 004 versioning) on
/// fast's back end.
enum class LowerMode { Upstream, Safe, Versioned, Fast };

std::optional<LowerStage> parseStage(const std::string &s);
std::optional<LowerMode> parseMode(const std::string &s);
const char *stageName(LowerStage s);
const char *modeName(LowerMode m);

struct LowerOptions {
  std::string function; // empty: the whole file
  LowerStage stage = LowerStage::Linalg;
  LowerMode mode = LowerMode::Upstream;
  /// Append `// from tosa.add @ 12:8` to lines whose op came from a
  /// different source op than the line before.
  bool annotate = false;
  /// Give every public function `llvm.emit_c_interface` (for compilation);
  /// outside upstream mode also add a destination-passing twin `F_into`.
  bool cInterface = false;
  /// Outside upstream mode: accept any strides at function boundaries
  /// (upstream's fully dynamic layout) instead of contiguous memrefs.
  bool strided = false;
  /// Outside upstream mode: tile and vectorise matmuls and convolutions for
  /// the host CPU's vectors (off for code meant for another CPU).
  bool kernels = true;
  /// With kernels: transposes into a caller's buffer store non-temporally
  /// from this many bytes (StreamTranspose.cpp); 0: the host's L2 size,
  /// UINT64_MAX: never (compile's --streaming-stores).
  uint64_t streamThreshold = 0;
  /// With kernels, above 1: matmuls' and convolutions' independent loops
  /// on this many threads (OpenMP: libomp at run time; ParallelLoops.cpp);
  /// 0: as many as the running machine gives OpenMP (its cores, or
  /// OMP_NUM_THREADS).
  unsigned threads = 1;
  /// Constants whose data is elided (`dense_resource<__elided__>`): kept
  /// by default (the preview shows them; LLVM IR translation would fail).
  ElidedFill elided;
};

/// Ties a line of the preview to the source op it was lowered from.
struct PreviewMapping {
  unsigned previewLine = 0, previewColumn = 0; // 1-based
  unsigned sourceLine = 0, sourceColumn = 0;   // 1-based, in the input file
  std::string sourceOp;                        // e.g. "tosa.add"
};

struct LowerResult {
  std::string text;
  std::vector<PreviewMapping> mappings;
  /// The pass pipeline that ran, for the record.
  std::string pipeline;
  /// Kept elided constants (LowerOptions::elided): elidedSummary's text,
  /// for a warning. Empty when there are none.
  std::string elidedWarning;
};

/// The textual pass pipeline of a stage (what `mlir-opt-22 --pass-pipeline`
/// would run, but for this project's tosa-lsp-* passes outside upstream
/// mode); upstream's unless another mode is given.
std::string pipelineFor(LowerStage stage, LowerMode mode = LowerMode::Upstream,
                        bool strided = false, bool kernels = true,
                        uint64_t streamThreshold = 0, unsigned threads = 1);

/// The pipeline of `options`' stage, mode, layout, kernels, streaming
/// threshold and threads.
std::string pipelineFor(const LowerOptions &options);

/// Suffix of the destination-passing twin of an entry point.
inline constexpr const char *kIntoSuffix = "_into";

/// The lowered IR of the file, or of the section defining
/// `options.function`. Errors (Errors.h): MLIR's diagnostics as
/// SourceErrors, with line numbers of the file (a crash of MLIR's passes is
/// one at the file); "no function @F in PATH" when no section defines F.
llvm::Expected<LowerResult> lower(const std::string &text,
                                  const std::string &path,
                                  const LowerOptions &options);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_LOWERING_H
