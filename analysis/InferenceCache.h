//===- InferenceCache.h - shape inference kept across versions --*- C++ -*-===//
//
// Each function's shape inference (and the shape errors it found), keyed by
// what decides it: the function's text and column, the text of its section
// outside the functions (aliases) and whether an error lies inside it. An
// edit then re-infers only the functions it changed; a function it moved
// is handed out shifted. Plain data; the caller infers what is missing.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_INFERENCECACHE_H
#define TOSA_LSP_ANALYSIS_INFERENCECACHE_H

#include "Analysis.h"
#include "LineIndex.h"
#include "ShapeInference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tosa_lsp {

/// A func.func of one version of a file, as shape inference sees it.
struct FunctionKey {
  uint64_t hash = 0;
  unsigned section = 0;
  unsigned firstLine = 0, lastLine = 0; // 1-based lines of its text
  unsigned lines() const { return lastLine - firstLine + 1; }
};

/// The func.funcs of `fa` in sections that parsed (and are not stale), in
/// text order, with their keys: two functions with one key infer alike.
std::vector<FunctionKey> functionKeys(llvm::StringRef text,
                                      const LineIndex &lines,
                                      const FileAnalysis &fa);

/// The keys of `all` (in text order) whose functions overlap lines
/// [first, last], found by bisection.
llvm::ArrayRef<FunctionKey> keysOnLines(llvm::ArrayRef<FunctionKey> all,
                                        unsigned first, unsigned last);

/// The lines of `fns` together.
inline size_t linesOf(llvm::ArrayRef<FunctionKey> fns) {
  size_t n = 0;
  for (const FunctionKey &k : fns)
    n += k.lines();
  return n;
}

/// One document's functions' inference by key. Thread-safe.
class InferenceCache {
public:
  /// The known inference of `fns`, placed where they are now; the others
  /// are appended to `missing` (when given), and with `refineEdits` those
  /// known without their refine-all edits too.
  ShapeInference lookup(llvm::ArrayRef<FunctionKey> fns,
                        std::vector<FunctionKey> *missing = nullptr,
                        bool refineEdits = false);
  /// The functions of `fns` whose inference is not known (what lookup
  /// would put in `missing`), without placing the others.
  std::vector<FunctionKey> unknown(llvm::ArrayRef<FunctionKey> fns);
  /// Records what `fresh` inferred of `fns` (both from one version); a
  /// function it has nothing for is recorded as not inferred, unless
  /// `fresh` was cancelled. True when a function has shape errors and was
  /// not known to have any.
  bool store(llvm::ArrayRef<FunctionKey> fns, const ShapeInference &fresh);
  /// The shape errors (shape-contradiction) known for `fns`, in file
  /// positions; `unchecked` gets the functions never inferred.
  std::vector<Diagnostic> shapeErrors(llvm::ArrayRef<FunctionKey> fns,
                                      std::vector<FunctionKey> *unchecked);
  /// Keeps only the functions of `fns` (a new version's).
  void retain(llvm::ArrayRef<FunctionKey> fns);
  /// Drops the inference, not the shape errors, of functions longer than
  /// `lines`: what a new version would not read before its own inference.
  void dropInferenceOver(unsigned lines);
  /// Functions whose inference is held.
  size_t size() const;
  /// Nothing is known, not even shape errors.
  bool empty() const;

private:
  struct Entry {
    /// As placed in the version that last read it.
    std::shared_ptr<const FunctionInference> inference;
    /// Relative to the function's first line.
    std::vector<Diagnostic> errors;
  };
  /// Whether `e` answers a request (with its refine-all edits, when
  /// `refineEdits`).
  static bool answers(const Entry &e, bool refineEdits);
  mutable std::mutex mu;
  std::unordered_map<uint64_t, Entry> entries;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_INFERENCECACHE_H
