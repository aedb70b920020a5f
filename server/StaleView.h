//===- StaleView.h - the client's text over an older snapshot ---*- C++ -*-===//
//
// A request's positions are in the text the client has now; while the
// analysis of its last edit runs (800 ms on a 150k-op file) the latest
// snapshot is of an older text. Where the two differ only away from the
// request (outside the function it points into), the older snapshot answers
// at once: the position goes back to its text and the answer's ranges come
// forward. Anything nearer waits for the current version (TosaServer).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_STALEVIEW_H
#define TOSA_LSP_SERVER_STALEVIEW_H

#include "Convert.h"
#include "EditingResults.h"
#include "Snapshot.h"

#include <optional>
#include <vector>

namespace tosa_lsp {

class StaleView {
public:
  /// The snapshot's text against `current` (of the client's `version`),
  /// as one changed span between their common prefix and suffix.
  StaleView(std::shared_ptr<const Snapshot> snapshot, SharedString current,
            int64_t version);

  const std::shared_ptr<const Snapshot> snapshot;
  const int64_t version; // the client's

  /// `now` in the snapshot's text, when the snapshot answers for it: it
  /// lies outside the changed text and outside any function containing the
  /// change; std::nullopt otherwise (wait for the current version).
  std::optional<llvm::lsp::Position> answers(llvm::lsp::Position now) const;

  /// The answer's ranges, of the snapshot's text, in the client's. A range
  /// inside the changed text has no place there: dropped (a hover keeps
  /// its text without a range, and the lines its text names move too).
  void forward(std::optional<llvm::lsp::Hover> &h) const;
  void forward(std::vector<llvm::lsp::Range> &rs) const;
  /// Only targets in this document (an empty uri or its own) move.
  void forward(std::vector<DefinitionTarget> &ts) const;

private:
  std::optional<llvm::lsp::Range> toCurrent(const llvm::lsp::Range &r) const;
  /// A byte offset of the snapshot's text in the client's; one inside the
  /// changed text maps to where the change starts.
  size_t offsetToCurrent(size_t old, bool isEnd) const;
  /// A 1-based line of the snapshot's text in the client's.
  unsigned lineToCurrent(unsigned line) const;

  SharedString text; // the client's, held for `lines`
  LineTable lines;
  /// The changed span: [prefix, oldEnd) of the snapshot's text became
  /// [prefix, newEnd) of the client's.
  size_t prefix = 0, oldEnd = 0, newEnd = 0;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_STALEVIEW_H
