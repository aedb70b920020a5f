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

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

struct Config;

/// An immutable value that copies share: an analysis is copied when a
/// document's unchanged functions are reused, and the per-op broadcast
/// reports are most of its bytes. Reads through `->`, `*` or a const
/// reference; assigning a new value replaces it for this copy only.
///
/// A value made with `lazy` is computed from its inputs on first use, and
/// `forget` drops it again (the inputs stay): the document pipeline reads
/// each op's decisions once for the diagnostics and keeps only the inputs,
/// so a big file does not hold every per-dimension record; a hover
/// recomputes the few it shows (microseconds).
template <typename T> class Shared {
public:
  Shared() = default;
  Shared(T value) : state(std::make_shared<State>()) {
    state->value.emplace(std::move(value));
  }
  static Shared lazy(std::function<T()> make) {
    Shared s;
    s.state = std::make_shared<State>();
    s.state->make = std::move(make);
    return s;
  }
  Shared &operator=(T value) {
    *this = Shared(std::move(value));
    return *this;
  }
  const T &get() const {
    if (!state)
      return empty();
    std::lock_guard<std::mutex> lock(state->mu);
    if (!state->value)
      state->value.emplace(state->make());
    return *state->value;
  }
  operator const T &() const { return get(); }
  const T *operator->() const { return &get(); }
  const T &operator*() const { return get(); }
  /// Drops a lazily computed value. Only while no other thread can see this
  /// value (references from get() die with it).
  void forget() const {
    if (state && state->make) {
      std::lock_guard<std::mutex> lock(state->mu);
      state->value.reset();
    }
  }

private:
  struct State {
    std::mutex mu;
    std::function<T()> make;
    std::optional<T> value;
  };
  static const T &empty() {
    static const T value{};
    return value;
  }
  std::shared_ptr<State> state;
};

/// 1-based line and byte column, as MLIR locations and mlir-opt print them.
/// Line 0 means "no position in this file".
struct Position {
  unsigned line = 0;
  unsigned column = 0;
  bool valid() const { return line != 0; }
};

struct Range {
  Position begin, end;
};

enum class Severity { Error, Warning, Note, Info };
enum class DiagSource { Parser, Verifier, Broadcast };

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
  std::string message;
  std::vector<DiagNote> notes;
  /// Stable identifier of the kind of finding ("parse-error",
  /// "verifier-error", "incompatible-operands", "refinable-result", ...).
  std::string code;
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
};

enum class OpKind {
  Implicit,        // Broadcastable trait / element-wise: InferResultShape
  BroadcastInDim,  // one operand mapped onto the result by dimensions
  LinalgBroadcast, // linalg.broadcast: `dimensions` lists added dims
  BinaryInDim,     // binary op with broadcast_dimensions (spec 003)
};

const char *opKindName(OpKind k);

struct OpReport {
  std::string name;
  Range range; // the op name
  unsigned section = 0;
  OpKind kind = OpKind::Implicit;
  bool registered = false;
  /// TOSA element-wise op: equal ranks required (MLIR 22).
  bool tosa = false;
  /// MLIR's own verifier rejected this op.
  bool verifierFailed = false;
  /// MLIR's verifier checked this op (it skips ops nested in a failed op).
  bool verifierRan = false;
  /// Operand numbers of the data operands (e.g. tosa.mul's shift excluded).
  std::vector<unsigned> operandNumbers;
  std::vector<std::string> operandTypes;
  std::string resultType;

  /// The op's whole text, its result name (`%0`) and the declared result
  /// type as written (after the last top-level `->`); invalid when absent.
  Range scope;
  std::string resultName;
  Range resultNameRange;
  Range resultTypeRange;

  Shared<BroadcastAnalysis> implicit; // OpKind::Implicit
  /// Its verdict and flags, computed without the records (always set for
  /// OpKind::Implicit by the document pipeline).
  std::optional<BroadcastSummary> summary;
  Shared<ExplicitBroadcastAnalysis> explicitBcast; // the other kinds

  bool ok() const;
  std::vector<MaybeShape> operandShapes() const;
  MaybeShape declaredShape() const;
  /// std::nullopt when nothing can be inferred.
  MaybeShape inferredShape() const;
  const std::vector<Violation> &violations() const;
};

/// An SSA value (op result or block argument) with its definition and uses.
struct ValueInfo {
  std::string name; // as written: %0, %arg0, %x#1
  Range def;
  std::vector<Range> uses;
  std::string type;
  /// "op result #0 of `tosa.add`" / "argument #1 of ^bb0 (entry of func.func)"
  std::string origin;
  Range ownerRange;  // the defining op's name, or the block
  int opReport = -1; // index into FileAnalysis::ops when defined by one
  unsigned section = 0;
};

/// A block label with its definition and uses.
struct BlockInfo {
  std::string name; // ^bb1
  Range def;
  std::vector<Range> uses;
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

/// Every op's name and text, for features that edit ops (quick fixes).
struct OpSpan {
  std::string name;
  Range nameRange;
  Range scope;
  unsigned numOperands = 0;
  bool hasRegions = false;
  unsigned section = 0;
};

class PositionIndex;

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
  std::vector<OpReport> ops;
  std::vector<ValueInfo> values;
  std::vector<BlockInfo> blocks;
  std::vector<SymbolInfo> symbols;
  std::vector<OpSpan> opSpans;

private:
  struct LazyIndex;
  std::shared_ptr<LazyIndex> lazyIndex;

public:
  bool hasErrors() const;
  /// What is where, sorted for O(log n) position lookups; built on first
  /// use (thread-safe) from the finished analysis, which must not change
  /// afterwards.
  const PositionIndex &positionIndex() const;
  /// Index into `ops` of the op whose name range contains or starts at
  /// `pos`, or the op on that line when `pos.column` is 0; -1 if none.
  int findOp(Position pos) const;
};

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

private:
  friend class Analyzer;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Parses and analyses MLIR text. Owns an MLIRContext with the dialects a
/// TOSA user meets; use one per thread. Never throws; bad input yields
/// diagnostics.
class Analyzer {
public:
  Analyzer();
  ~Analyzer();
  /// With a cache, unchanged sections of the previous call are reused.
  FileAnalysis analyze(const std::string &text, const std::string &path,
                       const Config &config, AnalysisCache *cache = nullptr);
  /// The same, shared with the cache: the cache remembers the previous
  /// analysis by reference (and copies only the sections it reuses)
  /// instead of keeping a copy of everything.
  std::shared_ptr<const FileAnalysis> analyzeShared(const std::string &text,
                                                    const std::string &path,
                                                    const Config &config,
                                                    AnalysisCache &cache);
  /// Sections of at least `bytes` are verified on a second thread while
  /// op reports and the index are collected, and sections of twice that
  /// whose top-level ops share no symbols are analysed as two halves on two
  /// threads (default 128 KiB; tests use 0 and SIZE_MAX to compare the
  /// paths).
  void setParallelSectionBytes(size_t bytes);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// MLIR's parser recurses once per nesting level and overflows its stack on
/// deeply nested input (mlir-opt-22 crashes at ~3000 nested regions). Input
/// nested deeper than this is refused before any MLIR parser sees it.
constexpr unsigned kMaxNesting = 1000;
/// Offset where `text` first nests deeper than `limit` brackets, if it does
/// (strings and `//` comments are skipped).
std::optional<size_t> findExcessiveNesting(std::string_view text,
                                           unsigned limit = kMaxNesting);

/// Splits on `// -----` like mlir-opt's --split-input-file (a marker with
/// more dashes is a "near miss": reported by `analyze`, not split on).
std::vector<Section> splitSections(const std::string &text,
                                   std::vector<size_t> *nearMisses = nullptr);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_ANALYSIS_H
