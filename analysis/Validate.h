//===- Validate.h - MLIR 22's TOSA validation on a section ------*- C++ -*-===//
//
// `tosa-validate` (profiles, extensions, levels) as mlir-opt-22 runs it, on
// a section that verified, when the configuration asks for it
// (ValidateTarget). The pass's own checks and messages: its verdicts are
// mlir-opt-22's. What this file adds is which spec rule each message is
// about (a code and a note), from the message alone.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_VALIDATE_H
#define TOSA_LSP_ANALYSIS_VALIDATE_H

#include "ValidateTarget.h"

#include <string>
#include <string_view>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace tosa_lsp {

/// The target a validation checked against, as text.
struct EffectiveTarget {
  std::string version, level;
  std::vector<std::string> profiles, extensions;
  /// "TOSA 1.0, level 8k, profiles pro_int, no extensions".
  std::string describe() const;
};

/// Runs tosa-attach-target (when `target.attaches()`) and tosa-validate on
/// `module`; the pass reports through the context's diagnostic handler.
/// The module's own `tosa.target_env` is put back after. Returns the
/// target validated against.
EffectiveTarget runTosaValidation(mlir::ModuleOp module,
                                  const ValidateTarget &target);

/// The spec rule a tosa-validate message is about.
struct ValidationRule {
  /// tosa-level, tosa-profile, tosa-extension, tosa-data-types,
  /// tosa-version or tosa-spec (any other rule the pass checks).
  std::string code;
  /// A note naming the rule and the target ("level 8k of TOSA 1.0: ...").
  std::string note;
};
ValidationRule classifyValidation(std::string_view message,
                                  const EffectiveTarget &target);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_VALIDATE_H
