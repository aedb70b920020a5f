//===- Highlight.cpp - every occurrence of the name under the cursor ------===//

#include "Highlight.h"

#include "Navigation.h"

#include <algorithm>

namespace tosa_lsp {

std::vector<Highlight> documentHighlights(const FileAnalysis &fa,
                                          const std::vector<AliasInfo> &aliases,
                                          Position pos) {
  std::vector<Highlight> out;
  auto add = [&](const Range &def, const auto &uses) {
    if (def.begin.valid())
      out.push_back({def, true});
    for (const Range &u : uses)
      out.push_back({u, false});
  };
  if (const AliasInfo *a = aliasAt(aliases, pos)) {
    add(a->def, a->uses);
  } else {
    Occurrences o = occurrences(fa, pos);
    add(o.def, o.uses);
  }
  std::sort(out.begin(), out.end(), [](const Highlight &x, const Highlight &y) {
    return before(x.range.begin, y.range.begin);
  });
  return out;
}

} // namespace tosa_lsp
