//===- StaleView.cpp - the client's text over an older snapshot -----------===//

#include "StaleView.h"
#include "Query.h"
#include "TextDiff.h"

#include <algorithm>
#include <cctype>
#include <string_view>

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
  size_t nb = offsetToCurrent(*b, /*isEnd=*/false);
  size_t ne = *e == *b ? nb : offsetToCurrent(*e, /*isEnd=*/true);
  const LineIndex &now = lines.index();
  return lsp::Range(lines.toLsp(now.position(nb)),
                    lines.toLsp(now.position(ne)));
}

size_t StaleView::offsetToCurrent(size_t old, bool isEnd) const {
  // At an insertion's point a start goes after the inserted text, an end
  // before it.
  if (old < prefix || (isEnd && old == prefix))
    return old;
  if (old >= oldEnd)
    return old - oldEnd + newEnd;
  return prefix; // in the changed text: where the change starts
}

unsigned StaleView::lineToCurrent(unsigned line) const {
  const LineIndex &old = snapshot->lines.index();
  if (line == 0 || line > old.lineCount())
    return line;
  return lines.index()
      .position(offsetToCurrent(old.lineStart(line - 1), /*isEnd=*/false))
      .line;
}

void StaleView::forward(std::optional<lsp::Hover> &h) const {
  if (!h)
    return;
  if (h->range)
    h->range = toCurrent(*h->range);
  // The text names places as "(line N)" (a value's definition, the
  // function): numbers of the snapshot's text.
  std::string &md = h->contents.value;
  static constexpr std::string_view kLine = "(line ";
  for (size_t at = md.find(kLine); at != std::string::npos;
       at = md.find(kLine, at + 1)) {
    size_t b = at + kLine.size(), e = b;
    while (e < md.size() && std::isdigit(static_cast<unsigned char>(md[e])))
      ++e;
    if (e == b || e == md.size() || md[e] != ')' || e - b > 9)
      continue;
    std::string moved =
        std::to_string(lineToCurrent(std::stoul(md.substr(b, e - b))));
    md.replace(b, e - b, moved);
  }
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
