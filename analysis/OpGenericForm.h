//===- OpGenericForm.h - one op's generic form, on request ------*- C++ -*-===//
//
// Hover shows an op's generic form (attributes, properties, result types)
// as mlir-lsp-server does, but tosa-lsp keeps no IR after an analysis. So
// the op's own text is parsed again on request, alone: each value it uses
// from outside is defined right before it by a stand-in op of the declared
// type, under its name (`%x:2 = "tosa_lsp.value"() : () -> (T, U)`), after
// the section's aliases. That costs one op's parse, however big the file,
// and works where the rest of the function does not verify.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_OPGENERICFORM_H
#define TOSA_LSP_ANALYSIS_OPGENERICFORM_H

#include "Aliases.h"
#include "Analysis.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct OpGenericForm {
  std::string name;        // tosa.add
  std::string symbol;      // "public @f" for a symbol's op
  std::string genericForm; // regions left out, large elements elided
  std::vector<std::string> resultTypes;
};

/// The generic form of the op whose text is `scope` (an OpReport's or
/// OpSpan's), or std::nullopt when that text alone does not parse (a
/// branch to a block, text that changed since the analysis).
std::optional<OpGenericForm>
opGenericForm(std::string_view text, const LineIndex &lines,
              const FileAnalysis &fa, const std::vector<AliasInfo> &aliases,
              Range scope, unsigned section);

/// Makes the context opGenericForm uses and loads its dialects (~3 ms,
/// which a first hover paid), once per process.
void warmGenericForm();

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_OPGENERICFORM_H
