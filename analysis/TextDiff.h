//===- TextDiff.h - what an edit changed, and moving items past it -*- C++
//-*-===//
//
// An edit arrives as a whole new text (LSP full sync). The analyzer finds
// what changed between two versions (the common prefix and suffix) and moves
// the items of a previous analysis to where their text is now: a section
// that did not change but moved, a stale section served while it does not
// parse. Text and plain data only, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TEXTDIFF_H
#define TOSA_LSP_ANALYSIS_TEXTDIFF_H

#include "Analysis.h"

#include <string_view>

namespace tosa_lsp {
class LineIndex;
namespace detail {

/// Length of the common prefix of `a` and `b` (at most `limit`), compared a
/// block at a time with memcmp: a byte loop over a 20 MB file took ~10 ms
/// per edit.
size_t commonPrefix(std::string_view a, std::string_view b, size_t limit);
/// Length of the common suffix (at most `limit`), likewise.
size_t commonSuffix(std::string_view a, std::string_view b, size_t limit);

/// Every range an item carries: what moves when lines above it change.
/// One list per kind, for shifting a whole section and for the merge.
template <typename Fn> void forEachRange(Diagnostic &d, Fn fn) {
  fn(d.range);
  for (DiagNote &n : d.notes)
    fn(n.range);
}
template <typename Fn> void forEachRange(OpReport &o, Fn fn) {
  for (Range *r : {&o.range, &o.scope, &o.resultNameRange, &o.resultTypeRange})
    fn(*r);
}
template <typename Fn> void forEachRange(ValueInfo &v, Fn fn) {
  fn(v.def);
  fn(v.ownerRange);
  for (Range &u : v.uses.mut()) // shared with the previous version until here
    fn(u);
}
template <typename Fn> void forEachRange(BlockInfo &b, Fn fn) {
  fn(b.def);
  for (Range &u : b.uses.mut())
    fn(u);
}
template <typename Fn> void forEachRange(OpSpan &o, Fn fn) {
  fn(o.nameRange);
  fn(o.scope);
}
template <typename Fn> void forEachRange(SymbolInfo &sym, Fn fn) {
  fn(sym.nameRange);
  fn(sym.scope);
  for (Range &u : sym.uses)
    fn(u);
}

/// Moves a previous version's section results `delta` lines, to the
/// section now at `index`.
void shiftSection(SectionResult &s, int delta, unsigned index);

/// A section that does not parse shows its last good analysis (`s`, where
/// the text was `was` at `old`): moved to where its text is now (`now` at
/// `sec`). The edits since changed the text between a common prefix and a
/// common suffix: what lies before moves with the section, what lies
/// after with the suffix (on the edit's last line by the columns it
/// added too), and what lay inside sits at the edit's new end (a stale
/// hover or hint never lands on text that is not its op's).
void remapStale(SectionResult &s, std::string_view was, const Section &old,
                std::string_view now, const Section &sec,
                const LineIndex &lines);

} // namespace detail
} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TEXTDIFF_H
