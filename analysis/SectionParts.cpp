//===- SectionParts.cpp - sections on two threads -------------------------===//
//
// MLIR's parser is single-threaded and the parse is most of an open. A big
// section whose top-level ops share no symbols across some cuts
// (FunctionSplit.h: splitPoints) is parsed and verified as up to 8 parts that
// two threads take in turn, each in its own context; the sections of a
// `// -----` file are taken in turn the same way.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "CrashGuard.h"
#include "FunctionSplit.h"
#include "SectionRun.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

namespace {

/// The parts' diagnostics as the whole section would have them: MLIR's of
/// every part, then the findings of every part (ops, values and the rest
/// follow in file order: appendPart).
std::vector<Diagnostic>
diagnosticsOfParts(std::vector<SectionResult> &results) {
  std::vector<Diagnostic> diagnostics;
  size_t count = 0;
  for (const SectionResult &part : results)
    count += part.diagnostics.size();
  diagnostics.reserve(count);
  for (SectionResult &part : results)
    for (Diagnostic &d : part.diagnostics)
      if (d.source != DiagSource::Broadcast)
        diagnostics.push_back(std::move(d));
  // Each part counted its own errors towards kErrorsWithOpNote: past the
  // section's first ones, the whole section would not have the note.
  unsigned errors = 0;
  for (Diagnostic &d : diagnostics)
    if (d.severity == Severity::Error && ++errors > kErrorsWithOpNote)
      llvm::erase_if(d.notes, [](const DiagNote &n) {
        return llvm::StringRef(n.message).starts_with(kOpNotePrefix);
      });
  for (SectionResult &part : results)
    for (Diagnostic &d : part.diagnostics)
      if (d.source == DiagSource::Broadcast)
        diagnostics.push_back(std::move(d));
  return diagnostics;
}

/// The section's units from its parts', none unless every part has them.
SectionUnits unitsOfParts(std::vector<SectionUnits> &partUnits,
                          const std::vector<Section> &parts,
                          const Section &sec) {
  SectionUnits units;
  if (!llvm::all_of(partUnits,
                    [](const SectionUnits &u) { return !u.units.empty(); }))
    return units;
  for (size_t i = 0; i < parts.size(); ++i) {
    size_t offset = parts[i].beginOffset - sec.beginOffset;
    for (Unit &u : partUnits[i].units) {
      u.begin += offset;
      u.end += offset;
      units.units.push_back(std::move(u));
    }
    units.moduleFailed |= partUnits[i].moduleFailed;
  }
  return units;
}

} // namespace

std::optional<SectionResult>
Analyzer::Impl::analyzeInParts(const FileText &file, const std::string &path,
                               const Section &sec, const Config &config,
                               SectionUnits *units) {
  size_t size = sec.endOffset - sec.beginOffset;
  if (lenientLoaded || config.validate.enabled ||
      size < 2 * parallelSectionBytes || size < 2)
    return std::nullopt;
  std::vector<size_t> cuts =
      splitPoints(std::string_view(file.text).substr(sec.beginOffset, size),
                  parallelSectionBytes / 2);
  if (cuts.empty())
    return std::nullopt;
  std::vector<Section> parts;
  Section rest = sec;
  for (size_t cut : cuts) {
    auto [part, after] =
        cutSection(file, rest, sec.beginOffset + cut - rest.beginOffset);
    parts.push_back(part);
    rest = after;
  }
  parts.push_back(rest);
  size_t k = parts.size();
  // The first part's vectors are reserved for every part's items, which
  // the merge then moves in instead of moving all into fresh buffers.
  double capacityFirst =
      1.05 * double(size) / double(parts[0].endOffset - parts[0].beginOffset);

  // Both threads take the next part until none is left (inTurn).
  std::vector<SectionResult> results(k);
  std::vector<SectionUnits> partUnits(k);
  std::vector<char> done(k, 0);
  auto unitsOf = [&](size_t i) { return units ? &partUnits[i] : nullptr; };
  auto capacity = [&](size_t i) { return i == 0 ? capacityFirst : 1.0; };
  bool ok;
  if (verifiedClean && size <= kTwoStepBytes) {
    // In two steps: the verdict (verifiedClean) comes once every part
    // parsed and verified, before any op reports and index (~40 % of a
    // part's time: 50k lines in 8 parts, 190 ms sooner than in one step).
    std::vector<std::unique_ptr<PartRun>> runs(k);
    std::atomic<size_t> silent{0};
    // Each context's parts still in their first step (read by its thread
    // only): finished first if the context must be made fresh.
    std::vector<size_t> waiting[2];
    auto finish = [&](size_t i) {
      if (runs[i])
        finishPart(std::move(runs[i]), file, config, results[i]);
    };
    ok = inTurn(
        k,
        [&](size_t i, std::unique_ptr<MLIRContext> *ctx) {
          std::vector<size_t> &mine = waiting[ctx == &context ? 0 : 1];
          runs[i] = verifyPart(file, path, sec, config, results[i], unitsOf(i),
                               parts[i], *ctx, capacity(i), nullptr, [&] {
                                 for (size_t j : mine)
                                   finish(j);
                                 mine.clear();
                               });
          if (!runs[i])
            return;
          mine.push_back(i);
          if (runs[i]->run->silentSoFar() && ++silent == k)
            verifiedClean();
        },
        done, "analysis in parts (two steps)",
        [&](size_t i, std::unique_ptr<MLIRContext> *) { finish(i); });
    if (!ok) // abandoned with their contexts (abandonParts)
      for (std::unique_ptr<PartRun> &r : runs)
        (void)r.release();
  } else {
    ok = inTurn(
        k,
        [&](size_t i, std::unique_ptr<MLIRContext> *ctx) {
          analyzeSectionUnguarded(file, path, sec, config, results[i],
                                  unitsOf(i), nullptr, &parts[i], ctx, nullptr,
                                  capacity(i));
        },
        done, "analysis in parts");
  }
  if (!ok)
    return std::nullopt;
  for (const SectionResult &part : results)
    if (!part.section.parsed)
      return std::nullopt;
  PhaseTimer tmerge("merge of the parts");

  std::vector<Diagnostic> diagnostics = diagnosticsOfParts(results);
  SectionResult &r = results[0];
  for (size_t i = 1; i < k; ++i)
    appendPartAsRuns(r, results[i]);
  r.diagnostics = std::move(diagnostics);
  r.section.inParts = true;
  if (units)
    *units = unitsOfParts(partUnits, parts, sec);
  return std::move(r);
}

bool Analyzer::Impl::inTurn(size_t k, PartItem item, std::vector<char> &done,
                            const char *phase, PartItem second) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  bool crashedHere = false, crashedBeside = false;
  auto work = [&](std::unique_ptr<MLIRContext> *ctx, bool &crashed) {
    auto contained = [&](PartItem step, size_t i) {
      if (!runContained([&] { step(i, ctx); }))
        return true;
      crashed = true; // this context is not used again (abandonParts)
      stop = true;
      return false;
    };
    std::vector<size_t> taken;
    for (size_t i; !stop && (i = next.fetch_add(1)) < k;) {
      if (!contained(item, i))
        break;
      if (second)
        taken.push_back(i);
      else
        done[i] = 1;
    }
    for (size_t i : taken) {
      if (stop || !contained(second, i))
        break;
      done[i] = 1;
    }
  };
  {
    PhaseTimer t(phase);
    TaskThread::Running other = helperThread.beside([&] {
      if (!partContext) // made here, beside the first items
        partContext = makeContext();
      work(&partContext, crashedBeside);
    });
    work(&context, crashedHere);
    other.join();
  }
  if (!crashedHere && !crashedBeside)
    return true;
  abandonParts(crashedHere, crashedBeside);
  return false;
}

void Analyzer::Impl::analyzeSmallSections(
    const FileText &file, const std::string &path, const Config &config,
    llvm::ArrayRef<Section> secs, llvm::ArrayRef<SectionResult *> results,
    llvm::ArrayRef<SectionUnits *> units) {
  size_t k = secs.size(), bytes = 0;
  for (const Section &sec : secs)
    bytes += sec.endOffset - sec.beginOffset;
  std::vector<char> done(k, 0);
  // Whole sections on either thread: verified on it (below
  // parallelSectionBytes, no verifier beside) and retired like any whole
  // section's parse.
  if (k >= 2 && bytes >= parallelSectionBytes) {
    retireSections = false;
    bool ok = inTurn(
        k,
        [&](size_t i, std::unique_ptr<MLIRContext> *ctx) {
          analyzeSectionUnguarded(file, path, secs[i], config, *results[i],
                                  units[i], nullptr, nullptr, ctx);
        },
        done, "small sections on two threads");
    retireSections = true;
    // Nothing lives in the helper's context now: it goes, with what its
    // heap holds, beside the rest of this analysis (the second heap and
    // context were ~1 MiB of a 10k-line split file's peak, at the
    // publish). An edit of such a file analyses one section, here.
    if (ok && !keptIn(true))
      helperThread.run([&] {
        partContext.reset();
        releaseFreeMemory();
      });
  }
  // The rest (all of them, unless two threads ran them; after a crash the
  // sections it left): analyzeSection reports a crash on its section.
  for (size_t i = 0; i < k; ++i) {
    if (done[i])
      continue;
    if (units[i])
      *units[i] = SectionUnits();
    *results[i] = analyzeSection(file, path, secs[i], config, units[i]);
  }
}

} // namespace tosa_lsp
