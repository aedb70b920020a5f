//===- Hover.cpp - hover contents -----------------------------------------===//

#include "Hover.h"

#include "Query.h"
#include "Render.h"

namespace tosa_lsp {

static std::string opHover(const FileAnalysis &fa, const OpReport &op) {
  std::string md;
  MaybeShape inferred = op.inferredShape();
  md += "**Inferred** `" +
        (inferred ? formatShape(inferred) : std::string("-")) +
        "` vs **declared** `" + formatShape(op.declaredShape()) + "`" +
        (op.ok() ? "" : " — **broadcast error**") + "\n\n---\n\n";
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
                                                Position pos, const Lookup &l);

std::optional<HoverResult> hover(const FileAnalysis &fa, Position pos,
                                 const ShapeInference *shapes) {
  Lookup l = lookup(fa, pos);
  std::optional<HoverResult> h = hoverNoShapes(fa, pos, l);
  if (!shapes)
    return h;
  const InferredOp *io = nullptr;
  if (l.op)
    io = shapes->opAt(l.op->range.begin);
  else if (l.value && l.value->ownerRange.begin.valid())
    io = shapes->opAt(l.value->ownerRange.begin);
  else if (!h)
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
                                                Position pos, const Lookup &l) {
  if (l.op)
    return HoverResult{l.range, opHover(fa, *l.op)};
  if (l.value) {
    const ValueInfo &v = *l.value;
    // The result of a Broadcastable op, at its definition or any use.
    if (const OpReport *op = fa.opOf(v))
      return HoverResult{l.range, valueLine(v) + "\n\n" + opHover(fa, *op)};
    std::string md = valueLine(v) + "\n\n" + v.origin;
    if (v.ownerRange.begin.valid())
      md += " (line " + std::to_string(v.ownerRange.begin.line) + ")";
    // An operand inside a Broadcastable op: explain that op as well.
    if (!l.onValueDef)
      if (const OpReport *op = enclosingOp(fa, pos))
        md +=
            "\n\n---\n\noperand of `" + op->name + "`:\n\n" + opHover(fa, *op);
    return HoverResult{l.range, md};
  }
  if (l.symbol)
    return HoverResult{
        l.range, "`" + l.symbol->opName + "` `@" + l.symbol->name + "` (line " +
                     std::to_string(l.symbol->nameRange.begin.line) + ")"};
  if (l.block)
    return HoverResult{l.range, "block `" + l.block->name + "`"};
  return std::nullopt;
}

} // namespace tosa_lsp
