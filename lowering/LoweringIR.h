//===- LoweringIR.h - MLIR-side internals of lowering/ ----------*- C++ -*-===//
//
// Private to lowering/: a section parsed and run through a pass pipeline, in
// its own MLIRContext (shared by the preview and native compilation).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_LOWERINGIR_H
#define TOSA_LSP_LOWERING_LOWERINGIR_H

#include "Analysis.h"
#include "Elided.h"
#include "Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <map>
#include <set>

namespace mlir {
class RewriterBase;
namespace linalg {
class GenericOp;
} // namespace linalg
namespace scf {
class ForOp;
} // namespace scf
} // namespace mlir

namespace tosa_lsp::detail {

struct LoweredSection {
  LoweredSection();
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  unsigned firstLine = 1;
  /// (line, column) in the section -> name of the source op there.
  std::map<std::pair<unsigned, unsigned>, std::string> sourceOps;
  /// Public functions given a C interface (compilation).
  std::vector<std::string> entryPoints;
  /// Their TOSA-level signatures, before lowering (an `F_into` twin: the
  /// destinations as trailing inputs, no results).
  std::map<std::string, mlir::FunctionType> signatures;
  /// Arguments used as tosa.gather / tosa.scatter indices, per function:
  /// argument -> the bound (K, the values' dimension 1) when static, else
  /// -1 - the values' own argument number (its input's dimension 1), so
  /// random inputs stay in range (out of range is undefined behaviour).
  /// Filled when lowering with the C interface (compile and run).
  std::map<std::string, std::map<unsigned, int64_t>> indexBounds;
  /// The destination-passing twins among entryPoints.
  std::set<std::string> destinationEntries;
  /// Errors MLIR reports while this section lives (LLVM IR translation and
  /// the JIT report through the handler too), with file line numbers.
  std::vector<SourceDiagnostic> diagnostics;
  mlir::DiagnosticEngine::HandlerID handlerId = 0;
  /// Set by the caller: refuses the function's signature before any pass
  /// runs (`run` takes fewer element types than the lowering).
  std::function<llvm::Error(mlir::FunctionType)> checkEntry;
  /// Set by the caller of lowerForNative: what to do with constants whose
  /// data is elided (compile and run refuse them unless told to fill).
  ElidedFill elidedFill{ElidedData::Refuse, 0};
  /// Set by the caller of lowerForNative: LowerOptions::streamThreshold.
  uint64_t streamThreshold = 0;
  /// Set by the caller of lowerForNative: LowerOptions::threads.
  unsigned threads = 1;
  /// The elided constants left in the IR (ElidedData::Keep), with the
  /// resource key of the first.
  std::vector<SourceDiagnostic> elided;
  std::string elidedKey;
  ~LoweredSection() {
    if (handlerId)
      context.getDiagEngine().eraseHandler(handlerId);
  }
};

/// Parses `sec` of `text`, verifies it and runs the stage's pipeline. On
/// failure, MLIR's diagnostics as SourceErrors (a file-level "lowering
/// failed" when MLIR gave none), or "no function @F in PATH" when the
/// section parsed but does not define `options.function`.
llvm::Error lowerSection(const std::string &text, const std::string &path,
                         const Section &sec, const LowerOptions &options,
                         LoweredSection &out);

/// The `// -----` section of `text` that defines @function, or nullptr.
const Section *sectionDefining(const std::string &text,
                               const std::vector<Section> &sections,
                               const std::string &function);

/// What `compile` and `run` build: the section defining `function` (the
/// only section when `function` is empty) lowered to the LLVM dialect with
/// C interfaces. `before` runs once the section is chosen (progress).
/// Errors as lowerSection's; a function is needed (ErrorTopic::Function)
/// when the file has several sections and `function` is empty.
llvm::Error lowerForNative(const std::string &text, const std::string &path,
                           const std::string &function, LowerMode mode,
                           bool strided, bool kernels, LoweredSection &out,
                           const std::function<void()> &before = nullptr);

/// Finds the constants of `module` whose `dense_resource` has no data and,
/// as `fill` says, fills them (static integer and float tensors; else a
/// SourceErrors naming the first), lists them in `kept` (Keep) or refuses
/// them (Refuse: a SourceErrors of elidedSummary). `at` gives a location's
/// file position; `key` is the first one's resource key.
llvm::Error handleElided(
    mlir::ModuleOp module, const ElidedFill &fill, const std::string &path,
    const std::function<SourceDiagnostic(mlir::Location, std::string)> &at,
    std::vector<SourceDiagnostic> &kept, std::string &key);

/// "N constants have elided data: dense_resource<KEY>; ..." at the first,
/// followed by `FILE:L:C: note: elided: ...` lines for the first five.
SourceDiagnostic elidedSummary(const std::vector<SourceDiagnostic> &elided,
                               const std::string &key, const std::string &path);

/// Outside upstream mode, for each entry point F returning tensors: a
/// public `F_into(args..., dest...)` writing its results into the caller's
/// buffers (DestinationTwin.cpp), listed in `out`'s entry points. A big F
/// becomes a call of F_into's implementation, so the body exists once.
void addDestinationTwin(LoweredSection &out, mlir::func::FuncOp fn);

/// --mode=safe: a `cf.assert` before each element-wise op for every
/// dimension whose runtime sizes could disagree (or miss a static result
/// size). Returns how many were inserted.
unsigned insertBroadcastAssertions(mlir::ModuleOp module, unsigned firstLine);

/// --mode=safe: before each tosa.gather and tosa.scatter, `cf.assert`s that
/// the operands' batch (and width, channel) sizes agree and that every
/// index lies in [0, K); before each tosa.table with a dynamic table, that
/// it has 256 (i8) or 513 (i16) entries. Otherwise the lowered code reads
/// and writes out of bounds. Returns how many ops were checked.
unsigned insertIndexAssertions(mlir::ModuleOp module, unsigned firstLine);

/// --mode=versioned: one scf.if version per combination of could-be-1
/// dynamic dims (at most `maxDims` of them per op), with those dims cast to a
/// static 1 where they are 1. Returns how many ops were versioned.
unsigned versionBroadcasts(mlir::ModuleOp module, unsigned maxDims);

/// Every mode but upstream: functions with dynamic argument sizes get a
/// tree of versions on those sizes being 1, each free of size-1 tests (see
/// FastPath.cpp); beyond the tree's budget, at most `maxDims` sizes get the
/// earlier chain. Returns how many functions were versioned.
unsigned versionFunctions(mlir::ModuleOp module, unsigned maxDims);

/// Name prefix of the private functions matmuls and convolutions are
/// outlined into (one per distinct kernel; Kernels.cpp).
inline constexpr const char *kKernelPrefix = "__tosa_lsp_kernel";

/// The dialects and translations a lowering context has.
mlir::DialectRegistry &loweringRegistry();

/// MLIR's passes and this project's, registered once per process.
void registerPassesOnce();

/// Tags the loop of a kernel schedule whose iterations write disjoint parts
/// of the result (ParallelLoops.cpp runs it on several threads).
inline constexpr const char *kParallelTag = "tosa_lsp.parallel";

/// The schedules tag two such loops, one inside the other (the matmul's N
/// and M panels, the convolution's channel blocks and rows). For
/// `threads` > 1, keeps one of each pair as kParallelTag: the outer one
/// (one fork per call) unless the inner one shares its iterations out more
/// evenly. Buffers of no contents (tensor.empty) used only inside the
/// chosen loop move into it, so each iteration (thread) packs into its own.
/// 0 threads: the running machine's (shared out as for this one's cores).
/// With 1 thread, and in the `serial` functions, it drops the tags.
void chooseParallelLoops(mlir::ModuleOp module, unsigned threads,
                         llvm::ArrayRef<mlir::func::FuncOp> serial);

/// Registers tosa-lsp-parallel-loops (ParallelLoops.cpp).
void registerParallelLoopsPass();

/// Registers tosa-lsp-kernels (tile, pack and vectorise matmuls and 2-D
/// convolutions) and tosa-lsp-copy-loops (after bufferization: strided
/// copies as loops, prefetchTiles, prefetchWindows, jamOuterReductions).
void registerKernelPasses();

/// Loops carrying a register tile read from a tensor (the matmul kernel's
/// K loop) start it from zero and add the read after the loop
/// (KernelTiles.cpp); a tile of a zero fill is not read in the first K
/// block (the loop the schedule tagged `tosa_lsp.kblocks`; none when
/// `singleKBlock`), and the fill goes. Returns how many loops changed.
unsigned startTilesFromZero(mlir::Operation *root, bool singleKBlock);

/// After bufferization: prefetches, before such a loop, of the rows of the
/// tile read after it.
void prefetchTiles(mlir::Operation *root);

/// The transform script that vectorises `op` when it reduces the innermost
/// dim of a static f32 tensor (a vector.reduction per row; the op tagged
/// `tosa_lsp.kernel` when it runs), else none (MemoryKernels.cpp).
std::optional<std::string> reductionSchedule(mlir::Operation *op,
                                             unsigned lanes);

/// Marks a big f32 transpose moving the innermost dim outwards (NHWC ->
/// NCHW) whose init is the caller's buffer, when 16x16 blocks tile it and
/// it stores at least `threshold` bytes (0: the host's L2 size); after
/// bufferization, lowerStreamTransposes gives it whole-line non-temporal
/// stores (StreamTranspose.cpp).
bool markStreamTranspose(mlir::Operation *transpose, unsigned lanes,
                         uint64_t threshold);
void lowerStreamTransposes(mlir::Operation *root);

/// A static f32 conv2d (NHWC, HWCF) of at least `minFlops` whose output
/// channels are not a multiple of `multiple`, as one computing them rounded
/// up (zero filters) and a slice of its result; returns the new convolution,
/// else `op` (PaddedChannels.cpp).
mlir::Operation *padOutputChannels(mlir::Operation *op, int64_t multiple,
                                   int64_t minFlops);

/// Registers tosa-lsp-unroll-windows (WindowOps.cpp).
void registerWindowPasses();

/// Marks a window generic over (n, oh, ow, c) whose `inputs` read input rows
/// no earlier output row read: after bufferization, prefetchWindows makes
/// it loops whose channel loop prefetches them a few pixels ahead, line by
/// line (`stride` input pixels per output pixel; WindowPrefetch.cpp); with
/// `jam` > 1, that many output columns an iteration, each input and weight
/// line loaded once for them.
void markWindowPrefetch(mlir::linalg::GenericOp generic,
                        llvm::ArrayRef<int64_t> inputs, int64_t channels,
                        int64_t stride, int64_t elemBytes, int64_t jam);
void prefetchWindows(mlir::Operation *root);
/// A marked window generic at stride 1 (on buffers) whose rows are
/// contiguous lines of channels: put in the else branch of an `scf.if` whose
/// then branch computes each output row as one stream of line-aligned
/// vectors, taken when the run time finds every stream at the output's
/// offset in a 64-byte line; `reads` (input positions) prefetched
/// `aheadPixels` on (WindowStreams.cpp). False when it does not apply.
bool streamWindowRows(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp g,
                      int64_t aheadPixels, llvm::ArrayRef<unsigned> reads);

/// The buffer a memref view is of, through subviews and casts (whose
/// types' offsets count from that buffer's start; not memref.view's byte
/// shift) (WindowPrefetch.cpp).
mlir::Value subviewRoot(mlir::Value memref);

/// `loop` (from 0, step 1, a multiple of `step` iterations) as a loop of
/// step `step` around a loop of `step` iterations running its body;
/// returns the inner loop (WindowPrefetch.cpp).
mlir::scf::ForOp stripMine(mlir::RewriterBase &rewriter, mlir::scf::ForOp loop,
                           int64_t step);
/// Asks LLVM to vectorise `line` with one vector of `width` lanes.
void vectorizeAsOne(mlir::scf::ForOp line, int64_t width);

/// After bufferization: reductions over an outer dim (reduce_max over H)
/// as loops combining 4 rows per pass over the result (OuterReductions.cpp).
void jamOuterReductions(mlir::Operation *root);

/// f32 lanes of the host's FMA vectors (16 with AVX-512, 8 with AVX2), or 0
/// when it has no FMA: the kernels' `lanes` option.
unsigned hostKernelLanes();

/// After LLVM lowering: flush stdio before a failed assert aborts, so its
/// message is not lost in a buffer.
void flushBeforeAbort(mlir::ModuleOp module);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_LOWERING_LOWERINGIR_H
