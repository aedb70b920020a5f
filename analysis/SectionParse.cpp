//===- SectionParse.cpp - a section's text to MLIR, with its diagnostics --===//
//
// The first step of a section's analysis (SectionRun.h): the parser's buffer,
// MLIR's diagnostics turned into ours, the nesting guard, the parse (again
// with lenient dialects where the configuration allows them), and the module
// the parsed ops end up in.
//
//===----------------------------------------------------------------------===//

#include "Lenient.h"
#include "MLIRShared.h"
#include "Migrate.h"
#include "SectionRun.h"
#include "Timing.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

namespace tosa_lsp::detail {

Position ParsedSection::toFilePosition(unsigned line, unsigned column) const {
  if (line <= prefixLines || (suffixLine && line >= suffixLine))
    return {};
  line -= prefixLines;
  Position p;
  p.line = line + section.firstLine - 1;
  p.column = line == 1 ? column + section.firstColumn - 1 : column;
  return p;
}

Position ParsedSection::toFilePositionElsewhere(llvm::SMLoc loc) const {
  if (!loc.isValid())
    return {};
  size_t size = section.endOffset - section.beginOffset;
  const char *p = loc.getPointer();
  if (lines && bufferStart && p >= bufferStart &&
      p <= bufferStart + prefixLen + size)
    return {}; // In the prefix.
  if (suffixLine && lines && bufferStart && p > bufferStart && p <= bufferEnd())
    return {};
  if (!sourceMgr.FindBufferContainingLoc(loc))
    return {};
  auto [line, col] = sourceMgr.getLineAndColumn(loc);
  return toFilePosition(line, col);
}

const SharedText &ParsedSection::typeName(Type type, TypeNames &cache) const {
  if (auto it = cache.find(type); it != cache.end())
    return it->second;
  std::string text;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor && !tensor.getEncoding()) {
    // As MLIR prints it, with the element type's text printed once: a
    // model's distinct tensor types are many (each shape of each element
    // type), and Type::print builds a printer state for each (~8,000
    // instructions a type, ~3 % of a 10k-line open). TypeNameTest compares.
    SharedText element = typeName(tensor.getElementType(), cache);
    text = "tensor<";
    for (int64_t d : tensor.getShape()) {
      if (ShapedType::isDynamic(d))
        text += '?';
      else
        text += std::to_string(d);
      text += 'x';
    }
    text += element.str();
    text += '>';
  } else {
    llvm::raw_string_ostream os(text);
    type.print(os);
  }
  return cache.try_emplace(type, SharedText(std::move(text))).first->second;
}

const SharedText &ParsedSection::opName(Operation *op, OpNames &cache) const {
  auto [it, inserted] = cache.try_emplace(op->getName().getAsOpaquePointer());
  if (inserted)
    it->second = SharedText(op->getName().getStringRef().str());
  return it->second;
}

Range ParsedSection::opRange(Operation *op) const {
  if (const auto *def = state.getOpDef(op))
    return toFileRange(def->loc);
  if (auto f = fileLocOf(op->getLoc())) {
    Position p = toFilePosition(f->getLine(), f->getColumn());
    return {p, p};
  }
  return {};
}

namespace {

/// End of the token starting at `offset` (an op name, `%value`, a quoted
/// generic op name): diagnostics get a range, not just a point.
size_t tokenEnd(std::string_view text, size_t offset) {
  if (offset >= text.size())
    return offset;
  size_t i = offset;
  if (text[i] == '"') {
    size_t close = text.find('"', i + 1);
    return close == std::string_view::npos ||
                   text.substr(i, close - i).find('\n') !=
                       std::string_view::npos
               ? i + 1
               : close + 1;
  }
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '$' || c == '-' || c == '%' || c == '@' ||
           c == '#' || c == '^' || c == '!';
  };
  while (i < text.size() && ident(text[i]))
    ++i;
  return i == offset ? offset + 1 : i;
}

/// Messages can quote input (a 10 MB identifier); keep them readable.
std::string capped(std::string msg) {
  constexpr size_t kMax = 2000;
  if (msg.size() > kMax) {
    msg.resize(kMax);
    msg += "... (cut at " + std::to_string(kMax) + " characters)";
  }
  return msg;
}

Severity toSeverity(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return Severity::Error;
  case DiagnosticSeverity::Warning:
    return Severity::Warning;
  case DiagnosticSeverity::Note:
    return Severity::Note;
  case DiagnosticSeverity::Remark:
    return Severity::Info;
  }
  return Severity::Error;
}

} // namespace

SectionRun::SectionRun(Analyzer::Impl &impl, const FileText &file,
                       const std::string &path, Section &sec,
                       const Config &config, SectionResult &result,
                       SectionUnits *units, UnitJob *job, const Section *part,
                       MLIRContext &ctx, PartText *around, ParsedSection &ps,
                       double capacityFactor)
    : impl(impl), file(file), path(path), sec(sec), config(config),
      result(result), units(units), job(job), part(part), ctx(ctx),
      around(around), ps(ps), sectionDiags(result.diagnostics) {
  ps.section = job ? job->map : part ? *part : sec;
  body = std::string_view(file.text).substr(
      ps.section.beginOffset, ps.section.endOffset - ps.section.beginOffset);
  setUpBuffer(capacityFactor);
}

void SectionRun::setUpBuffer(double capacityFactor) {
  if (job || around) {
    // Text that is not in the file around the part's: the prefix (and a
    // suffix) in one buffer with it.
    std::string_view prefix = job ? job->prefix : around->prefix;
    std::string_view suffix = around ? around->suffix : std::string_view();
    ps.prefixLen = prefix.size();
    ps.prefixLines = job ? job->prefixLines : around->prefixLines;
    if (!suffix.empty())
      ps.suffixLine =
          ps.prefixLines + ps.section.lastLine - ps.section.firstLine + 1;
    std::unique_ptr<llvm::WritableMemoryBuffer> buf =
        llvm::WritableMemoryBuffer::getNewUninitMemBuffer(
            prefix.size() + body.size() + suffix.size(), path);
    char *out = buf->getBufferStart();
    for (std::string_view piece : {prefix, body, suffix}) {
      if (piece.empty())
        continue; // its data() may be null: memcpy's is not allowed to be
      std::memcpy(out, piece.data(), piece.size());
      out += piece.size();
    }
    ps.sourceMgr.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
  } else {
    ps.sourceMgr.AddNewSourceBuffer(parserBuffer(body, file.text, path),
                                    llvm::SMLoc());
  }
  ps.lines = &file.lines;
  // The first of two parts reserves its result vectors for both: the
  // merge then moves the second's items in (sizing them there copied
  // ~80 MB at 200k lines).
  ps.capacityFactor = capacityFactor;
  ps.bufferStart = ps.sourceMgr.getMemoryBuffer(ps.sourceMgr.getMainFileID())
                       ->getBufferStart();
}

Range SectionRun::toRange(Location loc) {
  auto f = fileLocOf(loc);
  if (f && f->getFilename() == path && f->getLine() != 0) {
    Position b = ps.toFilePosition(f->getLine(), f->getColumn());
    Position e = b;
    if (auto off = file.lines.offset(b))
      e = file.lines.position(tokenEnd(file.text, *off));
    return {b, e};
  }
  // A location elsewhere (loc("model.py":3:1), unknown): point at the op
  // being verified so the diagnostic still lands in this file.
  if (currentOp)
    return ps.opRange(currentOp);
  return {};
}

LogicalResult SectionRun::onDiagnostic(mlir::Diagnostic &diag) {
  if (diag.getSeverity() == DiagnosticSeverity::Error &&
      ++errorsSeen == kErrorsWithOpNote)
    ctx.printOpOnDiagnostic(false);
  Diagnostic d;
  d.severity = toSeverity(diag.getSeverity());
  d.source = source;
  d.range = toRange(diag.getLocation());
  d.message = capped(diag.str());
  d.code = source == DiagSource::Parser ? "parse-error" : "verifier-error";
  if (d.severity != Severity::Error)
    d.code =
        source == DiagSource::Parser ? "parser-message" : "verifier-message";
  d.section = sec.index;
  for (mlir::Diagnostic &note : diag.getNotes())
    d.notes.push_back({toRange(note.getLocation()), capped(note.str())});
  if (std::optional<std::string> advice = migrationAdvice(d.message.str()))
    d.notes.push_back({d.range, *advice});
  sectionDiags.push_back(std::move(d));
  return success();
}

void SectionRun::refuseNesting(size_t deep) {
  Diagnostic d;
  d.source = DiagSource::Parser;
  d.range.begin = file.lines.position(sec.beginOffset + deep);
  d.range.end = file.lines.position(sec.beginOffset + deep + 1);
  d.message = "nesting deeper than " + std::to_string(kMaxNesting) +
              " levels (brackets or unary minus signs); not parsed (the "
              "MLIR parser would overflow its stack)";
  d.code = "nesting-too-deep";
  d.section = sec.index;
  sectionDiags.push_back(std::move(d));
  sec.parsed = false;
  result.section = sec;
}

void SectionRun::refuseResultNumber(size_t at, uint64_t number) {
  refuseNesting(at); // the same refusal, with its own reason
  Diagnostic &d = sectionDiags.back();
  size_t begin = ps.section.beginOffset + at;
  d.range.begin = file.lines.position(begin);
  d.range.end = file.lines.position(tokenEnd(file.text, begin));
  d.message = "result number #" + std::to_string(number) +
              " is more than this text can define; not parsed (MLIR's "
              "parser would allocate 16 bytes for every result number up "
              "to it)";
  d.code = "input-too-costly";
}

void SectionRun::refuseWideIntegers(const WideIntegers &wide) {
  refuseResultNumber(wide.offset, 0);
  Diagnostic &d = sectionDiags.back();
  d.message = describeWideIntegers(wide) + "; not parsed";
}

void SectionRun::parse(Block &block) {
  ParserConfig parserConfig(&ctx, /*verifyAfterParse=*/false);
  {
    PhaseTimer t("parse");
    impl.parsedSinceFresh += (part ? part->endOffset - part->beginOffset
                                   : sec.endOffset - sec.beginOffset);
    size_t diagsBefore = sectionDiags.size();
    sec.parsed = succeeded(
        parseAsmSourceFile(ps.sourceMgr, &block, parserConfig, &ps.state));
    sec.parsed = parseWithLenientDialects(block, parserConfig, diagsBefore);
    // Lenient parsing is off (check without --lenient, or a namespace
    // not listed): say that it exists.
    if (!sec.parsed && !part)
      adviseLenient(diagsBefore);
  }
  if (sec.parsed && impl.lenientLoaded)
    noteLenientOps(block);
}

/// Custom syntax of a dialect MLIR 22 lacks: load a lenient dialect for it
/// (Lenient.h) and parse again, once per namespace. Whether it parsed.
bool SectionRun::parseWithLenientDialects(Block &block,
                                          ParserConfig &parserConfig,
                                          size_t diagsBefore) {
  bool parsed = sec.parsed;
  for (unsigned tries = 0; !parsed && tries < 16; ++tries) {
    std::optional<std::string> ns;
    for (size_t i = diagsBefore; i < sectionDiags.size() && !ns; ++i)
      ns = missingDialect(sectionDiags[i].message.str());
    if (part || !ns || !config.lenient.allows(*ns) || ctx.getLoadedDialect(*ns))
      break;
    loadLenientDialect(ctx, *ns);
    impl.lenientLoaded = true;
    sectionDiags.resize(diagsBefore);
    block.clear();
    ps.state = AsmParserState();
    parsed = succeeded(
        parseAsmSourceFile(ps.sourceMgr, &block, parserConfig, &ps.state));
  }
  return parsed;
}

void SectionRun::adviseLenient(size_t diagsBefore) {
  for (size_t i = diagsBefore; i < sectionDiags.size(); ++i) {
    std::optional<std::string> ns =
        missingDialect(sectionDiags[i].message.str());
    if (!ns || ctx.getLoadedDialect(*ns))
      continue;
    sectionDiags[i].notes.push_back(
        {sectionDiags[i].range,
         "to parse the custom syntax of ops of dialects MLIR 22 does "
         "not have as unregistered ops, use `--lenient` (check, "
         "explain) or list `" +
             *ns + "` in `lenientDialects` (.tosa-lsp.json)"});
    break;
  }
}

void SectionRun::noteLenientOps(Block &block) {
  block.walk([&](Operation *op) {
    if (!isLenientDialect(op->getDialect()))
      return;
    Diagnostic d;
    d.severity = Severity::Info;
    d.source = DiagSource::Parser;
    d.range = ps.opRange(op);
    d.message = "parsed leniently (dialect `" +
                op->getDialect()->getNamespace().str() + "` not registered)";
    d.code = "lenient-parse";
    d.section = sec.index;
    sectionDiags.push_back(std::move(d));
  });
}

bool SectionRun::findUnitOp(Block &block) {
  // Exactly one op after the prefix, isolated from above, like before.
  for (Operation &op : block)
    if (const auto *def = ps.state.getOpDef(&op))
      if (def->scopeLoc.Start.getPointer() >= ps.bufferStart + ps.prefixLen) {
        if (unitOp)
          return false;
        unitOp = &op;
      }
  return unitOp && unitOp->hasTrait<OpTrait::IsIsolatedFromAbove>();
}

void SectionRun::wrapModule(Block &block) {
  // Like mlir-opt: a lone top-level module is the root, anything else is
  // wrapped in an implicit one.
  if (!job && (!part || around) && llvm::hasSingleElement(block) &&
      isa<ModuleOp>(block.front())) {
    Operation *m = &block.front();
    m->remove();
    ps.module = OwningOpRef<ModuleOp>(cast<ModuleOp>(m));
    return;
  }
  OpBuilder b(&ctx);
  ps.module = OwningOpRef<ModuleOp>(
      ModuleOp::create(b, FileLineColLoc::get(&ctx, path, 0, 0)));
  ps.module->getBody()->getOperations().splice(ps.module->getBody()->begin(),
                                               block.getOperations());
  ps.implicitModule = true;
}

void SectionRun::inspectPart() {
  // What the text cannot tell (FunctionSplit.h): the part is one
  // function of one block, and which ops are directly in it.
  Block &top = *ps.module->getBody();
  Operation *fn = llvm::hasSingleElement(top) ? &top.front() : nullptr;
  around->oneBlock = fn && fn->getName().getStringRef() == "func.func" &&
                     fn->getNumRegions() == 1 && fn->getRegion(0).hasOneBlock();
  if (!around->oneBlock)
    return;
  Block &body = fn->getRegion(0).front();
  around->entryArgs = body.getNumArguments();
  // MLIR's printer numbers an op's results as one group (%5:2, %5#1) in
  // the generic form that errors print ops in: one number per op.
  for (Operation &op : body) {
    around->topLevelIds += op.getNumResults() ? 1 : 0;
    if (const auto *def = ps.state.getOpDef(&op);
        def && !def->resultGroups.empty()) {
      around->topLevelDefs.push_back(
          ps.section.beginOffset - sec.beginOffset +
          (def->resultGroups[0].definition.loc.Start.getPointer() -
           ps.bufferStart - ps.prefixLen));
    }
  }
}

} // namespace tosa_lsp::detail
