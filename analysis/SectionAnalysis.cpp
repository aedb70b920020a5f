//===- SectionAnalysis.cpp - one section's analysis, crash contained -----===//
//
// A section (or a part of one, or a unit) through its three steps
// (SectionRun.h); a crash inside MLIR becomes an error on the section.
//
//===----------------------------------------------------------------------===//

#include "CrashGuard.h"
#include "SectionRun.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

SectionResult Analyzer::Impl::analyzeSection(const FileText &file,
                                             const std::string &path,
                                             Section sec, const Config &config,
                                             SectionUnits *units,
                                             bool cutFunction) {
  if (std::optional<SectionResult> parts =
          analyzeInParts(file, path, sec, config, units))
    return std::move(*parts);
  if (std::optional<SectionResult> parts =
          cutFunction ? analyzeFunctionInParts(file, path, sec, config, units)
                      : std::nullopt)
    return std::move(*parts);
  SectionResult result;
  std::optional<std::string> crash = runContained([&] {
    analyzeSectionUnguarded(file, path, sec, config, result, units, nullptr);
  });
  if (!crash && deferredCrash)
    crash = std::move(deferredCrash);
  deferredCrash.reset();
  if (!crash)
    return result;
  if (units)
    units->units.clear();
  // The context may be half-updated (locks, uniquer tables): abandon it, and
  // everything the section had built in it, rather than destroy it.
  abandonRetired();
  abandonKept(false);
  (void)context.release();
  context = makeContext();
  SectionResult failed;
  failed.diagnostics = std::move(result.diagnostics); // Reported before.
  sec.parsed = false;
  failed.section = sec;
  Diagnostic d;
  d.source = DiagSource::Parser;
  d.range.begin = file.lines.position(sec.beginOffset);
  d.range.end = d.range.begin;
  d.message = "MLIR crashed while analysing this section (" + *crash +
              "); its diagnostics may be incomplete and it has no hover or "
              "hints. Please report the input.";
  d.code = "internal-crash";
  d.section = sec.index;
  failed.diagnostics.push_back(std::move(d));
  return failed;
}

MLIRContext &
Analyzer::Impl::contextFor(std::unique_ptr<MLIRContext> &slot,
                           const FileText &file, const Section &sec,
                           llvm::function_ref<void()> beforeFresh) {
  if (!slot)
    slot = makeContext();
  // MLIR's verdicts depend on which dialects are loaded (a registered op
  // name in a `pdl.operation`): the section must find what a fresh context
  // would have, whatever was analysed here before (mlir-opt-22 makes one
  // per section).
  std::string_view secText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  if (!onlyDialectsOf(*slot, secText)) {
    PhaseTimer t("fresh context (dialects of another text)");
    if (beforeFresh)
      beforeFresh();
    if (&slot == &context)
      destroyRetired(); // what was parsed in it goes first
    dropKept(&slot != &context);
    slot = makeContext();
  }
  return *slot;
}

void Analyzer::Impl::analyzeSectionUnguarded(
    const FileText &file, const std::string &path, Section sec,
    const Config &config, SectionResult &result, SectionUnits *units,
    UnitJob *job, const Section *part, std::unique_ptr<MLIRContext> *partCtx,
    PartText *around, double capacityFactor) {
  std::unique_ptr<MLIRContext> &slot = partCtx ? *partCtx : context;
  MLIRContext &ctx = contextFor(slot, file, sec);
  {
    auto owned = std::make_unique<ParsedSection>();
    // A whole section's parse outlives this call (destroyRetiredIR). A
    // unit's is small, and the parts of a section are destroyed each on
    // its thread at once (two halves kept raised a 200k-line open's peak
    // by ~50 MiB for little time).
    llvm::scope_exit retire([&] {
      if (job || part || !owned || !deferIRDestruction || !retireSections)
        return;
      std::lock_guard<std::mutex> lock(retiredMu);
      retired.push_back(std::move(owned));
    });
    SectionRun run(*this, file, path, sec, config, result, units, job, part,
                   ctx, around, *owned, capacityFactor);
    if (!run.run())
      return;
    if (!around) // a cut function's parts are not the function
      inferParsed(owned, slot, sec, result, config, job != nullptr,
                  file.sharedLines);
  }
  result.section = sec;
}

std::unique_ptr<Analyzer::Impl::PartRun> Analyzer::Impl::verifyPart(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, SectionResult &result, SectionUnits *units,
    const Section &part, std::unique_ptr<MLIRContext> &slot,
    double capacityFactor, PartText *around,
    llvm::function_ref<void()> beforeFresh) {
  MLIRContext &ctx = contextFor(slot, file, sec, beforeFresh);
  auto p = std::make_unique<PartRun>(sec, slot, around);
  p->run.emplace(*this, file, path, p->sec, config, result, units, nullptr,
                 &part, ctx, around, *p->owned, capacityFactor);
  if (!p->run->runUntilVerified(p->block))
    return nullptr;
  return p;
}

void Analyzer::Impl::finishPart(std::unique_ptr<PartRun> p,
                                const FileText &file, const Config &config,
                                SectionResult &result) {
  if (!p->run->runAfterVerified())
    return;
  p->run.reset();
  // A section part's IR: kept for inferKept, or destroyed here, on its
  // thread (a cut function's parts are not the function).
  if (!p->around)
    inferParsed(p->owned, p->slot, p->sec, result, config, /*unit=*/false,
                file.sharedLines);
  result.section = p->sec;
}

namespace detail {

class SectionRun::Diagnosing {
public:
  explicit Diagnosing(SectionRun &run)
      : ctx(run.ctx), handler(&run.ctx, [&run](mlir::Diagnostic &diag) {
          return run.onDiagnostic(diag);
        }) {
    ctx.printOpOnDiagnostic(true);
  }
  ~Diagnosing() { ctx.printOpOnDiagnostic(true); }

private:
  MLIRContext &ctx;
  ScopedDiagnosticHandler handler;
};

bool SectionRun::run() {
  Diagnosing here(*this);
  Block block;
  if (!guardedParse(block))
    return false;
  if (sec.parsed && !checkParsed(block))
    return false;
  if (!sec.parsed && llvm::none_of(sectionDiags, [](const Diagnostic &d) {
        return d.severity == Severity::Error;
      }))
    sectionDiags.push_back(silentParseFailure(ps, file, sec, &ctx));
  markSection();
  return true;
}

bool SectionRun::runUntilVerified(Block &block) {
  Diagnosing here(*this);
  if (!guardedParse(block) || !sec.parsed)
    return false;
  beforeVerify(block);
  verify();
  return true;
}

bool SectionRun::runAfterVerified() {
  Diagnosing here(*this);
  collect();
  if (!afterCollect())
    return false;
  markSection();
  return true;
}

bool SectionRun::silentSoFar() const {
  return sec.parsed && verified && sectionDiags.empty() && tables.empty();
}

bool SectionRun::guardedParse(Block &block) {
  if (std::optional<size_t> deep = findExcessiveNesting(body, kMaxNesting)) {
    if (!job) // A unit is not ok: the full analysis reports it.
      refuseNesting(*deep);
    return false;
  }
  if (auto big =
          findExcessiveResultNumber(body, sec.endOffset - sec.beginOffset)) {
    if (!job)
      refuseResultNumber(big->first, big->second);
    return false;
  }
  if (auto wide = findExcessiveIntegerWidth(
          body, sec.endOffset - sec.beginOffset, file.text.size())) {
    if (!job)
      refuseWideIntegers(*wide);
    return false;
  }
  parse(block);
  if (job && !sec.parsed) {
    // A parse error: the caller decides whether it is the section's.
    job->parseFailed = true;
    markSection();
    return false;
  }
  return !job || findUnitOp(block);
}

void SectionRun::markSection() {
  for (Diagnostic &d : sectionDiags)
    d.section = sec.index;
}

} // namespace detail
} // namespace tosa_lsp
