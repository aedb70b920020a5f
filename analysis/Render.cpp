//===- Render.cpp - explanations as text and Markdown ---------------------===//

#include "Render.h"

#include <algorithm>
#include <sstream>

namespace tosa_lsp {

static std::string sizeCell(const DimReport &d, unsigned operand) {
  const auto &s = d.operandSizes[operand];
  if (!s)
    return "*";
  return d.expanded[operand] ? "(1)" : formatDim(*s);
}

static std::string opList(const std::vector<unsigned> &ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i)
    s += (i ? ", #" : "#") + std::to_string(ops[i]);
  return s;
}

std::string ruleText(const DimReport &d) {
  if (d.steps.empty())
    return "single ranked operand";
  std::string s;
  for (size_t i = 0; i < d.steps.size(); ++i) {
    if (i)
      s += "; ";
    s += inferRowName(d.steps[i].result.row);
    if (d.steps[i].result.error)
      s += " (conflict)";
  }
  return s;
}

std::string dimNotes(const DimReport &d, const BroadcastAnalysis &a) {
  std::vector<std::string> notes;
  if (d.operandConflict)
    notes.push_back("conflict: sizes differ and none is 1");
  if (d.staticBroadcast)
    notes.push_back(opList(d.stretched) + " stretched from 1");
  if (d.runtimeCheck)
    notes.push_back("runtime check: scf.if (a ? may be 1)");
  if (d.dynamicToStatic && d.declared)
    notes.push_back("must equal " + formatDim(*d.declared) + " at runtime");
  if (d.refinable)
    notes.push_back("refinable: ? -> " + formatDim(d.inferred));
  if (d.resultConflict)
    notes.push_back("declared size contradicts inferred");
  if (!d.sources.empty() && !d.operandConflict && d.inferred != kDynamic &&
      d.inferred != 1)
    notes.push_back("from " + opList(d.sources));
  std::string s;
  for (size_t i = 0; i < notes.size(); ++i)
    s += (i ? "; " : "") + notes[i];
  return s;
}

namespace {

/// Table rules contain '|' ("1 | >1 -> >1"): escape it inside Markdown cells.
std::string escapePipes(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}

/// A table printed as aligned text or as a Markdown table.
struct Table {
  std::vector<std::vector<std::string>> rows; // rows[0] is the header

  std::string render(RenderStyle style) const {
    std::ostringstream os;
    if (style == RenderStyle::Markdown) {
      for (size_t r = 0; r < rows.size(); ++r) {
        os << "|";
        for (const std::string &c : rows[r])
          os << " " << (c.empty() ? " " : escapePipes(c)) << " |";
        os << "\n";
        if (r == 0) {
          os << "|";
          for (size_t i = 0; i < rows[0].size(); ++i)
            os << "---|";
          os << "\n";
        }
      }
      return os.str();
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto &row : rows)
      for (size_t i = 0; i < row.size(); ++i)
        width[i] = std::max(width[i], row[i].size());
    for (const auto &row : rows) {
      std::string line = "  ";
      for (size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size())
          line += std::string(width[i] - row[i].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      os << line << "\n";
    }
    return os.str();
  }
};

std::string code(const std::string &s, RenderStyle style) {
  return style == RenderStyle::Markdown ? "`" + s + "`" : s;
}

void renderImplicit(const OpReport &op, RenderStyle style,
                    std::ostringstream &os) {
  const BroadcastAnalysis &a = op.implicit();
  if (!a.inferable) {
    os << (style == RenderStyle::Markdown ? "" : "  ")
       << "no ranked operand: the result shape cannot be inferred and is not "
          "verified\n";
    return;
  }
  if (!a.rankExpanded.empty()) {
    os << (style == RenderStyle::Markdown ? "" : "  ") << "rank expansion to "
       << a.rank << ":";
    for (unsigned i : a.rankExpanded)
      os << " operand #" << i << " " << formatShape(a.operands[i]) << " -> "
         << formatShape(Shape(a.rank - a.operands[i]->size(), 1)) +
                (a.operands[i]->empty() ? ""
                                        : "x" + formatShape(a.operands[i]));
    os << (style == RenderStyle::Markdown ? "\n\n" : "\n");
  }
  Table t;
  std::vector<std::string> header{"dim"};
  for (unsigned i = 0; i < a.operands.size(); ++i)
    header.push_back("#" + std::to_string(i));
  for (const char *h : {"inferred", "declared", "rule", "notes"})
    header.push_back(h);
  t.rows.push_back(header);
  for (const DimReport &d : a.dims) {
    std::vector<std::string> row{std::to_string(d.index)};
    for (unsigned i = 0; i < a.operands.size(); ++i)
      row.push_back(sizeCell(d, i));
    row.push_back(d.operandConflict ? "error" : formatDim(d.inferred));
    row.push_back(d.declared ? formatDim(*d.declared) : "-");
    row.push_back(ruleText(d));
    row.push_back(dimNotes(d, a));
    t.rows.push_back(row);
  }
  if (a.dims.empty())
    os << (style == RenderStyle::Markdown ? "" : "  ")
       << "rank 0: nothing to broadcast\n";
  else
    os << t.render(style);
}

void renderExplicit(const OpReport &op, RenderStyle style,
                    std::ostringstream &os) {
  const ExplicitBroadcastAnalysis &e = op.explicitBcast();
  std::string dims = "[";
  for (size_t i = 0; i < e.broadcastDimensions.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(e.broadcastDimensions[i]);
  dims += "]";
  std::string indent = style == RenderStyle::Markdown ? "" : "  ";
  os << indent
     << (op.kind == OpKind::LinalgBroadcast ? "operand dimensions map to "
                                              "init dimensions "
                                            : "broadcast_dimensions = ")
     << code(dims, style) << (style == RenderStyle::Markdown ? "\n\n" : "\n");
  if (!e.operand || !e.target) {
    os << indent
       << "unranked operand or target: the mapping cannot be "
          "checked\n";
    return;
  }
  Table t;
  t.rows.push_back({"operand dim", "size", "target dim", "size", "notes"});
  for (const DimMapping &m : e.mappings) {
    std::string note;
    int64_t target = m.targetSize ? *m.targetSize : 0;
    if (m.error)
      note = "error";
    else if (m.runtimeCheck)
      note = "sizes must match at runtime";
    else if (m.operandSize == target)
      note = "equal";
    else if (m.operandSize == 1)
      note = "degenerate: operand 1 stretched";
    else if (target == 1)
      note = "degenerate: target 1 stretched";
    t.rows.push_back({std::to_string(m.operandDim), formatDim(m.operandSize),
                      std::to_string(m.targetDim),
                      m.targetSize ? formatDim(*m.targetSize) : "-", note});
  }
  os << t.render(style);
  if (!e.addedDims.empty()) {
    os << indent << "added (broadcast) target dimensions:";
    for (unsigned d : e.addedDims)
      os << " " << d;
    os << (style == RenderStyle::Markdown ? "\n\n" : "\n");
  }
  if (e.composition) {
    os << indent
       << "then degenerate-dimension broadcasting of the expanded operands:"
       << (style == RenderStyle::Markdown ? "\n\n" : "\n");
    OpReport inner = op;
    inner.kind = OpKind::Implicit;
    inner.setImplicit(*e.composition);
    renderImplicit(inner, style, os);
  }
}

} // namespace

std::string renderExplanation(const OpReport &op, RenderStyle style) {
  std::ostringstream os;
  bool md = style == RenderStyle::Markdown;
  std::string verdict = op.ok() ? "ok" : "error";
  if (md)
    os << "**" << code(op.name, style) << "** — broadcast " << verdict
       << "\n\n";
  else
    os << op.name << ": " << verdict << "\n";

  std::string operands;
  for (size_t i = 0; i < op.operandTypes.size(); ++i)
    operands += (i ? ", #" : "#") + std::to_string(i) + " " +
                code(op.operandTypes[i], style);
  os << (md ? "Operands: " : "  operands: ") << operands
     << (md ? "  \n" : "\n");
  os << (md ? "Declared: " : "  declared: ")
     << code(formatShape(op.declaredShape()), style)
     << (md ? " · Inferred: " : "   inferred: ")
     << code(op.inferredShape() ? formatShape(op.inferredShape())
                                : std::string("-"),
             style)
     << (md ? "\n\n" : "\n");

  if (op.kind == OpKind::Implicit)
    renderImplicit(op, style, os);
  else
    renderExplicit(op, style, os);

  for (const Violation &v : op.violations()) {
    os << (md ? "\n**Error** (" : "  error (") << violationKindName(v.kind)
       << "): " << v.message << (md ? "\n" : "\n");
    if (!v.fix.empty())
      os << (md ? "\n*Fix:* " : "  fix: ") << v.fix << "\n";
  }
  if (op.registered && op.verifierFailed && op.ok())
    os << (md ? "\n" : "  ")
       << "MLIR's verifier rejected this op for a reason other than "
          "broadcasting.\n";
  return os.str();
}

} // namespace tosa_lsp
