//===- Render.h - explanations as text and Markdown -------------*- C++ -*-===//
//
// The one place where a broadcast report becomes prose: the CLI's `explain`
// prints the text form, the server's hover shows the Markdown form.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_RENDER_H
#define TOSA_LSP_ANALYSIS_RENDER_H

#include "Analysis.h"

#include <string>

namespace tosa_lsp {

enum class RenderStyle { Text, Markdown };

/// Rule column for one dimension, e.g. "1 | >1 -> >1".
std::string ruleText(const DimReport &dim);
/// Notes column for one dimension, e.g. "#0 stretched from 1".
std::string dimNotes(const DimReport &dim, const BroadcastAnalysis &a);

/// Full explanation of one op: shapes, verdict, per-dimension table,
/// violated constraints with fixes.
std::string renderExplanation(const OpReport &op, RenderStyle style);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_RENDER_H
