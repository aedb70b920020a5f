//===- Kernels.cpp - tiled, packed, vectorised matmul and convolution -----===//
//
// MLIR 22 lowers tosa.matmul and tosa.conv2d to named linalg ops that
// convert-linalg-to-loops turns into scalar loop nests (0.4 GFLOP/s). Here,
// outside upstream mode, each such op with static f32 shapes gets a schedule
// of MLIR's own transform dialect, applied by the transform interpreter
// before bufferization (the preview's `vector` stage shows the result):
//
//   matmul (linalg.batch_matmul): packed to the mmt4d layout (A in MR-row
//     panels, B in NR-column panels, C in MRxNR tiles; zero padding for
//     sizes that are not multiples), tiled K-block / N-panel / M-panel, and
//     the MRxNRx1 tile vectorised. vector.contract -> vector.outerproduct ->
//     vector.fma: per k, NR/lanes vector loads of B, MR broadcasts of A and
//     MR*NR/lanes FMAs into accumulators kept in registers across the K
//     loop (the GEMM micro-kernel of BLIS and of the MLIR GEMM case study).
//   conv2d (linalg.conv_2d_nhwc_hwcf, weights transposed by upstream's
//     tosa-to-linalg-named option): tiled to one output row, OWT output
//     columns and FT output channels, KH and input channels, decomposed to
//     a 1-D convolution and vectorised: the same FMA micro-kernel, reading
//     the input in place (no im2col).
//
// Float reassociation: the K (or C*KH*KW) sums are accumulated in a
// different order than the scalar loops, as every BLAS does.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"

#include <optional>

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

constexpr const char *kTag = "tosa_lsp.kernel";

constexpr const char *kRelayoutTag = "tosa_lsp.relayout";

/// KernelTiles.cpp's K-block loop.
constexpr const char *kKBlocksLoopTag = "tosa_lsp.kblocks";

/// Elements from which a transpose outside the kernels is vectorised.
constexpr int64_t kMinVectorTranspose = 1 << 16;

constexpr const char *kHeader = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
)mlir";

constexpr const char *kEpilogue = R"mlir(
    transform.yield
  }
}
)mlir";

/// Every pattern, hoisting and loop query of a schedule is scoped to the
/// op's own loop nest (%nest, the outermost tiling loop): applied to the
/// whole function, a model with n kernels paid n canonicalizations of all
/// of it (a 200-op ResNet-like function: 20 s of MLIR).
///
/// After the tiled op %vec is vectorised: a vector.contract on the
/// register tile (unit dims cast away, in a second round: with the
/// permutation patterns in the same round, the contraction of a packed
/// matmul came out transposed, 32 FMAs of 8 lanes instead of 8 of 32), its
/// accumulator hoisted out of the reduction loops, then lowered to
/// vector.fma. Slices of slices are folded last: before hoisting they hide
/// the loop-invariant accumulator, after it they spare bufferization a copy
/// of each tile.
constexpr const char *kVectoriseTile = R"mlir(
    transform.structured.vectorize %vec : !transform.any_op
    transform.apply_patterns to %nest {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %nest {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir";

/// The rest of kVectorise; with `unitDims`, the loop-carried accumulator
/// of a tile whose C rows are strided (vector<MRx1xNR>) loses its unit dim
/// after the hoisting.
std::string lowerTile(bool unitDims) {
  return std::string(R"mlir(
    %loops = transform.structured.match interface{LoopLikeInterface} in %nest : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
)mlir") +
         (unitDims ? R"mlir(
    transform.apply_patterns to %nest {
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir"
                   : "") +
         R"mlir(
    transform.apply_patterns to %nest {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
    } : !transform.any_op
    transform.apply_patterns to %nest {
      transform.apply_patterns.tensor.fold_tensor_subset_ops
      transform.apply_patterns.tensor.merge_consecutive_insert_extract_slice
    } : !transform.any_op
)mlir";
}

const std::string kVectorise = std::string(kVectoriseTile) + lowerTile(false);

/// Marks the loop nest of a schedule in two parts (KernelsPass::finishTile).
constexpr const char *kNestTag = "tosa_lsp.nest";

constexpr const char *kMatchOp = R"mlir(
    %op = transform.structured.match attributes{tosa_lsp.kernel} in %root : (!transform.any_op) -> !transform.any_op
)mlir";

/// On the mmt4d-style packed batch_matmul (linalg::blockPackMatmul: A
/// [b, M/MR, K, MR, 1], B [b, N/NR, K, NR, 1], a B panel contiguous along K,
/// C [b, M/MR, N/NR, MR, NR]; dims b, m1, n1, k1, m0, n0, k0). Loops: b, K
/// blocks of KC, N panels, M panels, k: an NR-column panel of B (KC x NR)
/// stays in L1/L2 across the M panels. With `panelB`, B is packed panel by
/// panel inside the N-panel loop (its pack fused there) into one KC x NR
/// buffer, instead of whole into a fresh matrix-sized one before the loops:
/// B is then read once and the packed copy never leaves the cache (on
/// 1x128x768 . 1x768x3072, where each B panel serves only 16 M panels, the
/// whole-B packing took a quarter of the time).
std::string matmulSchedule(int64_t kc, bool panelB, bool inPlaceC) {
  std::string fuse = panelB ? R"mlir(
    %pb, %pbloop = transform.structured.fuse_into_containing_op %packB into %nloop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %nest {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
)mlir"
                            : "";
  return std::string(kHeader) + kMatchOp +
         llvm::formatv(R"mlir(
    %packB = transform.get_producer_of_operand %op[1] : (!transform.any_op) -> !transform.any_op
    %blocks, %nest, %kblocks, %nloop, %mloop = transform.structured.tile_using_for %op tile_sizes [1, 1, 1, {0}, 0, 0, 0] interchange = [0, 3, 2, 1, 4, 5, 6]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %kblocks "tosa_lsp.kblocks" : !transform.any_op
    transform.annotate %nloop "tosa_lsp.parallel_outer" : !transform.any_op
    transform.annotate %mloop "tosa_lsp.parallel_inner" : !transform.any_op
)mlir",
                       kc)
             .str() +
         fuse + R"mlir(
    %vec, %kloop = transform.structured.tile_using_for %blocks tile_sizes [0, 0, 0, 1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir" +
         (inPlaceC ? std::string(kVectoriseTile) + R"mlir(
    transform.annotate %nest "tosa_lsp.nest" : !transform.any_op
)mlir"
                   : kVectorise) +
         kEpilogue;
}

/// The second part of a two-part schedule: the tagged nest's lowering.
std::string finishScript() {
  return std::string(kHeader) + R"mlir(
    %nest = transform.structured.match attributes{tosa_lsp.nest} in %root : (!transform.any_op) -> !transform.any_op
)mlir" + lowerTile(true) +
         kEpilogue;
}

/// A contraction into an M x N accumulator that may carry unit dims (C's
/// rows in place: vector<MRx1xNR>), of an M and an N vector (after unit
/// dims), every reduction dim of size 1: an outer product on the shapes
/// without the unit dims (lower_outerproduct: an FMA per row), which MLIR's
/// leading-unit-dim patterns do not reach.
struct UnitDimsToOuterProduct : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto acc = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD || !acc || acc.getRank() < 3)
      return failure();
    auto nonUnit = [](VectorType t) {
      SmallVector<int64_t> dims;
      for (auto [i, d] : llvm::enumerate(t.getShape()))
        if (d != 1)
          dims.push_back(i);
      return dims;
    };
    SmallVector<int64_t> a = nonUnit(op.getLhsType()),
                         b = nonUnit(op.getRhsType()), c = nonUnit(acc);
    if (a.size() != 1 || b.size() != 1 || c.size() != 2)
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (maps[0].getResult(a[0]) != maps[2].getResult(c[0]) ||
        maps[1].getResult(b[0]) != maps[2].getResult(c[1]))
      return failure();
    int64_t m = acc.getDimSize(c[0]), n = acc.getDimSize(c[1]);
    Type elem = acc.getElementType();
    Location loc = op.getLoc();
    Value lhs = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({m}, elem), op.getLhs());
    Value rhs = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({n}, elem), op.getRhs());
    Value acc2 = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({m, n}, elem), op.getAcc());
    Value outer = vector::OuterProductOp::create(rewriter, loc, acc2.getType(),
                                                 lhs, rhs, acc2)
                      .getResult();
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, acc, outer);
    return success();
  }
};

/// conv_2d_nhwc_hwcf (n, oh, ow, f, kh, kw, c): loops n, F blocks of FT, oh,
/// OW blocks of OWT, kh, c; the KW taps and the OWT x FT tile in registers.
/// The channel block outside the rows: its KH x KW x C x FT weights (590 KB
/// for 3x3x512) are read from L2 for every row, not from memory. With
/// `panel` (the weights come from a transpose of TOSA's FHWC, pulled into
/// the kernel by outline), that transpose is fused into the F-block loop:
/// each block's weights are transposed once into a contiguous KH x KW x C x
/// FT panel, instead of the whole filter into HWCF, where an FT-wide slice
/// of F = 512 channels is 128 bytes every 2 KB, a power-of-two stride that
/// maps a block onto a sliver of the cache's sets (3x3 7x7x512 and 1x1
/// 7x7x2048: 2.5-3.7x numpy's time before, half of it the transpose). The
/// panel's transpose is vectorised in 16x16 (or 8x8) blocks. With `peel`,
/// the OW loop's last, partial block is a loop of its own, whose static size
/// vectorises too (29 columns: 3 x 8 + 5).
std::string convSchedule(int64_t owt, int64_t ft, bool peel, bool panel,
                         int64_t lanes) {
  std::string tiled;
  if (panel)
    tiled =
        llvm::formatv(R"mlir(
    %tr = transform.get_producer_of_operand %op[1] : (!transform.any_op) -> !transform.any_op
    %fblocks, %nest, %fouter = transform.structured.tile_using_for %op tile_sizes [1, 0, 0, {1}, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %panel, %floop = transform.structured.fuse_into_containing_op %tr into %fouter
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %nest {{
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    %ptiled, %ploops:4 = transform.structured.tile_using_for %panel tile_sizes [1, 1, {2}, {2}]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %ptiled : !transform.any_op
    transform.apply_patterns to %nest {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    transform.apply_patterns to %nest {{
      transform.apply_patterns.vector.lower_transpose lowering_strategy = {3}
    } : !transform.any_op
    %rows, %outer:2 = transform.structured.tile_using_for %fblocks tile_sizes [0, 1, {0}, 0, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
)mlir",
                      owt, ft, lanes, lanes >= 16 ? "shuffle_16x16" : "eltwise")
            .str();
  else
    tiled = llvm::formatv(R"mlir(
    %rows, %nest, %outer:3 = transform.structured.tile_using_for %op tile_sizes [1, 1, {0}, {1}, 0, 0, 0] interchange = [0, 3, 1, 2, 4, 5, 6]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
)mlir",
                          owt, ft)
                .str();
  // Threads take blocks of output channels, or the rows of one block
  // (chooseParallelLoops).
  tiled += std::string(R"mlir(
    transform.annotate )mlir") +
           (panel ? "%fouter" : "%outer#0") +
           R"mlir( "tosa_lsp.parallel_outer" : !transform.any_op
    transform.annotate )mlir" +
           (panel ? "%outer#0" : "%outer#1") +
           R"mlir( "tosa_lsp.parallel_inner" : !transform.any_op
)mlir";
  if (peel)
    tiled += std::string(R"mlir(
    %columns = transform.cast )mlir") +
             (panel ? "%outer#1" : "%outer#2") +
             R"mlir( : !transform.any_op to !transform.op<"scf.for">
    %full, %partial = transform.loop.peel %columns : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %nest {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %blocks = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %nest : (!transform.any_op) -> !transform.any_op
)mlir";
  return std::string(kHeader) + kMatchOp + tiled + R"mlir(
    %taps, %inner:2 = transform.structured.tile_using_for )mlir" +
         std::string(peel ? "%blocks" : "%rows") +
         R"mlir( tile_sizes [0, 0, 0, 0, 1, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %vec = transform.structured.decompose %taps : (!transform.any_op) -> !transform.any_op
)mlir" + kVectorise +
         kEpilogue;
}

/// Once before the matmul schedules: canonicalization folds the packing
/// of the zero-filled accumulator into a fill of the packed one.
std::string prepareScript() {
  return std::string(kHeader) + R"mlir(
    transform.apply_patterns to %root {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir" + kEpilogue;
}

/// Once after them: the packs and unpacks (tagged) become copies:
/// tensor.expand_shape / collapse_shape and linalg.transpose.
std::string relayoutScript() {
  return std::string(kHeader) + R"mlir(
    %packs = transform.structured.match ops{["linalg.pack"]} attributes{tosa_lsp.relayout} in %root : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.structured.lower_pack %packs : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %unpacks = transform.structured.match ops{["linalg.unpack"]} attributes{tosa_lsp.relayout} in %root : (!transform.any_op) -> !transform.op<"linalg.unpack">
    transform.structured.lower_unpack %unpacks : (!transform.op<"linalg.unpack">) -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">, !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
)mlir" + kEpilogue;
}

/// A relayout transpose of the packing (pack B, unpack C: rows of NR
/// contiguous floats; pack A: MR x K blocks turned K x MR) as vector copies
/// and 8x8 register transposes: convert-linalg-to-loops gives element-wise
/// loops LLVM does not vectorise (it cannot tell the buffers apart), and on
/// a 1x128x768 . 1x768x3072 matmul copying B that way took a third of the
/// time. Tile sizes: every dim 1 but the output's innermost non-unit one
/// (full: a row copy), and, for a transpose, the output dim read from the
/// input's innermost non-unit one; none when the sizes do not tile.
std::optional<SmallVector<int64_t>> relayoutTiles(linalg::TransposeOp t,
                                                  int64_t block) {
  auto out = dyn_cast<RankedTensorType>(t.getInit().getType());
  if (!out || !out.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = out.getShape(), perm = t.getPermutation();
  auto in = cast<RankedTensorType>(t.getInput().getType()).getShape();
  auto innermost = [](ArrayRef<int64_t> dims) -> std::optional<int64_t> {
    for (int64_t i = dims.size() - 1; i >= 0; --i)
      if (dims[i] > 1)
        return i;
    return std::nullopt;
  };
  std::optional<int64_t> dOut = innermost(shape), dIn = innermost(in);
  if (!dOut || !dIn)
    return std::nullopt;
  SmallVector<int64_t> tiles(shape.size(), 1);
  if (perm[*dOut] == *dIn) {
    if (shape[*dOut] > 64)
      return std::nullopt;
    tiles[*dOut] = 0;
    return tiles;
  }
  auto dT = llvm::find(perm, *dIn) - perm.begin();
  if (shape[*dOut] % block || shape[dT] % block)
    return std::nullopt;
  tiles[*dOut] = tiles[dT] = block;
  return tiles;
}

/// The loop order of a transpose's blocks (tiles from relayoutTiles, two
/// dims blocked) for a transpose outside the kernels: the output's
/// innermost dim innermost and the dim read contiguously next, so the block
/// loop walks one output row and one input row at a time (NHWC -> NCHW of
/// 64 MiB: 2.9x -> 2.5x the copy time). Empty: the tiling's own order.
SmallVector<int64_t> relayoutOrder(ArrayRef<int64_t> tiles) {
  SmallVector<int64_t> blocked, order;
  for (auto [i, t] : llvm::enumerate(tiles))
    (t > 1 ? blocked : order).push_back(i);
  if (blocked.size() != 2)
    return {};
  // The output's innermost blocked dim stays last; the other just before.
  order.push_back(blocked[0]);
  order.push_back(blocked[1]);
  return order;
}

std::string relayoutSchedule(ArrayRef<int64_t> tiles, bool wide,
                             ArrayRef<int64_t> order) {
  std::string interchange;
  for (int64_t d : order)
    interchange +=
        (interchange.empty() ? " interchange = [" : ", ") + std::to_string(d);
  if (!interchange.empty())
    interchange += "]";
  std::string sizes, loops;
  int64_t n = 0;
  for (int64_t t : tiles) {
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(t);
    n += t != 0;
  }
  for (int64_t i = 0; i <= n; ++i)
    loops += std::string(i ? ", " : "") + "!transform.any_op";
  return std::string(kHeader) + kMatchOp +
         llvm::formatv(R"mlir(
    %vec, %loops:{0} = transform.structured.tile_using_for %op tile_sizes [{1}]{4}
      : (!transform.any_op) -> ({2})
    transform.structured.vectorize %vec : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.lower_transpose lowering_strategy = {3}
    } : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.tensor.fold_tensor_subset_ops
      transform.apply_patterns.tensor.merge_consecutive_insert_extract_slice
    } : !transform.any_op
)mlir",
                       n, sizes, loops, wide ? "shuffle_16x16" : "shuffle_1d",
                       interchange)
             .str() +
         kEpilogue;
}

bool isStaticF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() &&
         llvm::all_of(t.getShape(), [](int64_t d) { return d > 0; });
}

bool staticF32Operands(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() &&
         llvm::all_of(op->getOperands(), isStaticF32);
}

/// The bytes of one K block of the packed A (M x KC floats), which every N
/// panel of the matmul reads again from L3 (Kernels.cpp, planFor).
constexpr int64_t kABlockBytes = 4 << 20;

/// The largest divisor of `n` that is at most `most`.
int64_t largestDivisor(int64_t n, int64_t most) {
  for (int64_t d = std::min(n, most); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// The transpose of TOSA's FHWC weights that feeds a convolution's HWCF
/// filter, when the kernel may take it over (no other user).
linalg::TransposeOp filterTranspose(Operation *op) {
  auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
  if (!conv)
    return nullptr;
  auto t = conv.getInputs()[1].getDefiningOp<linalg::TransposeOp>();
  if (!t || !t->hasOneUse() || !t.hasPureTensorSemantics() ||
      !t.getInit().getDefiningOp<tensor::EmptyOp>())
    return nullptr;
  return t;
}

struct Plan {
  std::string script;
  /// MR, NR, 1 for a matmul, packed before the script runs; else empty.
  SmallVector<int64_t, 3> blockFactors;
  /// The matmul accumulates into C's own layout (accumulateInPlace).
  bool inPlaceC = false;
  /// The matmul's K is one block (no K-block loop).
  bool singleKBlock = false;
  /// The matmul's K block, when B is packed in panels of whole blocks.
  int64_t kc = 0;
};

/// The schedule for `op`, or none (the op keeps upstream's scalar loops).
std::optional<Plan> planFor(Operation *op, unsigned lanes) {
  if (auto mm = dyn_cast<linalg::BatchMatmulOp>(op)) {
    if (!staticF32Operands(mm) || mm.hasUserDefinedMaps())
      return std::nullopt;
    auto a = cast<RankedTensorType>(mm.getInputs()[0].getType());
    int64_t m = a.getDimSize(1), k = a.getDimSize(2);
    // 16 lanes (AVX-512, 32 registers): 8x32, 16 accumulators. 8 lanes
    // (AVX2, 16 registers): 6x16, 12 accumulators, 3 registers to spare.
    int64_t mr = std::min<int64_t>(m, lanes >= 16 ? 8 : 6);
    // K blocks of at most 1024: a KC x NR panel of B stays in L2 across
    // the M panels, and each K block reads and writes C's tiles once more.
    // Measured (Intel Xeon) on 1024^3 and 2048^3 once C's tiles were
    // prefetched (KernelTiles.cpp): 1024 3-5% faster than 512, 128 and 256
    // slower by 5-20%; M blocks of 32-128 panels with A packed per M block,
    // within the noise. B in panels when the panels are whole: a divisor of K
    // from 128 up, and N a multiple of NR (a partial K block would give the
    // panel a dynamic size, which the packing's vector copies do not take).
    int64_t nr = 2 * static_cast<int64_t>(lanes);
    int64_t n =
        cast<RankedTensorType>(mm.getInputs()[1].getType()).getDimSize(2);
    // And every N panel streams the K block's whole packed A (M x KC
    // floats) from L3: at most kABlockBytes of it (AMD EPYC, Zen 5,
    // 2048^3: KC 512 instead of 1024, 14-25% less time).
    int64_t kcMost =
        std::max<int64_t>(128, std::min<int64_t>(1024, kABlockBytes / (4 * m)));
    int64_t kc = largestDivisor(k, kcMost);
    bool panelB = kc >= 128 && n % nr == 0;
    if (!panelB)
      kc = std::min<int64_t>(k, 512);
    // C accumulated in place (accumulateInPlace) when the tiles divide it.
    bool inPlaceC = m % mr == 0 && n % nr == 0;
    return Plan{matmulSchedule(kc, panelB, inPlaceC),
                {mr, nr, 1},
                inPlaceC,
                kc == k,
                panelB ? kc : 0};
  }
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op)) {
    if (!staticF32Operands(conv))
      return std::nullopt;
    auto out = cast<RankedTensorType>(conv.getOutputs()[0].getType());
    int64_t ow = out.getDimSize(2), f = out.getDimSize(3);
    int64_t ft = f % (2 * lanes) == 0 ? 2 * lanes : f % lanes == 0 ? lanes : 0;
    // Channel counts of 8 x odd (MobileNet's 24, 40, 56...) on AVX-512:
    // tiles of 8-lane vectors, rather than MLIR's scalar loops.
    if (!ft && lanes > 8 && f % 8 == 0)
      return planFor(op, 8);
    if (!ft) // A partial vector per tile: not worth a schedule yet.
      return std::nullopt;
    // 8 columns (16 accumulators with AVX-512), or a divisor of OW from 6
    // up (28, 14, 7: 7), else 8 and a peeled partial block.
    int64_t owt = largestDivisor(ow, 8);
    bool peel = owt < 6 && ow > 8;
    // Weights in panels where F spans several blocks and the transpose
    // tiles into whole lane x lane blocks.
    int64_t c =
        cast<RankedTensorType>(conv.getInputs()[0].getType()).getDimSize(3);
    bool panel = filterTranspose(conv) && f > ft && c % lanes == 0;
    return Plan{convSchedule(peel ? 8 : owt, ft, peel, panel, lanes), {}};
  }
  return std::nullopt;
}

/// The kernel op, with a copy of the op that initialises its accumulator
/// (matmul's zero fill, conv2d's bias broadcast: pure, and the fill must be
/// seen to fold into the packed accumulator), moved into a private function;
/// one function per distinct kernel (op, types, attributes, schedule), which
/// every call site shares. A ResNet repeats each layer shape: the schedules run
/// and LLVM compiles each loop nest once (a 200-op ResNet-like function: 78
/// convolutions, 2 shapes). Returns the op inside the function, or null when it
/// was there already.
Operation *outline(Operation *op, const std::string &script,
                   llvm::StringMap<func::FuncOp> &kernels, ModuleOp module) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  Value init = linalgOp.getDpsInits()[0];
  Operation *producer = init.getDefiningOp();
  // Values its body uses from above (a splat bias folded into the
  // broadcast's body): constants, cloned along; anything else keeps it out.
  llvm::SetVector<Value> captured;
  if (producer)
    getUsedValuesDefinedAbove(producer->getRegions(), captured);
  bool withInit = producer && isa<linalg::LinalgOp>(producer) &&
                  producer->getNumResults() == 1 &&
                  llvm::all_of(cast<linalg::LinalgOp>(producer).getDpsInits(),
                               [](Value v) {
                                 return v.getDefiningOp<tensor::EmptyOp>();
                               }) &&
                  llvm::all_of(captured, [](Value v) {
                    return v.getDefiningOp<arith::ConstantOp>() != nullptr;
                  });
  // The callee's arguments: the kernel's inputs, then the initialiser's
  // inputs (or the accumulator itself).
  SmallVector<Value> args(linalgOp.getDpsInputs());
  // The filter's transpose moves in with the kernel (its schedule fuses it
  // into the channel-block loop) when the schedule expects it.
  linalg::TransposeOp transpose =
      script.find("get_producer_of_operand") != std::string::npos
          ? filterTranspose(op)
          : nullptr;
  if (transpose)
    args[1] = transpose.getInput();
  if (withInit)
    llvm::append_range(args, cast<linalg::LinalgOp>(producer).getDpsInputs());
  else
    args.push_back(init);
  // The key: everything the function's body depends on.
  std::string key;
  llvm::raw_string_ostream os(key);
  os << script;
  for (Operation *o : {withInit ? producer : nullptr,
                       transpose ? transpose.getOperation() : nullptr, op})
    if (o)
      os << o->getName() << o->getAttrDictionary() << o->getResultTypes();
  for (Value c : captured)
    os << c.getDefiningOp<arith::ConstantOp>().getValue();
  for (Value a : args) {
    os << a.getType();
    // A scalar initialiser (fill value, constant) is part of the body.
    if (auto c = a.getDefiningOp<arith::ConstantOp>())
      os << c.getValue();
  }
  OpBuilder b(op);
  func::FuncOp &fn = kernels[key];
  Operation *inside = nullptr;
  if (!fn) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    fn = func::FuncOp::create(
        mb, op->getLoc(), kKernelPrefix + std::to_string(kernels.size()),
        FunctionType::get(op->getContext(), types, op->getResultTypes()));
    fn.setPrivate();
    Block *entry = fn.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    for (auto [a, bbArg] : llvm::zip(args, entry->getArguments())) {
      if (auto c = a.getDefiningOp<arith::ConstantOp>())
        map.map(a, fb.clone(*c)->getResult(0));
      else
        map.map(a, bbArg);
    }
    if (withInit) {
      for (Value c : captured)
        map.map(c, fb.clone(*c.getDefiningOp())->getResult(0));
      for (Value v : cast<linalg::LinalgOp>(producer).getDpsInits())
        fb.clone(*v.getDefiningOp(), map);
      fb.clone(*producer, map);
    }
    if (transpose) {
      fb.clone(*transpose.getInit().getDefiningOp(), map);
      fb.clone(*transpose, map);
    }
    inside = fb.clone(*op, map);
    func::ReturnOp::create(fb, op->getLoc(), inside->getResults());
  }
  auto call = func::CallOp::create(b, op->getLoc(), fn, args);
  op->replaceAllUsesWith(call.getResults());
  op->erase();
  if (withInit && producer->use_empty())
    producer->erase();
  if (transpose && transpose->use_empty())
    transpose->erase();
  return inside;
}

/// The packed matmul accumulating into C's own layout, viewed as [b, M/MR,
/// MR, N/NR, NR] (an expand_shape, no copy), instead of into a packed C
/// [b, M/MR, N/NR, MR, NR] unpacked afterwards: a fresh C-sized buffer, its
/// zero fill and the unpacking copy less; a register tile reads and writes
/// MR rows of NR floats. Only when MR and NR divide M and N (no padding).

/// [b, M, N] packed as [b, M/MR, N/NR, MR, NR] and read in place: the
/// view's groups.
SmallVector<ReassociationIndices> kPanelGroups() {
  return {{0}, {1, 2}, {3, 4}};
}

/// A packed operand read in place: `source` ([b, M, N]) viewed as `shape`
/// ([b, M/MR, MR, N/NR, NR], an expand_shape, no copy); `map`, which read
/// the pack ([b, M/MR, N/NR, MR, NR]), made to read the view.
Value panelView(RewriterBase &rewriter, Location loc, Value source,
                ArrayRef<int64_t> shape, AffineMap &map) {
  auto type = RankedTensorType::get(
      shape, cast<ShapedType>(source.getType()).getElementType());
  map = AffineMap::get(map.getNumDims(), 0,
                       {map.getResult(0), map.getResult(1), map.getResult(3),
                        map.getResult(2), map.getResult(4)},
                       map.getContext());
  return tensor::ExpandShapeOp::create(rewriter, loc, type, source,
                                       kPanelGroups());
}

/// Returns the new op, or null when it does not apply.
Operation *accumulateInPlace(RewriterBase &rewriter,
                             const linalg::PackResult &packed) {
  auto generic = dyn_cast<linalg::GenericOp>(packed.packedLinalgOp);
  if (!generic || packed.unPackOps.size() != 1 || generic.getNumDpsInits() != 1)
    return nullptr;
  linalg::UnPackOp unpack = packed.unPackOps.front();
  auto cPack = generic.getDpsInits()[0].getDefiningOp<linalg::PackOp>();
  if (!cPack || cPack.getPaddingValue() || !cPack->hasOneUse() ||
      unpack.getSource() != generic->getResult(0) ||
      !generic->getResult(0).hasOneUse())
    return nullptr;
  auto cType = cast<RankedTensorType>(cPack.getSource().getType());
  auto packedType = cast<RankedTensorType>(cPack.getDest().getType());
  // [b, M, N] packed as [b, M/MR, N/NR, MR, NR], dims in place.
  if (cType.getRank() != 3 || packedType.getRank() != 5 ||
      !cPack.getOuterDimsPerm().empty() ||
      cPack.getInnerDimsPos() != ArrayRef<int64_t>{1, 2} ||
      !cType.hasStaticShape() || !packedType.hasStaticShape())
    return nullptr;
  ArrayRef<int64_t> ps = packedType.getShape();
  if (cType.getDimSize(1) != ps[1] * ps[3] ||
      cType.getDimSize(2) != ps[2] * ps[4])
    return nullptr;
  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Value view = panelView(rewriter, loc, cPack.getSource(),
                         {ps[0], ps[1], ps[3], ps[2], ps[4]}, maps.back());
  auto direct = linalg::GenericOp::create(
      rewriter, loc, TypeRange{view.getType()}, generic.getDpsInputs(),
      ValueRange{view}, maps, generic.getIteratorTypesArray());
  rewriter.inlineRegionBefore(generic.getRegion(), direct.getRegion(),
                              direct.getRegion().begin());
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, cType, direct->getResult(0), kPanelGroups());
  rewriter.replaceOp(unpack, result);
  rewriter.eraseOp(generic);
  rewriter.eraseOp(cPack);
  return direct;
}

/// The matmul's K blocks as a loop (tagged as the schedule's K-block loop)
/// around a matmul of one block, on slices of A and B, accumulating into
/// the loop-carried C: its A is packed one block at a time into an M x KC
/// buffer (4 MiB at 2048^3, freed and allocated again per block, which
/// malloc serves from the same memory), instead of whole into a fresh
/// M x K one (16 MiB, its pages cleared on every call) before the loops.
/// 2048^3: 1-3% less time in six runs. Returns the matmul inside.
Operation *splitKBlocks(RewriterBase &rewriter, linalg::BatchMatmulOp mm,
                        int64_t kc) {
  auto a = cast<RankedTensorType>(mm.getInputs()[0].getType());
  auto b = cast<RankedTensorType>(mm.getInputs()[1].getType());
  int64_t batch = a.getDimSize(0), m = a.getDimSize(1), k = a.getDimSize(2),
          n = b.getDimSize(2);
  Location loc = mm.getLoc();
  rewriter.setInsertionPoint(mm);
  Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value ub = arith::ConstantIndexOp::create(rewriter, loc, k);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, kc);
  Operation *inner = nullptr;
  auto loop = scf::ForOp::create(
      rewriter, loc, lb, ub, step, ValueRange{mm.getOutputs()[0]},
      [&](OpBuilder &bb, Location l, Value kb, ValueRange acc) {
        OpFoldResult zero = bb.getIndexAttr(0), one = bb.getIndexAttr(1);
        Value as = tensor::ExtractSliceOp::create(
            bb, l, mm.getInputs()[0], {zero, zero, kb},
            {bb.getIndexAttr(batch), bb.getIndexAttr(m), bb.getIndexAttr(kc)},
            {one, one, one});
        Value bs = tensor::ExtractSliceOp::create(
            bb, l, mm.getInputs()[1], {zero, kb, zero},
            {bb.getIndexAttr(batch), bb.getIndexAttr(kc), bb.getIndexAttr(n)},
            {one, one, one});
        inner = linalg::BatchMatmulOp::create(
            bb, l, TypeRange{acc[0].getType()}, ValueRange{as, bs}, acc);
        scf::YieldOp::create(bb, l, inner->getResult(0));
      });
  loop->setAttr(kKBlocksLoopTag, UnitAttr::get(mm.getContext()));
  rewriter.replaceOp(mm, loop.getResults());
  return inner;
}

/// The packed matmul (after accumulateInPlace) reading A in place, viewed as
/// [b, M/MR, MR, K, 1] (an expand_shape, no copy), instead of packed into
/// [b, M/MR, K, MR, 1]: a tile's MR broadcasts per k read MR rows of A, K
/// floats apart, rather than MR consecutive floats of a packed panel. The
/// packed copy cost a fresh M x K buffer per call (16 MiB at 2048^3, whose
/// page clearing kernels7 saw at ~7% of the time) and its 8x8 transposes; at
/// 256^3, a fresh 256 KiB buffer beside C's made glibc's free() give the top
/// of the heap back to the system on every call of F from C (its trim
/// threshold: ~130 page faults per call, 10x the kernel's time). Only when
/// MR divides M (no padding rows). Returns whether it applied.
bool readAInPlace(RewriterBase &rewriter, Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2)
    return false;
  auto aPack = generic.getDpsInputs()[0].getDefiningOp<linalg::PackOp>();
  if (!aPack || aPack.getPaddingValue() || !aPack->hasOneUse() ||
      aPack.getInnerDimsPos() != ArrayRef<int64_t>{1, 2})
    return false;
  ArrayRef<int64_t> outer = aPack.getOuterDimsPerm();
  if (!outer.empty() && outer != ArrayRef<int64_t>{0, 1, 2})
    return false;
  auto aType = cast<RankedTensorType>(aPack.getSource().getType());
  auto packedType = cast<RankedTensorType>(aPack.getDest().getType());
  // [b, M, K] packed as [b, M/MR, K, MR, 1].
  if (aType.getRank() != 3 || packedType.getRank() != 5 ||
      !aType.hasStaticShape() || !packedType.hasStaticShape())
    return false;
  ArrayRef<int64_t> ps = packedType.getShape();
  if (ps[4] != 1 || aType.getDimSize(1) != ps[1] * ps[3] ||
      aType.getDimSize(2) != ps[2])
    return false;
  rewriter.setInsertionPoint(generic);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Value view = panelView(rewriter, generic.getLoc(), aPack.getSource(),
                         {ps[0], ps[1], ps[3], ps[2], 1}, maps.front());
  rewriter.modifyOpInPlace(generic, [&] {
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    generic.getDpsInputOperand(0)->set(view);
  });
  rewriter.eraseOp(aPack);
  return true;
}

/// Multiply-adds x 2 of a static linalg op (its loop ranges' product).
int64_t flops(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return 0;
  int64_t n = 2;
  for (int64_t r : linalgOp.getStaticLoopRanges())
    n = ShapedType::isDynamic(r) ? 0 : n * r;
  return n;
}

/// Below this (about 60 us on one core here), a kernel stays on one thread
/// with --threads: a fork and its join would cost most of what a second
/// thread saves. Matmul 256^3 (2^25) took 0.13 ms on one core, 0.07-0.08
/// on two with libomp's worker awake (bench/kernels/README.md#threads).
constexpr int64_t kMinParallelFlops = int64_t(1) << 24;

/// Below this, a convolution whose output channels are not a multiple of
/// 8 keeps the scalar loops: padding them costs a copy of the result and a
/// kernel of its own to compile.
constexpr int64_t kMinPaddedFlops = int64_t(1) << 20;

struct KernelsPass : PassWrapper<KernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelsPass)
  KernelsPass() = default;
  KernelsPass(const KernelsPass &other) : PassWrapper(other) {}
  StringRef getArgument() const override { return "tosa-lsp-kernels"; }
  StringRef getDescription() const override {
    return "Tile, pack and vectorise static f32 matmuls and 2-D convolutions "
           "(transform dialect schedules)";
  }
  Option<unsigned> lanes{*this, "lanes",
                         llvm::cl::desc("f32 lanes of a vector register with "
                                        "FMA (0: leave the ops alone)"),
                         llvm::cl::init(0)};
  Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Above 1, or 0 (the running machine's): tag each "
                     "kernel's independent loop for tosa-lsp-parallel-loops"),
      llvm::cl::init(1)};
  Option<uint64_t> streamThreshold{
      *this, "stream-threshold",
      llvm::cl::desc("Transposes into a caller's buffer store non-temporally "
                     "from this many bytes (0: the host's L2 size)"),
      llvm::cl::init(0)};

  /// Applies `text` (parsed once) to `payload`; false after an error.
  bool apply(Operation *payload, const std::string &text) {
    OwningOpRef<ModuleOp> &script = scripts[text];
    if (!script)
      script = parseSourceString<ModuleOp>(text, &getContext());
    auto entry = script ? script->lookupSymbol<transform::NamedSequenceOp>(
                              "__transform_main")
                        : nullptr;
    if (!entry) {
      payload->emitError("internal error: a kernel schedule did not parse");
      return false;
    }
    return succeeded(transform::applyTransformNamedSequence(
        payload, entry, *script, transform::TransformOptions()));
  }

  void runOnOperation() override {
    if (lanes < 4)
      return;
    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, std::string>> planned;
    bool packedAny = false;
    llvm::StringMap<func::FuncOp> kernels;
    SmallVector<Operation *> candidates;
    SmallVector<std::pair<func::FuncOp, bool>> matmuls;
    SmallVector<func::FuncOp> serial;
    module.walk([&](Operation *op) {
      if (isa<linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp>(op))
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      // Output channels not a multiple of 8: computed padded, kernels
      // being 10-40x faster than the scalar loops.
      op = padOutputChannels(op, 8, kMinPaddedFlops);
      std::optional<Plan> plan = planFor(op, lanes);
      if (!plan)
        continue;
      // Threads only for kernels worth a fork.
      bool small = flops(op) < kMinParallelFlops;
      op = outline(op, plan->script, kernels, module);
      if (!op)
        continue; // the same kernel as an earlier call site
      if (small)
        serial.push_back(op->getParentOfType<func::FuncOp>());
      if (!plan->blockFactors.empty()) {
        matmuls.push_back(
            {op->getParentOfType<func::FuncOp>(), plan->singleKBlock});
        IRRewriter rewriter(ctx);
        // Several K blocks: A packed one block at a time (splitKBlocks).
        bool split = false;
        if (!plan->singleKBlock && plan->kc) {
          op =
              splitKBlocks(rewriter, cast<linalg::BatchMatmulOp>(op), plan->kc);
          plan = planFor(op, lanes);
          if (!plan || !plan->singleKBlock) {
            op->emitError("internal error: a matmul's K block has no plan");
            return signalPassFailure();
          }
          split = true;
        }
        rewriter.setInsertionPoint(op);
        linalg::BlockPackMatmulOptions options;
        options.blockFactors = plan->blockFactors;
        FailureOr<linalg::PackResult> packed =
            linalg::blockPackMatmul(rewriter, cast<linalg::LinalgOp>(op),
                                    [&](linalg::LinalgOp) { return options; });
        if (failed(packed))
          continue; // unpacked: upstream's loops
        for (linalg::PackOp p : packed->packOps)
          p->setAttr(kRelayoutTag, UnitAttr::get(ctx));
        for (linalg::UnPackOp u : packed->unPackOps)
          u->setAttr(kRelayoutTag, UnitAttr::get(ctx));
        op = packed->packedLinalgOp;
        if (plan->inPlaceC) {
          op = accumulateInPlace(rewriter, *packed);
          if (!op) {
            packed->packedLinalgOp->emitError(
                "internal error: the matmul's C could not be kept in place");
            return signalPassFailure();
          }
          // With several K blocks (2048^3: four of 512), A packed per
          // block: read in place there, each tile's 8 rows of a block came
          // as 2 KB pieces from L3, 2-7% slower in four runs; with one K
          // block (256^3-1024^3, 1x128x768 . 1x768x3072) as fast or faster.
          if (plan->singleKBlock && !split)
            readAInPlace(rewriter, op);
        }
        packedAny = true;
      }
      planned.push_back({op, plan->script});
    }
    if (planned.empty()) {
      if (!vectoriseTransposes(module) || !vectoriseReductions(module))
        signalPassFailure();
      return;
    }
    if (packedAny && !apply(module, prepareScript()))
      return signalPassFailure();
    for (auto &[op, text] : planned) {
      // One op at a time, found by its tag: the schedule's handles then
      // name that op alone.
      op->setAttr(kTag, UnitAttr::get(ctx));
      if (!apply(module, text) || !finishTile(module))
        return signalPassFailure();
      // Tiling copies the tag onto the tiles; none may reach the next op's
      // match.
      module.walk([](Operation *o) { o->removeAttr(kTag); });
    }
    for (auto [fn, single] : matmuls)
      startTilesFromZero(fn, single);
    chooseParallelLoops(module, threads, serial);
    if (packedAny && !apply(module, relayoutScript()))
      return signalPassFailure();
    if (packedAny && !vectoriseRelayouts(module))
      return signalPassFailure();
    // lower_unpack copies the unpacked result into the unpack's destination,
    // a tensor.empty: the result itself will do (a copy of C less).
    module.walk([](linalg::CopyOp copy) {
      if (copy.hasPureTensorSemantics() &&
          copy.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
          copy.getInputs()[0].getType() == copy->getResult(0).getType()) {
        copy->getResult(0).replaceAllUsesWith(copy.getInputs()[0]);
        copy.erase();
      }
    });
    module.walk([](Operation *o) { o->removeAttr(kRelayoutTag); });
    if (!vectoriseTransposes(module) || !vectoriseReductions(module))
      return signalPassFailure();
  }

  /// Reductions over the innermost dim as vector reductions
  /// (MemoryKernels.cpp).
  bool vectoriseReductions(ModuleOp module) {
    SmallVector<std::pair<linalg::GenericOp, std::string>> found;
    module.walk([&](linalg::GenericOp g) {
      if (std::optional<std::string> script = reductionSchedule(g, lanes))
        found.push_back({g, *script});
    });
    for (auto &[g, script] : found) {
      g->setAttr(kTag, UnitAttr::get(&getContext()));
      bool ok = apply(module, script);
      module.walk([](Operation *o) { o->removeAttr(kTag); });
      if (!ok)
        return false;
    }
    return true;
  }

  /// Whether `t` now writes the caller's buffer that its result (its only
  /// use) is materialised in: its init becomes that buffer, and the
  /// materialisation, a copy onto itself, goes (with it, one-shot
  /// bufferization refused the tiled loops on the buffer too). The result
  /// returned is then the buffer itself, which drop-equivalent-buffer-results
  /// removes; kernel_numeric.py checks F_into writes every element.
  static bool intoCallersBuffer(linalg::TransposeOp t) {
    Value result = t->getResult(0);
    if (!result.hasOneUse())
      return false;
    auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(
        *result.user_begin());
    auto dest = m ? dyn_cast<BlockArgument>(m.getDest()) : nullptr;
    if (!dest || !dest.hasOneUse() || dest.getType() != result.getType() ||
        dest.getParentBlock() != t->getBlock())
      return false;
    t.getInitMutable().assign(dest);
    m.getResult().replaceAllUsesWith(result);
    m.erase();
    return true;
  }

  /// A function's result: its buffer is the caller's (F_into) or fresh
  /// (F) and is not read again here, so non-temporal stores suit it (F of
  /// NHWC -> NCHW, 64 MiB: 2.4x -> 1.8x the copy time).
  static bool returned(linalg::TransposeOp t) {
    Value result = t->getResult(0);
    return result.hasOneUse() && isa<func::ReturnOp>(*result.user_begin());
  }

  /// Big static f32 transposes outside the kernels (tosa.transpose, a
  /// filter's HWCF relayout the kernel did not take) as the packing's vector
  /// copies: convert-linalg-to-loops gives scalar loops reading one of the
  /// two sides with a large stride (NHWC -> NCHW of 64 MiB: 10x the copy
  /// time). Small ones are left alone: each costs a schedule's run.
  bool vectoriseTransposes(ModuleOp module) {
    SmallVector<linalg::TransposeOp> transposes;
    for (auto fn : module.getOps<func::FuncOp>()) {
      // Where a result is materialised in a caller's buffer (F_into),
      // one-shot bufferization refused the tiled loops of a transpose into
      // an empty tensor ("cannot avoid RaW conflict"): only a transpose
      // that is the result, written into the buffer itself.
      bool into = false;
      fn.walk([&](bufferization::MaterializeInDestinationOp) { into = true; });
      SmallVector<linalg::TransposeOp> found;
      if (!fn.getSymName().starts_with(kKernelPrefix))
        fn.walk([&](linalg::TransposeOp t) { found.push_back(t); });
      for (linalg::TransposeOp t : found) {
        auto type = dyn_cast<RankedTensorType>(t.getInit().getType());
        if (t.hasPureTensorSemantics() && type && type.hasStaticShape() &&
            type.getElementType().isF32() &&
            type.getNumElements() >= kMinVectorTranspose &&
            (!into || intoCallersBuffer(t)) &&
            !((into || returned(t)) &&
              markStreamTranspose(t, lanes, streamThreshold)))
          transposes.push_back(t);
      }
    }
    return vectoriseEach(module, transposes, lanes >= 16 ? 16 : 8, true);
  }

  /// After the first part of a two-part schedule (a tagged nest): its
  /// contractions as outer products, then the second part.
  bool finishTile(ModuleOp module) {
    SmallVector<Operation *> nests;
    module.walk([&](Operation *o) {
      if (o->hasAttr(kNestTag))
        nests.push_back(o);
    });
    if (nests.empty())
      return true;
    for (Operation *nest : nests) {
      RewritePatternSet patterns(&getContext());
      patterns.add<UnitDimsToOuterProduct>(&getContext());
      vector::ShapeCastOp::getCanonicalizationPatterns(patterns, &getContext());
      vector::BroadcastOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(nest, std::move(patterns));
    }
    bool ok = apply(module, finishScript());
    module.walk([](Operation *o) { o->removeAttr(kNestTag); });
    return ok;
  }

  /// The packing's transposes (in the kernel functions) as vector copies.
  bool vectoriseRelayouts(ModuleOp module) {
    SmallVector<linalg::TransposeOp> transposes;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.getSymName().starts_with(kKernelPrefix))
        fn.walk([&](linalg::TransposeOp t) { transposes.push_back(t); });
    return vectoriseEach(module, transposes, 8, false);
  }

  /// With `reorder`, the blocks in relayoutOrder; blocks of `block` (16:
  /// 16x16 register transposes, whole 64-byte lines on both sides) or 8.
  bool vectoriseEach(ModuleOp module, ArrayRef<linalg::TransposeOp> transposes,
                     int64_t block, bool reorder) {
    for (linalg::TransposeOp t : transposes) {
      std::optional<SmallVector<int64_t>> tiles = relayoutTiles(t, block);
      if (!tiles && block > 8)
        tiles = relayoutTiles(t, 8);
      if (!tiles || llvm::all_of(*tiles, [](int64_t s) { return s == 0; }))
        continue;
      t->setAttr(kTag, UnitAttr::get(&getContext()));
      bool ok =
          apply(module, relayoutSchedule(*tiles, llvm::is_contained(*tiles, 16),
                                         reorder ? relayoutOrder(*tiles)
                                                 : SmallVector<int64_t>()));
      module.walk([](Operation *o) { o->removeAttr(kTag); });
      if (!ok)
        return false;
    }
    return true;
  }

  llvm::StringMap<OwningOpRef<ModuleOp>> scripts;
};

/// After bufferization: memref.copy between non-contiguous buffers (the
/// interior of a padded input, a slice) becomes linalg.copy, which
/// convert-linalg-to-loops makes a loop nest LLVM vectorises, instead of a
/// call to MLIR's runtime memrefCopy (one element at a time, 4x slower on
/// conv2d's padding). Copies of a buffer onto itself, which bufferization
/// leaves after in-place tiles, are dropped. In kernel functions, the unit
/// dims of vector transfers go (the packed layouts' trailing 1s: a
/// vector<32x1xf32> write is otherwise 32 scalar stores).
/// The same buffer, or the same subview of it taken twice.
bool sameView(Value a, Value b) {
  if (a == b)
    return true;
  auto x = a.getDefiningOp<memref::SubViewOp>();
  auto y = b.getDefiningOp<memref::SubViewOp>();
  return x && y && x.getSource() == y.getSource() &&
         x.getType() == y.getType() &&
         x.getMixedOffsets() == y.getMixedOffsets() &&
         x.getMixedSizes() == y.getMixedSizes() &&
         x.getMixedStrides() == y.getMixedStrides();
}

struct CopyLoopsPass : PassWrapper<CopyLoopsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyLoopsPass)
  StringRef getArgument() const override { return "tosa-lsp-copy-loops"; }
  StringRef getDescription() const override {
    return "After bufferization: strided memref.copy to linalg.copy, "
           "self-copies removed; prefetches of kernel tiles and window rows; "
           "outer reductions jammed";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, memref::MemRefDialect,
                    vector::VectorDialect, LLVM::LLVMDialect>();
  }
  void runOnOperation() override {
    if (getOperation().getSymName().starts_with(kKernelPrefix)) {
      RewritePatternSet patterns(&getContext());
      vector::populateDropInnerMostUnitDimsXferOpPatterns(patterns);
      vector::populateVectorTransferDropUnitDimsPatterns(patterns);
      vector::ShapeCastOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(getOperation(), std::move(patterns));
      prefetchTiles(getOperation());
    }
    prefetchWindows(getOperation());
    jamOuterReductions(getOperation());
    lowerStreamTransposes(getOperation());
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies) {
      if (sameView(c.getSource(), c.getTarget())) {
        c.erase();
        continue;
      }
      auto src = dyn_cast<MemRefType>(c.getSource().getType());
      auto dst = dyn_cast<MemRefType>(c.getTarget().getType());
      if (!src || !dst ||
          (src.getLayout().isIdentity() && dst.getLayout().isIdentity()))
        continue; // contiguous: a memcpy, already as fast as it gets
      OpBuilder b(c);
      linalg::CopyOp::create(b, c.getLoc(), c.getSource(), c.getTarget());
      c.erase();
    }
  }
};

} // namespace

void registerKernelPasses() {
  registerWindowPasses();
  registerParallelLoopsPass();
  PassRegistration<KernelsPass>();
  PassRegistration<CopyLoopsPass>();
}

unsigned hostKernelLanes() {
  static const unsigned lanes = [] {
    llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
    if (!f.lookup("fma"))
      return 0u; // vector.fma would become calls to fmaf
    if (f.lookup("avx512f"))
      return 16u;
    return f.lookup("avx2") ? 8u : 0u;
  }();
  return lanes;
}

} // namespace tosa_lsp::detail
