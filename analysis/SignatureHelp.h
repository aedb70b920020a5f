//===- SignatureHelp.h - the operands of the op being typed -----*- C++ -*-===//

#ifndef TOSA_LSP_ANALYSIS_SIGNATUREHELP_H
#define TOSA_LSP_ANALYSIS_SIGNATUREHELP_H

#include "Analysis.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct SignatureData {
  /// `tosa.mul %input1, %input2, %shift {...}`
  std::string label;
  std::string documentation; // the op's summary
  struct Parameter {
    unsigned begin, end; // byte offsets in `label`
    std::string documentation;
  };
  std::vector<Parameter> parameters;
  /// The parameter at the cursor; -1 when none (in the types).
  int active = -1;
};

/// The operands and attributes of the op typed on the cursor's line, when
/// MLIR's op definitions list them (OpSignatures.h).
std::optional<SignatureData>
signatureHelp(std::string_view text, const LineIndex &lines, Position pos);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SIGNATUREHELP_H
