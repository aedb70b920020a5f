//===- OpSignatures.h - operands and attributes of TOSA ops -----*- C++ -*-===//
//
// What signature help and completion snippets show for a TOSA op: its
// operands and attributes in order, with the constraint each must meet and
// whether it is optional, as MLIR's op definitions (TableGen records shipped
// with MLIR 22's headers) declare them. Generated at build time
// (gen_op_signatures.py), so it never disagrees with the MLIR built against.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_OPSIGNATURES_H
#define TOSA_LSP_ANALYSIS_OPSIGNATURES_H

#include <string_view>
#include <vector>

namespace tosa_lsp {

struct OpArgument {
  const char *name;
  bool attribute; // else an operand
  bool optional;
  bool variadic;
  const char *constraint; // "4-d tosa-conformant tensor"
  const char *defaultValue;
  /// An enum attribute's cases, `|`-separated ("" otherwise).
  const char *cases;
};

struct OpSignature {
  const char *name;    // tosa.conv2d
  const char *summary; // "2D Convolution operator."
  /// The custom assembly format, "" for a C++ parser.
  const char *format;
  bool hasRegions;
  std::vector<OpArgument> arguments;
  std::vector<OpArgument> results;

  std::vector<const OpArgument *> operands() const;
  std::vector<const OpArgument *> attributes() const;
  /// Printed as `operands attr-dict : functional-type(operands, results)`:
  /// the declared format, or a C++ printer that prints the same (TOSA's,
  /// for its enum attributes) -- not for ops with regions or tosa.const.
  bool plainFormat() const;
};

/// Every op with a signature, sorted by name.
const std::vector<OpSignature> &opSignatures();
/// The signature of `name` (`tosa.add`), or null.
const OpSignature *findOpSignature(std::string_view name);

/// A short role for an operand name ("input zero point" for `input_zp`).
std::string operandRole(std::string_view name);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_OPSIGNATURES_H
