//===- SectionRun.h - one section through parse, verify, report -*- C++ -*-===//
//
// Private to the analyzer. A section (or a part of one, or one unit of it
// re-analysed after an edit) goes through three steps on the analysis
// thread, each in its own file:
//   SectionParse.cpp   the buffer (with a unit's or part's text around it),
//                      MLIR's diagnostics as ours, the nesting guard, the
//                      parse (again with lenient dialects), the module;
//   SectionVerify.cpp  verification, op reports and the position index, on
//                      two threads for a big section;
//   SectionReport.cpp  the findings, the section's units, a unit's result,
//                      and a parse failure MLIR gave no reason for.
// SectionRun holds what the steps share; SectionAnalysis.cpp runs them.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_SECTIONRUN_H
#define TOSA_LSP_ANALYSIS_SECTIONRUN_H

#include "AnalyzerImpl.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"

#include <optional>

namespace tosa_lsp::detail {

class SectionRun {
public:
  /// `sec` is the whole section; `part` (with `around`) or `job` narrows
  /// what is parsed (see Analyzer::Impl::analyzeSectionUnguarded).
  SectionRun(Analyzer::Impl &impl, const FileText &file,
             const std::string &path, Section &sec, const Config &config,
             SectionResult &result, SectionUnits *units, UnitJob *job,
             const Section *part, mlir::MLIRContext &ctx, PartText *around,
             ParsedSection &ps, double capacityFactor);

  /// All steps. False where the section's result is not complete (a unit
  /// that cannot stand for itself, a crash on the verifier thread, input
  /// refused before the parse): the caller leaves `result.section` as is.
  bool run();

  /// A part of a section (analyzeInParts) in two steps, so that every
  /// part's verdict is known before any part's op reports: parsed and
  /// verified (`block` lives until the second step). False when it stops
  /// there (refused, or not parsed): no second step, and the caller
  /// leaves `result.section` as is.
  bool runUntilVerified(mlir::Block &block);
  /// The second step: op reports, index, findings. False as run().
  bool runAfterVerified();
  /// After the first step: MLIR parsed and verified the part, and nothing
  /// was said (no diagnostic yet, no table-length finding to come).
  bool silentSoFar() const;

private:
  /// The diagnostic handler and MLIR's op notes, for one step.
  class Diagnosing;
  /// The input guards, then the parse; false when refused, or for a unit
  /// job that stops there.
  bool guardedParse(mlir::Block &block);
  /// Each diagnostic names the section.
  void markSection();
  // SectionParse.cpp
  void setUpBuffer(double capacityFactor);
  Range toRange(mlir::Location loc);
  mlir::LogicalResult onDiagnostic(mlir::Diagnostic &diag);
  /// The section nests too deeply for MLIR's parser: said, not parsed.
  void refuseNesting(size_t deep);
  void refuseResultNumber(size_t at, uint64_t number);
  void refuseWideIntegers(const WideIntegers &wide);
  void parse(mlir::Block &block);
  bool parseWithLenientDialects(mlir::Block &block,
                                mlir::ParserConfig &parserConfig,
                                size_t diagsBefore);
  void adviseLenient(size_t diagsBefore);
  void noteLenientOps(mlir::Block &block);
  /// A unit job's one op (after the prefix, isolated from above).
  bool findUnitOp(mlir::Block &block);
  void wrapModule(mlir::Block &block);
  void inspectPart();

  // SectionVerify.cpp
  void verify();
  /// Verification, op reports and the index. False after a crash on the
  /// verifier thread (kept for analyzeSection in `impl.deferredCrash`).
  bool verifyAndCollect(std::optional<ConcurrentUse> &concurrent,
                        std::optional<TaskThread::Running> &bodiesGone);
  bool verifyBesideReports(std::optional<ConcurrentUse> &concurrent,
                           std::optional<TaskThread::Running> &bodiesGone);
  void verifyThenReport();
  /// Op reports (and malformed ops' errors) and the index, after verify.
  void collect();
  void reportMalformed();
  /// MLIR's tosa-validate when Config::validate asks for it, on a whole
  /// section that verified (mlir-opt-22 runs passes only then).
  void validate();

  // SectionReport.cpp
  /// What a parsed section yields; false as run().
  bool checkParsed(mlir::Block &block);
  /// Before verification: the module, a part's shape, the table findings.
  void beforeVerify(mlir::Block &block);
  /// After the op reports and index: what the section yields; false as
  /// run().
  bool afterCollect();
  /// The unit's op, symbol and signature; false when the module's symbol
  /// checks fail.
  bool describeUnit();
  void reportFindings();
  /// tosa.table ops whose static table length is not the one TOSA
  /// requires (MLIR 22 accepts any): warnings of ours.
  std::vector<Diagnostic> tableLengthFindings();
  /// A unit's items without what belongs to its prefix; false when that
  /// prefix has an error or an op outside the unit.
  bool finishUnit();

  Analyzer::Impl &impl;
  const FileText &file;
  const std::string &path;
  Section &sec;
  const Config &config;
  SectionResult &result;
  SectionUnits *units;
  UnitJob *job;
  const Section *part;
  mlir::MLIRContext &ctx;
  PartText *around;
  ParsedSection &ps;
  /// The parsed text (the section's, part's or unit's), without the text
  /// around it.
  std::string_view body;
  std::vector<Diagnostic> &sectionDiags;

  /// Who reports now: the parser, then the verifier.
  DiagSource source = DiagSource::Parser;
  /// The op being verified: a diagnostic located elsewhere lands on it.
  mlir::Operation *currentOp = nullptr;
  unsigned errorsSeen = 0; // see kErrorsWithOpNote
  mlir::Operation *unitOp = nullptr;

  llvm::DenseSet<mlir::Operation *> failedOps, visitedOps;
  bool verified = false;
  /// Read before the bodies go (verifyAndCollect); reported after MLIR's
  /// own diagnostics.
  std::vector<Diagnostic> tables;
  /// The index, collected beside or after the op reports.
  SectionResult index;
  llvm::DenseMap<mlir::Operation *, unsigned> reportOf;
  /// Errors of ops MLIR cannot verify (MalformedOp), as a verifier's;
  /// taken while their ops are alive.
  std::vector<MalformedOp> malformed;
};

/// Some MLIR 22 custom parsers fail without a word: the diagnostic that
/// says so, on the op that most likely failed (SectionReport.cpp).
Diagnostic silentParseFailure(const ParsedSection &ps, const FileText &file,
                              const Section &sec, mlir::MLIRContext *ctx);

/// Records the section's units after a full analysis (see SectionUnits);
/// none where the section cannot be re-analysed a unit at a time.
void collectUnits(const ParsedSection &ps,
                  const llvm::DenseSet<mlir::Operation *> &failedOps,
                  const LineIndex &lines, const Section &sec,
                  const SectionResult &result, SectionUnits &out);

/// Destroys the regions of `module`'s isolated top-level ops (functions),
/// leaving the ops: nothing outside a body refers to a value inside it.
void destroyIsolatedBodies(mlir::ModuleOp module);

} // namespace tosa_lsp::detail

namespace tosa_lsp {

/// A part of a section between its two steps (analyzeInParts): its parse,
/// and what the second step reads.
struct Analyzer::Impl::PartRun {
  PartRun(const Section &sec, std::unique_ptr<mlir::MLIRContext> &slot,
          PartText *around)
      : sec(sec), slot(slot), around(around) {}
  Section sec;
  std::unique_ptr<mlir::MLIRContext> &slot; // where it was parsed
  PartText *around;                         // a cut function's part
  std::unique_ptr<detail::ParsedSection> owned =
      std::make_unique<detail::ParsedSection>();
  mlir::Block block; // empty once the module holds its ops
  std::optional<detail::SectionRun> run;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SECTIONRUN_H
