//===- SectionVerify.cpp - a parsed section's verification and items ------===//
//
// The second step of a section's analysis (SectionRun.h): MLIR's verifier
// (all errors, Verify.cpp), the op reports and the position index. A big
// section is verified on a second thread while this one collects the op
// reports: both only read the IR (two cores, one result).
//
//===----------------------------------------------------------------------===//

#include "CrashGuard.h"
#include "SectionRun.h"
#include "Timing.h"
#include "Validate.h"

using namespace mlir;

namespace tosa_lsp::detail {

void destroyIsolatedBodies(ModuleOp module) {
  for (Operation &op : *module.getBody())
    if (op.hasTrait<OpTrait::IsIsolatedFromAbove>())
      for (Region &r : op.getRegions()) {
        r.dropAllReferences();
        r.getBlocks().clear();
      }
}

void SectionRun::verify() {
  PhaseTimer t("verify");
  verified = verifyAll(
      unitOp ? unitOp : ps.module->getOperation(),
      [&](Operation *op) { currentOp = op; }, failedOps, visitedOps);
  currentOp = nullptr;
}

void SectionRun::reportMalformed() {
  for (const MalformedOp &m : malformed) {
    Diagnostic d;
    d.source = DiagSource::Verifier;
    d.range = ps.opRange(m.op);
    d.message = m.message;
    d.code = "verifier-error";
    d.section = sec.index;
    sectionDiags.push_back(std::move(d));
  }
}

bool SectionRun::verifyAndCollect(
    std::optional<ConcurrentUse> &concurrent,
    std::optional<TaskThread::Running> &bodiesGone) {
  // Validation needs the bodies the parallel path destroys beside it.
  if (!job && (!part || (around && around->alone)) &&
      body.size() >= impl.parallelSectionBytes && !config.validate.enabled)
    return verifyBesideReports(concurrent, bodiesGone);
  verifyThenReport();
  validate();
  return true;
}

void SectionRun::validate() {
  if (!config.validate.enabled || !verified || job || part)
    return;
  PhaseTimer t("tosa-validate");
  size_t before = sectionDiags.size();
  source = DiagSource::Validation;
  EffectiveTarget target = runTosaValidation(*ps.module, config.validate);
  source = DiagSource::Verifier;
  for (size_t i = before; i < sectionDiags.size(); ++i) {
    Diagnostic &d = sectionDiags[i];
    // Some of the pass's messages end in a line break (mlir-opt-22 prints
    // a blank line after them); the text is the same without.
    std::string message = d.message.str();
    while (!message.empty() &&
           (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    d.message = message;
    ValidationRule rule = classifyValidation(message, target);
    d.code = rule.code;
    d.notes.push_back({d.range, "spec rule: " + rule.note});
  }
}

/// Op reports and the index only read the IR: on a big section the index is
/// collected after verifying on a second thread while the op reports and
/// their decisions are computed here. Upstream verifiers are what can crash,
/// so they get the contained thread; a crash there loses the section as one
/// here would.
bool SectionRun::verifyBesideReports(
    std::optional<ConcurrentUse> &concurrent,
    std::optional<TaskThread::Running> &bodiesGone) {
  std::optional<std::string> crashed;
  std::vector<Operation *> owners, spanOwners;
  concurrent.emplace(ctx);
  TaskThread::Running verifier = impl.helperThread.beside([&] {
    crashed = runContained([&] {
      verify();
      if (!impl.collectIndexes)
        return;
      PhaseTimer t("index (after verify, beside op reports)");
      // Not reportOf: this thread fills it meanwhile (a DenseMap read
      // during a rehash can probe forever). linkReports joins them after.
      const llvm::DenseMap<Operation *, unsigned> none;
      collectIndex(ps, none, index, &owners, &spanOwners);
    });
  });
  {
    PhaseTimer t("op reports (beside verify)");
    collectOpReports(ps, config, result.ops, reportOf, &malformed);
  }
  verifier.join();
  if (crashed) {
    // Abandoned with the context (see analyzeSection).
    (void)ps.module.release();
    impl.deferredCrash = std::move(crashed);
    return false;
  }
  reportMalformed();
  linkReports(owners, spanOwners, reportOf, index.values, index.opSpans);
  // From here on only the top-level ops are read (collectUnits): the
  // helper destroys the function bodies meanwhile, instead of this
  // thread after (the bulk of the IR: ~25 ms at 50k lines). Not for
  // `check`, which leaves the IR to the exit.
  // Nor when the bodies are inferred after (setInferShapes).
  if (!impl.deferIRDestruction && !impl.inferShapes)
    bodiesGone.emplace(impl.helperThread.beside(
        [module = *ps.module] { destroyIsolatedBodies(module); }));
  return true;
}

void SectionRun::verifyThenReport() {
  verify();
  collect();
}

void SectionRun::collect() {
  {
    PhaseTimer t("op reports");
    collectOpReports(ps, config, result.ops, reportOf, &malformed);
  }
  reportMalformed();
  if (impl.collectIndexes) {
    PhaseTimer t("index");
    collectIndex(ps, reportOf, index);
  }
}

} // namespace tosa_lsp::detail
