//===- SectionReport.cpp - what a verified section says -------------------===//
//
// The last step of a section's analysis (SectionRun.h): the broadcast
// findings of its ops, the units an edit can re-analyse alone, what a unit
// re-analysed on its own yields, and a diagnostic for a parse that failed
// without MLIR saying why.
//
//===----------------------------------------------------------------------===//

#include "Findings.h"
#include "SectionRun.h"
#include "Timing.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

namespace tosa_lsp::detail {

bool SectionRun::checkParsed(Block &block) {
  beforeVerify(block);
  // While two threads use the context (SectionVerify.cpp): destroyed after
  // bodiesGone is joined.
  std::optional<ConcurrentUse> concurrent;
  // Joined (destroyed) before `ps` goes, on any return from here on.
  std::optional<TaskThread::Running> bodiesGone;
  if (!verifyAndCollect(concurrent, bodiesGone))
    return false;
  return afterCollect();
}

void SectionRun::beforeVerify(Block &block) {
  wrapModule(block);
  if (around)
    inspectPart();
  source = DiagSource::Verifier;
  tables = tableLengthFindings();
}

bool SectionRun::afterCollect() {
  sectionDiags.insert(sectionDiags.end(),
                      std::make_move_iterator(tables.begin()),
                      std::make_move_iterator(tables.end()));
  tables.clear();
  markVerified(failedOps, visitedOps, reportOf, result.ops);
  if (job && !describeUnit())
    return false;
  result.values = std::move(index.values);
  result.blocks = std::move(index.blocks);
  result.symbols = std::move(index.symbols);
  result.opSpans = std::move(index.opSpans);
  PhaseTimer t("findings");
  reportFindings();
  // Validation is whole-section (mlir-opt-22 validates a module): no unit
  // is re-analysed alone while it is on.
  if (units && !job && !config.validate.enabled)
    collectUnits(ps, failedOps, file.lines, ps.section, result, *units);
  return !job || finishUnit();
}

bool SectionRun::describeUnit() {
  job->failed = !verified;
  // What the full analysis would check once every function verifies:
  // symbol uses, against the stubs' signatures.
  if (job->moduleChecks && verified) {
    Operation *m = ps.module->getOperation();
    if (failed(m->getName().getRegisteredInfo()->verifyRegionInvariants(m)))
      return false;
  }
  job->opName = unitOp->getName().getStringRef().str();
  if (auto sym =
          unitOp->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    job->symbol = sym.str();
  if (auto fn = dyn_cast<FunctionOpInterface>(unitOp))
    job->signature = ps.typeName(fn.getFunctionType());
  return true;
}

std::vector<Diagnostic> SectionRun::tableLengthFindings() {
  std::vector<Diagnostic> out;
  static const llvm::StringLiteral kName = "tosa.table";
  if (!memmem(body.data(), body.size(), kName.data(), kName.size()))
    return out; // no walk for the files without one
  ps.module->walk([&](Operation *op) {
    if (op->getName().getStringRef() != kName || op->getNumOperands() < 2)
      return;
    auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto table = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
    if (!in || !table || table.getRank() != 1 || table.isDynamicDim(0))
      return;
    bool i16 = in.getElementType().isInteger(16);
    if (!i16 && !in.getElementType().isInteger(8))
      return;
    int64_t want = i16 ? 513 : 256, has = table.getDimSize(0);
    if (has == want)
      return;
    Diagnostic d;
    d.severity = Severity::Warning;
    d.source = DiagSource::Spec;
    d.range = ps.opRange(op);
    std::string takes = std::to_string(want) + (i16 ? " for i16" : " for i8");
    d.message = "the table has " + std::to_string(has) +
                " entries; TOSA's TABLE takes " + takes +
                " input (MLIR 22 accepts this, and the lowered code reads "
                "outside the table)";
    d.code = "table-length";
    d.section = sec.index;
    out.push_back(std::move(d));
  });
  return out;
}

void SectionRun::reportFindings() {
  // The ops are new (not shared with a published analysis): each one's
  // decisions are read once here, then only their inputs are kept.
  // Hints are common (one per op of a model with dynamic sizes): the
  // list grows once, not by doubling.
  sectionDiags.reserve(sectionDiags.size() + result.ops.size());
  FindingsMemo memo;
  for (const OpReport &op : result.ops) {
    tosa_lsp::appendFindings(op, config, sectionDiags, memo);
    op.forgetAnalyses();
  }
}

bool SectionRun::finishUnit() {
  // Drop what belongs to the prefix; keep the stubs' uses (they are
  // uses in this unit of functions defined elsewhere).
  for (const Diagnostic &d : sectionDiags)
    if (!d.range.begin.valid() && d.severity == Severity::Error)
      return false;
  llvm::erase_if(sectionDiags,
                 [](const Diagnostic &d) { return !d.range.begin.valid(); });
  for (const OpReport &op : result.ops)
    if (!op.range.begin.valid())
      return false;
  for (SymbolInfo &sym : result.symbols)
    if (!sym.nameRange.begin.valid())
      job->stubUses[sym.name] = std::move(sym.uses);
  llvm::erase_if(result.symbols, [](const SymbolInfo &sym) {
    return !sym.nameRange.begin.valid();
  });
  llvm::erase_if(result.opSpans,
                 [](const OpSpan &o) { return !o.nameRange.begin.valid(); });
  llvm::erase_if(result.values,
                 [](const ValueInfo &v) { return !v.def.begin.valid(); });
  llvm::erase_if(result.blocks,
                 [](const BlockInfo &b) { return !b.def.begin.valid(); });
  for (const Diagnostic &d : sectionDiags)
    job->failed |=
        d.severity == Severity::Error && d.source != DiagSource::Broadcast;
  job->ok = true;
  return true;
}

/// Some MLIR 22 custom parsers (tosa.clamp, tosa.rescale, tosa.max_pool2d)
/// fail without emitting anything; a section that did not parse must never
/// look clean. Every op parsed before the failure is in the parser state, so
/// the culprit is the first op after them that cannot hold regions (the ops
/// before it without a definition are its enclosing ops).
Diagnostic silentParseFailure(const detail::ParsedSection &ps,
                              const FileText &file, const Section &sec,
                              MLIRContext *ctx) {
  const char *bufStart =
      ps.sourceMgr.getMemoryBuffer(ps.sourceMgr.getMainFileID())
          ->getBufferStart();
  size_t from = 0;
  for (const AsmParserState::OperationDefinition &def : ps.state.getOpDefs())
    if (def.scopeLoc.End.isValid())
      from = std::max<size_t>(from, def.scopeLoc.End.getPointer() - bufStart);
  std::string_view secText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  std::optional<std::pair<size_t, size_t>> found, fallback;
  auto identChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '$';
  };
  size_t i = std::min(from, secText.size());
  while (i < secText.size() && !found) {
    size_t eol = secText.find('\n', i);
    if (eol == std::string_view::npos)
      eol = secText.size();
    std::string_view line = secText.substr(i, eol - i);
    size_t p = line.find_first_not_of(" \t\r");
    if (p != std::string_view::npos && line[p] == '%') {
      size_t eq = line.find('=', p);
      p = eq == std::string_view::npos ? std::string_view::npos
                                       : line.find_first_not_of(" \t", eq + 1);
    }
    if (p != std::string_view::npos && p < line.size()) {
      size_t b = p, e = p;
      if (line[p] == '"') {
        e = line.find('"', p + 1);
        if (e != std::string_view::npos)
          ++b;
      } else {
        while (e < line.size() && identChar(line[e]))
          ++e;
      }
      if (e != std::string_view::npos && e > b) {
        std::string_view name = line.substr(b, e - b);
        bool opLike = name.find('.') != std::string_view::npos &&
                      std::isalpha(static_cast<unsigned char>(name[0]));
        if (opLike || name == "return") {
          std::pair<size_t, size_t> at{i + b, i + e};
          if (!fallback)
            fallback = at;
          std::optional<RegisteredOperationName> info =
              RegisteredOperationName::lookup(
                  llvm::StringRef(name.data(), name.size()), ctx);
          if (name == "return" ||
              (opLike && (!info || info->hasTrait<OpTrait::ZeroRegions>())))
            found = at;
        }
      }
    }
    i = eol + 1;
  }
  if (!found)
    found = fallback;
  Diagnostic d;
  d.source = DiagSource::Parser;
  d.code = "parse-error";
  if (found) {
    std::string_view name =
        secText.substr(found->first, found->second - found->first);
    d.range.begin = file.lines.position(sec.beginOffset + found->first);
    d.range.end = file.lines.position(sec.beginOffset + found->second);
    d.message = "'" + std::string(name) +
                "' did not parse and MLIR's parser gave no reason (its "
                "custom parser failed silently): check the op's syntax "
                "(stray commas, attribute names, operand count) against "
                "MLIR 22, or write it in generic form";
  } else {
    d.range.begin = file.lines.position(sec.beginOffset);
    d.range.end = d.range.begin;
    d.message = "this section did not parse and MLIR's parser gave no "
                "reason (a custom parser failed silently)";
  }
  return d;
}

void collectUnits(const detail::ParsedSection &ps,
                  const llvm::DenseSet<Operation *> &failedOps,
                  const LineIndex &lines, const Section &sec,
                  const SectionResult &result, SectionUnits &out) {
  out = SectionUnits();
  ModuleOp module = *ps.module;
  std::string_view secText =
      std::string_view(ps.bufferStart, sec.endOffset - sec.beginOffset);
  if (secText.find("{-#") != std::string_view::npos)
    return; // Dialect resources: a unit alone could not see them.
  if (!ps.implicitModule && !module->getAttrDictionary().empty())
    return;
  std::vector<Unit> units;
  for (Operation &op : *module.getBody()) {
    const AsmParserState::OperationDefinition *def = ps.state.getOpDef(&op);
    if (!def)
      return;
    Unit u;
    u.begin = def->scopeLoc.Start.getPointer() - ps.bufferStart;
    u.end = def->scopeLoc.End.getPointer() - ps.bufferStart;
    u.firstLine = lines.position(sec.beginOffset + u.begin).line;
    u.lastLine = lines.position(sec.beginOffset + u.end).line;
    // Units on lines of their own: an edit in one never moves another
    // sideways, only down.
    if (!units.empty() && u.firstLine <= units.back().lastLine)
      return;
    u.opName = op.getName().getStringRef().str();
    if (auto sym =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      u.symbol = sym.str();
    if (auto fn = dyn_cast<FunctionOpInterface>(&op))
      u.signature = ps.typeName(fn.getFunctionType());
    units.push_back(std::move(u));
  }
  if (!ps.implicitModule) {
    const AsmParserState::OperationDefinition *def =
        ps.state.getOpDef(module.getOperation());
    if (!def || units.empty() ||
        lines.position(sec.beginOffset +
                       (def->scopeLoc.End.getPointer() - ps.bufferStart))
                .line <= units.back().lastLine)
      return;
  }
  for (const Diagnostic &d : result.diagnostics) {
    if (d.severity != Severity::Error || d.source == DiagSource::Broadcast ||
        !d.range.begin.valid())
      continue;
    for (Unit &u : units)
      if (d.range.begin.line >= u.firstLine && d.range.begin.line <= u.lastLine)
        u.failed = true;
  }
  for (const auto &a : ps.state.getAttributeAliasDefs()) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    a.value.print(os);
    out.aliases += "#" + a.name.str() + " = " + printed + "\n";
  }
  for (const auto &a : ps.state.getTypeAliasDefs())
    out.aliases += "!" + a.name.str() + " = " + ps.typeName(a.value) + "\n";
  out.moduleFailed = failedOps.contains(module.getOperation());
  out.units = std::move(units);
}

} // namespace tosa_lsp::detail
