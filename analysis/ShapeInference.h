//===- ShapeInference.h - MLIR's shape inference, per function --*- C++ -*-===//
//
// Declared vs inferred result shapes of every op MLIR can infer, propagated
// through each function exactly as `mlir-opt --tosa-infer-shapes` does: the
// function is re-parsed in a scratch context and the upstream pass runs on
// it (no rule is re-implemented here). Computed on request, per function,
// from the text and the finished FileAnalysis (which says what parsed and
// verified); the results are plain data.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_SHAPEINFERENCE_H
#define TOSA_LSP_ANALYSIS_SHAPEINFERENCE_H

#include "Analysis.h"
#include "LineIndex.h"
#include "Render.h"
#include "TextEdit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/iterator.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tosa_lsp {

/// One result of an op: its type as declared, after `--tosa-infer-shapes`,
/// and what the op's own shape function gives on the refined operands.
/// Decoded from an InferredOp on request (InferredOp::results).
struct InferredResult {
  std::string declared, inferred;
  /// Ranked shapes (kDynamic for `?`); empty optional when unranked.
  MaybeShape declaredShape, inferredShape;
  /// The op's InferShapedTypeOpInterface on the refined operands, if it
  /// succeeded with a rank. It can contradict the declared type (the pass
  /// then keeps the declared one).
  MaybeShape shapeFunction;
  /// Per dimension of a refined result: where the size comes from, e.g.
  /// "`%in` (operand #0)". Empty where not refined or unknown.
  std::vector<std::string> dimSources;
  /// Dimensions where the declared static size differs from shapeFunction.
  std::vector<unsigned> contradictions;

  bool refined() const { return declared != inferred; }
};

/// The strings and shapes the ops of one inference run refer to, each
/// stored once: a 200k-line function has as many ops but a few dozen
/// distinct types (strings per op were ~1 KB of its ~1.3 KB).
struct InferencePool {
  std::vector<std::string> strings;
  std::vector<MaybeShape> shapes;
  /// Per string that is a type: the index of its shape, or kNone.
  std::vector<uint32_t> typeShapes;
  /// The ops' encoded records, one after the other (InferredOp::code): one
  /// allocation for a run, not one per op (~90 of an op's ~170 bytes).
  std::vector<uint32_t> codes;
  static constexpr uint32_t kNone = ~0u;
};

/// An op whose result types MLIR can infer, in a function that parsed and
/// verified. Stored compactly (indices into a shared InferencePool); what
/// is rendered from it is decoded when asked for.
class InferredOp {
public:
  Range range;           // the op name
  Range scope;           // the op's whole text
  Range resultTypeRange; // declared result type(s) as written, if found
  unsigned section = 0;

  const std::string &name() const;
  const std::string &function() const; // the enclosing func.func's symbol
  std::vector<InferredResult> results() const;
  /// The same without the dimensions' sources (dimSources empty): what a
  /// graph draws, without composing their text for every op.
  std::vector<InferredResult> resultTypes() const;
  /// Operands refined by propagation (name: declared -> inferred).
  std::vector<std::string> refinedOperands() const;
  bool hasRefinedOperands() const { return flags & kRefinedOperands; }

  bool refined() const { return flags & kRefined; }
  /// A declared size contradicts the shape function, or MLIR's verifier
  /// rejects the op on the refined types (rejection).
  bool contradicts() const { return flags & (kContradicts | kRejected); }
  /// Some result's declared size contradicts the shape function (some
  /// InferredResult::contradictions is not empty).
  bool resultContradicts() const { return flags & kContradicts; }
  /// MLIR's verifier on the op after tosa-infer-shapes (what mlir-opt
  /// reports after the pass), when it rejects the op: its message; empty
  /// when it accepts it. The function verified as declared.
  const std::string &rejection() const;
  /// The last line of the op's text.
  unsigned lastLine() const {
    return scope.end.valid() ? scope.end.line : range.begin.line;
  }

private:
  friend class InferredOpWriter;
  enum : uint8_t {
    kRefined = 1,
    kContradicts = 2,
    kRefinedOperands = 4,
    kRejected = 8
  };
  std::shared_ptr<const InferencePool> pool;
  /// The encoded record (layout in InferredShapes.cpp, InferredOpWriter):
  /// a slice of the pool's codes.
  llvm::ArrayRef<uint32_t> code() const;
  uint32_t codeBegin = 0, codeSize = 0;
  uint8_t flags = 0;
};

/// How one dimension of a refined result got its size (InferredOpWriter).
/// `operands` are what the op's shape function reads: its operands by
/// number, then (numbers from the op's operand count on) the values its
/// regions yield (a cond_if's or while_loop's result is what its regions
/// yield, whatever its operands are).
struct DimSource {
  enum Kind : uint8_t {
    None,       // not refined, or not known
    AllOf,      // lost when any of `operands` is made unknown ("and")
    AnyOf,      // each of `operands` alone still gives it ("or")
    Attributes, // none of the operands: the op's attributes
  } kind = None;
  std::vector<unsigned> operands;
};

/// Builds InferredOps of one inference run; they share its pool.
class InferredOpWriter {
public:
  InferredOpWriter();
  uint32_t intern(llvm::StringRef s);
  /// A type's text with its shape (the decoded declared/inferred shapes).
  uint32_t internType(llvm::StringRef text, const MaybeShape &shape);
  uint32_t internShape(const MaybeShape &shape);

  struct Result {
    uint32_t declared = 0, inferred = 0;           // internType
    uint32_t shapeFunction = InferencePool::kNone; // internShape
    std::vector<unsigned> contradictions;
    std::vector<DimSource> dimSources; // empty, or one per inferred dim
  };
  struct Operand {
    uint32_t name = 0; // intern: as written (%0, %x#1), or empty
    bool refined = false;
    uint32_t declared = 0, inferred = 0; // internType, when refined
  };
  /// A value one of the op's regions yields (a dimension's source).
  struct Yielded {
    uint32_t name = 0; // intern: as written, or empty
    unsigned region = 0;
    bool refined = false; // propagation refined it
  };
  /// `operands` may be empty when no result is refined and none of them
  /// is (nothing then names them); when a result has dimension sources it
  /// has all the op's operands, and `yielded` the values its regions yield
  /// (numbered after the operands in the sources).
  /// `rejection`: intern of MLIR's verifier message on the refined op, or
  /// InferencePool::kNone when it verifies.
  InferredOp write(uint32_t name, uint32_t function,
                   const std::vector<Result> &results,
                   const std::vector<Operand> &operands,
                   uint32_t rejection = InferencePool::kNone,
                   const std::vector<Yielded> &yielded = {});
  std::shared_ptr<const InferencePool> pool() const { return sharedPool; }
  /// Gives back what the pool's vectors reserved beyond their size (after
  /// the last op is written).
  void shrink();

private:
  std::shared_ptr<InferencePool> sharedPool;
  llvm::StringMap<uint32_t> stringIds;
  std::map<MaybeShape, uint32_t> shapeIds;
};

struct FunctionInference {
  std::string name;
  Range scope;
  unsigned section = 0;
  /// Why the function was not inferred (a parse or verifier error, the pass
  /// failed); empty when it was.
  std::string skipped;
  std::vector<InferredOp> ops; // in text order
  /// Per op, the last line of it and of the ops before it (ops of a
  /// multi-line op's regions start before it ends): bisection finds the
  /// first op reaching a line.
  std::vector<unsigned> lastLineSoFar;
  /// "Refine all shapes in this function": every result type the pass
  /// refines, written into the text (result types and the operand types of
  /// the users that take the refined type), and a `tensor.cast` back to the
  /// declared type, after the producer, for the users the pass would give
  /// one (func.return, ops of other dialects), whose uses are renamed to
  /// it. SSA names, attributes, comments and layout are kept. Empty when
  /// nothing is refinable or the edit cannot be written (`refineProblem`).
  /// Stored as ranges and texts in `pool`: refineAllEdits gives them as
  /// text edits.
  std::vector<std::pair<Range, uint32_t>> refineEdits;
  std::shared_ptr<const InferencePool> pool;
  std::string refineProblem;
  /// refineEdits and refineProblem were computed (infer's withRefineEdits):
  /// only the "Refine all shapes" edits need them, and they cost a tenth
  /// of a function's inference and a fifth of its memory.
  bool refineKnown = false;
};

/// The functions of an inference run, each shared: results kept across a
/// document's versions (InferenceCache) are handed out without a copy.
/// Read like a vector of FunctionInference.
class FunctionList {
public:
  using Shared = std::shared_ptr<const FunctionInference>;
  using const_iterator =
      llvm::pointee_iterator<std::vector<Shared>::const_iterator>;
  using iterator = const_iterator;
  const_iterator begin() const { return const_iterator(items.begin()); }
  const_iterator end() const { return const_iterator(items.end()); }
  size_t size() const { return items.size(); }
  bool empty() const { return items.empty(); }
  const FunctionInference &operator[](size_t i) const { return *items[i]; }
  const FunctionInference &front() const { return *items.front(); }
  const FunctionInference &back() const { return *items.back(); }
  const Shared &shared(size_t i) const { return items[i]; }
  void push_back(FunctionInference f) {
    items.push_back(std::make_shared<const FunctionInference>(std::move(f)));
  }
  void push_back(Shared f) { items.push_back(std::move(f)); }

private:
  std::vector<Shared> items;
};

/// `f` as it reads `lines` lines further down, in section `section`: a
/// function an edit above it moved, whose text did not change.
FunctionInference shifted(const FunctionInference &f, int lines,
                          unsigned section);

struct ShapeInference {
  FunctionList functions; // in text order
  /// The caller's stop condition held before the work was done: what is
  /// here is incomplete and must not be kept.
  bool cancelled = false;
  /// The op whose name range contains `pos` (or on that line when
  /// `pos.column` is 0), or nullptr.
  const InferredOp *opAt(Position pos) const;
  std::vector<const InferredOp *> allOps() const;
  /// The ops whose text overlaps lines [first, last], in text order, found
  /// by bisection (a screenful of a 200k-line function, not all of it).
  std::vector<const InferredOp *> opsOnLines(unsigned first,
                                             unsigned last) const;
};

/// Owns its own MLIRContext: one per thread.
class ShapeInferrer {
public:
  ShapeInferrer();
  ~ShapeInferrer();
  /// Loads what the first inference would (dialects, the pass) on a tiny
  /// function, so that a user's first hover does not wait for it.
  void warmUp();
  /// Infers every func.func overlapping lines [firstLine, lastLine] of the
  /// file `fa` was computed from (`text`). Functions in sections that did
  /// not parse (or are stale), or with an error inside, are listed with the
  /// reason and not inferred.
  ShapeInference infer(const std::string &text, const FileAnalysis &fa,
                       unsigned firstLine = 1, unsigned lastLine = ~0u);
  /// The same with the text's line index (the server keeps one). `stop`,
  /// when given, is asked between the steps (before and after the parse
  /// and the pass, every few hundred ops): once it says yes the work ends
  /// with `cancelled` set (the parse itself cannot be interrupted). Without
  /// `withRefineEdits` the functions' refine-all edits are not computed
  /// (FunctionInference::refineKnown).
  ShapeInference infer(const std::string &text, const LineIndex &lines,
                       const FileAnalysis &fa, unsigned firstLine,
                       unsigned lastLine,
                       llvm::function_ref<bool()> stop = nullptr,
                       bool withRefineEdits = true);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The "Refine all shapes" edits of `function` (of every function that has
/// some when empty), sorted by position.
std::vector<TextEditData> refineAllEdits(const ShapeInference &si,
                                         const std::string &function = "");

/// Whether `text` with `edits` applied re-analyses with no more errors than
/// `fa` has (and still parses where it did).
bool refinedTextVerifies(Analyzer &analyzer, const FileAnalysis &fa,
                         const std::string &text, const Config &config,
                         const std::vector<TextEditData> &edits);

/// One error per op whose declared static size contradicts the size its
/// shape function gives on the operands propagation refined (code
/// "shape-contradiction"; upstream reports these only after
/// `--tosa-infer-shapes`, whose output then fails to verify).
std::vector<Diagnostic> contradictionDiagnostics(const ShapeInference &si);

/// What is known of one op's results, as prose (`explain`, hover): declared
/// and inferred types, the source of each refined dimension, refined
/// operands and contradictions.
std::string renderInferred(const InferredOp &op, RenderStyle style);

/// One line: "inferred 1x32x32x16 (declared 1x?x?x16)" or "as declared".
std::string inferredSummary(const InferredOp &op);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SHAPEINFERENCE_H
