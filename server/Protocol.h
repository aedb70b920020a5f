//===- Protocol.h - tosa-lsp's LSP messages as types ------------*- C++ -*-===//
//
// What the protocol layer reads from messages and writes into them beyond
// llvm::lsp's own types (clangd's Protocol.h): the params llvm::lsp does not
// model, or models without the fields read here, and the results, each with
// its llvm::json mapper. No type here has the name of one of llvm::lsp's:
// LSPServer.cpp names llvm::lsp's as `lsp::X`, ours without a namespace.
// Params that cannot be read give an InvalidParams LSPError saying what was
// expected. The replies written by hand for speed are in DiagnosticsJSON.h
// and InlayHintsJSON.h; reading messages is Transport.h's.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_PROTOCOL_H
#define TOSA_LSP_SERVER_PROTOCOL_H

#include "TosaServer.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Protocol.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// Documents in schemes llvm::lsp does not know
//===----------------------------------------------------------------------===//

/// URIs of other schemes than `file` (`untitled:Untitled-1`, VS Code's
/// unsaved buffers; `vscode-notebook-cell:/nb#cell`) stand for documents
/// too, but llvm::lsp only resolves `scheme:/path` of schemes it knows. Such
/// a URI is carried through llvm::lsp in this scheme, the whole URI escaped
/// as its path (the reader wraps it), and turned back (clientUri) wherever
/// the server names the document, so the client sees its own URI.
inline constexpr llvm::StringLiteral kOpaqueScheme = "tosa-lsp-opaque";
/// Whether the reader carries `uri` in kOpaqueScheme.
bool isOpaqueUri(llvm::StringRef uri);
std::string wrapOpaqueUri(llvm::StringRef uri);
/// The URI the client gave for a document: a wrapped one unwrapped, any
/// other as it is.
std::string clientUri(llvm::StringRef uri);
std::string clientUri(const llvm::lsp::URIForFile &uri);
/// The `file:` URI of a path; empty (logged) when there is none.
std::string fileUri(const std::string &path);

//===----------------------------------------------------------------------===//
// Params
//===----------------------------------------------------------------------===//

/// Params kept as JSON (cancel ids, tokens, replies to our requests).
struct RawParams {
  llvm::json::Value value = nullptr;
};
bool fromJSON(const llvm::json::Value &v, RawParams &r, llvm::json::Path);

/// A notification's params, not copied (a didChange may carry a whole
/// file): valid during the handler's call. Decoded by the handler, so that
/// params it cannot read are not only logged.
struct ParamsRef {
  const llvm::json::Value *value = nullptr;
};
bool fromJSON(const llvm::json::Value &v, ParamsRef &r, llvm::json::Path);

/// What the server reads of `initialize`'s params (lsp::InitializeParams
/// has neither field).
/// What the client can do that the editing features ask about.
struct ClientEditingCapabilities {
  bool snippets = false;        // completionItem.snippetSupport
  bool lineFoldingOnly = false; // foldingRange.lineFoldingOnly
};
ClientEditingCapabilities editingCapabilities(const llvm::json::Value &init);

struct TosaInitializeParams {
  llvm::json::Value initializationOptions = nullptr; // editor settings
  bool showDocument = false; // capabilities.window.showDocument.support
  /// capabilities.workspace.inlayHint.refreshSupport
  bool inlayHintRefresh = false;
  ClientEditingCapabilities editing;
  /// The workspace's folder (rootUri, else the first workspace folder,
  /// else rootPath); empty when none.
  std::string rootPath;
};
bool fromJSON(const llvm::json::Value &v, TosaInitializeParams &p,
              llvm::json::Path path);

struct DidChangeConfigurationParams {
  llvm::json::Value settings = nullptr;
};
bool fromJSON(const llvm::json::Value &v, DidChangeConfigurationParams &p,
              llvm::json::Path path);

struct DidSaveParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
};
bool fromJSON(const llvm::json::Value &v, DidSaveParams &p,
              llvm::json::Path path);

struct FileEvent {
  std::string uri;
};
bool fromJSON(const llvm::json::Value &v, FileEvent &e, llvm::json::Path path);
struct DidChangeWatchedFilesParams {
  std::vector<FileEvent> changes;
};
bool fromJSON(const llvm::json::Value &v, DidChangeWatchedFilesParams &p,
              llvm::json::Path path);

struct CancelParams {
  llvm::json::Value id = nullptr;
};
bool fromJSON(const llvm::json::Value &v, CancelParams &p,
              llvm::json::Path path);

/// `$/tosa-lsp/invalid`: a request the reader refused (Transport.h), to
/// be answered with this error.
struct InvalidMessageParams {
  int64_t code = int64_t(llvm::lsp::ErrorCode::InvalidRequest);
  std::string message = "invalid request";
};
bool fromJSON(const llvm::json::Value &v, InvalidMessageParams &p,
              llvm::json::Path path);
llvm::json::Value toJSON(const InvalidMessageParams &p);

struct ExecuteCommandParams {
  std::string command;
  llvm::json::Value arguments = nullptr;
  llvm::json::Value workDoneToken = nullptr; // null: none given
};
bool fromJSON(const llvm::json::Value &v, ExecuteCommandParams &p,
              llvm::json::Path path);
/// The first element of executeCommand arguments (or the value itself).
const llvm::json::Value &firstArgument(const llvm::json::Value &args);

/// `tosa/previewLowering`'s params, or `tosa.previewLowering`'s first
/// argument: {uri | textDocument.uri, function | position, stage?, mode?}.
struct PreviewParams {
  std::optional<std::string> uri;
  std::optional<std::string> function, stage, mode;
  std::optional<llvm::lsp::Position> position;
};
bool fromJSON(const llvm::json::Value &v, PreviewParams &p,
              llvm::json::Path path);
/// The preview `params` ask for (not written to a file).
llvm::Expected<PreviewRequest> previewRequest(const llvm::json::Value &params);

/// `tosa.compile`'s first argument: {uri, function?, emit?, mode?}.
struct CompileParams {
  std::string uri;
  std::optional<std::string> function, emit, mode;
};
bool fromJSON(const llvm::json::Value &v, CompileParams &p,
              llvm::json::Path path);
llvm::Expected<CompileRequest> compileRequest(const llvm::json::Value &arg);

/// The range a codeAction request asks about: with the diagnostics the
/// client lists on its lines (Neovim 0.7 sends the cursor's position with
/// its line's diagnostics; at the start of the line none overlaps it).
llvm::lsp::Range codeActionRange(const llvm::lsp::CodeActionParams &params);

//===--- The editing features' params (EditingFeatures) -----------------===//

/// {textDocument}: foldingRange, semanticTokens/full, formatting.
struct TextDocumentParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
};
bool fromJSON(const llvm::json::Value &v, TextDocumentParams &p,
              llvm::json::Path path);

struct RenameParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
  llvm::lsp::Position position;
  std::string newName;
};
bool fromJSON(const llvm::json::Value &v, RenameParams &p,
              llvm::json::Path path);

struct SelectionRangeParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
  std::vector<llvm::lsp::Position> positions;
};
bool fromJSON(const llvm::json::Value &v, SelectionRangeParams &p,
              llvm::json::Path path);

struct SemanticTokensDeltaParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
  std::string previousResultId;
};
bool fromJSON(const llvm::json::Value &v, SemanticTokensDeltaParams &p,
              llvm::json::Path path);

struct WorkspaceSymbolParams {
  std::string query;
};
bool fromJSON(const llvm::json::Value &v, WorkspaceSymbolParams &p,
              llvm::json::Path path);

/// formatting and rangeFormatting (`range` absent for the former); the
/// options are not read: the format is mlir-opt's.
struct FormattingParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
  std::optional<llvm::lsp::Range> range;
};
bool fromJSON(const llvm::json::Value &v, FormattingParams &p,
              llvm::json::Path path);

/// mlir/convertToBytecode and mlir/convertFromBytecode: {uri}, as
/// mlir-lsp-server and vscode-mlir's bytecode editor send them.
struct BytecodeParams {
  /// As sent: convertToBytecode names an open document, whatever its
  /// scheme (vscode-mlir's editor saves from a virtual document).
  std::string uri;
};
bool fromJSON(const llvm::json::Value &v, BytecodeParams &p,
              llvm::json::Path path);

/// tosa/graph: the function at `position`, or the one named `function`.
struct GraphParams {
  llvm::lsp::TextDocumentIdentifier textDocument;
  std::optional<llvm::lsp::Position> position;
  std::optional<std::string> function;
  /// The function after this lowering stage (the preview's), e.g. linalg.
  std::optional<std::string> stage;
  std::string mode = "fast"; // with stage: the preview's default
};
bool fromJSON(const llvm::json::Value &v, GraphParams &p,
              llvm::json::Path path);

/// didChange's params. A change that cannot be read is lost, and the
/// document with it: `uri` is then set when the params name a document (to
/// be closed), and the error says what could not be read.
llvm::Expected<llvm::lsp::DidChangeTextDocumentParams>
didChangeParams(const llvm::json::Value &params,
                std::optional<std::string> &uri);

//===----------------------------------------------------------------------===//
// Results and notifications
//===----------------------------------------------------------------------===//

/// `items` converted one by one into a JSON array sized first:
/// json::Value's move is not noexcept, so a growing json::Array copies the
/// elements it holds at each doubling, objects and all (an inlay reply at
/// 200k lines had ~110 page faults of it before it was written as text).
template <typename Items, typename Convert>
llvm::json::Array jsonArray(const Items &items, Convert convert) {
  llvm::json::Array out;
  out.reserve(items.size());
  for (const auto &item : items)
    out.push_back(convert(item));
  return out;
}

/// `initialize`'s result: the capabilities, and under
/// `experimental.tosaLsp` the names preview and compile accept and the
/// settings' defaults (clients send only what the user set).
struct InitializeResult {
  std::string version; // serverInfo.version
  llvm::json::Value defaultSettings = nullptr;
};
llvm::json::Value toJSON(const InitializeResult &r);

/// `tosa/previewLowering`'s result {text, pipeline, mappings, previewUri?}
/// (`previewUri` for a preview written to a file). Takes the result: a
/// preview's text can be megabytes.
llvm::json::Value
previewLoweringResult(PreviewResult &&r,
                      std::optional<std::string> previewUri = std::nullopt);

/// `tosa.compile`'s result {output, header, symbols, bytes, log}.
llvm::json::Value toJSON(const CompileOutputs &r);

/// A `$/progress` value (WorkDoneProgressBegin/Report/End) of a compile.
llvm::json::Value toJSON(const CompileProgress &p);

/// `textDocument/codeAction`'s result. Quick fixes carry the diagnostic
/// they fix with its `code` (lsp::Diagnostic has none); whole-file rewrites
/// go as versioned document changes marked `data: {review: true}`
/// (lsp::WorkspaceEdit has only `changes`); the rest run a command.
llvm::json::Value toJSON(const CodeActions &actions);

llvm::json::Value toJSON(const DocumentHighlightLsp &h);
llvm::json::Value toJSON(const FoldingRangeLsp &f);
llvm::json::Value toJSON(const PrepareRenameLsp &r);
/// A WorkspaceEdit of the document's version (documentChanges).
llvm::json::Value workspaceEdit(const DocumentEditLsp &e);
llvm::json::Value toJSON(const SemanticTokensLsp &t);
/// The whole reply message to a semanticTokens request, written by hand
/// (compact) or pretty (lit tests), the keys sorted as json::Value prints.
std::string semanticTokensReply(const llvm::json::Value &id,
                                const SemanticTokensLsp &t, bool pretty);
/// The whole reply message to a completion request, written by hand as
/// toJSON(list) prints it (compact; pretty through json::Value): 300 items
/// built as a json::Value tree, printed and freed took ~80 % of a
/// completion on a 50k-line function.
std::string completionReply(const llvm::json::Value &id,
                            const llvm::lsp::CompletionList &list, bool pretty);
llvm::json::Value toJSON(const WorkspaceSymbolLsp &w);
/// Nested SelectionRange objects, innermost first (with `parent`).
llvm::json::Value selectionRange(const std::vector<llvm::lsp::Range> &chain);

/// Locations in the document `uri` (the client's URI).
llvm::json::Value locations(llvm::StringRef uri,
                            const std::vector<llvm::lsp::Range> &ranges);

/// window/showMessage's params.
llvm::json::Value showMessageParams(llvm::lsp::MessageType type,
                                    std::string message);
/// A publishDiagnostics that clears the document's diagnostics.
llvm::json::Value clearDiagnosticsParams(std::string uri);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_PROTOCOL_H
