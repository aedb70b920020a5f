//===- Elided.h - constants whose data was left out of the file -*- C++ -*-===//
//
// Models are shared without their weights: MLIR prints large constants as
// `dense_resource<__elided__>` (--mlir-elide-resource-strings-if-larger), a
// resource the file does not define. The IR still verifies and lowers, but
// LLVM IR translation has no bytes to emit. `compile` and `run` say so up
// front, or fill such constants on request so the model runs for shape and
// timing checks.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_ELIDED_H
#define TOSA_LSP_LOWERING_ELIDED_H

#include <cstdint>
#include <optional>
#include <string>

namespace tosa_lsp {

/// What to do with constants whose data is missing.
enum class ElidedData {
  Keep,   // leave them (the IR preview; LLVM IR translation would fail)
  Refuse, // an error naming them (compile, run)
  Zeros,
  Ones,
  Random, // uniform in [-1, 1) for floats, [-10, 10] for integers, from seed
};

struct ElidedFill {
  ElidedData how = ElidedData::Keep;
  uint64_t seed = 0;
};

/// `zeros`, `ones`, `random` or `random:SEED`; nullopt otherwise.
std::optional<ElidedFill> parseElidedFill(const std::string &s);

/// The option's accepted spellings, for messages.
inline constexpr const char *kElidedFillSyntax = "zeros|ones|random[:SEED]";

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_ELIDED_H
