//===- DroppedNanModes.h - `nan_mode` strings MLIR 22 drops -----*- C++ -*-===//
//
// Before MLIR 22, TOSA's NaN propagation mode was a string attribute
// (`nan_mode = "IGNORE"`); MLIR 22 made it an enum property
// (`nan_mode = #tosa.nan_mode<IGNORE>`). Written in an attribute dictionary,
// the old string is dropped without a word by MLIR 22's parser: the op
// verifies, with the default mode, PROPAGATE, so NaN operands give NaN in
// compiled code where the author asked for them to be ignored (a silent
// change of numbers; in a `<{...}>` properties dictionary MLIR reports it).
// Found in the text, as MLIR leaves no trace of it in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_DROPPEDNANMODES_H
#define TOSA_LSP_ANALYSIS_DROPPEDNANMODES_H

#include <cstddef>
#include <string_view>
#include <vector>

namespace tosa_lsp::detail {

/// An attribute `nan_mode = "IGNORE"`: where it starts and its length.
struct DroppedNanMode {
  size_t offset, length;
};

/// What replaces it (the quick fix and the migration), and their title.
inline constexpr const char *kNanModeEnum = "nan_mode = #tosa.nan_mode<IGNORE>";
inline constexpr const char *kNanModeFixTitle =
    "Migrate to MLIR 22: `nan_mode = \"IGNORE\"` -> `#tosa.nan_mode<IGNORE>`";

/// Each `nan_mode = "IGNORE"` of `text` in an attribute dictionary, outside
/// comments and string literals (not in `<{...}>`, not `"PROPAGATE"`,
/// which is what MLIR 22 takes anyway).
std::vector<DroppedNanMode> droppedNanModes(std::string_view text);

} // namespace tosa_lsp::detail

#endif // TOSA_LSP_ANALYSIS_DROPPEDNANMODES_H
