//===- EditingResults.h - results of the editing features -------*- C++ -*-===//
//
// What TosaServer's editing features answer where llvm::lsp has no type:
// plain data in LSP coordinates (0-based lines, UTF-16 columns). The
// protocol layer (Protocol.h) maps them to JSON.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_EDITINGRESULTS_H
#define TOSA_LSP_SERVER_EDITINGRESULTS_H

#include "llvm/Support/LSP/Protocol.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

struct DocumentHighlightLsp {
  llvm::lsp::Range range;
  bool write = false; // kind Write (the definition), else Read
};

struct FoldingRangeLsp {
  unsigned startLine = 0, endLine = 0;
  std::optional<unsigned> startCharacter, endCharacter;
  std::string kind; // "comment", "region" or "" (a bracket)
};

struct PrepareRenameLsp {
  llvm::lsp::Range range;
  std::string placeholder;
};

/// Edits of one document version (a rename, a formatting).
struct DocumentEditLsp {
  std::string uri;
  int64_t version = 0;
  std::vector<llvm::lsp::TextEdit> edits;
};

struct SemanticTokensLsp {
  std::string resultId;
  /// The whole array (full), or one edit of the previous one (delta).
  std::shared_ptr<const std::vector<uint32_t>> data;
  bool isDelta = false;
  uint32_t start = 0, deleteCount = 0;
  std::vector<uint32_t> inserted;
};

/// Where go-to-definition goes: in the document (`uri` empty) or, for an
/// op whose `loc(...)` names an existing file, there.
struct DefinitionTarget {
  std::string uri;
  llvm::lsp::Range range;
};

struct WorkspaceSymbolLsp {
  std::string name;
  llvm::lsp::SymbolKind kind = llvm::lsp::SymbolKind::Function;
  std::string containerName; // the op that defines it (func.func)
  llvm::lsp::Location location;
  double score = 0;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_EDITINGRESULTS_H
