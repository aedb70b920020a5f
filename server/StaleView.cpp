//===- StaleView.cpp - the client's text over an older snapshot -----------===//

#include "StaleView.h"
#include "Query.h"
#include "TextDiff.h"

#include <algorithm>

namespace lsp = llvm::lsp;

namespace tosa_lsp {

StaleView::StaleView(std::shared_ptr<const Snapshot> s, SharedString current,
                     int64_t version)
    : snapshot(std::move(s)), version(version), text(std::move(current)),
      lines(*text) {
  const std::string &old = snapshot->text;
  size_t most = std::min(old.size(), text->size());
  prefix = detail::commonPrefix(old, *text, most);
  size_t suffix = detail::commonSuffix(old, *text, most - prefix);
  oldEnd = old.size() - suffix;
  newEnd = text->size() - suffix;
}

std::optional<lsp::Position> StaleView::answers(lsp::Position now) const {
  std::optional<size_t> at = lines.offset(now);
  if (!at)
    return std::nullopt;
  size_t old;
  if (*at < prefix)
    old = *at;
  else if (*at >= newEnd)
    old = *at - newEnd + oldEnd;
  else
    return std::nullopt; // in the changed text
  const LineIndex &oldLines = snapshot->lines.index();
  Position p = oldLines.position(old);
  // Within the function the change touched, what the snapshot knows (types,
  // inferred shapes, uses) may no longer hold.
  if (const SymbolInfo *f = functionAt(snapshot->analysis, p)) {
    std::optional<size_t> b = oldLines.offset(f->scope.begin),
                          e = oldLines.offset(f->scope.end);
    if (!b || !e || (*b <= oldEnd && prefix <= *e))
      return std::nullopt;
  }
  return snapshot->lines.toLsp(p);
}

std::optional<lsp::Range> StaleView::toCurrent(const lsp::Range &r) const {
  const LineTable &old = snapshot->lines;
  std::optional<size_t> b = old.offset(r.start), e = old.offset(r.end);
  if (!b || !e || *e < *b)
    return std::nullopt;
  // What overlaps the changed text (or holds an insertion) is not there.
  if (*b < oldEnd && *e > prefix)
    return std::nullopt;
  // A range starting at an insertion's point starts after it; one ending
  // there ends before it.
  size_t nb = *b < prefix ? *b : *b - oldEnd + newEnd;
  size_t ne = *e == *b ? nb : *e <= prefix ? *e : *e - oldEnd + newEnd;
  const LineIndex &now = lines.index();
  return lsp::Range(lines.toLsp(now.position(nb)),
                    lines.toLsp(now.position(ne)));
}

void StaleView::forward(std::optional<lsp::Hover> &h) const {
  if (h && h->range)
    h->range = toCurrent(*h->range);
}

void StaleView::forward(std::vector<lsp::Range> &rs) const {
  std::vector<lsp::Range> out;
  for (const lsp::Range &r : rs)
    if (std::optional<lsp::Range> n = toCurrent(r))
      out.push_back(*n);
  rs = std::move(out);
}

void StaleView::forward(std::vector<DefinitionTarget> &ts) const {
  std::vector<DefinitionTarget> out;
  for (DefinitionTarget &t : ts) {
    if (!t.uri.empty() && t.uri != snapshot->uri) {
      out.push_back(std::move(t));
      continue;
    }
    if (std::optional<lsp::Range> n = toCurrent(t.range))
      out.push_back({std::move(t.uri), *n});
  }
  ts = std::move(out);
}

} // namespace tosa_lsp
