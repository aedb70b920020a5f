//===- SourceLocations.h - where an op says it came from --------*- C++ -*-===//
//
// A converted model's ops carry `loc("model.py":12:3)` (or `loc(#loc3)`
// with `#loc3 = loc(...)` at the end of the file): go-to-definition on the
// op goes there, as in mlir-lsp-server. Read from the op's text, so it works
// in a file that does not verify.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_SOURCELOCATIONS_H
#define TOSA_LSP_ANALYSIS_SOURCELOCATIONS_H

#include "Aliases.h"
#include "Analysis.h"

#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

struct FileLineCol {
  std::string file;
  unsigned line = 0, column = 0;
};

/// Every `"file":line:col` in the location of the op whose text is `scope`
/// (its trailing `loc(...)`, through aliases, fused and call-site
/// locations), in order.
std::vector<FileLineCol>
opSourceLocations(std::string_view text, const LineIndex &lines,
                  const std::vector<AliasInfo> &aliases, Range scope,
                  unsigned section);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_SOURCELOCATIONS_H
