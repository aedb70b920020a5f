//===- InferredShapes.cpp - inferred shapes as plain data and prose -------===//

#include "ShapeInference.h"

#include <algorithm>

namespace tosa_lsp {

bool InferredOp::refined() const {
  return std::any_of(results.begin(), results.end(),
                     [](const InferredResult &r) { return r.refined(); });
}

bool InferredOp::contradicts() const {
  return std::any_of(
      results.begin(), results.end(),
      [](const InferredResult &r) { return !r.contradictions.empty(); });
}

const InferredOp *ShapeInference::opAt(Position pos) const {
  for (const FunctionInference &f : functions)
    for (const InferredOp &op : f.ops) {
      if (op.range.begin.line != pos.line)
        continue;
      if (pos.column == 0 || (op.range.begin.column <= pos.column &&
                              pos.column <= op.range.end.column))
        return &op;
    }
  return nullptr;
}

std::vector<const InferredOp *> ShapeInference::allOps() const {
  std::vector<const InferredOp *> out;
  for (const FunctionInference &f : functions)
    for (const InferredOp &op : f.ops)
      out.push_back(&op);
  return out;
}

std::vector<TextEditData> refineAllEdits(const ShapeInference &si,
                                         const std::string &function) {
  std::vector<TextEditData> out;
  for (const FunctionInference &f : si.functions)
    if (function.empty() || f.name == function)
      out.insert(out.end(), f.refineEdits.begin(), f.refineEdits.end());
  std::sort(out.begin(), out.end(),
            [](const TextEditData &a, const TextEditData &b) {
              return std::make_pair(a.range.begin.line, a.range.begin.column) <
                     std::make_pair(b.range.begin.line, b.range.begin.column);
            });
  return out;
}

static std::string dimText(int64_t d) {
  return d == kDynamic ? "?" : std::to_string(d);
}

std::vector<Diagnostic> contradictionDiagnostics(const ShapeInference &si) {
  std::vector<Diagnostic> out;
  for (const InferredOp *op : si.allOps())
    for (size_t i = 0; i < op->results.size(); ++i) {
      const InferredResult &r = op->results[i];
      if (r.contradictions.empty())
        continue;
      Diagnostic d;
      d.severity = Severity::Error;
      d.source = DiagSource::Verifier;
      d.range = op->range;
      d.section = op->section;
      d.code = "shape-contradiction";
      std::string dims;
      for (unsigned k : r.contradictions)
        dims += std::string(dims.empty() ? "" : ", ") + "dimension " +
                std::to_string(k) + " is " + dimText((*r.shapeFunction)[k]) +
                ", not " + dimText((*r.declaredShape)[k]);
      d.message = "'" + op->name + "' result #" + std::to_string(i) +
                  " is declared " + r.declared +
                  " but shape inference (tosa-infer-shapes) gives " +
                  formatShape(r.shapeFunction) + ": " + dims;
      for (const std::string &s : op->refinedOperands) {
        std::string plain;
        for (char c : s)
          if (c != '`')
            plain += c;
        d.notes.push_back({{}, "refined by propagation: " + plain});
      }
      out.push_back(std::move(d));
    }
  return out;
}

std::string inferredSummary(const InferredOp &op) {
  std::string out;
  for (size_t i = 0; i < op.results.size(); ++i) {
    const InferredResult &r = op.results[i];
    if (!out.empty())
      out += ", ";
    if (op.results.size() > 1)
      out += "#" + std::to_string(i) + " ";
    if (!r.contradictions.empty())
      out += "declared " + formatShape(r.declaredShape) +
             " contradicts inferred " + formatShape(r.shapeFunction);
    else if (r.refined())
      out += "inferred " + formatShape(r.inferredShape) + " (declared " +
             formatShape(r.declaredShape) + ")";
    else
      out += "as declared (" + formatShape(r.declaredShape) + ")";
  }
  return out;
}

std::string renderInferred(const InferredOp &op, RenderStyle style) {
  bool md = style == RenderStyle::Markdown;
  auto code = [&](const std::string &s) { return md ? "`" + s + "`" : s; };
  auto bold = [&](const std::string &s) { return md ? "**" + s + "**" : s; };
  std::string nl = md ? "\n\n" : "\n";
  std::string indent = md ? "- " : "  ";
  std::string out;
  out += op.name + " in @" + op.function + ": " +
         (op.contradicts() ? "error"
          : op.refined()   ? "refinable"
                           : "as declared") +
         " (tosa-infer-shapes)" + nl;
  for (size_t i = 0; i < op.results.size(); ++i) {
    const InferredResult &r = op.results[i];
    out += indent + "result #" + std::to_string(i) + ": " + bold("declared") +
           " " + code(r.declared) + "   " + bold("inferred") + " " +
           code(r.inferred) + nl;
    for (size_t d = 0; d < r.dimSources.size(); ++d)
      if (!r.dimSources[d].empty() && r.declaredShape && r.inferredShape &&
          d < r.inferredShape->size())
        out += (md ? "  - " : "    ") + std::string("dim ") +
               std::to_string(d) + ": ? -> " + dimText((*r.inferredShape)[d]) +
               " from " + (md ? r.dimSources[d] : r.dimSources[d]) + nl;
    for (unsigned d : r.contradictions)
      out +=
          (md ? "  - " : "    ") + bold("error") + ": dim " +
          std::to_string(d) + " is declared " + dimText((*r.declaredShape)[d]) +
          " but the op's shape function "
          "gives " +
          dimText((*r.shapeFunction)[d]) + " (" + formatShape(r.shapeFunction) +
          ") on its operands; at run time the result has that size" + nl;
  }
  if (!op.refinedOperands.empty()) {
    out += indent + "operands refined by propagation:" + nl;
    for (const std::string &s : op.refinedOperands)
      out += (md ? "  - " : "    ") + s + nl;
  }
  if (!md) {
    // Text output: strip the Markdown backquotes carried by the data.
    std::string plain;
    for (char c : out)
      if (c != '`')
        plain += c;
    return plain;
  }
  return out;
}

} // namespace tosa_lsp
