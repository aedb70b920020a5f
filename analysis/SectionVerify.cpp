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
    SectionResult &index, std::optional<ConcurrentUse> &concurrent,
    std::optional<TaskThread::Running> &bodiesGone) {
  if (!job && !part && body.size() >= impl.parallelSectionBytes)
    return verifyBesideReports(index, concurrent, bodiesGone);
  verifyThenReport(index);
  return true;
}

/// Op reports and the index only read the IR: on a big section the index is
/// collected after verifying on a second thread while the op reports and
/// their decisions are computed here. Upstream verifiers are what can crash,
/// so they get the contained thread; a crash there loses the section as one
/// here would.
bool SectionRun::verifyBesideReports(
    SectionResult &index, std::optional<ConcurrentUse> &concurrent,
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
  if (!impl.deferIRDestruction)
    bodiesGone.emplace(impl.helperThread.beside(
        [module = *ps.module] { destroyIsolatedBodies(module); }));
  return true;
}

void SectionRun::verifyThenReport(SectionResult &index) {
  verify();
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
