//===- Rename.h - rename SSA values, blocks, symbols, aliases ---*- C++ -*-===//
//
// A rename is the list of edits that replaces every occurrence the parser
// resolved to the entity (or, for aliases, every use the lexer found in the
// section), or a reason to refuse: never a partial rename, never a name that
// would collide or not parse.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_RENAME_H
#define TOSA_LSP_ANALYSIS_RENAME_H

#include "Aliases.h"
#include "Analysis.h"
#include "TextEdit.h"

#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

struct RenameInput {
  const FileAnalysis &fa;
  const std::vector<AliasInfo> &aliases;
  std::string_view text; // the analysed text
  const LineIndex &lines;
  /// Also rename in the FileCheck lines (`// CHECK...:`) that can mean the
  /// entity: a symbol's or alias' in its section, a value's or block's in
  /// its function. Off by default: a CHECK line is a pattern, and a test
  /// that names the old spelling may check that it is gone.
  bool checkLines = false;
};

struct RenameTarget {
  enum Kind { Value, Block, Symbol, Alias } kind = Value;
  Range range;             // the name under the cursor
  std::string placeholder; // its current name, with its sigil
  std::string error;       // set when it cannot be renamed
};

/// What is renamed from `pos`; `error` says why nothing is.
RenameTarget prepareRename(const RenameInput &in, Position pos);

struct RenameResult {
  std::vector<TextEditData> edits;
  std::string error;
};

/// The edits renaming what is at `pos` to `newName` (with or without its
/// sigil: `%x` and `x` both name a value).
RenameResult rename(const RenameInput &in, Position pos,
                    std::string_view newName);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_RENAME_H
