//===- LSPServer.cpp - the language server's method bindings --------------===//
//
// LSP methods bound to TosaServer calls, and their results sent back:
// request ids, `$/cancelRequest`, progress tokens and what the server asks
// of the client (showDocument, showMessage) live here. The types and their
// mappers are in Protocol.h, reading and writing messages in Transport.h.
//
//===----------------------------------------------------------------------===//

#include "LSPServer.h"

#include "DiagnosticsJSON.h"
#include "GraphJSON.h"
#include "InlayHintsJSON.h"
#include "Protocol.h"
#include "Scheduling.h"
#include "TerminationWatch.h"
#include "Timing.h"
#include "TosaServer.h"
#include "Transport.h"

#include "llvm/Support/Compiler.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

using namespace llvm;
namespace lsp = llvm::lsp;
using lsp::ErrorCode;
using lsp::Logger;
using lsp::LSPError;
using lsp::MessageType;

namespace tosa_lsp {
namespace {

std::string idKey(const json::Value &id) {
  std::string s;
  raw_string_ostream os(s);
  os << id;
  return s;
}

/// JSON text for the configuration, which reads it with nlohmann.
std::string jsonText(const json::Value &v) {
  std::string s;
  raw_string_ostream os(s);
  os << v;
  return s;
}

/// A request answered later (when the document's first snapshot exists);
/// `$/cancelRequest` can answer it first.
struct Deferred {
  std::mutex mu;
  bool done = false;
  unique_function<void(Expected<json::Value>)> reply;
  /// Stops the work behind the request (e.g. kills a compiler process).
  std::function<void()> onCancel;
  /// Takes the reply over (it is then sent by other means), unless it was
  /// answered already.
  bool claim() {
    std::lock_guard<std::mutex> lock(mu);
    return !std::exchange(done, true);
  }
  bool finish(Expected<json::Value> result) {
    std::lock_guard<std::mutex> lock(mu);
    if (done) {
      if (!result)
        consumeError(result.takeError());
      return false;
    }
    done = true;
    reply(std::move(result));
    return true;
  }
};

/// LSP messages in, TosaServer calls; TosaServer results out, LSP messages.
class Server : public TosaServer::Callbacks {
public:
  Server(Transport &transport, const ServerOptions &options)
      : transport(transport), litTest(options.litTest),
        version(options.version), handler(transport.json()),
        publish(handler.outgoingNotification<json::Value>(
            "textDocument/publishDiagnostics")),
        showMessage(
            handler.outgoingNotification<json::Value>("window/showMessage")),
        showDocumentRequest(handler.outgoingRequest<json::Value, RawParams>(
            "window/showDocument",
            [](json::Value, Expected<RawParams> r) {
              if (!r)
                Logger::error("window/showDocument: {0}",
                              toString(r.takeError()));
            })),
        createProgress(handler.outgoingRequest<json::Value, RawParams>(
            "window/workDoneProgress/create",
            [](json::Value, Expected<RawParams> r) {
              if (!r)
                consumeError(r.takeError()); // progress is best effort
            })),
        refreshInlayHints(handler.outgoingRequest<json::Value, RawParams>(
            "workspace/inlayHint/refresh",
            [](json::Value, Expected<RawParams> r) {
              if (!r)
                consumeError(r.takeError()); // best effort
            })),
        progress(handler.outgoingNotification<json::Value>("$/progress")),
        features(featureOptions(options), *this) {
    handler.method("initialize", this, &Server::onInitialize);
    handler.method("shutdown", this, &Server::onShutdown);
    handler.notification("initialized", this, &Server::onIgnored);
    handler.notification("$/tosa-lsp/ignored", this, &Server::onIgnored);
    handler.method("$/tosa-lsp/invalid", this, &Server::onInvalid);
    handler.notification("$/setTrace", this, &Server::onIgnored);
    handler.notification("$/cancelRequest", this, &Server::onCancel);
    handler.notification("textDocument/didOpen", this, &Server::onDidOpen);
    handler.notification("textDocument/didChange", this, &Server::onDidChange);
    handler.notification("textDocument/didClose", this, &Server::onDidClose);
    handler.notification("textDocument/didSave", this, &Server::onDidSave);
    handler.notification("workspace/didChangeConfiguration", this,
                         &Server::onDidChangeConfiguration);
    handler.notification("workspace/didChangeWatchedFiles", this,
                         &Server::onDidChangeWatchedFiles);
    handler.method("textDocument/hover", this, &Server::onHover);
    handler.method("textDocument/inlayHint", this, &Server::onInlayHint);
    handler.method("textDocument/definition", this, &Server::onDefinition);
    handler.method("textDocument/references", this, &Server::onReferences);
    handler.method("textDocument/documentSymbol", this,
                   &Server::onDocumentSymbol);
    handler.method("textDocument/codeAction", this, &Server::onCodeAction);
    handler.method("tosa/previewLowering", this, &Server::onPreviewLowering);
    handler.method("textDocument/documentHighlight", this,
                   &Server::onDocumentHighlight);
    handler.method("textDocument/prepareRename", this,
                   &Server::onPrepareRename);
    handler.method("textDocument/rename", this, &Server::onRename);
    handler.method("textDocument/foldingRange", this, &Server::onFoldingRange);
    handler.method("textDocument/selectionRange", this,
                   &Server::onSelectionRange);
    handler.method("textDocument/semanticTokens/full", this,
                   &Server::onSemanticTokens);
    handler.method("textDocument/semanticTokens/full/delta", this,
                   &Server::onSemanticTokensDelta);
    handler.method("workspace/symbol", this, &Server::onWorkspaceSymbol);
    handler.method("textDocument/formatting", this, &Server::onFormatting);
    handler.method("textDocument/rangeFormatting", this, &Server::onFormatting);
    handler.method("textDocument/completion", this, &Server::onCompletion);
    handler.method("textDocument/signatureHelp", this,
                   &Server::onSignatureHelp);
    handler.method("mlir/convertToBytecode", this,
                   &Server::onConvertToBytecode);
    handler.method("mlir/convertFromBytecode", this,
                   &Server::onConvertFromBytecode);
    handler.method("tosa/graph", this, &Server::onGraph);
    handler.method("workspace/executeCommand", this, &Server::onExecuteCommand);
  }

  lsp::MessageHandler &messageHandler() { return handler; }
  bool shutdownRequested = false;
  /// Ends running compiles (their children killed, their temp directories
  /// removed) and waits for them, at most `limit`.
  void stopCompiles(std::chrono::milliseconds limit) {
    features.cancelCompiles();
    features.waitCompilesIdle(limit);
  }
  /// What must not outlive the process when it ends without the server's
  /// destructor: compiles (children, temp directories) and the previews.
  void cleanUpForExit() {
    stopCompiles(std::chrono::seconds(3));
    features.removePreviews();
  }

private:
  static TosaServer::Options featureOptions(const ServerOptions &o) {
    TosaServer::Options out;
    out.sync = o.sync;
    out.debounce = std::chrono::milliseconds(o.debounceMs);
    out.inferInAnalysis = o.inferInAnalysis;
    out.inferAfterPublish = o.inferAfterPublish;
    out.self = sys::fs::getMainExecutable(nullptr, (void *)&runServer);
    return out;
  }

  //===--------------------------------------------------------------------===//
  // TosaServer callbacks
  //===--------------------------------------------------------------------===//

  void onDiagnostics(Scheduler::SnapshotPtr s,
                     const std::vector<Diagnostic> &extra) override {
    publishDiagnostics(*s, extra);
  }
  void onCleanDiagnostics(const std::string &uri, int64_t version) override {
    transport.sendRaw(cleanDiagnosticsMessage(uri, version, litTest));
  }
  void onError(const std::string &message) override {
    showMessage(showMessageParams(MessageType::Error, "tosa-lsp: " + message));
  }
  void onInlayHintsChanged() override {
    if (clientInlayHintRefresh)
      refreshInlayHints(nullptr, json::Value("tosa-refresh-" +
                                             std::to_string(++outgoingIds)));
  }

  //===--------------------------------------------------------------------===//
  // Lifecycle and configuration
  //===--------------------------------------------------------------------===//

  void onInitialize(const TosaInitializeParams &params,
                    Callback<json::Value> reply) {
    if (params.initializationOptions.kind() != json::Value::Null)
      features.setSettingsText(jsonText(params.initializationOptions));
    // Neovim 0.7 and others lack window/showDocument: previews then say
    // where the file is instead.
    clientShowDocument = params.showDocument;
    clientInlayHintRefresh = params.inlayHintRefresh;
    editing = params.editing;
    if (!params.rootPath.empty())
      roots = {params.rootPath};
    InitializeResult result;
    result.version = version;
    Expected<json::Value> defaults =
        json::parse(TosaServer::defaultSettingsText());
    if (defaults)
      result.defaultSettings = std::move(*defaults);
    else // nlohmann wrote it: cannot happen
      Logger::error("default settings: {0}", toString(defaults.takeError()));
    reply(toJSON(result));
    // After the reply, not before it (the client sends the didOpen only
    // once it has the reply: 15-25 ms of every open), nor at the open
    // (beside the first analysis it took a core from it): between the
    // two, while the client reads and encodes the buffer.
    features.warmUpRequests();
  }

  void onShutdown(const lsp::NoParams &, Callback<json::Value> reply) {
    shutdownRequested = true;
    features.cancelCompiles(); // a compile can take minutes: do not wait
    reply(nullptr);
  }

  void onIgnored(const RawParams &) {}

  /// A request the reader found invalid (see MessageReader).
  void onInvalid(const InvalidMessageParams &params,
                 Callback<json::Value> reply) {
    reply(make_error<LSPError>(params.message,
                               static_cast<ErrorCode>(params.code)));
  }

  void onDidChangeConfiguration(const DidChangeConfigurationParams &params) {
    features.setSettingsText(jsonText(params.settings));
  }

  static bool isConfigFile(StringRef uriOrPath) {
    return sys::path::filename(uriOrPath) == ".tosa-lsp.json";
  }

  void onDidChangeWatchedFiles(const DidChangeWatchedFilesParams &params) {
    if (llvm::any_of(params.changes,
                     [](const FileEvent &e) { return isConfigFile(e.uri); }))
      features.configFilesChanged();
  }

  void onDidSave(const DidSaveParams &params) {
    if (isConfigFile(params.textDocument.uri.file()))
      features.configFilesChanged();
  }

  //===--------------------------------------------------------------------===//
  // Documents
  //===--------------------------------------------------------------------===//

  void onDidOpen(const lsp::DidOpenTextDocumentParams &params) {
    // The text is moved, never copied (20 MB at 200k lines): a long one
    // from where the message's reading put it aside, a short one from
    // `params`, the message handler's own non-const object, unused after
    // this call.
    std::optional<std::string> text = transport.takeOpenedText();
    features.addDocument(
        clientUri(params.textDocument.uri),
        params.textDocument.uri.file().str(), params.textDocument.version,
        text ? std::move(*text)
             : std::move(const_cast<std::string &>(params.textDocument.text)));
  }

  void onDidChange(const ParamsRef &ref) {
    std::optional<std::string> named;
    Expected<lsp::DidChangeTextDocumentParams> params =
        didChangeParams(*ref.value, named);
    if (!params) {
      // Dropped, the edit would leave our text behind the editor's for
      // good: the document is closed, as after a change we cannot apply.
      std::string message = errorMessage(params.takeError());
      if (!named)
        return Logger::error("{0}", message);
      return desynced(*named, message);
    }
    const std::string uri = clientUri(params->textDocument.uri);
    Error err = features.changeDocument(uri, params->textDocument.version,
                                        params->contentChanges);
    handleAllErrors(
        std::move(err),
        [&](const ChangeError &e) {
          if (e.kind == ChangeError::NotOpen)
            return Logger::error("{0}: {1}", uri, e.message);
          desynced(uri, e.message); // changeDocument closed it
        },
        [&](const LSPError &e) { desynced(uri, e.message); },
        [&](const ErrorInfoBase &e) { desynced(uri, e.message()); });
  }

  static std::string errorMessage(Error err) {
    std::string message;
    handleAllErrors(
        std::move(err), [&](const LSPError &e) { message = e.message; },
        [&](const ErrorInfoBase &e) { message = e.message(); });
    return message;
  }

  /// The client's text of `uri` is no longer known: it is closed here, its
  /// diagnostics cleared, and the user told how to recover.
  void desynced(const std::string &uri, const std::string &message) {
    Logger::error("{0}: {1}", uri, message);
    features.removeDocument(uri);
    publish(clearDiagnosticsParams(uri));
    showMessage(showMessageParams(
        MessageType::Error, "tosa-lsp: " + message +
                                "; the file is no longer analysed: close and "
                                "reopen it to resync"));
  }

  void onDidClose(const lsp::DidCloseTextDocumentParams &params) {
    const std::string uri = clientUri(params.textDocument.uri);
    features.removeDocument(uri);
    publish(clearDiagnosticsParams(uri));
  }

  /// Streams the notification straight to the output: with 10^5
  /// diagnostics a json::Value tree (built, copied, sorted, printed) costs
  /// more than analysing the file.
  void publishDiagnostics(const Snapshot &s,
                          const std::vector<Diagnostic> &extra) {
    std::string text;
    {
      PhaseTimer t("diagnostics to JSON");
      text = publishDiagnosticsMessage(s, extra, litTest);
    }
    PhaseTimer t("diagnostics sent");
    transport.sendRaw(text);
  }

  //===--------------------------------------------------------------------===//
  // Requests: answered later, from any thread, unless cancelled first
  //===--------------------------------------------------------------------===//

  /// Wraps the reply of the request being handled so that it can be
  /// answered later, from any thread, and `$/cancelRequest` can answer it
  /// first. Returns it with its key in `pending` (empty without an id).
  std::pair<std::shared_ptr<Deferred>, std::string>
  defer(Callback<json::Value> reply) {
    auto deferred = std::make_shared<Deferred>();
    deferred->reply = std::move(reply);
    const std::optional<json::Value> &id = transport.currentId();
    std::string key = id ? idKey(*id) : "";
    if (!key.empty()) {
      std::lock_guard<std::mutex> lock(pendingMu);
      pending[key] = deferred;
    }
    return {deferred, key};
  }

  /// A TosaServer callback that answers `reply` with `convert(result)` (or
  /// the error), unless `$/cancelRequest` answered it first.
  template <typename T, typename Convert>
  Callback<T> answer(Callback<json::Value> reply, Convert convert,
                     std::shared_ptr<Deferred> *out = nullptr) {
    auto [deferred, key] = defer(std::move(reply));
    if (out)
      *out = deferred;
    return [this, deferred = deferred, key = key,
            convert = std::move(convert)](Expected<T> r) mutable {
      if (!r)
        deferred->finish(r.takeError());
      else
        deferred->finish(convert(std::move(*r)));
      forget(key);
    };
  }
  /// The same, answered with a reply message `write(id, result)` writes
  /// whole (no json::Value tree: big results), or toJSON(result) when the
  /// request has no id.
  template <typename T, typename Write>
  Callback<T> answerRaw(Callback<json::Value> reply, Write write) {
    auto [deferred, key] = defer(std::move(reply));
    std::optional<json::Value> id = transport.currentId();
    return [this, deferred = deferred, key = key, id = std::move(id),
            write = std::move(write)](Expected<T> r) mutable {
      if (!r)
        deferred->finish(r.takeError());
      else if (!id)
        deferred->finish(toJSON(*r));
      else if (deferred->claim())
        transport.sendRaw(write(*id, *r));
      forget(key);
    };
  }
  /// The same, answered with toJSON(result).
  template <typename T> Callback<T> answer(Callback<json::Value> reply) {
    return answer<T>(std::move(reply),
                     [](T r) -> json::Value { return toJSON(r); });
  }

  void forget(const std::string &key) {
    if (key.empty())
      return;
    std::lock_guard<std::mutex> lock(pendingMu);
    pending.erase(key);
  }

  void onCancel(const CancelParams &params) {
    std::shared_ptr<Deferred> d;
    {
      std::lock_guard<std::mutex> lock(pendingMu);
      auto it = pending.find(idKey(params.id));
      if (it == pending.end())
        return; // Already answered.
      d = it->second;
      pending.erase(it);
    }
    if (d->onCancel)
      d->onCancel();
    d->finish(
        make_error<LSPError>("request cancelled", ErrorCode::RequestCancelled));
  }

  //===--------------------------------------------------------------------===//
  // Editor features
  //===--------------------------------------------------------------------===//

  void onHover(const lsp::TextDocumentPositionParams &params,
               Callback<json::Value> reply) {
    features.hover(
        clientUri(params.textDocument.uri), params.position,
        answer<std::optional<lsp::Hover>>(
            std::move(reply), [](std::optional<lsp::Hover> h) -> json::Value {
              return h ? toJSON(*h) : json::Value(nullptr);
            }));
  }

  /// Answered with text written straight to the output (InlayHintsJSON.h):
  /// every screen an editor shows asks for its hints.
  void onInlayHint(const lsp::InlayHintsParams &params,
                   Callback<json::Value> reply) {
    auto [deferred, key] = defer(std::move(reply));
    std::optional<json::Value> id = transport.currentId();
    features.inlayHints(
        clientUri(params.textDocument.uri), params.range,
        [this, deferred = deferred, key = key,
         id = std::move(id)](Expected<std::vector<lsp::InlayHint>> r) mutable {
          if (!r || !id)
            deferred->finish(
                r ? json::Value(jsonArray(
                        *r, [](const lsp::InlayHint &h) { return toJSON(h); }))
                  : Expected<json::Value>(r.takeError()));
          else if (deferred->claim())
            transport.sendRaw(inlayHintsReplyMessage(*id, *r, litTest));
          forget(key);
        });
  }

  static auto locationsIn(const lsp::URIForFile &uri) {
    return [uri = clientUri(uri)](std::vector<lsp::Range> rs) {
      return locations(uri, rs);
    };
  }

  void onDefinition(const lsp::TextDocumentPositionParams &params,
                    Callback<json::Value> reply) {
    features.definition(
        clientUri(params.textDocument.uri), params.position,
        answer<std::vector<DefinitionTarget>>(
            std::move(reply),
            [uri = clientUri(params.textDocument.uri)](
                std::vector<DefinitionTarget> ts) -> json::Value {
              return jsonArray(ts, [&](const DefinitionTarget &t) {
                return json::Object{{"uri", t.uri.empty() ? uri : t.uri},
                                    {"range", toJSON(t.range)}};
              });
            }));
  }

  void onReferences(const lsp::ReferenceParams &params,
                    Callback<json::Value> reply) {
    features.references(
        clientUri(params.textDocument.uri), params.position,
        params.context.includeDeclaration,
        answer<std::vector<lsp::Range>>(std::move(reply),
                                        locationsIn(params.textDocument.uri)));
  }

  void onDocumentSymbol(const lsp::DocumentSymbolParams &params,
                        Callback<json::Value> reply) {
    features.documentSymbols(
        clientUri(params.textDocument.uri),
        answer<std::vector<lsp::DocumentSymbol>>(
            std::move(reply),
            [](std::vector<lsp::DocumentSymbol> symbols) -> json::Value {
              return jsonArray(symbols, [](const lsp::DocumentSymbol &d) {
                return toJSON(d);
              });
            }));
  }

  void onCodeAction(const lsp::CodeActionParams &params,
                    Callback<json::Value> reply) {
    features.codeActions(clientUri(params.textDocument.uri),
                         codeActionRange(params), params.context.only,
                         answer<CodeActions>(std::move(reply)));
  }

  //===--------------------------------------------------------------------===//
  // Editing features (TosaServer's EditingFeatures.cpp)
  //===--------------------------------------------------------------------===//

  template <typename T>
  static json::Value arrayOf(const std::vector<T> &items) {
    return jsonArray(items, [](const T &t) { return toJSON(t); });
  }

  void onDocumentHighlight(const lsp::TextDocumentPositionParams &params,
                           Callback<json::Value> reply) {
    features.documentHighlights(
        clientUri(params.textDocument.uri), params.position,
        answer<std::vector<DocumentHighlightLsp>>(
            std::move(reply), arrayOf<DocumentHighlightLsp>));
  }

  void onPrepareRename(const lsp::TextDocumentPositionParams &params,
                       Callback<json::Value> reply) {
    features.prepareRename(clientUri(params.textDocument.uri), params.position,
                           answer<PrepareRenameLsp>(std::move(reply)));
  }

  void onRename(const RenameParams &params, Callback<json::Value> reply) {
    features.rename(clientUri(params.textDocument.uri), params.position,
                    params.newName,
                    answer<DocumentEditLsp>(std::move(reply), workspaceEdit));
  }

  void onFoldingRange(const TextDocumentParams &params,
                      Callback<json::Value> reply) {
    features.foldingRanges(clientUri(params.textDocument.uri),
                           editing.lineFoldingOnly,
                           answer<std::vector<FoldingRangeLsp>>(
                               std::move(reply), arrayOf<FoldingRangeLsp>));
  }

  void onSelectionRange(const SelectionRangeParams &params,
                        Callback<json::Value> reply) {
    features.selectionRanges(
        clientUri(params.textDocument.uri), params.positions,
        answer<std::vector<std::vector<lsp::Range>>>(
            std::move(reply),
            [](std::vector<std::vector<lsp::Range>> chains) -> json::Value {
              return jsonArray(chains, selectionRange);
            }));
  }

  void onSemanticTokens(const TextDocumentParams &params,
                        Callback<json::Value> reply) {
    sendTokens(clientUri(params.textDocument.uri), std::nullopt,
               std::move(reply));
  }

  void onSemanticTokensDelta(const SemanticTokensDeltaParams &params,
                             Callback<json::Value> reply) {
    sendTokens(clientUri(params.textDocument.uri), params.previousResultId,
               std::move(reply));
  }

  /// Written straight to the output (Protocol.h's semanticTokensReply): a
  /// 50k-line model has millions of integers, which a json::Value tree
  /// took a second to build and print.
  void sendTokens(const std::string &uri, std::optional<std::string> previous,
                  Callback<json::Value> reply) {
    features.semanticTokens(
        uri, std::move(previous),
        answerRaw<SemanticTokensLsp>(
            std::move(reply),
            [this](const json::Value &id, const SemanticTokensLsp &t) {
              return semanticTokensReply(id, t, litTest);
            }));
  }

  void onWorkspaceSymbol(const WorkspaceSymbolParams &params,
                         Callback<json::Value> reply) {
    features.workspaceSymbols(
        params.query, roots,
        answer<std::vector<WorkspaceSymbolLsp>>(std::move(reply),
                                                arrayOf<WorkspaceSymbolLsp>));
  }

  void onFormatting(const FormattingParams &params,
                    Callback<json::Value> reply) {
    features.formatting(
        clientUri(params.textDocument.uri), params.range,
        answer<DocumentEditLsp>(std::move(reply), [](DocumentEditLsp e) {
          return json::Value(jsonArray(
              e.edits, [](const lsp::TextEdit &t) { return toJSON(t); }));
        }));
  }

  void onCompletion(const lsp::CompletionParams &params,
                    Callback<json::Value> reply) {
    features.completion(
        clientUri(params.textDocument.uri), params.position, editing.snippets,
        answerRaw<lsp::CompletionList>(
            std::move(reply),
            [this](const json::Value &id, const lsp::CompletionList &l) {
              return completionReply(id, l, litTest);
            }));
  }

  void onSignatureHelp(const lsp::TextDocumentPositionParams &params,
                       Callback<json::Value> reply) {
    features.signatureHelp(
        clientUri(params.textDocument.uri), params.position,
        answer<std::optional<lsp::SignatureHelp>>(
            std::move(reply),
            [](std::optional<lsp::SignatureHelp> h) -> json::Value {
              return h ? toJSON(*h) : json::Value(nullptr);
            }));
  }

  void onConvertToBytecode(const BytecodeParams &params,
                           Callback<json::Value> reply) {
    // Keyed as didOpen keys it: a file: URI normalised, others as sent.
    std::string uri = params.uri;
    if (!isOpaqueUri(uri)) {
      if (Expected<lsp::URIForFile> u = lsp::URIForFile::fromURI(uri))
        uri = clientUri(*u);
      else
        consumeError(u.takeError());
    }
    features.convertToBytecode(
        uri, answer<std::string>(std::move(reply), [](std::string base64) {
          return json::Value(json::Object{{"output", std::move(base64)}});
        }));
  }

  void onConvertFromBytecode(const BytecodeParams &params,
                             Callback<json::Value> reply) {
    Expected<lsp::URIForFile> file = lsp::URIForFile::fromURI(params.uri);
    if (!file)
      return reply(make_error<LSPError>(
          "mlir/convertFromBytecode reads a file: " + params.uri +
              " is not a file: URI (" + toString(file.takeError()) + ")",
          ErrorCode::InvalidParams));
    features.convertFromBytecode(
        file->file().str(),
        answer<std::string>(std::move(reply), [](std::string text) {
          return json::Value(json::Object{{"output", std::move(text)}});
        }));
  }

  /// Written straight to the output, as inlay hints: a model-sized
  /// function's graph is megabytes (GraphJSON.h).
  void onGraph(const GraphParams &params, Callback<json::Value> reply) {
    auto [deferred, key] = defer(std::move(reply));
    std::optional<json::Value> id = transport.currentId();
    features.graph(
        clientUri(params.textDocument.uri), params.position, params.function,
        params.stage, params.mode,
        [this, deferred = deferred, key = key, id = std::move(id),
         stage = params.stage,
         mode = params.mode](Expected<TosaServer::GraphReply> r) mutable {
          if (!r) {
            deferred->finish(r.takeError());
          } else if (deferred->claim()) {
            std::string text;
            raw_string_ostream out(text);
            const Snapshot &s = *r->snapshot;
            json::Object extra{{"uri", s.uri}, {"version", s.version}};
            if (stage) {
              extra["stage"] = *stage;
              extra["mode"] = mode;
            }
            if (r->migrated) // the graph of the old file once migrated
              extra["migrated"] = true;
            json::OStream os(out, litTest ? 2 : 0);
            os.object([&] {
              if (id)
                os.attribute("id", *id);
              os.attribute("jsonrpc", "2.0");
              os.attributeBegin("result");
              os.rawValue([&](raw_ostream &o) {
                if (litTest) { // a node per line, for FileCheck
                  json::Object g =
                      graphToJSON(*r->graph, s.lines, kGraphNodeLimit);
                  for (auto &kv : extra)
                    g[kv.first] = kv.second;
                  o << StringRef(graphJSONLines(g)).rtrim('\n');
                } else {
                  writeGraphJSON(o, *r->graph, s.lines, kGraphNodeLimit,
                                 &extra);
                }
              });
              os.attributeEnd();
            });
            out.flush();
            transport.sendRaw(text);
          }
          forget(key);
        });
  }

  //===--------------------------------------------------------------------===//
  // Previews and compiles
  //===--------------------------------------------------------------------===//

  /// Runs a preview; with `showDocument`, the preview is also written to a
  /// read-only file the client is asked to open.
  void preview(const json::Value &raw, Callback<json::Value> reply,
               bool showDocument) {
    Expected<PreviewRequest> req = previewRequest(raw);
    if (!req)
      return reply(req.takeError());
    req->writeFile = showDocument;
    std::string function = req->function.value_or("");
    features.previewLowering(
        std::move(*req),
        answer<PreviewResult>(
            std::move(reply), [this, function](PreviewResult r) {
              if (r.file.empty())
                return previewLoweringResult(std::move(r));
              std::string uri = fileUri(r.file);
              showPreview(uri, r.file, function);
              return previewLoweringResult(std::move(r), std::move(uri));
            }));
  }

  /// Opens a preview file in the client, or says where it is.
  void showPreview(const std::string &uri, const std::string &file,
                   const std::string &function) {
    if (clientShowDocument)
      return showDocumentRequest(
          json::Object{{"uri", uri}, {"takeFocus", true}},
          json::Value("tosa-preview-" + std::to_string(++outgoingIds)));
    showMessage(showMessageParams(
        MessageType::Info,
        "tosa-lsp: lowering preview" +
            (function.empty() ? std::string() : " of @" + function) +
            " written to " + file));
  }

  void onPreviewLowering(const RawParams &params, Callback<json::Value> reply) {
    preview(firstArgument(params.value), std::move(reply), false);
  }

  void onExecuteCommand(const ExecuteCommandParams &params,
                        Callback<json::Value> reply) {
    if (params.command == "tosa.compile")
      return startCompile(params, std::move(reply));
    if (params.command != "tosa.previewLowering")
      return reply(make_error<LSPError>(
          "unknown command: " +
              (params.command.empty() ? std::string("(none)") : params.command),
          ErrorCode::InvalidParams));
    preview(firstArgument(params.arguments), std::move(reply), true);
  }

  /// `$/progress` of a compile, on the client's token if it gave one, else
  /// on one created here.
  std::function<void(const CompileProgress &)>
  compileProgress(json::Value token) {
    bool create = token.kind() == json::Value::Null;
    if (create)
      token = "tosa-compile-" + std::to_string(++outgoingIds);
    return [this, token, create](const CompileProgress &p) {
      if (create && p.kind == CompileProgress::Begin)
        createProgress(
            json::Object{{"token", token}},
            json::Value("tosa-progress-" + std::to_string(++outgoingIds)));
      progress(json::Object{{"token", token}, {"value", toJSON(p)}});
    };
  }

  /// `tosa.compile {uri, function?, emit?, mode?}`: a child process, with
  /// $/progress and cancellation.
  void startCompile(const ExecuteCommandParams &params,
                    Callback<json::Value> reply) {
    Expected<CompileRequest> req =
        compileRequest(firstArgument(params.arguments));
    if (!req)
      return reply(req.takeError());
    // A client that gives no token is taken to be plugin-less (the plugins
    // and the VS Code extension always give one): it is told where the
    // output went with window/showMessage, as it would not show the reply.
    bool tell = params.workDoneToken.kind() == json::Value::Null;
    std::string what =
        req->function.empty() ? std::string("the file") : "@" + req->function;
    std::shared_ptr<Deferred> deferred;
    auto cb = answer<CompileOutputs>(
        std::move(reply),
        [this, tell, what](CompileOutputs r) {
          if (tell)
            showMessage(showMessageParams(MessageType::Info,
                                          "tosa-lsp: compiled " + what +
                                              " to " + r.output + " (header " +
                                              r.header + ")"));
          return toJSON(r);
        },
        &deferred);
    std::function<void()> cancel = features.compile(
        std::move(*req), compileProgress(params.workDoneToken), std::move(cb));
    std::lock_guard<std::mutex> lock(deferred->mu);
    if (!deferred->done)
      deferred->onCancel = std::move(cancel);
  }

  Transport &transport;
  bool litTest;
  std::string version;             // serverInfo.version
  bool clientShowDocument = false; // capabilities.window.showDocument.support
  std::atomic<bool> clientInlayHintRefresh{false};
  ClientEditingCapabilities editing;
  std::vector<std::string> roots; // the workspace's folders, for its symbols
  lsp::MessageHandler handler;
  lsp::OutgoingNotification<json::Value> publish;
  lsp::OutgoingNotification<json::Value> showMessage;
  lsp::OutgoingRequest<json::Value> showDocumentRequest;
  lsp::OutgoingRequest<json::Value> createProgress;
  lsp::OutgoingRequest<json::Value> refreshInlayHints;
  lsp::OutgoingNotification<json::Value> progress;
  std::atomic<int> outgoingIds{0};
  std::mutex pendingMu;
  std::map<std::string, std::shared_ptr<Deferred>> pending;
  TosaServer features; // last: its threads call back into the members above
};

} // namespace

/// Sanitizers check at exit (leaks) or report through the exit code.
constexpr bool kSanitized =
    LLVM_ADDRESS_SANITIZER_BUILD || LLVM_THREAD_SANITIZER_BUILD;

int runServer(std::FILE *in, const ServerOptions &options) {
  Logger::setLogLevel(options.verbose ? Logger::Level::Debug
                                      : Logger::Level::Error);
  if (options.litTest)
    lsp::URIForFile::registerSupportedScheme("test");   // test:///foo.mlir
  lsp::URIForFile::registerSupportedScheme("untitled"); // unsaved buffers
  lsp::URIForFile::registerSupportedScheme(kOpaqueScheme);
  Transport transport(in, options.litTest);
  ServerOptions opts = options;
  opts.sync |= options.litTest;
  auto server = std::make_unique<Server>(transport, opts);
  std::optional<TerminationWatch> watch;
  if (!options.litTest)
    watch.emplace([&server] { server->stopCompiles(std::chrono::seconds(3)); });
  // The message loop reads what the user waits for (after the threads it
  // started: they do not inherit it).
  (void)requestSlices(kRequestSlice);
  Error err = transport.run(server->messageHandler());
  bool clean = !err && server->shutdownRequested;
  if (err)
    Logger::error("transport: {0}", toString(std::move(err)));
  watch.reset(); // before the server it would stop
  if (options.exitAtOnce && !kSanitized) {
    // Freeing the documents' analyses and ending the threads (their heaps
    // given back page by page) was ~0.1 s of CPU after a 50k-line
    // session, a tenth of its total, spent for nothing.
    server->cleanUpForExit();
    llvm::outs().flush();
    std::fflush(stdout);
    sys::Process::Exit(clean ? 0 : 1, /*NoCleanup=*/true);
  }
  server.reset(); // Joins the workers before the transport goes away.
  return clean ? 0 : 1;
}

} // namespace tosa_lsp
