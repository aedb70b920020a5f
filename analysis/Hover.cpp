//===- Hover.cpp - hover contents -----------------------------------------===//

#include "Hover.h"

#include "Query.h"
#include "Render.h"

namespace tosa_lsp {

/// `io`: the same op after tosa-infer-shapes, when known. Its refined
/// result is the headline's inferred shape: the broadcast rule alone, on
/// the declared operand types, can say `?x?` where propagation knows 2x3
/// (and the inlay hint shows 2x3).
static std::string opHover(const FileAnalysis &fa, const OpReport &op,
                           const InferredOp *io) {
  std::string md;
  MaybeShape inferred = op.inferredShape();
  MaybeShape propagated;
  if (io && io->refined()) {
    std::vector<InferredResult> results = io->results();
    if (results.size() == 1 && results[0].inferredShape)
      propagated = results[0].inferredShape;
  }
  bool differs = propagated && (!inferred || *propagated != *inferred);
  md += "**Inferred** `" +
        (differs    ? formatShape(propagated)
         : inferred ? formatShape(inferred)
                    : std::string("-")) +
        "` vs **declared** `" + formatShape(op.declaredShape()) + "`" +
        (op.ok() ? "" : " — **broadcast error**") + "\n\n";
  if (differs)
    md += "_Propagated through the function (tosa-infer-shapes); from the "
          "declared operand types alone: `" +
          (inferred ? formatShape(inferred) : std::string("-")) + "`._\n\n";
  md += "---\n\n";
  md += renderExplanation(op, RenderStyle::Markdown);
  if (op.section < fa.sections.size() && fa.sections[op.section].stale)
    md += "\n\n_Stale: this section does not parse now; shown from the last "
          "version that did._\n";
  return md;
}

static std::string valueLine(const ValueInfo &v) {
  return "`" + v.name + "`: `" + v.type + "`";
}

static std::optional<HoverResult> hoverNoShapes(const FileAnalysis &fa,
                                                Position pos, const Lookup &l,
                                                const InferredOp *io);

std::optional<HoverResult> hover(const FileAnalysis &fa, Position pos,
                                 const ShapeInference *shapes) {
  Lookup l = lookup(fa, pos);
  if (!shapes)
    return hoverNoShapes(fa, pos, l, nullptr);
  const InferredOp *io = nullptr;
  if (l.op)
    io = shapes->opAt(l.op->range.begin);
  else if (l.value && l.value->ownerRange.begin.valid())
    io = shapes->opAt(l.value->ownerRange.begin);
  std::optional<HoverResult> h = hoverNoShapes(fa, pos, l, io);
  if (!io && !h)
    io = shapes->opAt(pos);
  // Beside a hover that exists anyway, only what it adds.
  if (!io ||
      (h && !io->refined() && !io->contradicts() && !io->hasRefinedOperands()))
    return h;
  std::string md = renderInferred(*io, RenderStyle::Markdown);
  if (!h)
    return HoverResult{io->range, md};
  h->markdown += "\n\n---\n\n" + md;
  return h;
}

static std::optional<HoverResult> hoverNoShapes(const FileAnalysis &fa,
                                                Position pos, const Lookup &l,
                                                const InferredOp *io) {
  if (l.op)
    return HoverResult{l.range, opHover(fa, *l.op, io)};
  if (l.value) {
    const ValueInfo &v = *l.value;
    // The result of a Broadcastable op, at its definition or any use.
    if (const OpReport *op = fa.opOf(v))
      return HoverResult{l.range, valueLine(v) + "\n\n" + opHover(fa, *op, io)};
    std::string md = valueLine(v) + "\n\n" + v.origin;
    if (v.ownerRange.begin.valid())
      md += " (line " + std::to_string(v.ownerRange.begin.line) + ")";
    // An operand inside a Broadcastable op: explain that op as well.
    if (!l.onValueDef)
      if (const OpReport *op = enclosingOp(fa, pos))
        md += "\n\n---\n\noperand of `" + op->name + "`:\n\n" +
              opHover(fa, *op, nullptr);
    return HoverResult{l.range, md};
  }
  if (l.symbol)
    return HoverResult{
        l.range, "`" + l.symbol->opName + "` `@" + l.symbol->name + "` (line " +
                     std::to_string(l.symbol->nameRange.begin.line) + ")"};
  if (l.block)
    return HoverResult{l.range, "block `" + l.block->name + "`"};
  // An op MLIR has no dialect for: say so where the user looks (the
  // server does not publish the note by default).
  for (const Diagnostic &d : fa.diagnostics)
    if (d.code == "lenient-parse" && contains(d.range, pos))
      return HoverResult{d.range, "_" + d.message +
                                      ": ops of this dialect are not "
                                      "verified, inferred or lowered._"};
  return std::nullopt;
}

} // namespace tosa_lsp
