//===- IR.h - MLIR-side internals of the analysis library -------*- C++ -*-===//
//
// Private to analysis/: the parsed MLIR of one section and the helpers that
// turn it into the plain data of Analysis.h. Nothing outside analysis/
// includes this header.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_IR_H
#define TOSA_LSP_ANALYSIS_IR_H

#include "Analysis.h"
#include "Config.h"
#include "FunctionSplit.h"
#include "LineIndex.h"

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace tosa_lsp::detail {

/// The parser's buffer for `body`, a part of `text`: a view of it when it
/// ends where `text` ends (the std::string's terminating null is the one
/// MLIR's lexer needs), else a copy. A one-section file is not copied
/// again for each parse (20 MB at 200k lines, beside the parse).
inline std::unique_ptr<llvm::MemoryBuffer> parserBuffer(std::string_view body,
                                                        const std::string &text,
                                                        llvm::StringRef name) {
  if (body.data() + body.size() == text.data() + text.size())
    return llvm::MemoryBuffer::getMemBuffer(
        llvm::StringRef(body.data(), body.size()), name,
        /*RequiresNullTerminator=*/true);
  return llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(body.data(), body.size()), name);
}

/// The MLIR of one `// -----` section, parsed from its own buffer. Positions
/// are shifted by the section's first line/column to be file positions.
struct ParsedSection {
  Section section;
  /// The whole file's line table: SMLoc -> position is a binary search, not
  /// SourceMgr's scan back to the line start.
  const LineIndex *lines = nullptr;
  const char *bufferStart = nullptr;
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::AsmParserState state;
  /// The module was created by us to hold several top-level ops (like
  /// mlir-opt's implicit module); it has no source range.
  bool implicitModule = false;
  /// Re-analysing one function on its own: the buffer starts with this many
  /// bytes (lines) of declarations that are not in the file (aliases, stubs
  /// of the functions it calls); `section` then maps the rest, the
  /// function's text, to the file. Positions in the prefix are invalid.
  size_t prefixLen = 0;
  unsigned prefixLines = 0;
  /// The first part of a cut function (FunctionSplit.h): the buffer ends
  /// with text that is not in the file from this line on (0: none), after
  /// the part's own text. Positions there are invalid too.
  unsigned suffixLine = 0;
  /// Result vectors are reserved for this many times the section's items
  /// (the first part of a cut function reserves for both parts).
  double capacityFactor = 1.0;

  /// toFilePosition of a location outside the section's text: the
  /// prefix or suffix (invalid), another buffer (through the SourceMgr).
  Position toFilePositionElsewhere(llvm::SMLoc loc) const;

  const char *bufferEnd() const {
    return sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferEnd();
  }

  Position toFilePosition(unsigned line, unsigned column) const;
  /// Inline for a location in the section's own text (one line-table
  /// look-up): the index and the op reports ask ~16 times an op.
  Position toFilePosition(llvm::SMLoc loc) const {
    const char *p = loc.getPointer();
    if (p && lines && bufferStart && p >= bufferStart + prefixLen &&
        p <=
            bufferStart + prefixLen + (section.endOffset - section.beginOffset))
      return lines->position(section.beginOffset +
                             (p - bufferStart - prefixLen));
    return toFilePositionElsewhere(loc);
  }
  Range toFileRange(llvm::SMRange range) const {
    return {toFilePosition(range.Start), toFilePosition(range.End)};
  }
  /// The op's name range, or its location as a point.
  Range opRange(mlir::Operation *op) const;
  /// The type as MLIR prints it. Printing builds a printer state each time
  /// and a model repeats a handful of types 10^5 times: print each once.
  /// Copies of the result share the text (one string per type).
  const SharedText &typeName(mlir::Type type) const {
    return typeName(type, typeNames);
  }
  /// The same with the caller's cache: collectIndex runs on a second
  /// thread beside collectOpReports and must not share theirs.
  using TypeNames = llvm::DenseMap<mlir::Type, SharedText>;
  const SharedText &typeName(mlir::Type type, TypeNames &cache) const;
  /// An op's name, one string per name (the same two flavours).
  const SharedText &opName(mlir::Operation *op) const {
    return opName(op, opNames);
  }
  using OpNames = llvm::DenseMap<const void *, SharedText>;
  const SharedText &opName(mlir::Operation *op, OpNames &cache) const;

private:
  mutable TypeNames typeNames;
  mutable OpNames opNames;
};

/// Verifies `op` (and everything nested) with MLIR's rules and messages, but
/// continues past a failing op so that every failing op is reported. An op
/// whose own invariants fail is not descended into (its children may rely on
/// them), and region invariants / dominance are only checked for regions
/// whose contents verified, exactly as upstream orders them. `current` is
/// told which op is being verified (to place diagnostics with foreign
/// locations); failing ops are added to `failed`, ops whose own checks ran
/// to `visited` (ops inside a failed op are never visited, as upstream, and
/// neither are ops fed by a failed op's results: their verifiers may read
/// what the failed op lacks).
bool verifyAll(mlir::Operation *op,
               llvm::function_ref<void(mlir::Operation *)> current,
               llvm::DenseSet<mlir::Operation *> &failed,
               llvm::DenseSet<mlir::Operation *> &visited);

/// An op named Broadcastable by the configuration that MLIR does not know
/// (`test.broadcastable`, `tfl.*`), so nothing verified it, and that lacks
/// what the trait requires: exactly one result, tensor or vector operands
/// and result. It gets an error instead of a report.
struct MalformedOp {
  mlir::Operation *op;
  std::string message;
};

/// Appends a report for every Broadcastable / explicit-broadcast op in the
/// section. Reads the IR only, so it may run while the section is being
/// verified; markVerified then records what the verifier did.
void collectOpReports(const ParsedSection &section, const Config &config,
                      std::vector<OpReport> &out,
                      llvm::DenseMap<mlir::Operation *, unsigned> &reportOf,
                      std::vector<MalformedOp> *malformed = nullptr);
void markVerified(const llvm::DenseSet<mlir::Operation *> &failed,
                  const llvm::DenseSet<mlir::Operation *> &visited,
                  const llvm::DenseMap<mlir::Operation *, unsigned> &reportOf,
                  std::vector<OpReport> &reports);

/// Fills the op's scope, result name and result type ranges.
void fillOpSpans(const ParsedSection &section, mlir::Operation *op,
                 OpReport &report);
/// The same from the op's definition (one lookup less).
void fillOpSpans(const ParsedSection &section,
                 const mlir::AsmParserState::OperationDefinition &def,
                 OpReport &report);

// findResultType and typeEnd: FunctionSplit.h.

/// Appends the section's values, blocks, symbols and the spans of the ops
/// without a report in `reportOf` (plain data). With `owners`, also the
/// defining op of each value appended (null for block arguments), and a
/// span for every op with its op in `spanOwners`, for linkReports to fill
/// `opReport` and drop the spans of reported ops once the reports exist.
void collectIndex(const ParsedSection &section,
                  const llvm::DenseMap<mlir::Operation *, unsigned> &reportOf,
                  SectionResult &out,
                  std::vector<mlir::Operation *> *owners = nullptr,
                  std::vector<mlir::Operation *> *spanOwners = nullptr);
void linkReports(const std::vector<mlir::Operation *> &owners,
                 const std::vector<mlir::Operation *> &spanOwners,
                 const llvm::DenseMap<mlir::Operation *, unsigned> &reportOf,
                 std::vector<ValueInfo> &values, std::vector<OpSpan> &spans);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_IR_H
