//===- FloatMaxima.h - IEEE maximum/minimum trees on AVX-512 ----*- C++ -*-===//
//
// arith.maximumf/minimumf (LLVM's llvm.maximum/minimum: a NaN operand gives
// NaN, -0 < +0) have no x86 instruction before AVX10.2: LLVM expands each
// vector one into six (a sign test, two blends, maxps, an unordered compare
// and a masked move). A 3x3 max pool combines nine values per output, and
// those instructions, not memory, bound it (3.2x the memory floor at
// stride 1 on 1x256x256x256; 1.2x with one instruction per maximum).
// AVX512DQ's VRANGE gives the maximum (minimum) of two numbers exactly,
// signed zeros and subnormals included, but skips a NaN operand. So each
// tree of maxima (minima) becomes a tree of VRANGEs and one NaN test of its
// leaves, whose NaN replaces the result where a leaf is NaN.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_FLOATMAXIMA_H
#define TOSA_LSP_LOWERING_FLOATMAXIMA_H

namespace llvm {
class Module;
} // namespace llvm

namespace tosa_lsp {

/// Rewrites the vector llvm.maximum/minimum trees of the optimised module
/// as above, where the target has AVX512DQ (and AVX512VL for vectors
/// narrower than 512 bits). A tree is a call whose operands' calls of the
/// same intrinsic, used only by it in its block, are its inner nodes.
/// Returns the number of trees rewritten.
unsigned lowerFloatMaxima(llvm::Module &m, bool avx512dq, bool avx512vl);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_FLOATMAXIMA_H
