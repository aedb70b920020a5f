//===- SectionInference.cpp - shape inference on the analysis' own IR ----===//
//
// With Analyzer::setInferShapes, each section, part or unit the analysis
// parsed is put through tosa-infer-shapes once its results are copied out,
// in the context it was parsed in, before its IR is destroyed: the same
// inference ShapeInferrer::infer makes on a parse of its own, without that
// parse (a fifth of a many-function session's CPU). A cut function's parts
// are not inferred (neither part is the function), nor anything parsed
// with lenient dialects or validated (the IR is not the inferrer's). What
// the finished analysis says decides what is kept (finishInference).
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "CrashGuard.h"
#include "ParsedInference.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

void Analyzer::setInferShapes(bool on) { impl->inferShapes = on; }

std::shared_ptr<const ShapeInference> Analyzer::takeInferred() {
  return std::move(impl->lastInferred);
}

void Analyzer::Impl::inferParsed(std::unique_ptr<ParsedSection> &ps,
                                 std::unique_ptr<MLIRContext> &slot,
                                 const Section &sec,
                                 const SectionResult &result,
                                 const Config &config) {
  if (!inferShapes || !ps || !ps->module || !sec.parsed || lenientLoaded ||
      config.validate.enabled)
    return;
  FunctionsToInfer what;
  what.section = sec.index;
  for (const Diagnostic &d : result.diagnostics) {
    if (d.severity != Severity::Error)
      continue;
    if (!d.range.begin.valid())
      return; // the inferrer skips the section: nothing to infer
    what.errors.push_back(d.range.begin);
  }
  PhaseTimer t("shape inference on the analysis' IR");
  std::vector<FunctionInference> out;
  MLIRContext &ctx = *slot;
  ScopedDiagnosticHandler silence(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });
  std::optional<std::string> crash = runContained([&] {
    (void)inferTopLevelFunctions(
        *ps, ctx, what, [] { return false; }, nullptr, out);
  });
  if (crash) {
    // Abandoned as after a crash in the analysis (see analyzeSection); the
    // results are already out. The inferrer meets the same crash on its
    // own parse and says so.
    (void)ps.release();
    if (&slot == &context)
      abandonRetired();
    (void)slot.release();
    slot = makeContext();
    return;
  }
  std::lock_guard<std::mutex> lock(inferredMu);
  for (FunctionInference &f : out)
    inferred.push_back(std::move(f));
}

namespace {
/// The section's error positions, sorted, or nullopt when one has no place
/// (the inferrer then infers none of its functions).
std::map<unsigned, std::optional<std::vector<Position>>>
errorsBySection(const FileAnalysis &fa) {
  std::map<unsigned, std::optional<std::vector<Position>>> out;
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    auto [it, added] = out.try_emplace(d.section, std::vector<Position>());
    if (!it->second)
      continue;
    if (!d.range.begin.valid())
      it->second.reset();
    else
      it->second->push_back(d.range.begin);
  }
  return out;
}
} // namespace

void Analyzer::Impl::finishInference(const FileAnalysis &fa) {
  std::vector<FunctionInference> all;
  {
    std::lock_guard<std::mutex> lock(inferredMu);
    all.swap(inferred);
  }
  if (!inferShapes)
    return;
  auto errors = errorsBySection(fa);
  // By place; a function analysed twice (parts, then whole) keeps the last.
  std::map<std::pair<unsigned, unsigned>, FunctionInference> byPlace;
  for (FunctionInference &f : all) {
    if (f.section >= fa.sections.size())
      continue;
    const Section &sec = fa.sections[f.section];
    if (!sec.parsed || sec.stale)
      continue;
    byPlace[{f.section, f.scope.begin.line}] = std::move(f);
  }
  auto out = std::make_shared<ShapeInference>();
  for (auto &[place, f] : byPlace) {
    auto it = errors.find(f.section);
    if (it != errors.end() && !it->second)
      continue; // an error without a place: not inferred
    bool hasError =
        it != errors.end() && llvm::any_of(*it->second, [&](Position p) {
          return !before(p, f.scope.begin) && !before(f.scope.end, p);
        });
    // What the inferrer says of a function with an error (one the
    // analysis of its part or unit did not see is found by the whole's).
    if (hasError && f.skipped != "the function has errors") {
      FunctionInference skipped;
      skipped.name = std::move(f.name);
      skipped.scope = f.scope;
      skipped.section = f.section;
      skipped.skipped = "the function has errors";
      out->functions.push_back(std::move(skipped));
      continue;
    }
    if (!hasError && f.skipped == "the function has errors")
      continue;
    out->functions.push_back(std::move(f));
  }
  lastInferred = std::move(out);
}

} // namespace tosa_lsp
