//===- Completion.h - what may be typed at a position -----------*- C++ -*-===//
//
// Completion from the text around the cursor (it works while the line being
// typed does not parse) and the last analysis: dialect and op names, SSA
// values and blocks in scope with their types, symbols, types, attributes
// and aliases -- the items mlir-lsp-server offers at the same positions --
// and what it cannot: the inferred result type first in a TOSA op's result
// type, operands whose types fit the op first, TOSA ops as snippets with
// every operand and required attribute.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_COMPLETION_H
#define TOSA_LSP_ANALYSIS_COMPLETION_H

#include "Aliases.h"
#include "Analysis.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

class LineIndex;

/// The dialects and ops MLIR has registered (OpCatalogue.h fills it).
struct CompletionCatalogue {
  std::vector<std::string> dialects;
  /// Full op names, sorted.
  std::vector<std::string> ops;
};

enum class CompletionKind {
  Dialect,
  Operation,
  Value,
  Block,
  Symbol,
  Type,
  Attribute,
  Alias,
  Keyword,
};

struct CompletionItemData {
  std::string label;
  CompletionKind kind = CompletionKind::Keyword;
  std::string detail;
  std::string documentation;
  std::string insertText; // "": the label
  bool snippet = false;   // insertText is an LSP snippet
  std::string sortText;
  /// The text the item replaces: from here to the cursor.
  Position replaceFrom;
};

struct CompletionInput {
  std::string_view text;
  const LineIndex &lines;
  const FileAnalysis &fa;
  const std::vector<AliasInfo> &aliases;
  const CompletionCatalogue &catalogue;
  bool snippets = false; // the client takes snippets
  /// The result type inference gives the op on `line`, when known.
  std::function<std::optional<std::string>(unsigned line)> inferredType;
};

struct CompletionResult {
  std::vector<CompletionItemData> items;
  /// Cut to `limit`: typing more asks again.
  bool incomplete = false;
};
CompletionResult complete(const CompletionInput &in, Position pos,
                          size_t limit = 300);

/// Where the cursor is, as completion sees it (for signature help too).
struct CompletionContext {
  enum Kind {
    None,
    OpName,     // `%0 = tos|`, `tosa.|`
    Value,      // `%|`
    Block,      // `^|`
    Symbol,     // `@|`
    AttrAlias,  // `#|`
    TypeAlias,  // `!|`
    Type,       // after `:`, `->`, in a type list
    ResultType, // after the op's top-level `->`
    AttrName,   // `{|` or `{a = 1, |`
    AttrValue,  // `{a = |`
  } kind = None;
  std::string word; // the partial name before the cursor
  size_t wordOffset = 0;
  std::string opName;        // the op on the line, when one is named before
  unsigned operandIndex = 0; // operands before the cursor
};
CompletionContext completionContext(std::string_view text,
                                    const LineIndex &lines, Position pos);

/// The result type of a TOSA element-wise op (`tosa.add`, `tosa.select`,
/// ...) on operands of these types, by the Broadcastable rules: what the
/// result type position offers first for an op not analysed yet (the line
/// being typed). std::nullopt for other ops or unranked/unknown types.
std::optional<std::string>
elementwiseResultType(std::string_view opName,
                      const std::vector<std::string> &operandTypes);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_COMPLETION_H
