//===- Assemble.h - a file's analysis from its sections' -------*- C++ -*-===//
//
// Each `// -----` section is analysed on its own (fresh, reused, merged after
// an edit); the file's analysis is their items one after another. This is
// where they are put together, where a reused section's items are taken back
// out of the previous analysis, and where a retired analysis' big vectors
// wait to be filled again. Plain data only, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_ASSEMBLE_H
#define TOSA_LSP_ANALYSIS_ASSEMBLE_H

#include "Analysis.h"
#include "DroppedNanModes.h"
#include "LineIndex.h"

#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tosa_lsp::detail {

/// One version of the file: its text, line index and sections.
struct FileText {
  const std::string &text;
  std::shared_ptr<const LineIndex> sharedLines; // handed out with the result
  const LineIndex &lines;
  std::vector<Section> sections;
  std::vector<size_t> nearMisses;
  std::vector<DroppedNanMode> droppedNanModes;
  explicit FileText(const std::string &text)
      : text(text), sharedLines(std::make_shared<const LineIndex>(text)),
        lines(*sharedLines) {
    sections = splitSections(text, &nearMisses, &lines);
    droppedNanModes = detail::droppedNanModes(text);
  }
};

/// Where one section's items lie in the assembled FileAnalysis.
struct Slice {
  size_t diagnostics[2], ops[2], values[2], blocks[2], symbols[2], opSpans[2];
};

/// Appends `from` to `to` by moving (a 200k-line file has ~10^5 ops and
/// values).
template <typename T>
void appendMoved(std::vector<T> &to, std::vector<T> &from) {
  // The bigger buffer stays: `to` when reserved for everything, else
  // `from` whole.
  if (to.empty() && from.capacity() >= to.capacity()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()),
            std::make_move_iterator(from.end()));
}

/// `from` after `to`, reserved to the item (appending a part grows `to`
/// once, and not at all when the first part reserved for all).
template <typename T>
void appendReserved(std::vector<T> &to, std::vector<T> &from) {
  if (to.capacity() < to.size() + from.size())
    to.reserve(to.size() + from.size());
  appendMoved(to, from);
}

/// `b`'s items after `a`'s, in file order (`b`'s values then index the
/// ops after `a`'s). Diagnostics are the caller's: their order is not
/// the parts'.
void appendPart(SectionResult &a, SectionResult &b);
/// The same, `b`'s ops and values becoming runs of `a`'s (ItemRuns) rather
/// than moved after them: a section's parts are merged without touching
/// each op again (~30 ms of page faults at 50k lines). Neither may have
/// runs already, nor `a` be read through `ops`/`values` after.
void appendPartAsRuns(SectionResult &a, SectionResult &b);

/// Concatenates section results into the file's analysis; `slices` (if
/// given) receives each section's place in it.
FileAnalysis assemble(const FileText &file, const std::string &path,
                      std::vector<SectionResult> &&results,
                      std::vector<Slice> *slices = nullptr);

/// A section's items, copied out of an earlier analysis (in that
/// analysis' positions); its ops and values shared instead with
/// `shareItems` (the section has not moved).
SectionResult sliceOf(const FileAnalysis &fa, const Slice &s,
                      const Section &section, bool shareItems = false);

/// The big item vectors of a retired analysis, emptied but with their
/// capacity, for the next incremental merge to fill. Each version's
/// vectors are ~90 MB at 200k lines; allocated fresh, every page of them
/// was faulted in and zeroed again by the kernel on each edit. Only while
/// edits are merged (`wanted`): a one-function model, analysed whole each
/// time, would only hold a spare set. The peak does not grow: the spare
/// is the memory the version before the previous one had.
struct Recycler {
  std::mutex mu;
  bool wanted = false;
  std::vector<Diagnostic> diagnostics;
  std::vector<OpReport> ops;
  std::vector<ValueInfo> values;
  std::vector<OpSpan> opSpans;

  /// Called as a shared analysis is freed (its last snapshot gone).
  void retire(FileAnalysis &fa) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!wanted)
        return;
    }
    // Destroyed here, outside the lock; kept where bigger than the spare.
    auto keep = [&](auto &from, auto &slot) {
      constexpr size_t kWorthKeeping = 4096;
      if (from.capacity() < kWorthKeeping)
        return;
      from.clear();
      std::lock_guard<std::mutex> lock(mu);
      if (wanted && from.capacity() > slot.capacity())
        std::swap(from, slot);
    };
    keep(fa.diagnostics, diagnostics);
    // Only stores no later version shares (an edit that kept the rest of
    // a section shares its runs, and needs no spare).
    fa.ops.releaseStores([&](std::vector<OpReport> &v) { keep(v, ops); });
    fa.values.releaseStores(
        [&](std::vector<ValueInfo> &v) { keep(v, values); });
    keep(fa.opSpans, opSpans);
  }
  template <typename T> std::vector<T> take(std::vector<T> &slot) {
    std::lock_guard<std::mutex> lock(mu);
    return std::move(slot); // leaves the slot empty, without capacity
  }
  void want(bool on) {
    std::vector<Diagnostic> d;
    std::vector<OpReport> o;
    std::vector<ValueInfo> v;
    std::vector<OpSpan> s;
    std::lock_guard<std::mutex> lock(mu);
    wanted = on;
    if (on)
      return;
    std::swap(d, diagnostics); // freed after the lock
    std::swap(o, ops);
    std::swap(v, values);
    std::swap(s, opSpans);
  }
};

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_ASSEMBLE_H
