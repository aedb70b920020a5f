//===- StreamingStores.h - Non-temporal stores for big results --*- C++ -*-===//
//
// An element-wise kernel writes its result once and does not read it back.
// With ordinary stores every written cache line is first read from memory
// (read for ownership) and later written back: a result larger than the
// cache costs two memory transfers per byte. Non-temporal (streaming)
// stores write it once. Small results are better left in the cache for the
// next kernel, so each loop nest gets a streaming twin chosen at run time
// by the bytes the nest will store.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_STREAMINGSTORES_H
#define TOSA_LSP_LOWERING_STREAMINGSTORES_H

#include <cstdint>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace tosa_lsp {

/// The bytes a loop nest must store to stream for `cpu` ("native": the
/// size of one core's L2 cache read from the host, else 2 MiB, measured:
/// below the L2 size ordinary stores win, as the result stays cached).
uint64_t defaultStreamThreshold(const std::string &cpu);

/// Versions each outermost loop nest of the optimised module whose vector
/// stores write consecutive addresses of buffers the nest does not read:
/// when the nest will store at least `threshold` bytes (computed before it
/// runs), a copy with those stores non-temporal runs instead, followed by
/// a store fence (x86 streaming stores are weakly ordered). Returns the
/// number of nests versioned. Runs after the optimisation pipeline, which
/// would refuse to vectorise loops with non-temporal scalar stores.
unsigned streamLargeStores(llvm::Module &m, uint64_t threshold);

/// The functions whose IR came with non-temporal stores (from MLIR:
/// StreamTranspose.cpp): with `keep`, an sfence before each return, else
/// the stores made ordinary (--streaming-stores=off). Run before
/// streamLargeStores, whose twins fence their own nests. Returns how many
/// functions had any.
unsigned settleNontemporalStores(llvm::Module &m, bool keep);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_STREAMINGSTORES_H
