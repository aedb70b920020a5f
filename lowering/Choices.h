//===- Choices.h - the names of stages, modes and emit kinds ----*- C++ -*-===//
//
// The names `lower`, `compile`, `run`, the preview and the compile jobs
// accept, in one table owned by the lowering. The server advertises them in
// `initialize` (capabilities.experimental.tosaLsp) and the CLI checks its
// options against them.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_LOWERING_CHOICES_H
#define TOSA_LSP_LOWERING_CHOICES_H

#include <string>
#include <vector>

namespace tosa_lsp {

struct Choices {
  std::vector<std::string> stages, modes, emits;
};
const Choices &choices();

/// "unknown stage 'x' (expected linalg, vector, loops, llvm)" and the like.
std::string unknownChoiceMessage(const std::string &what,
                                 const std::string &value,
                                 const std::vector<std::string> &allowed);

} // namespace tosa_lsp

#endif // TOSA_LSP_LOWERING_CHOICES_H
