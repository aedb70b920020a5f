//===- Output.cpp - CLI output formats ------------------------------------===//

#include "Output.h"

#include "Render.h"

namespace tosa_lsp {

using ojson = nlohmann::ordered_json;

static ojson dimJson(int64_t size) {
  return size == kDynamic ? ojson(nullptr) : ojson(size);
}

static ojson shapeJson(const MaybeShape &s) {
  if (!s)
    return nullptr;
  ojson a = ojson::array();
  for (int64_t d : *s)
    a.push_back(dimJson(d));
  return a;
}

static ojson violationJson(const Violation &v) {
  ojson j;
  j["kind"] = violationKindName(v.kind);
  j["dim"] = v.dim ? ojson(*v.dim) : ojson(nullptr);
  j["operands"] = v.operands;
  j["message"] = v.message;
  j["fix"] = v.fix;
  return j;
}

static ojson dimsJson(const BroadcastAnalysis &a) {
  ojson dims = ojson::array();
  for (const DimReport &d : a.dims) {
    ojson j;
    j["index"] = d.index;
    ojson sizes = ojson::array();
    for (const auto &s : d.operandSizes)
      sizes.push_back(s ? dimJson(*s) : ojson(nullptr));
    j["operands"] = sizes;
    j["expanded"] = d.expanded;
    j["inferred"] = d.operandConflict ? ojson(nullptr) : dimJson(d.inferred);
    j["declared"] = d.declared ? dimJson(*d.declared) : ojson(nullptr);
    j["rule"] = ruleText(d);
    j["from"] = d.sources;
    j["stretched"] = d.stretched;
    ojson flags = ojson::array();
    if (d.staticBroadcast)
      flags.push_back("static-broadcast");
    if (d.runtimeCheck)
      flags.push_back("runtime-check");
    if (d.dynamicToStatic)
      flags.push_back("dynamic-to-static");
    if (d.refinable)
      flags.push_back("refinable");
    if (d.operandConflict)
      flags.push_back("operand-conflict");
    if (d.resultConflict)
      flags.push_back("result-conflict");
    j["flags"] = flags;
    dims.push_back(j);
  }
  return dims;
}

ojson inferredToJson(const InferredOp &op) {
  ojson j;
  j["line"] = op.range.begin.line;
  j["column"] = op.range.begin.column;
  j["name"] = op.name();
  j["function"] = op.function();
  j["refined"] = op.refined();
  j["contradiction"] = op.contradicts();
  // MLIR's verifier on the refined op (what mlir-opt --tosa-infer-shapes
  // reports), when it rejects it.
  j["rejection"] =
      op.rejection().empty() ? ojson(nullptr) : ojson(op.rejection());
  ojson results = ojson::array();
  for (const InferredResult &r : op.results()) {
    ojson rj;
    rj["declared"] = r.declared;
    rj["inferred"] = r.inferred;
    rj["shapeFunction"] =
        r.shapeFunction ? shapeJson(r.shapeFunction) : ojson(nullptr);
    ojson sources = ojson::array();
    for (const std::string &s : r.dimSources)
      sources.push_back(s.empty() ? ojson(nullptr) : ojson(s));
    rj["dimSources"] = sources;
    rj["contradictions"] = r.contradictions;
    results.push_back(std::move(rj));
  }
  j["results"] = std::move(results);
  j["refinedOperands"] = op.refinedOperands();
  return j;
}

ojson opToJson(const OpReport &op) {
  ojson j;
  j["line"] = op.range.begin.line;
  j["column"] = op.range.begin.column;
  j["name"] = op.name;
  j["kind"] = opKindName(op.kind);
  ojson operands = ojson::array();
  for (const MaybeShape &s : op.operandShapes())
    operands.push_back(shapeJson(s));
  j["operands"] = operands;
  j["declaredShape"] = shapeJson(op.declaredShape());
  j["inferredShape"] = shapeJson(op.inferredShape());
  j["verdict"] = op.ok() ? "ok" : "error";
  std::string message;
  for (const Violation &v : op.violations())
    message += (message.empty() ? "" : "; ") + v.message;
  j["message"] = message;
  j["section"] = op.section;
  j["registered"] = op.registered;
  j["verifierRan"] = op.verifierRan;
  j["verifierFailed"] = op.verifierFailed;
  if (op.kind == OpKind::Implicit) {
    j["dims"] = dimsJson(op.implicit());
  } else {
    const ExplicitBroadcastAnalysis &e = op.explicitBcast();
    j["broadcastDimensions"] = e.broadcastDimensions;
    ojson mapping = ojson::array();
    for (const DimMapping &m : e.mappings) {
      ojson mj;
      mj["operandDim"] = m.operandDim;
      mj["targetDim"] = m.targetDim;
      mj["operandSize"] = dimJson(m.operandSize);
      mj["targetSize"] = m.targetSize ? dimJson(*m.targetSize) : ojson(nullptr);
      mj["degenerate"] = m.degenerate;
      mj["runtimeCheck"] = m.runtimeCheck;
      mj["error"] = m.error;
      mapping.push_back(mj);
    }
    j["mapping"] = mapping;
    j["addedDims"] = e.addedDims;
    j["dims"] = e.composition ? dimsJson(*e.composition) : ojson::array();
  }
  ojson vs = ojson::array();
  for (const Violation &v : op.violations())
    vs.push_back(violationJson(v));
  j["violations"] = vs;
  return j;
}

ojson fileToJson(const FileAnalysis &fa) {
  ojson f;
  f["path"] = fa.path;
  ojson diags = ojson::array();
  for (const Diagnostic &d : fa.diagnostics) {
    ojson j;
    j["line"] = d.range.begin.line;
    j["column"] = d.range.begin.column;
    j["endLine"] = d.range.end.line;
    j["endColumn"] = d.range.end.column;
    j["severity"] = severityName(d.severity);
    j["message"] = d.message;
    j["source"] = diagSourceName(d.source);
    j["code"] = d.code;
    j["section"] = d.section;
    ojson notes = ojson::array();
    for (const DiagNote &n : d.notes) {
      ojson nj;
      nj["line"] = n.range.begin.line;
      nj["column"] = n.range.begin.column;
      nj["message"] = n.message;
      notes.push_back(nj);
    }
    j["notes"] = notes;
    diags.push_back(j);
  }
  f["diagnostics"] = diags;
  ojson ops = ojson::array();
  for (const OpReport &op : fa.ops)
    ops.push_back(opToJson(op));
  f["ops"] = ops;
  return f;
}

/// The source line of `line`, cut around `column` when very long (a 10 MB
/// single-line file must not be echoed back).
static void printSnippet(llvm::raw_ostream &os, const std::string &text,
                         const LineIndex &lines, unsigned line,
                         unsigned column) {
  std::optional<size_t> at = lines.offset(Position{line, 1});
  if (!at)
    return;
  size_t start = *at;
  size_t end = text.find('\n', start);
  if (end == std::string::npos)
    end = text.size();
  std::string src = text.substr(start, end - start);
  if (!src.empty() && src.back() == '\r')
    src.pop_back();
  size_t caret = column ? column - 1 : 0;
  constexpr size_t kMax = 200;
  if (src.size() > kMax) {
    size_t from = caret > kMax / 2 ? caret - kMax / 2 : 0;
    std::string cut = src.substr(from, kMax);
    src = (from ? "..." : "") + cut + (from + kMax < src.size() ? "..." : "");
    caret = caret - from + (from ? 3 : 0);
  }
  os << src << "\n";
  std::string pad;
  for (size_t i = 0; i < caret && i < src.size(); ++i)
    pad += src[i] == '\t' ? '\t' : ' ';
  os << pad << "^\n";
}

void printDiagnosticText(llvm::raw_ostream &os, const FileAnalysis &fa,
                         const std::string &text, const LineIndex &lines,
                         const Diagnostic &d) {
  // As MLIR's SourceMgrDiagnosticHandler: a note shows the source line
  // only where its location differs from the one printed before it.
  Position shown;
  auto header = [&](Position p, const char *sev, const std::string &msg) {
    if (p.valid())
      os << fa.path << ":" << p.line << ":" << p.column << ": ";
    else
      os << fa.path << ": ";
    os << sev << ": " << msg << "\n";
    if (p.valid() && !(p.line == shown.line && p.column == shown.column))
      printSnippet(os, text, lines, p.line, p.column);
    shown = p;
  };
  const char *sev =
      d.severity == Severity::Info ? "remark" : severityName(d.severity);
  header(d.range.begin, sev, d.message);
  for (const DiagNote &n : d.notes)
    header(n.range.begin, "note", n.message);
}

} // namespace tosa_lsp
