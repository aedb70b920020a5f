//===- InlayHints.cpp - inferred shapes after declared types --------------===//

#include "InlayHints.h"

#include "Query.h"

#include <algorithm>
#include <tuple>

namespace tosa_lsp {

/// "runtime-check" after the result type (after its inferred shape, if
/// any), for dimensions `dims`. Between the result's name and `=` it read
/// like code (`%0 runtime-check = tosa.add`).
static InlayHintData runtimeCheckHint(const OpReport &op,
                                      const std::vector<unsigned> &dims) {
  std::string list;
  for (unsigned d : dims)
    list += (list.empty() ? "" : ", ") + std::to_string(d);
  return {InlayHintData::RuntimeCheck, op.resultTypeRange.end, " runtime-check",
          "dimension(s) " + list +
              " need a runtime broadcast check (a dynamic size may be 1)"};
}

std::vector<InlayHintData> inlayHints(const FileAnalysis &fa, Range range,
                                      const Config::Hints &options,
                                      const ShapeInference *shapes) {
  std::vector<InlayHintData> out;
  unsigned first = range.begin.valid() ? range.begin.line : 1;
  unsigned last = range.end.valid() ? range.end.line : ~0u;
  for (unsigned i : fa.positionIndex().opsOverlapping(fa, first, last)) {
    const OpReport &op = fa.ops[i];
    if (op.kind != OpKind::Implicit || !op.resultTypeRange.end.valid())
      continue;
    // Most ops have nothing to show: the summary says so without building
    // the per-dimension records (a label needs an inferred shape other
    // than the declared one, or a runtime check).
    const std::optional<BroadcastSummary> &s = op.summary;
    if (s && s->inferredIsDeclared) {
      if (!(options.runtimeChecks && s->anyRuntimeCheck))
        continue;
      if (!s->wideRank) { // the first hints of a screen in a big file
        out.push_back(runtimeCheckHint(op, s->runtimeCheckDimList()));
        continue;
      }
    }
    const BroadcastAnalysis &a = op.implicit();
    if (options.inferredShapes && a.inferable) {
      std::string label;
      if (!a.inferred)
        label = "inferred: error";
      else if (a.inferred != a.declared)
        label = "inferred: " + formatShape(a.inferred);
      if (!label.empty())
        out.push_back(
            {InlayHintData::InferredShape, op.resultTypeRange.end, " " + label,
             "Broadcastable shape inference gives " +
                 (a.inferred ? formatShape(a.inferred)
                             : std::string("no shape (operands "
                                           "conflict)")) +
                 "; the declared result is " + formatShape(a.declared)});
    }
    if (options.runtimeChecks && a.anyRuntimeCheck()) {
      std::vector<unsigned> dims;
      for (const DimReport &d : a.dims)
        if (d.runtimeCheck)
          dims.push_back(d.index);
      out.push_back(runtimeCheckHint(op, dims));
    }
  }
  if (shapes && options.inferredShapes)
    for (const InferredOp *op : shapes->opsOnLines(first, last)) {
      if (!op->resultTypeRange.end.valid() ||
          (!op->refined() && !op->contradicts()) ||
          !contains(range, op->resultTypeRange.end))
        continue;
      std::string label, tooltip;
      // MLIR's verifier rejects the op on the propagated operand sizes,
      // and no result size contradicts: nothing inferred to show.
      bool rejectedOnly = !op->rejection().empty() && !op->resultContradicts();
      for (const InferredResult &r : op->results()) {
        std::string one = !r.contradictions.empty()
                              ? formatShape(r.shapeFunction) + " (error)"
                          : rejectedOnly ? std::string("error")
                          : r.refined()  ? formatShape(r.inferredShape)
                                         : formatShape(r.declaredShape);
        label += (label.empty() ? "" : ", ") + one;
      }
      label = " inferred: " + label;
      tooltip =
          "MLIR's shape inference (tosa-infer-shapes): " + inferredSummary(*op);
      // Propagated through the function, it knows at least what the
      // Broadcastable rule alone knows: it replaces that hint.
      auto same = std::find_if(out.begin(), out.end(), [&](const auto &h) {
        return h.kind == InlayHintData::InferredShape &&
               h.position.line == op->resultTypeRange.end.line &&
               h.position.column == op->resultTypeRange.end.column;
      });
      if (same != out.end()) {
        if (same->label == " inferred: error")
          continue;
        same->label = label;
        same->tooltip = tooltip;
        continue;
      }
      out.push_back({InlayHintData::InferredShape, op->resultTypeRange.end,
                     label, tooltip});
    }
  // A range-restricted request gets the hints positioned inside it.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const InlayHintData &h) {
                             return !contains(range, h.position);
                           }),
            out.end());
  // At one position the inferred shape comes before the check.
  std::sort(out.begin(), out.end(),
            [](const InlayHintData &a, const InlayHintData &b) {
              auto key = [](const InlayHintData &h) {
                return std::make_tuple(h.position.line, h.position.column,
                                       h.kind == InlayHintData::RuntimeCheck);
              };
              return key(a) < key(b);
            });
  return out;
}

} // namespace tosa_lsp
