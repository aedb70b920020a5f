//===- ValidateTarget.h - what TOSA validation checks against ---*- C++ -*-===//
//
// `check --validate[=ITEMS]` and the `validate` setting: MLIR 22's
// `tosa-validate` pass, against a target. Plain data, no MLIR (Config
// holds it); Validate.h runs the pass.
//
// ITEMS, comma-separated, each maps to one mlir-opt-22 option:
//   pro_int, pro_fp             profiles=...   (tosa-attach-target)
//   int16, bf16, ..., shape     extensions=... (tosa-attach-target)
//   level=8k|none               level=...      (tosa-attach-target)
//   version=1.0|1.1.draft       specification_version=...
//   strict                      strict-op-spec-alignment (tosa-validate)
// No target item: the module's own `tosa.target_env`, else MLIR's default
// (TOSA 1.0, level 8k, profiles pro_int and pro_fp) — `mlir-opt-22
// --tosa-validate`. Any target item replaces the module's target, as
// `--tosa-attach-target=...` does (the others keep its defaults).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_VALIDATETARGET_H
#define TOSA_LSP_ANALYSIS_VALIDATETARGET_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

struct ValidateTarget {
  bool enabled = false;
  std::vector<std::string> profiles, extensions;
  std::optional<std::string> level;   // "8k" or "none"
  std::optional<std::string> version; // "1.0" or "1.1.draft"
  /// The pass's strict-op-spec-alignment: in MLIR 22 it is what checks that
  /// an op's profile or extension is in the target ("requires [pro_fp] but
  /// not enabled in target"), besides other spec rules.
  bool strict = false;

  /// Whether a target is given (tosa-attach-target runs first).
  bool attaches() const {
    return !profiles.empty() || !extensions.empty() || level || version;
  }
  /// The items again, canonical ("pro_int,level=8k,strict"); "" for none.
  std::string items() const;
  /// The mlir-opt-22 options giving the same verdicts.
  std::string mlirOptArgs() const;
};

/// The profiles, extensions and levels MLIR 22 knows.
const std::vector<std::string> &tosaProfiles();
const std::vector<std::string> &tosaExtensions();

/// ITEMS as above (empty: the default target), enabled. The error names
/// the item and what is accepted.
llvm::Expected<ValidateTarget> parseValidateTarget(std::string_view items);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_VALIDATETARGET_H
