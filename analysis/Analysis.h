//===- Analysis.h - plain-data results of analysing one file ----*- C++ -*-===//
//
// The API boundary of the analysis library: positions, diagnostics and
// per-op broadcast reports as plain structs. No MLIR handles and no protocol
// types cross this boundary; callers (CLI, server) only convert.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_ANALYSIS_H
#define TOSA_LSP_ANALYSIS_ANALYSIS_H

#include "Broadcast.h"
#include "ExplicitBroadcast.h"
#include "ItemRuns.h"
#include "SharedData.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

namespace tosa_lsp {

struct Config;

/// 1-based line and byte column, as MLIR locations and mlir-opt print them.
/// Line 0 means "no position in this file".
struct Position {
  unsigned line = 0;
  unsigned column = 0;
  bool valid() const { return line != 0; }
};
/// `a` comes before `b` in the file.
inline bool before(Position a, Position b) {
  return a.line < b.line || (a.line == b.line && a.column < b.column);
}

struct Range {
  Position begin, end;
};

enum class Severity { Error, Warning, Note, Info };
/// Spec: a check of ours against the TOSA specification where MLIR 22's
/// verifier accepts the op (a warning, never an error).
/// Validation: MLIR's tosa-validate pass (Config::validate).
enum class DiagSource { Parser, Verifier, Broadcast, Spec, Validation };

const char *severityName(Severity s);
const char *diagSourceName(DiagSource s);

struct DiagNote {
  Range range; // begin.line == 0 when the note has no location in this file
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  DiagSource source = DiagSource::Verifier;
  Range range;
  /// Shared texts: a file's findings repeat a few messages (one hint per
  /// op of a model with dynamic sizes: 2000 at 10k lines, 38000 at 200k)
  /// and a dozen codes.
  SharedText message;
  std::vector<DiagNote> notes;
  /// Stable identifier of the kind of finding ("parse-error",
  /// "verifier-error", "incompatible-operands", "refinable-result", ...).
  SharedText code;
  unsigned section = 0;
};

/// Moves a range, or a diagnostic with its notes, `delta` lines (invalid
/// positions stay invalid).
void shiftLines(Range &r, int delta);
void shiftLines(Diagnostic &d, int delta);

/// A `// -----` separated part of the file, parsed on its own.
struct Section {
  unsigned index = 0;
  size_t beginOffset = 0, endOffset = 0; // byte offsets in the file
  unsigned firstLine = 1;                // line of beginOffset
  unsigned firstColumn = 1;              // column of beginOffset
  unsigned lastLine = 1;                 // line of endOffset
  bool parsed = false; // false when the section has a parse error
  /// Did not parse now; ops and values are from the last version that did.
  bool stale = false;
  /// Results reused from the previous version (text unchanged).
  bool reused = false;
  /// Only the top-level op (function) the edit was in was re-analysed.
  bool incremental = false;
  /// Parsed and verified as two halves on two threads (big sections whose
  /// top-level ops share no symbols).
  bool inParts = false;
  /// A function analysed in parts, edited in its second half: only its
  /// text from the last top-level op before the edit was analysed again.
  bool tail = false;
};

enum class OpKind : uint8_t {
  Implicit,        // Broadcastable trait / element-wise: InferResultShape
  BroadcastInDim,  // one operand mapped onto the result by dimensions
  LinalgBroadcast, // linalg.broadcast: `dimensions` lists added dims
  BinaryInDim,     // binary op with broadcast_dimensions (spec 003)
};

const char *opKindName(OpKind k);

struct OpReport {
  SharedText name;
  Range range; // the op name
  unsigned section = 0;
  /// All its operands (those of `operandTypes` are the data operands).
  unsigned numOperands = 0;
  OpKind kind = OpKind::Implicit;
  bool hasRegions = false;
  bool registered = false;
  /// TOSA element-wise op: equal ranks required (MLIR 22).
  bool tosa = false;
  /// MLIR's own verifier rejected this op.
  bool verifierFailed = false;
  /// MLIR's verifier checked this op (it skips ops nested in a failed op).
  bool verifierRan = false;
  /// The broadcast verdict and flags, computed without the records (always
  /// set for OpKind::Implicit by the document pipeline); beside the flags,
  /// in what would be padding.
  std::optional<BroadcastSummary> summary;
  /// The types of the data operands, which are the op's first operands
  /// (tosa.mul's shift, the last, excluded).
  CowVector<SharedText> operandTypes;
  SharedText resultType;

  /// The op's whole text, its result name (`%0`, read from the text where
  /// needed: 32 bytes an op less) and the declared result type as written
  /// (after the last top-level `->`); invalid when absent.
  Range scope;
  Range resultNameRange;
  Range resultTypeRange;

  /// What the broadcast analysis starts from, in one vector (one
  /// allocation per op): the number of operands; each operand's shape and
  /// then the result's (the target of the explicit kinds), each as its
  /// rank (-1: unranked) and sizes; for the explicit kinds, the number of
  /// dimensions listed and the list. In 32-bit words (packShapes): half
  /// the size of int64s, ~13 MiB at 200k ops.
  CowVector<int32_t> packedShapes;

  /// The analyses, computed from `packedShapes` on first use.
  const BroadcastAnalysis &implicit() const;              // OpKind::Implicit
  const ExplicitBroadcastAnalysis &explicitBcast() const; // the other kinds
  /// Gives the op an implicit analysis of its own (a composition rendered
  /// as an implicit op).
  void setImplicit(BroadcastAnalysis a) { analyses.set(std::move(a)); }
  /// Drops computed analyses; the inputs stay (see CachedValue::forget).
  void forgetAnalyses() const { analyses.forget(); }

  bool ok() const;
  std::vector<MaybeShape> operandShapes() const;
  MaybeShape declaredShape() const;
  /// std::nullopt when nothing can be inferred.
  MaybeShape inferredShape() const;
  const std::vector<Violation> &violations() const;

private:
  /// The op's kind's analysis (one slot: 24 bytes an op less than one
  /// per kind, the op reports being as big as MLIR's IR).
  using Analyses = std::variant<BroadcastAnalysis, ExplicitBroadcastAnalysis>;
  CachedValue<Analyses> analyses;
  Analyses computeAnalyses() const;
};

/// The packed inputs of an op (OpReport::packedShapes): its operands'
/// shapes, its result's (or target's) and, for the explicit kinds, the
/// dimension list. Each value is one 32-bit word, except a dynamic size
/// (one reserved word) and values outside 32 bits (a marker word and the
/// two halves).
std::vector<int32_t> packShapes(const std::vector<MaybeShape> &operands,
                                const MaybeShape &result,
                                const std::vector<int64_t> *dims = nullptr);

/// An SSA value (op result or block argument) with its definition and uses.
struct ValueInfo {
  ShortText name; // as written: %0, %arg0, %x#1
  Range def;
  CowVector<Range> uses;
  SharedText type;
  /// "op result #0 of `tosa.add`" / "argument #1 of ^bb0 (entry of func.func)"
  SharedText origin;
  Range ownerRange; // the defining op's name, or the block
  /// The op that defines it, when it has a report: an index into its
  /// section's ops (FileAnalysis::opOf), so that a version shares the
  /// values of the functions an edit did not touch.
  int opReport = -1;
  unsigned section = 0;
};

/// A block label with its definition and uses.
struct BlockInfo {
  std::string name; // ^bb1
  Range def;
  CowVector<Range> uses;
  unsigned section = 0;
};

/// An op that defines a symbol (func.func @f, ...), with the symbol's uses.
struct SymbolInfo {
  std::string name;   // without '@'
  std::string opName; // func.func
  Range nameRange;    // the `@name` in the definition
  Range scope;        // the whole op
  std::vector<Range> uses;
  unsigned section = 0;
};

/// The name and text of an op that has no OpReport (which has them), for
/// features that edit ops (quick fixes; CodeActions.cpp looks in both).
struct OpSpan {
  SharedText name;
  Range nameRange;
  Range scope;
  unsigned numOperands = 0;
  bool hasRegions = false;
  unsigned section = 0;
};

class PositionIndex;

class LineIndex; // LineIndex.h

struct FileAnalysis {
  FileAnalysis();
  ~FileAnalysis();
  FileAnalysis(const FileAnalysis &);
  FileAnalysis(FileAnalysis &&);
  FileAnalysis &operator=(const FileAnalysis &);
  FileAnalysis &operator=(FileAnalysis &&);

  std::string path;
  std::vector<Section> sections;
  std::vector<Diagnostic> diagnostics;
  /// The biggest lists, shared with earlier versions where an edit kept
  /// them (ItemRuns.h).
  ItemRuns<OpReport> ops;
  ItemRuns<ValueInfo> values;
  std::vector<BlockInfo> blocks;
  std::vector<SymbolInfo> symbols;
  std::vector<OpSpan> opSpans;
  /// The index in `ops` of each section's first op.
  std::vector<size_t> sectionOps;
  /// The line starts of the analysed text, shared with whoever shows the
  /// results: the server's snapshot builds no second one (a scan of 17 MB,
  /// ~5 ms per version at 200k lines). Null when not computed.
  std::shared_ptr<const LineIndex> lineIndex;

private:
  struct LazyIndex;
  std::shared_ptr<LazyIndex> lazyIndex;

public:
  bool hasErrors() const;
  /// What is where, sorted for O(log n) position lookups; built on first
  /// use (thread-safe) from the finished analysis, which must not change
  /// afterwards.
  const PositionIndex &positionIndex() const;
  /// Indices into `diagnostics` of the errors, in order; found on first use
  /// (thread-safe), like the position index. Each function's inference asks
  /// which errors it contains: a model's 10^4-10^5 hints were scanned for
  /// each (0.4 ms of a hover's 2 ms at 200k lines).
  const std::vector<uint32_t> &errorIndices() const;
  /// Index into `ops` of the op whose name range contains or starts at
  /// `pos`, or the op on that line when `pos.column` is 0; -1 if none.
  int findOp(Position pos) const;
  /// The op that defines `v`, or null.
  const OpReport *opOf(const ValueInfo &v) const {
    if (v.opReport < 0 || v.section >= sectionOps.size())
      return nullptr;
    size_t i = sectionOps[v.section] + static_cast<size_t>(v.opReport);
    return i < ops.size() ? &ops[i] : nullptr;
  }
};

// A growing vector of items moves them rather than copying each (every
// copy counts a dozen shared texts and lists up and down again).
static_assert(std::is_nothrow_move_constructible_v<OpReport> &&
                  std::is_nothrow_move_constructible_v<ValueInfo> &&
                  std::is_nothrow_move_constructible_v<Diagnostic> &&
                  std::is_nothrow_move_constructible_v<OpSpan>,
              "items must move without copying");

/// What one section contributes, in file positions of the version it was
/// computed for (`ValueInfo::opReport` indexes `ops` of this section).
struct SectionResult {
  Section section;
  std::vector<Diagnostic> diagnostics;
  std::vector<OpReport> ops;
  std::vector<ValueInfo> values;
  std::vector<BlockInfo> blocks;
  std::vector<SymbolInfo> symbols;
  std::vector<OpSpan> opSpans;
  /// An incremental merge that kept the rest of the section where it was
  /// puts its ops and values here instead (runs shared with the previous
  /// version, `ops` and `values` empty).
  ItemRuns<OpReport> opRuns;
  ItemRuns<ValueInfo> valueRuns;
};

/// Per-document memory of the previous analysis: an edit re-analyses only
/// the `// -----` sections whose text changed, and a section that stops
/// parsing keeps its last good ops and values, marked stale.
class AnalysisCache {
public:
  AnalysisCache();
  ~AnalysisCache();
  AnalysisCache(AnalysisCache &&);
  AnalysisCache &operator=(AnalysisCache &&);

  /// What is remembered (AnalyzerImpl.h, private to analysis/).
  struct Impl;

private:
  friend class Analyzer;
  std::unique_ptr<Impl> impl;
};

/// Parses and analyses MLIR text. Owns an MLIRContext with the dialects a
/// TOSA user meets; use one per thread. Never throws; bad input yields
/// diagnostics.
struct ShapeInference; // ShapeInference.h

class Analyzer {
public:
  Analyzer();
  ~Analyzer();
  /// With a cache, unchanged sections of the previous call are reused.
  FileAnalysis analyze(const std::string &text, const std::string &path,
                       const Config &config, AnalysisCache *cache = nullptr);
  /// The same, shared with the cache: the cache remembers the previous
  /// analysis by reference (and copies only the sections it reuses)
  /// instead of keeping a copy of everything. The text is shared too: the
  /// cache keeps `text`, not a copy of the file.
  ///
  /// `verifiedClean`, when given, is called at most once, on an analysis
  /// thread, as soon as MLIR has parsed and verified the whole text without
  /// a diagnostic while the rest (op reports, index, findings: the
  /// analysis' own diagnostics) is still to come: for a one-section text
  /// analysed from scratch in parts (a big file's open), where that rest
  /// is ~40 % of the time. Not called otherwise.
  std::shared_ptr<const FileAnalysis>
  analyzeShared(std::shared_ptr<const std::string> text,
                const std::string &path, const Config &config,
                AnalysisCache &cache,
                std::function<void()> verifiedClean = nullptr);
  /// The same for a text the caller owns (the cache keeps a copy).
  std::shared_ptr<const FileAnalysis>
  analyzeShared(const std::string &text, const std::string &path,
                const Config &config, AnalysisCache &cache,
                std::function<void()> verifiedClean = nullptr);
  /// Sections of at least `bytes` are verified on a second thread while
  /// op reports and the index are collected, and sections of twice that
  /// whose top-level ops share no symbols are analysed as two halves on two
  /// threads (default 128 KiB; tests use 0 and SIZE_MAX to compare the
  /// paths).
  void setParallelSectionBytes(size_t bytes);
  /// Analyses a tiny TOSA function, so that the first real analysis does
  /// not also load the dialects and fault in the parser (~10 ms of a
  /// 10k-line open). Leaves nothing a later analysis could see.
  void warmUp();
  /// With `on`, a whole section's parsed IR is not destroyed when its
  /// results are copied out but kept until destroyRetiredIR (or the next
  /// analysis, releaseMemory, the destructor): destroying a 200k-line
  /// parse takes ~35 ms, which `check` leaves to its exit. Off by default:
  /// a validator would hold a parse, and the server's freeing it after
  /// the publish overlapped the first requests (inlay hints 0.2 -> 0.8 ms).
  void setDeferIRDestruction(bool on);
  /// Off: the results have no position index (values, blocks, symbols and
  /// op spans, for hover and navigation), only diagnostics, op reports and
  /// sections. `check` reports diagnostics only; the index was ~35 ms of a
  /// 50k-line one-function check, on its critical path. ShapeInferrer
  /// needs it (it finds functions through `symbols`).
  void setCollectIndex(bool on);
  /// With `on`, every function an analysis parses (not a cut function's
  /// parts) is also put through tosa-infer-shapes on the analysis' own IR,
  /// once the results are copied out: no second parse. Off by default.
  /// With `afterAnalysis`, only an edit's function (a unit) is inferred
  /// before analyze returns; the IR of the rest is kept for inferKept. It
  /// may read the analysed text (not copied): the caller keeps that alive
  /// until inferKept returns (the server's snapshot does).
  void setInferShapes(bool on, bool afterAnalysis = false);
  /// The last analysis kept IR for inferKept.
  bool hasKeptIR();
  /// Where a function begins: its section and its first line (as
  /// FunctionInference::scope).
  using FunctionPlace = std::pair<unsigned, unsigned>;
  /// The functions of the IR the last analysis kept, which inferKept will
  /// infer (functions with errors included: they are delivered skipped).
  std::vector<FunctionPlace> keptFunctions();
  struct KeptHooks {
    /// Between functions: stop (the rest is destroyed uninferred).
    llvm::function_ref<bool()> stop;
    /// Each function's result (as takeInferred would have it: possibly
    /// nothing), as soon as it is inferred.
    llvm::function_ref<void(FunctionPlace,
                            std::shared_ptr<const ShapeInference>)>
        deliver;
    /// Functions a request waits for: inferred next.
    llvm::function_ref<std::vector<FunctionPlace>()> wanted = nullptr;
    /// Moves whenever `wanted` grows. Read between every two ops, so that
    /// a wanted function interrupts the one in progress (null: looked up
    /// between functions only).
    const std::atomic<unsigned> *asked = nullptr;
    /// The lines a request waits for in a wanted function (a hover's): the
    /// ops on them, and those defining their operands, are delivered alone
    /// to `deliverEarly` right after the function's pass, before the rest
    /// of it is recorded (~0.1 ms instead of the function's ~0.6 at 200
    /// lines). Null: none.
    llvm::function_ref<std::vector<unsigned>(FunctionPlace)> wantedLines =
        nullptr;
    llvm::function_ref<void(FunctionPlace,
                            std::shared_ptr<const ShapeInference>)>
        deliverEarly = nullptr;
  };
  /// Infers the functions of the IR the last analysis kept, each in the
  /// context that parsed it, on the analysis thread alone (the other core
  /// is left to requests), destroying it after. Between analyses.
  void inferKept(const KeptHooks &hooks);
  /// What the last analysis inferred (setInferShapes): for each function it
  /// parsed, what ShapeInferrer::infer gives without refine-all edits; in
  /// text order. Null when off.
  std::shared_ptr<const ShapeInference> takeInferred();
  /// Destroys the IR kept by setDeferIRDestruction. Between analyses only.
  void destroyRetiredIR();
  /// Forgets what the MLIRContexts uniqued (every type, attribute and
  /// location of the files analysed: hundreds of MiB after a big one) and
  /// has the analysis threads hand back their allocators' free memory.
  /// Between analyses only.
  void releaseMemory();
  /// Between analyses, once what they built is freed: forgets what the
  /// MLIRContexts uniqued (fresh contexts with the same dialects loaded;
  /// nothing an analysis returns refers to them): the types, attributes
  /// and locations of every text parsed so far, ~25-35 MiB after a
  /// 200k-line open, and the analysis thread hands back its allocator's
  /// free pages; only once kForgetUniquedBytes were parsed since (or with
  /// `forgetAll`). The helper thread hands back its free pages every time
  /// (only a heap's own thread can give back what other threads freed in
  /// it).
  void releaseIdleMemory(bool forgetAll = false);

  /// The pipeline's state (AnalyzerImpl.h, private to analysis/).
  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

/// Text parsed since the contexts were last made fresh before an idle
/// release forgets what they uniqued: a 10k-line open (0.9 MB) does, a few
/// edits of small functions do not.
constexpr size_t kForgetUniquedBytes = 256 << 10;

/// MLIR's parser recurses once per nesting level and overflows its stack on
/// deeply nested input (mlir-opt-22 crashes at ~3000 nested regions). Input
/// nested deeper than this is refused before any MLIR parser sees it.
constexpr unsigned kMaxNesting = 1000;
/// Offset where `text` first nests deeper than `limit` brackets, if it does
/// (strings and `//` comments are skipped).
std::optional<size_t> findExcessiveNesting(std::string_view text,
                                           unsigned limit = kMaxNesting);

/// MLIR's parser keeps a slot (16 bytes) for every result number up to the
/// highest used of each forward-referenced name: `%1#100000000` in a 3 KB
/// text costs 1.6 GB before any error. The slots a text may cost: its size
/// in bytes (a result needs its type written out), at least this many.
constexpr size_t kMinResultSlots = size_t(1) << 20;
/// Where `text`'s result numbers (`%name#N`; strings and comments skipped)
/// need more than max(`sectionBytes`, kMinResultSlots) slots, if they do:
/// its offset and the number.
std::optional<std::pair<size_t, uint64_t>>
findExcessiveResultNumber(std::string_view text, size_t sectionBytes);

/// Integers wider than 64 bits are kept at their full width by MLIR (an
/// APInt on the heap, uniqued for the context's life): `1 : i16000000` is
/// 2 MB, and 300 of them in a 12 KB text cost `check` 590 MB. A text's
/// widest integer type (`iN`, `siN`, `uiN`) and what its numbers could cost
/// at that width: the estimate is numbers x width x 2 (the parser's list
/// beside a dense attribute's packed copy); `bytes` is 0 for widths <= 64.
struct WideIntegers {
  size_t offset = 0;    // of the widest type's first occurrence
  uint64_t width = 0;   // bits
  uint64_t numbers = 0; // number literals in the text
  uint64_t bytes = 0;   // estimated cost
};
WideIntegers scanWideIntegers(std::string_view text);
/// The scan, when its estimate exceeds `text`'s share of the bound on a
/// document's memory (issue 44, item 6: 64 MiB + 100x its size): half of
/// it, the rest being the analysis' own: 32 MiB x sectionBytes / fileBytes
/// + 50 x sectionBytes. Widths up to 256 bits are never refused (a number
/// takes at least two bytes of text).
std::optional<WideIntegers> findExcessiveIntegerWidth(std::string_view text,
                                                      size_t sectionBytes,
                                                      size_t fileBytes);
/// "integer type i16000000 with 300 numbers: MLIR would keep each at its
/// full width (2 MB), ~1.2 GB in all"
std::string describeWideIntegers(const WideIntegers &w);

/// Splits on `// -----` like mlir-opt's --split-input-file (a marker with
/// more dashes is a "near miss": reported by `analyze`, not split on).
/// `lines`, the text's line table when the caller has one, gives the
/// sections' lines (else one is made).
std::vector<Section> splitSections(const std::string &text,
                                   std::vector<size_t> *nearMisses = nullptr,
                                   const LineIndex *lines = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_ANALYSIS_H
