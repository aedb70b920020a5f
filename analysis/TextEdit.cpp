//===- TextEdit.cpp - edits of a file's text as plain data ----------------===//

#include "TextEdit.h"

#include "PositionMap.h"

#include <algorithm>

namespace tosa_lsp {

std::string applyEdits(const std::string &text,
                       const std::vector<TextEditData> &edits) {
  return PositionMap::apply(text, edits, nullptr);
}

} // namespace tosa_lsp
