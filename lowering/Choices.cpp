//===- Choices.cpp - the names of stages, modes and emit kinds ------------===//

#include "Choices.h"

#include "Compile.h"
#include "Lowering.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace tosa_lsp {

const Choices &choices() {
  static const Choices table = [] {
    Choices c;
    for (LowerStage s : {LowerStage::Linalg, LowerStage::Vector,
                         LowerStage::Loops, LowerStage::LLVM})
      c.stages.push_back(stageName(s));
    for (LowerMode m : {LowerMode::Fast, LowerMode::Upstream, LowerMode::Safe,
                        LowerMode::Versioned})
      c.modes.push_back(modeName(m));
    // Compile.h has no names for EmitKind: the list is checked against
    // parseEmit so the two cannot drift.
    c.emits = {"shared", "obj", "asm", "llvm-ir", "mlir-llvm"};
    for (const std::string &e : c.emits)
      if (!parseEmit(e))
        llvm::report_fatal_error("emit kind '" + llvm::Twine(e) +
                                 "' unknown to parseEmit");
    return c;
  }();
  return table;
}

std::string unknownChoiceMessage(const std::string &what,
                                 const std::string &value,
                                 const std::vector<std::string> &allowed) {
  std::string list;
  for (const std::string &a : allowed)
    list += (list.empty() ? "" : ", ") + a;
  return "unknown " + what + " '" + value + "' (expected " + list + ")";
}

} // namespace tosa_lsp
