//===- AnalyzerImpl.h - the analyzer's pipeline, private -------*- C++ -*-===//
//
// Private to analysis/. The Analyzer's state and the steps of its pipeline,
// one file each:
//   InputGuards.cpp      input refused before any parse (nesting);
//   ContextPool.cpp      the MLIRContexts: made, kept warm, replaced after
//                        a crash, released when idle;
//   Analyzer.cpp         the public API and the walk over a file's
//                        sections (reuse, incremental, fresh);
//   Incremental.cpp      an edit inside one unit (function) re-analysed
//                        alone and merged into the previous analysis;
//   SectionParts.cpp     a big section cut between top-level ops, parts on
//                        two threads; small sections on two threads;
//   FunctionParts.cpp    one big function cut in two parts (FunctionSplit.h
//                        finds the cut), and its tail after an edit;
//   SectionAnalysis.cpp  one section through parse / verify / report
//                        (SectionRun.h), crash contained;
//   TextDiff.h, Assemble.h  (plain data) edits located, items moved, the
//                        file's analysis put together.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_ANALYZERIMPL_H
#define TOSA_LSP_ANALYSIS_ANALYZERIMPL_H

#include "Analysis.h"
#include "Assemble.h"
#include "Config.h"
#include "IR.h"
#include "MLIRShared.h"
#include "ParsedInference.h"
#include "TaskThread.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {
namespace detail {

/// MLIR's parser and verifier recurse per nesting level; kMaxNesting levels
/// need far more than the default 8 MiB.
constexpr unsigned kAnalysisStackBytes = 256u << 20;
/// Sections at least this big verify on a second thread (below it the
/// thread costs more than it saves).
constexpr size_t kDefaultParallelSectionBytes = 128u << 10;
/// Up to this much text a section's (or a cut function's) parts go in two
/// steps when someone waits for MLIR's verdict (Impl::verifiedClean): every
/// part's IR lives until its second step, as the kept IR does (up to
/// kKeepIRBytes); above it each part's goes after its one step.
constexpr size_t kTwoStepBytes = 8u << 20;
/// MLIR attaches "see current operation: ..." to an op's error by printing
/// the op numbered within its whole function (an AsmState of the
/// function): O(function) per error, quadratic in a pre-MLIR-22 model where
/// every op fails. After this many errors in a section the note is left
/// out.
constexpr unsigned kErrorsWithOpNote = 64;
constexpr llvm::StringLiteral kOpNotePrefix = "see current operation: ";

/// A top-level op of a section (a function, usually) as the last full
/// analysis saw it: what an edit inside it can re-analyse on its own.
struct Unit {
  size_t begin = 0, end = 0;            // byte offsets in the section text
  unsigned firstLine = 0, lastLine = 0; // file lines of that version
  std::string opName, symbol, signature;
  bool failed = false; // a parser or verifier error inside
};

/// The units of a parsed section; absent when the section cannot be
/// re-analysed a unit at a time (units sharing a line, a module with
/// attributes, dialect resources).
struct SectionUnits {
  std::vector<Unit> units;
  std::string aliases; // the section's alias definitions, printed
  bool moduleFailed = false;
  /// A function analysed in parts: the offsets in the section of the
  /// result names of its body's ops (one block), sorted. An edit in its
  /// second half keeps what lies before the last of them before the edit
  /// (analyzeFunctionTail).
  std::vector<size_t> cutDefs;
  /// Every op of the body with results had a definition in cutDefs: the
  /// number MLIR's printer gives an op's results is its entry's index
  /// (PartNumbering).
  bool cutDefsNumbered = false;
};

/// Input and output of re-analysing one unit on its own.
struct UnitJob {
  std::string prefix; // aliases and stubs of the functions the unit uses
  unsigned prefixLines = 0;
  Section map;               // the unit's place in the file
  bool moduleChecks = false; // run the module's symbol checks after it
  // Results.
  bool ok = false, failed = false;
  bool parseFailed = false; // the unit did not parse (ok stays false)
  std::string opName, symbol, signature;
  std::map<std::string, std::vector<Range>> stubUses;
};

/// What a part of a cut function is parsed with around its own text
/// (FunctionSplit.h): positions in either are not in the file.
struct PartText {
  std::string prefix;
  unsigned prefixLines = 0;
  std::string suffix;
  /// Found in the part's IR: it is one function of one block; and the
  /// offsets in the section of the result names of the block's ops.
  bool oneBlock = false;
  std::vector<size_t> topLevelDefs;
  /// The block's ops with results: MLIR's printer numbers each op's results
  /// as one group (%5:2, %5#1). Equal to topLevelDefs' size when every one
  /// has a definition (then an entry's index is its number).
  unsigned topLevelIds = 0;
  /// The function's entry block arguments (the second part: the
  /// function's own, then the values declared for it).
  unsigned entryArgs = 0;
  /// The first part's items (its diagnostics) are an earlier version's
  /// (analyzeFunctionTail), not parsed now.
  bool diagnosticsKept = false;
  /// The second part: per value declared for it, whether a constant
  /// defines it (definedByConstant).
  std::vector<char> declaredConstant;
  /// Analysed while no other part runs (a function's tail): it verifies
  /// on the helper thread beside its op reports, as a whole section does.
  bool alone = false;
};

} // namespace detail

using detail::FileText;
using detail::kAnalysisStackBytes;
using detail::kDefaultParallelSectionBytes;
using detail::PartText;
using detail::Recycler;
using detail::SectionUnits;
using detail::Slice;
using detail::Unit;
using detail::UnitJob;

struct AnalysisCache::Impl {
  struct LastGood;
  struct Entry {
    std::string_view text; // in `text` below
    Section section;       // as it was analysed (parsed / stale flags included)
    Slice slice;           // its items in `previous`
    std::shared_ptr<const SectionUnits> units;
    /// Cut in two parts and analysed whole for what the parts had (see
    /// mayCut); kept while the section is analysed whole with errors.
    bool cutFailed = false;
    /// While the section does not parse: the last version of it that did.
    /// Edits are diffed against it and merged into its analysis, so typing
    /// through a parse error in one function re-analyses that function,
    /// not the section (most keystrokes leave a half-typed op behind).
    std::shared_ptr<const LastGood> good;
  };
  /// An entry of an earlier version, with what its views point into.
  struct LastGood {
    Entry entry; // parsed, not stale; its `good` is empty
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const FileAnalysis> analysis;
  };
  std::string configFingerprint;
  std::string path;
  std::vector<Entry> entries; // by section index of the previous version
  /// The previous version's text, shared with its owner (the server's
  /// snapshot): the entries are views into it, not a copy of the file.
  std::shared_ptr<const std::string> text;
  /// The previous analysis, shared with whoever else holds it (the
  /// server's snapshot): remembering it costs nothing.
  std::shared_ptr<const FileAnalysis> previous;
};

struct Analyzer::Impl {
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  /// Where analyses run (big stacks; see TaskThread.h), and the second
  /// thread of a big section (verifier, parts, merge).
  TaskThread analysisThread{kAnalysisStackBytes};
  TaskThread helperThread{kAnalysisStackBytes};
  /// The helper thread's context when a section is analysed in parts
  /// (analyzeInParts): one context per thread, no locking.
  std::unique_ptr<mlir::MLIRContext> partContext;
  /// A crash on the verifier thread of analyzeSectionUnguarded, for
  /// analyzeSection to handle like one on its own thread.
  std::optional<std::string> deferredCrash;
  size_t parallelSectionBytes = kDefaultParallelSectionBytes;
  /// The context has lenient dialects (Lenient.h); a configuration that
  /// does not allow them all, or another file, gets a fresh context.
  /// Set by either thread (analyzeSmallSections).
  std::atomic<bool> lenientLoaded{false};
  std::string lenientFingerprint;
  /// The file of the last analysis.
  std::string lastPath;
  /// Bytes parsed in the contexts since they were last made fresh (both
  /// threads add to it; read between analyses).
  std::atomic<size_t> parsedSinceFresh{0};
  std::shared_ptr<Recycler> recycler = std::make_shared<Recycler>();
  /// Whole sections' parses, kept after their results are copied out to
  /// be destroyed later (destroyRetiredIR). Declared after the contexts:
  /// destroyed before them.
  bool deferIRDestruction = false;
  /// False while small sections are analysed on two threads: each parse
  /// is destroyed at once on its thread, so that the helper's context and
  /// heap can go before the publish (see analyzeSmallSections).
  bool retireSections = true;
  bool collectIndexes = true; // setCollectIndex
  /// Analyzer::analyzeShared's `verifiedClean`, for the analysis of a
  /// one-section text (null otherwise): analyzeInParts calls it once every
  /// part parsed and verified without a word, before the op reports.
  std::function<void()> verifiedClean;
  /// setInferShapes: each function parsed is inferred on this IR
  /// (SectionInference.cpp), collected here by either thread, and what
  /// the finished analysis keeps of it handed out (takeInferred).
  bool inferShapes = false;
  std::mutex inferredMu;
  std::vector<FunctionInference> inferred; // under inferredMu
  std::shared_ptr<const ShapeInference> lastInferred;
  std::mutex retiredMu;
  std::vector<std::unique_ptr<detail::ParsedSection>> retired;
  /// setInferShapes(true, true): sections and parts (not an edit's unit)
  /// are inferred by inferKept, after the analysis, on their IR kept until
  /// then in the context of the thread that parsed it (`helper`: the
  /// helper's, partContext). Declared after the contexts.
  bool inferAfterAnalysis = false;
  struct KeptIR {
    std::unique_ptr<detail::ParsedSection> ps;
    bool helper = false;
    detail::FunctionsToInfer what;
    size_t bytes = 0;
    /// Its functions, listed when it was kept (keptFunctions).
    std::vector<detail::ListedFunction> functions;
    /// The file's line table, which `ps` reads (its `lines`): kept with it,
    /// not left to the analysis' result (a caller that dropped it made the
    /// inference read freed memory).
    std::shared_ptr<const LineIndex> lines;
  };
  std::mutex keptMu;
  std::vector<KeptIR> kept; // under keptMu
  size_t keptBytes = 0;     // under keptMu
  /// What the last analysis says decides what is kept of an inference
  /// (finishInference, inferKept).
  struct InferenceFilter {
    /// Per section: parsed and not stale; its errors' positions, or
    /// nullopt for an error without one (nothing is inferred then).
    std::vector<char> usable;
    std::vector<std::optional<std::vector<Position>>> errors;
  };
  InferenceFilter inferenceFilter;

  // ContextPool.cpp: the contexts and what was parsed in them.
  /// Whole sections' parses kept until now (destroyRetiredIR), destroyed.
  void destroyRetired();
  /// After a crash, what was parsed is abandoned with its context (see
  /// analyzeSection), never destroyed.
  void abandonRetired();
  /// After a crash in the analysis thread's context: it is abandoned with
  /// what was parsed in it (it may be half-updated: locks, uniquer
  /// tables), and replaced.
  void abandonContext();
  static std::unique_ptr<mlir::MLIRContext> makeContext();
  /// Whether every dialect loaded in `ctx` is one a fresh context would
  /// load for `sectionText`: one the text names (`ns.op`, `!ns.type`,
  /// `#ns.attr`) or one that loading those loads.
  static bool onlyDialectsOf(mlir::MLIRContext &ctx,
                             std::string_view sectionText);
  /// All upstream dialects and their interface extensions: files mix tosa
  /// with whatever else they use, and a promised-but-missing interface
  /// would abort at verification time.
  static mlir::DialectRegistry makeRegistry();

  // Analyzer.cpp: the walk over a file's sections.
  FileAnalysis analyze(const std::string &text, const std::string &path,
                       const Config &config, AnalysisCache *cache,
                       std::shared_ptr<const FileAnalysis> *shared = nullptr,
                       // Holds `text`; required with a cache.
                       std::shared_ptr<const std::string> owner = nullptr);
  /// A configuration that does not allow the lenient dialects loaded, or
  /// another file, gets fresh contexts; another configuration or file, a
  /// forgotten cache.
  void useConfig(const std::string &fingerprint, AnalysisCache::Impl *memo,
                 const std::string &path);

  // SectionAnalysis.cpp: one section through parse, verify and report.
  /// analyzeSectionUnguarded, with a crash inside MLIR turned into an error
  /// on the section (and a fresh context for what follows).
  SectionResult analyzeSection(const FileText &file, const std::string &path,
                               Section sec, const Config &config,
                               SectionUnits *units = nullptr,
                               bool cutFunction = true);
  /// `part` (with its context `partCtx`, `context` or `partContext`):
  /// analyse only this part of `sec` (analyzeInParts); results are `sec`'s.
  /// The context is made fresh first when it has dialects loaded that
  /// `sec` alone would not load (freshDialects).
  void analyzeSectionUnguarded(
      const FileText &file, const std::string &path, Section sec,
      const Config &config, SectionResult &result, SectionUnits *units,
      UnitJob *job, const Section *part = nullptr,
      std::unique_ptr<mlir::MLIRContext> *partCtx = nullptr,
      PartText *around = nullptr, double capacityFactor = 1.0);
  /// The context in `slot` for `sec` (made, or made fresh when it has
  /// dialects loaded that `sec` alone would not load: freshDialects;
  /// `beforeFresh` then runs first, while the old one still lives).
  mlir::MLIRContext &
  contextFor(std::unique_ptr<mlir::MLIRContext> &slot, const FileText &file,
             const Section &sec,
             llvm::function_ref<void()> beforeFresh = nullptr);
  /// A part of a section (analyzeInParts) or of a cut function
  /// (analyzeFunctionInParts, `around` given) in two steps, as
  /// analyzeSectionUnguarded analyses it in one: first parsed and verified
  /// (null when it stops there: refused or not parsed), then finished on
  /// the same thread (op reports, index, findings, a section part's IR
  /// kept or destroyed).
  struct PartRun;
  std::unique_ptr<PartRun>
  verifyPart(const FileText &file, const std::string &path, const Section &sec,
             const Config &config, SectionResult &result, SectionUnits *units,
             const Section &part, std::unique_ptr<mlir::MLIRContext> &slot,
             double capacityFactor, PartText *around = nullptr,
             llvm::function_ref<void()> beforeFresh = nullptr);
  void finishPart(std::unique_ptr<PartRun> p, const FileText &file,
                  const Config &config, SectionResult &result);

  // SectionInference.cpp: tosa-infer-shapes on the analysis' own IR.
  /// After `sec` (a section, part or unit) was analysed into `result`: its
  /// functions inferred on `ps` (which the pass changes), in `slot`'s
  /// context. After a crash both are abandoned and the slot made anew.
  /// With inferAfterAnalysis, a section or part (not a `unit`) is kept
  /// instead (KeptIR), up to kKeepIRBytes of text.
  void inferParsed(std::unique_ptr<detail::ParsedSection> &ps,
                   std::unique_ptr<mlir::MLIRContext> &slot, const Section &sec,
                   const SectionResult &result, const Config &config, bool unit,
                   std::shared_ptr<const LineIndex> lines);
  /// Keeps of what was inferred during this analysis what the inferrer
  /// would give on `fa` (lastInferred), and remembers how (inferenceFilter).
  void finishInference(const FileAnalysis &fa);
  static InferenceFilter makeFilter(const FileAnalysis &fa);
  /// What of `all` the inferrer would give as it is (by `filter`).
  static std::shared_ptr<const ShapeInference>
  filterInferred(std::vector<FunctionInference> all,
                 const InferenceFilter &filter);
  /// Analyzer::inferKept on the analysis thread.
  void inferKept(const KeptHooks &hooks);
  /// The IR kept in the main context (or the helper's) is destroyed now,
  /// on the thread that uses that context.
  void dropKept(bool helper);
  /// ... or abandoned with its context after a crash.
  void abandonKept(bool helper);
  bool keptIn(bool helper);

  // SectionParts.cpp: sections on two threads.
  /// A big section whose top-level ops share no symbols across its cuts,
  /// parsed and verified as up to 8 parts that two threads take in turn
  /// (the parse is most of an open and MLIR's parser is single-threaded).
  /// std::nullopt when the section cannot be cut or a part fails to
  /// parse: then it is analysed whole, which reports what went wrong as
  /// usual.
  std::optional<SectionResult>
  analyzeInParts(const FileText &file, const std::string &path,
                 const Section &sec, const Config &config, SectionUnits *units);
  /// Items 0..k-1 by this thread (in `context`) and the helper (in
  /// `partContext`, made there if missing), each taking the next in turn:
  /// when one core runs slower (this host's does at times, 1.5-1.7x) the
  /// faster thread takes more instead of waiting for the slower half.
  /// `done[i]` says which finished. Stops at a crash inside MLIR and
  /// returns false, both contexts abandoned (abandonParts). With `second`,
  /// each thread then runs `second` on the items it took, in its context
  /// (two steps: every item's first before any item's second on that
  /// thread); `done` says which finished both.
  using PartItem =
      llvm::function_ref<void(size_t, std::unique_ptr<mlir::MLIRContext> *)>;
  bool inTurn(size_t k, PartItem item, std::vector<char> &done,
              const char *phase, PartItem second = nullptr);
  /// Sections below parallelSectionBytes (a split file's `// -----`
  /// parts), each analysed whole: by two threads that take the next one in
  /// turn, each in its own context, when there are enough bytes for both;
  /// else here, one after another. `results` and `units` (null: none)
  /// follow `secs`.
  void analyzeSmallSections(const FileText &file, const std::string &path,
                            const Config &config, llvm::ArrayRef<Section> secs,
                            llvm::ArrayRef<SectionResult *> results,
                            llvm::ArrayRef<SectionUnits *> units);

  // FunctionParts.cpp: one function in two parts.
  /// A big section that is one function (FunctionSplit.h), parsed and
  /// verified as two parts of its body on two threads. std::nullopt when it
  /// cannot be cut, or when anything could differ from the whole section's
  /// analysis (a part does not parse, a guessed type is wrong, the second
  /// part has MLIR diagnostics: their op notes number values within the
  /// part): then it is analysed whole.
  std::optional<SectionResult> analyzeFunctionInParts(const FileText &file,
                                                      const std::string &path,
                                                      const Section &sec,
                                                      const Config &config,
                                                      SectionUnits *units);
  /// After a crash in either part (analyzeInParts,
  /// analyzeFunctionInParts): what they built is abandoned with the
  /// contexts, which are replaced.
  void abandonParts(bool crashedHere, bool crashedBeside);
  /// The last analyzeFunctionInParts parsed the parts and found they
  /// could differ from the whole.
  bool cutFailed = false;
  /// Whether a section that was not cut last time (`old`) may be cut now.
  /// Not where MLIR reported on it where the parts cannot take it: before
  /// the function's body (on the function or module), after the place of
  /// the cut (the second part's notes would number values within it), or
  /// anywhere after a cut failed. An edit in progress most likely leaves
  /// those where they are: a cut would fail, and the section be analysed
  /// whole again, twice the work per keystroke. Errors inside the first
  /// part do not stop it (they used to, until the file had none).
  bool mayCut(const AnalysisCache::Impl::Entry &old,
              const FileAnalysis &previous);
  /// A function analysed in parts last time, edited in its second half:
  /// what lies before the last top-level op before the edit is kept from
  /// `previous` (the text there is unchanged), and the rest is analysed as
  /// the second part after it, on this thread. std::nullopt where that
  /// cannot be done or could differ (the caller analyses the section).
  std::optional<SectionResult> analyzeFunctionTail(
      const FileText &file, const std::string &path, const Section &sec,
      const Config &config, const AnalysisCache::Impl::Entry &old,
      const FileAnalysis &previous, SectionUnits *units, bool &errorsInTail);
  /// `sec` as two parts, the second from `cut` (an offset in it).
  static std::pair<Section, Section>
  splitSection(const FileText &file, const Section &sec, size_t cut) {
    Section first = sec, second = sec;
    first.endOffset = second.beginOffset = sec.beginOffset + cut;
    Position at = file.lines.position(second.beginOffset);
    second.firstLine = at.line;
    second.firstColumn = at.column;
    first.lastLine = at.line;
    return {first, second};
  }
  /// The same, with the second part's context ready.
  std::pair<Section, Section> cutSection(const FileText &file,
                                         const Section &sec, size_t cut) {
    if (!partContext)
      partContext = makeContext();
    return splitSection(file, sec, cut);
  }

  // Incremental.cpp: an edit inside one unit.
  /// An edit inside one unit of a section that parsed last time: that unit
  /// alone is parsed and verified (with stubs of what it calls), the rest
  /// is reused. std::nullopt when the result could differ from a full
  /// analysis (then the caller does one).
  std::optional<SectionResult> analyzeIncrementally(
      const FileText &file, const std::string &path, const Section &sec,
      const Config &config, const AnalysisCache::Impl::Entry &old,
      const FileAnalysis &previous, std::shared_ptr<SectionUnits> &units);
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_ANALYZERIMPL_H
