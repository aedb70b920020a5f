//===- Output.h - CLI output formats ----------------------------*- C++ -*-===//

#ifndef TOSA_LSP_TOOLS_OUTPUT_H
#define TOSA_LSP_TOOLS_OUTPUT_H

#include "Analysis.h"
#include "LineIndex.h"
#include "ShapeInference.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace tosa_lsp {

/// The `--format=json` schema documented in README.md.
nlohmann::ordered_json fileToJson(const FileAnalysis &fa);
nlohmann::ordered_json opToJson(const OpReport &op);
/// An op of `explain`'s "shapes": declared and inferred result types.
nlohmann::ordered_json inferredToJson(const InferredOp &op);

/// mlir-opt's format: `file:line:col: severity: message`, the source line and
/// a caret, then the notes the same way. `lines` is `text`'s line table,
/// built once per text (each source line was found by a scan from the
/// start: `explain` on a 50k-line file printed its 7,000 findings in 4 s).
void printDiagnosticText(llvm::raw_ostream &os, const FileAnalysis &fa,
                         const std::string &text, const LineIndex &lines,
                         const Diagnostic &d);

} // namespace tosa_lsp

#endif // TOSA_LSP_TOOLS_OUTPUT_H
