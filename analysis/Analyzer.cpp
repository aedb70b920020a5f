//===- Analyzer.cpp - the document pipeline: a file's sections ------------===//
//
// The Analyzer's public API and the walk over a file's `// -----` sections.
// Each section is, in this order of preference: reused (its text did not
// change), merged (an edit inside one function: Incremental.cpp), the tail
// of a cut function (FunctionParts.cpp), or analysed afresh
// (SectionAnalysis.cpp; small ones after the walk, on two threads:
// SectionParts.cpp). A section that stops parsing keeps serving its last
// good analysis, marked stale. AnalyzerImpl.h maps the other steps.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "TextDiff.h"
#include "Timing.h"

#include "llvm/ADT/ScopeExit.h"

#include <cassert>

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

AnalysisCache::AnalysisCache() : impl(std::make_unique<Impl>()) {}
AnalysisCache::~AnalysisCache() = default;
AnalysisCache::AnalysisCache(AnalysisCache &&) = default;
AnalysisCache &AnalysisCache::operator=(AnalysisCache &&) = default;

Analyzer::Analyzer() : impl(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;

std::shared_ptr<const FileAnalysis>
Analyzer::analyzeShared(const std::string &text, const std::string &path,
                        const Config &config, AnalysisCache &cache,
                        std::function<void()> verifiedClean) {
  return analyzeShared(std::make_shared<const std::string>(text), path, config,
                       cache, std::move(verifiedClean));
}

std::shared_ptr<const FileAnalysis>
Analyzer::analyzeShared(std::shared_ptr<const std::string> text,
                        const std::string &path, const Config &config,
                        AnalysisCache &cache,
                        std::function<void()> verifiedClean) {
  std::shared_ptr<const FileAnalysis> result;
  PhaseTimer total("analysis (total)");
  const std::string &whole = *text; // `text` is moved below
  impl->analysisThread.run([&] {
    impl->verifiedClean = std::move(verifiedClean);
    llvm::scope_exit once([&] { impl->verifiedClean = nullptr; });
    impl->analyze(whole, path, config, &cache, &result, std::move(text));
  });
  return result;
}

void Analyzer::warmUp() {
  static constexpr const char *kText =
      "func.func @w(%a: tensor<2x?xf32>, %b: tensor<1x3xf32>) -> "
      "tensor<2x3xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<2x?xf32>, tensor<1x3xf32>) -> "
      "tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n"
      "}\n";
  (void)analyze(kText, "<warm-up>", Config());
}

void Analyzer::setDeferIRDestruction(bool on) { impl->deferIRDestruction = on; }

void Analyzer::setCollectIndex(bool on) { impl->collectIndexes = on; }

void Analyzer::setParallelSectionBytes(size_t bytes) {
  impl->parallelSectionBytes = bytes;
}

FileAnalysis Analyzer::analyze(const std::string &text, const std::string &path,
                               const Config &config, AnalysisCache *cache) {
  if (cache) // The cache shares what it remembers: hand out a copy.
    return *analyzeShared(text, path, config, *cache);
  // The parser and verifier recurse per nesting level: give them a large
  // stack of their own (the nesting limit keeps them well inside it).
  FileAnalysis result;
  PhaseTimer total("analysis (total)");
  impl->analysisThread.run(
      [&] { result = impl->analyze(text, path, config, cache); });
  return result;
}

void Analyzer::Impl::useConfig(const std::string &fingerprint,
                               AnalysisCache::Impl *memo,
                               const std::string &path) {
  // Another file too: with lenient dialects loaded nothing is analysed in
  // parts or kept for inference, and a 50k-line file opened after a small
  // IREE test (util., check.) took 2-3x as long (411-648 against 189 ms),
  // its first hovers 4-6 ms instead of 1.
  if (lenientLoaded &&
      (lenientFingerprint != fingerprint || lastPath != path)) {
    dropKept(false);
    dropKept(true);
    context = makeContext(); // Nothing built in the old one outlives a call.
    partContext.reset();     // It may have lenient dialects too.
    lenientLoaded = false;
  }
  lenientFingerprint = fingerprint;
  lastPath = path;
  if (memo && (memo->configFingerprint != fingerprint || memo->path != path)) {
    memo->entries.clear(); // Different settings: nothing can be reused.
    memo->previous.reset();
  }
}

namespace {

using Entry = AnalysisCache::Impl::Entry;

/// What the cache knows of a section of the new version.
struct Earlier {
  /// An entry with the same text (reused; maybe the last good version
  /// again, a parse error typed and taken back), and the analysis its
  /// slice is in.
  const Entry *same = nullptr;
  const FileAnalysis *sameIn = nullptr;
  /// The previous version's entry at the same index.
  const Entry *atIndex = nullptr;
  /// What an edit is diffed against and merged into: the previous
  /// version, or the last one that parsed while this one does not.
  const Entry *base = nullptr;
  const FileAnalysis *baseIn = nullptr;
};

/// One call of Analyzer::Impl::analyze with a cache or without: the new
/// version's sections, and what is remembered of them for the next.
class FileRun {
public:
  FileRun(Analyzer::Impl &impl, const FileText &file, const std::string &path,
          const Config &config, AnalysisCache::Impl *memo)
      : impl(impl), file(file), path(path), config(config), memo(memo) {}

  /// Analyses `sec` now, or defers it to analyzeDeferred.
  void add(const Section &sec);
  /// Small sections analysed afresh (a split file's parts, opened or
  /// replaced whole): after the walk, on two threads (analyzeSmallSections).
  void analyzeDeferred();

  std::vector<Entry> next;
  std::vector<SectionResult> results;

private:
  Earlier earlierOf(const Section &sec, std::string_view secText) const;
  /// The reused section's items, moved to where it is now.
  SectionResult reuse(const Section &sec, const Entry &same,
                      const FileAnalysis &sameIn,
                      std::shared_ptr<SectionUnits> &units) const;
  /// A section that is not reused or merged; false when it is deferred.
  bool analyzeFresh(const Section &sec, std::string_view secText,
                    const Earlier &e, SectionResult &r,
                    std::shared_ptr<SectionUnits> &units, bool &failedCut);
  /// What follows a fresh analysis of a section: whether a cut failed, and
  /// the last good analysis served (stale) while it does not parse.
  bool finishFresh(const Section &sec, SectionResult &r, const Entry *atIndex,
                   std::shared_ptr<SectionUnits> &units, bool cut);
  /// A section that does not parse keeps the last version that did.
  void rememberGood(Entry &e, const Entry *atIndex) const;

  Analyzer::Impl &impl;
  const FileText &file;
  const std::string &path;
  const Config &config;
  AnalysisCache::Impl *memo;
  struct Deferred {
    size_t index;
    const Entry *atIndex;
    std::shared_ptr<SectionUnits> units;
    bool cut;
  };
  std::vector<Deferred> deferred;
};

bool FileRun::finishFresh(const Section &sec, SectionResult &r,
                          const Entry *atIndex,
                          std::shared_ptr<SectionUnits> &units, bool cut) {
  // Kept while the section is not cut (mayCut then asks it).
  bool failedCut = impl.cutFailed || (!cut && atIndex && atIndex->cutFailed);
  if (units && units->units.empty() && units->cutDefs.empty())
    units.reset();
  if (!r.section.parsed && atIndex &&
      (atIndex->section.parsed || atIndex->section.stale)) {
    // Keep serving the last good analysis of this section, marked stale;
    // the new parse error stays.
    SectionResult old =
        sliceOf(*memo->previous, atIndex->slice, atIndex->section);
    remapStale(old, atIndex->text, atIndex->section,
               std::string_view(file.text).substr(
                   sec.beginOffset, sec.endOffset - sec.beginOffset),
               sec, file.lines);
    r.ops = std::move(old.ops);
    r.values = std::move(old.values);
    r.blocks = std::move(old.blocks);
    r.symbols = std::move(old.symbols);
    r.opSpans = std::move(old.opSpans);
    r.section.stale = true;
  }
  return failedCut;
}

void FileRun::rememberGood(Entry &e, const Entry *atIndex) const {
  if (e.section.parsed || !atIndex)
    return;
  if (atIndex->good)
    e.good = atIndex->good;
  else if (atIndex->section.parsed && !atIndex->section.stale && atIndex->units)
    e.good = std::make_shared<AnalysisCache::Impl::LastGood>(
        AnalysisCache::Impl::LastGood{*atIndex, memo->text, memo->previous});
}

Earlier FileRun::earlierOf(const Section &sec, std::string_view secText) const {
  Earlier e;
  e.sameIn = memo ? memo->previous.get() : nullptr;
  if (memo && memo->previous) {
    for (const auto &entry : memo->entries)
      if (entry.section.firstColumn == sec.firstColumn &&
          entry.text == secText) {
        e.same = &entry;
        break;
      }
    if (sec.index < memo->entries.size())
      e.atIndex = &memo->entries[sec.index];
    // A parse error typed and taken back: the last good version again.
    if (!e.same && e.atIndex && e.atIndex->good &&
        e.atIndex->good->entry.text == secText &&
        e.atIndex->good->entry.section.firstColumn == sec.firstColumn) {
      e.same = &e.atIndex->good->entry;
      e.sameIn = e.atIndex->good->analysis.get();
    }
  }
  e.base = e.atIndex;
  e.baseIn = memo ? memo->previous.get() : nullptr;
  if (e.atIndex && e.atIndex->good) {
    e.base = &e.atIndex->good->entry;
    e.baseIn = e.atIndex->good->analysis.get();
  }
  return e;
}

SectionResult FileRun::reuse(const Section &sec, const Entry &same,
                             const FileAnalysis &sameIn,
                             std::shared_ptr<SectionUnits> &units) const {
  // Only what is reused is copied, from the previous analysis; its
  // ops and values are shared where they have not moved.
  int moved = static_cast<int>(sec.firstLine) -
              static_cast<int>(same.section.firstLine);
  SectionResult r = sliceOf(sameIn, same.slice, same.section,
                            moved == 0 && same.section.index == sec.index);
  shiftSection(r, moved, sec.index);
  r.section.index = sec.index;
  r.section.beginOffset = sec.beginOffset;
  r.section.endOffset = sec.endOffset;
  r.section.firstLine = sec.firstLine;
  r.section.lastLine = sec.lastLine;
  r.section.reused = true;
  r.section.incremental = r.section.tail = false; // not this time
  if (same.units) {
    units = std::make_shared<SectionUnits>(*same.units);
    for (Unit &u : units->units) {
      u.firstLine += moved;
      u.lastLine += moved;
    }
  }
  return r;
}

bool FileRun::analyzeFresh(const Section &sec, std::string_view secText,
                           const Earlier &e, SectionResult &r,
                           std::shared_ptr<SectionUnits> &units,
                           bool &failedCut) {
  const Entry *atIndex = e.atIndex;
  if (memo)
    units = std::make_shared<SectionUnits>();
  bool cut = !atIndex || atIndex->section.inParts ||
             impl.mayCut(*atIndex, *memo->previous);
  impl.cutFailed = false;
  bool tailKept = atIndex && atIndex->units && !atIndex->units->cutDefs.empty();
  if (!tailKept &&
      sec.endOffset - sec.beginOffset < impl.parallelSectionBytes) {
    // Never cut (too small for parts): analysed whole, after the walk.
    deferred.push_back({results.size(), atIndex, units, cut});
    next.push_back({secText, sec, Slice(), nullptr, false});
    results.emplace_back();
    return false;
  }
  bool errorsInTail = false;
  std::optional<SectionResult> tail =
      tailKept
          ? impl.analyzeFunctionTail(file, path, sec, config, *atIndex,
                                     *memo->previous, units.get(), errorsInTail)
          : std::nullopt;
  // Errors after the cut fail a cut in the middle too.
  r = tail ? std::move(*tail)
           : impl.analyzeSection(file, path, sec, config, units.get(),
                                 cut && !errorsInTail);
  failedCut = finishFresh(sec, r, atIndex, units, cut);
  return true;
}

void FileRun::add(const Section &sec) {
  std::string_view secText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  Earlier e = earlierOf(sec, secText);
  SectionResult r;
  std::shared_ptr<SectionUnits> units;
  bool failedCut = false; // the entry's cutFailed
  if (e.same) {
    failedCut = e.same->cutFailed;
    r = reuse(sec, *e.same, *e.sameIn, units);
  } else if (std::optional<SectionResult> inc =
                 e.base && e.base->units
                     ? impl.analyzeIncrementally(file, path, sec, config,
                                                 *e.base, *e.baseIn, units)
                     : std::nullopt) {
    r = std::move(*inc);
    // A parse error in the edited function: served as a fresh analysis
    // that failed to parse is (the last good one, marked stale).
    if (!r.section.parsed) {
      (void)finishFresh(sec, r, e.atIndex, units, false);
      failedCut = e.atIndex && e.atIndex->cutFailed;
    }
  } else if (!analyzeFresh(sec, secText, e, r, units, failedCut)) {
    return; // deferred
  }
  next.push_back({secText, r.section, Slice(), units, failedCut});
  rememberGood(next.back(), e.atIndex);
  results.push_back(std::move(r));
}

void FileRun::analyzeDeferred() {
  if (deferred.empty())
    return;
  std::vector<Section> secs;
  std::vector<SectionResult *> out;
  std::vector<SectionUnits *> outUnits;
  for (const Deferred &d : deferred) {
    secs.push_back(file.sections[d.index]);
    out.push_back(&results[d.index]);
    outUnits.push_back(d.units.get());
  }
  impl.cutFailed = false;
  impl.analyzeSmallSections(file, path, config, secs, out, outUnits);
  for (Deferred &d : deferred) {
    SectionResult &r = results[d.index];
    Entry &e = next[d.index];
    e.cutFailed =
        finishFresh(file.sections[d.index], r, d.atIndex, d.units, d.cut);
    e.section = r.section;
    e.units = std::move(d.units);
    rememberGood(e, d.atIndex);
  }
}

} // namespace

FileAnalysis
Analyzer::Impl::analyze(const std::string &text, const std::string &path,
                        const Config &config, AnalysisCache *cache,
                        std::shared_ptr<const FileAnalysis> *shared,
                        std::shared_ptr<const std::string> owner) {
  destroyRetired(); // if no one did after the last analysis
  dropKept(false);  // nor inferred what it kept
  dropKept(true);
  FileText file(text);
  if (file.sections.size() != 1)
    verifiedClean = nullptr; // the other sections' verdicts come later
  AnalysisCache::Impl *memo = cache ? cache->impl.get() : nullptr;
  std::string fingerprint = config.fingerprint();
  useConfig(fingerprint, memo, path);

  FileRun run(*this, file, path, config, memo);
  for (const Section &sec : file.sections)
    run.add(sec);
  run.analyzeDeferred();
  if (memo) { // Spare vectors only while edits are merged.
    bool merged = false;
    for (const SectionResult &r : run.results)
      merged |= r.section.incremental;
    recycler->want(merged);
  }
  PhaseTimer t("assemble");
  std::vector<Slice> slices;
  FileAnalysis fa =
      assemble(file, path, std::move(run.results), memo ? &slices : nullptr);
  finishInference(fa);
  if (!memo)
    return fa;
  for (size_t i = 0; i < run.next.size(); ++i)
    run.next[i].slice = slices[i];
  std::shared_ptr<const FileAnalysis> result(
      new FileAnalysis(std::move(fa)),
      [recycler = recycler](const FileAnalysis *p) {
        recycler->retire(*const_cast<FileAnalysis *>(p));
        delete p;
      });
  // The entries are views into `text`, which `owner` holds (analyzeShared,
  // the only caller with a cache, passes both).
  assert(owner && owner->data() == text.data());
  memo->entries = std::move(run.next);
  memo->text = std::move(owner);
  memo->configFingerprint = fingerprint;
  memo->path = path;
  memo->previous = result;
  if (shared)
    *shared = result;
  return FileAnalysis();
}

} // namespace tosa_lsp
