//===- RunMemRef.h - The memref descriptors `run` reads ---------*- C++ -*-===//
//
// `run` passes and reads MLIR's own descriptors (StridedMemRefType from
// mlir/ExecutionEngine/CRunnerUtils.h). Their rank is a template argument,
// so `run` supports ranks up to kMaxRunRank. Internal; exposed for tests.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_RUNMEMREF_H
#define TOSA_LSP_LOWERING_RUNMEMREF_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>

namespace tosa_lsp::detail {

/// Element types `run` passes and reads. i1 takes one byte per element, like
/// LLVM stores it, and any non-zero byte reads as true.
enum class ElementKind { F32, F64, I1, I8, I16, I32, I64 };

/// The highest rank `run` builds or reads descriptors for.
constexpr int kMaxRunRank = 8;

/// The elements of the memref `descriptor` points to, a
/// StridedMemRefType<T, rank> with T the C type of `kind` (int8_t for i1),
/// as nested JSON lists (a bare value for rank 0), in index order whatever
/// the offset and strides. nullopt when rank is above kMaxRunRank.
std::optional<llvm::json::Value> memrefToJSON(ElementKind kind, int64_t rank,
                                              const void *descriptor);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_LOWERING_RUNMEMREF_H
