//===- LSPServer.cpp - the language server's protocol layer ---------------===//

#include "LSPServer.h"

#include "CompileJob.h"
#include "Convert.h"
#include "FramedOutput.h"
#include "Input.h"
#include "OutputFiles.h"
#include "Scheduler.h"
#include "Timing.h"

#include "Hover.h"
#include "Lowering.h"
#include "InlayHints.h"
#include "Navigation.h"
#include "Query.h"

#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/thread.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {
namespace {

/// Params kept as raw JSON (initializationOptions, settings, cancel ids).
struct RawParams {
  json::Value value = nullptr;
};
bool fromJSON(const json::Value &v, RawParams &r, json::Path) {
  r.value = v;
  return true;
}

/// Reads messages like JSONTransportInputOverFile, but
/// - remembers the id of the message about to be dispatched (MessageHandler
///   does not hand it to method handlers, and `$/cancelRequest` needs it);
/// - never lets a message take the server down: bodies are read in chunks
///   up to kMaxMessageBytes (a `Content-Length: 1000000000` with no body
///   allocates nothing), bad headers are skipped up to the next one, and
///   nesting deeper than kMaxMessageDepth is refused before any recursive
///   JSON code sees it;
/// - answers what JSON-RPC says must be answered: a request that is not a
///   JSON-RPC 2.0 object gets InvalidRequest, unparsable JSON ParseError
///   (id null), and every request after `shutdown` InvalidRequest. Those
///   become a call of `$/tosa-lsp/invalid`, which replies with the error;
///   anything else malformed becomes a no-op notification (JSONTransport
///   would otherwise stop).
class TrackingInput : public JSONTransportInput {
public:
  static constexpr size_t kMaxMessageBytes = size_t(256) << 20;
  static constexpr unsigned kMaxMessageDepth = 256;

  TrackingInput(std::FILE *in, JSONStreamStyle style)
      : JSONTransportInput(style), in(in), inner(in, style) {}
  bool hasError() const override { return inner.hasError(); }
  bool isEndOfInput() const override { return inner.isEndOfInput(); }
  LogicalResult readDelimitedMessage(std::string &json) override {
    LogicalResult r = inner.readDelimitedMessage(json);
    inspect(json);
    return r;
  }
  LogicalResult readStandardMessage(std::string &json) override {
    std::optional<size_t> length;
    std::string line;
    for (;;) {
      if (!readHeaderLine(line))
        return failure(); // End of input or a read error.
      StringRef header = StringRef(line).rtrim("\r\n");
      if (header.empty()) {
        if (length)
          break;
        continue; // Blank lines before a header: resynchronising.
      }
      if (header.consume_front_insensitive("Content-Length:")) {
        unsigned long long n;
        if (header.trim().getAsInteger(10, n)) {
          Logger::error("bad Content-Length header: {0}", header.trim());
          length.reset();
          continue;
        }
        length = n;
      }
      // Other headers (Content-Type) carry nothing we need.
    }
    if (*length > kMaxMessageBytes) {
      Logger::error("message of {0} bytes exceeds the limit of {1}; skipped",
                    *length, kMaxMessageBytes);
      char chunk[1 << 16];
      for (size_t left = *length; left;) {
        size_t n = std::fread(chunk, 1, std::min(left, sizeof(chunk)), in);
        if (n == 0)
          return failure();
        left -= n;
      }
      json = R"({"jsonrpc":"2.0","method":"$/tosa-lsp/ignored"})";
      currentId.reset();
      return success();
    }
    // Grow with the data actually received, never to the announced size
    // up front.
    json.clear();
    for (size_t left = *length; left;) {
      size_t want = std::min<size_t>(left, size_t(1) << 20);
      size_t old = json.size();
      json.resize(old + want);
      size_t n = std::fread(&json[old], 1, want, in);
      json.resize(old + n);
      if (n == 0)
        return failure();
      left -= n;
    }
    inspect(json);
    return success();
  }
  std::optional<json::Value> currentId;

private:
  /// One header line, at most 8 KiB kept (a longer one is not a header).
  bool readHeaderLine(std::string &line) {
    line.clear();
    for (int c; (c = std::fgetc(in)) != EOF;) {
      if (line.size() < 8192)
        line.push_back(static_cast<char>(c));
      if (c == '\n')
        return true;
    }
    return !line.empty();
  }

  static bool tooDeep(StringRef text) {
    unsigned depth = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '"') {
        for (++i; i < text.size() && text[i] != '"'; ++i)
          if (text[i] == '\\')
            ++i;
      } else if (c == '[' || c == '{') {
        if (++depth > kMaxMessageDepth)
          return true;
      } else if ((c == ']' || c == '}') && depth) {
        --depth;
      }
    }
    return false;
  }

  void replaceWithError(std::string &text, json::Value id, ErrorCode code,
                        StringRef message) {
    text.clear();
    raw_string_ostream os(text);
    os << json::Value(json::Object{
        {"jsonrpc", "2.0"},
        {"id", std::move(id)},
        {"method", "$/tosa-lsp/invalid"},
        {"params",
         json::Object{{"code", int(code)}, {"message", message.str()}}}});
  }

  void inspect(std::string &text) {
    currentId.reset();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
      return; // End of a delimited stream.
    static constexpr const char *kIgnored =
        R"({"jsonrpc":"2.0","method":"$/tosa-lsp/ignored"})";
    if (tooDeep(text)) {
      Logger::error("ignoring a message nested deeper than {0} levels",
                    kMaxMessageDepth);
      replaceWithError(text, nullptr, ErrorCode::ParseError,
                       "message nested too deeply");
      return;
    }
    Expected<json::Value> doc = json::parse(text);
    if (!doc) {
      Logger::error("ignoring a malformed message: {0}",
                    toString(doc.takeError()));
      replaceWithError(text, nullptr, ErrorCode::ParseError,
                       "invalid JSON");
      return;
    }
    json::Object *obj = doc->getAsObject();
    json::Value *id = obj ? obj->get("id") : nullptr;
    std::optional<StringRef> method = obj ? obj->getString("method") : std::nullopt;
    if (!obj || obj->getString("jsonrpc") != std::optional<StringRef>("2.0")) {
      Logger::error("ignoring a message that is not a JSON-RPC 2.0 object");
      if (id && method) // A request: JSON-RPC requires an answer.
        replaceWithError(text, *id, ErrorCode::InvalidRequest,
                         "not a JSON-RPC 2.0 request (\"jsonrpc\": \"2.0\" "
                         "missing)");
      else
        text = kIgnored;
      return;
    }
    if (shutdownSeen && method && *method != "exit") {
      if (id)
        replaceWithError(text, *id, ErrorCode::InvalidRequest,
                         "the server is shutting down");
      else
        text = kIgnored;
      return;
    }
    if (id && method) {
      currentId = *id;
      if (*method == "shutdown")
        shutdownSeen = true;
    }
  }
  std::FILE *in;
  JSONTransportInputOverFile inner;
  bool shutdownSeen = false;
};

std::string idKey(const json::Value &id) {
  std::string s;
  raw_string_ostream os(s);
  os << id;
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

class Server {
public:
  Server(JSONTransport &transport, TrackingInput &input, FramedOutput &output,
         const ServerOptions &options)
      : input(input), output(output), litTest(options.litTest),
        handler(transport),
        publish(handler.outgoingNotification<json::Value>(
            "textDocument/publishDiagnostics")),
        showMessage(handler.outgoingNotification<json::Value>(
            "window/showMessage")),
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
        progress(handler.outgoingNotification<json::Value>("$/progress")),
        syncMode(options.sync),
        scheduler(options.sync, std::chrono::milliseconds(options.debounceMs),
                  [this](Scheduler::SnapshotPtr s) { publishDiagnostics(*s); }) {
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
    handler.notification("textDocument/didSave", this, &Server::onIgnored);
    handler.notification("workspace/didChangeConfiguration", this,
                         &Server::onDidChangeConfiguration);
    handler.method("textDocument/hover", this, &Server::onHover);
    handler.method("textDocument/inlayHint", this, &Server::onInlayHint);
    handler.method("textDocument/definition", this, &Server::onDefinition);
    handler.method("textDocument/references", this, &Server::onReferences);
    handler.method("textDocument/documentSymbol", this,
                   &Server::onDocumentSymbol);
    handler.method("textDocument/codeAction", this, &Server::onCodeAction);
    handler.method("tosa/previewLowering", this, &Server::onPreviewLowering);
    handler.method("workspace/executeCommand", this, &Server::onExecuteCommand);
  }

  MessageHandler &messageHandler() { return handler; }
  bool shutdownRequested = false;

private:
  struct Document {
    std::string path;
    std::string text;
    int64_t version = 0;
  };

  //===--------------------------------------------------------------------===//
  // Lifecycle and configuration
  //===--------------------------------------------------------------------===//

  void onInitialize(const RawParams &params, Callback<json::Value> reply) {
    if (const json::Object *obj = params.value.getAsObject()) {
      if (const json::Value *opts = obj->get("initializationOptions"))
        clientSettings = *opts;
      // Neovim 0.7 and others lack window/showDocument: previews then say
      // where the file is instead (see runLowering).
      if (const json::Object *caps = obj->getObject("capabilities"))
        if (const json::Object *win = caps->getObject("window"))
          if (const json::Object *sd = win->getObject("showDocument"))
            clientShowDocument = sd->getBoolean("support").value_or(false);
    }
    json::Object caps{
        {"textDocumentSync",
         json::Object{{"openClose", true}, {"change", 2}, {"save", false}}},
        {"hoverProvider", true},
        {"inlayHintProvider", true},
        {"definitionProvider", true},
        {"referencesProvider", true},
        {"documentSymbolProvider", true},
        {"codeActionProvider",
         json::Object{{"codeActionKinds",
                       json::Array{"quickfix", "refactor.rewrite", "source"}}}},
        {"executeCommandProvider",
         json::Object{{"commands",
                       json::Array{"tosa.previewLowering", "tosa.compile"}}}},
    };
    reply(json::Object{
        {"capabilities", std::move(caps)},
        {"serverInfo",
         json::Object{{"name", "tosa-lsp"}, {"version", "0.1.0"}}}});
  }

  void onShutdown(const NoParams &, Callback<json::Value> reply) {
    shutdownRequested = true;
    cancelCompiles(); // a compile can take minutes: do not wait for it
    reply(nullptr);
  }

  /// Kills running compiler processes (their jobs notice within 20 ms) and
  /// makes new compiles stop at once.
  void cancelCompiles() {
    std::lock_guard<std::mutex> lock(compilesMu);
    stopping = true;
    for (const auto &cancel : compiles)
      *cancel = true;
  }

  void onIgnored(const RawParams &) {}

  /// A request the input layer found invalid (see TrackingInput).
  void onInvalid(const RawParams &params, Callback<json::Value> reply) {
    const json::Object *obj = params.value.getAsObject();
    int64_t code = obj ? obj->getInteger("code").value_or(
                             int(ErrorCode::InvalidRequest))
                       : int(ErrorCode::InvalidRequest);
    std::string message =
        obj ? obj->getString("message").value_or("invalid request").str()
            : std::string("invalid request");
    reply(make_error<LSPError>(message, static_cast<ErrorCode>(code)));
  }

  void onDidChangeConfiguration(const RawParams &params) {
    if (const json::Object *obj = params.value.getAsObject())
      if (const json::Value *settings = obj->get("settings"))
        clientSettings = *settings;
    for (auto &[uri, doc] : documents)
      schedule(uri, doc);
  }

  /// Defaults, then the project's .tosa-lsp.json, then editor settings
  /// (given either flat or under "tosaLsp").
  Config configFor(const std::string &path) {
    Config config;
    std::string error;
    if (std::optional<Config> c = loadConfig("", path, error))
      config = *c;
    else
      reportConfigError(error);
    const json::Value *settings = &clientSettings;
    if (const json::Object *obj = clientSettings.getAsObject())
      if (const json::Value *nested = obj->get("tosaLsp"))
        settings = nested;
    if (const json::Object *obj = settings->getAsObject(); obj && !obj->empty()) {
      std::string text;
      raw_string_ostream os(text);
      os << *settings;
      if (std::optional<Config> c = parseConfig(text, error, config))
        config = *c;
      else
        reportConfigError("editor settings: " + error);
    }
    return config;
  }

  void reportConfigError(const std::string &error) {
    if (error == lastConfigError)
      return; // once, not on every keystroke
    lastConfigError = error;
    Logger::error("{0}", error);
    showMessage(json::Object{{"type", int(MessageType::Error)},
                             {"message", "tosa-lsp: " + error}});
  }

  //===--------------------------------------------------------------------===//
  // Documents
  //===--------------------------------------------------------------------===//

  void schedule(const std::string &uri, const Document &doc) {
    scheduler.update(uri, doc.path, doc.version, doc.text,
                     configFor(doc.path));
  }

  void onDidOpen(const DidOpenTextDocumentParams &params) {
    const std::string uri = params.textDocument.uri.uri().str();
    Document &doc = documents[uri];
    doc.path = params.textDocument.uri.file().str();
    doc.text = params.textDocument.text;
    doc.version = params.textDocument.version;
    schedule(uri, doc);
  }

  void onDidChange(const DidChangeTextDocumentParams &params) {
    const std::string uri = params.textDocument.uri.uri().str();
    auto it = documents.find(uri);
    if (it == documents.end()) {
      Logger::error("didChange for a document that is not open: {0}", uri);
      return;
    }
    Document &doc = it->second;
    for (const TextDocumentContentChangeEvent &change : params.contentChanges)
      if (std::optional<std::string> error = applyChange(doc.text, change)) {
        // The client and we disagree on the text: say so rather than
        // analysing something the user does not see.
        Logger::error("{0}: {1}", uri, *error);
        showMessage(json::Object{
            {"type", int(MessageType::Error)},
            {"message", "tosa-lsp: " + *error + "; reopen the file to resync"}});
        return;
      }
    doc.version = params.textDocument.version;
    schedule(uri, doc);
  }

  void onDidClose(const DidCloseTextDocumentParams &params) {
    const std::string uri = params.textDocument.uri.uri().str();
    documents.erase(uri);
    scheduler.remove(uri);
    publish(json::Object{{"uri", uri}, {"diagnostics", json::Array()}});
  }

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  static int severityOf(const Diagnostic &d) {
    switch (d.severity) {
    case Severity::Error:
      return int(DiagnosticSeverity::Error);
    case Severity::Warning:
      return int(DiagnosticSeverity::Warning);
    case Severity::Note:
    case Severity::Info:
      // Runtime checks and refinable results are facts about nearly every
      // dynamic op of a model: Hints, which editors show subtly and keep out
      // of problem lists (hover and inlay hints carry the details). A
      // declared size the runtime must match stays Information.
      return d.code == "dynamic-to-static" ? int(DiagnosticSeverity::Information)
                                           : int(DiagnosticSeverity::Hint);
    }
    return int(DiagnosticSeverity::Error);
  }

  /// One diagnostic, streamed (keys in the order json::Value prints them,
  /// so transcripts read the same either way).
  static void writeDiagnostic(json::OStream &os, const Snapshot &s,
                              const Diagnostic &d) {
    auto range = [&](const Range &r) {
      lsp::Range lr = s.lines.toLsp(r);
      auto pos = [&](const char *key, const lsp::Position &p) {
        os.attributeObject(key, [&] {
          os.attribute("character", p.character);
          os.attribute("line", p.line);
        });
      };
      os.attributeObject("range", [&] {
        pos("end", lr.end);
        pos("start", lr.start);
      });
    };
    os.object([&] {
      os.attribute("code", d.code);
      os.attribute("message", d.message);
      range(d.range);
      bool anyNote = llvm::any_of(d.notes, [](const DiagNote &n) {
        return !StringRef(n.message).starts_with("see current operation");
      });
      if (anyNote)
        os.attributeArray("relatedInformation", [&] {
          for (const DiagNote &n : d.notes) {
            // The op is right there in the editor; MLIR's echo of it is
            // noise.
            if (StringRef(n.message).starts_with("see current operation"))
              continue;
            os.object([&] {
              os.attributeObject("location", [&] {
                range(n.range.begin.valid() ? n.range : d.range);
                os.attribute("uri", s.uri);
              });
              os.attribute("message", n.message);
            });
          }
        });
      os.attribute("severity", severityOf(d));
      os.attribute("source", "tosa-lsp");
    });
  }

  /// The same diagnostic as a json::Value (code actions carry the one they
  /// fix).
  static json::Value diagnosticJSON(const Snapshot &s, const Diagnostic &d) {
    std::string text;
    raw_string_ostream out(text);
    {
      json::OStream os(out);
      writeDiagnostic(os, s, d);
    }
    return cantFail(json::parse(text));
  }

  /// Streams the notification straight to the output: with 10^5
  /// diagnostics a json::Value tree (built, copied, sorted, printed) costs
  /// more than analysing the file.
  void publishDiagnostics(const Snapshot &s) {
    std::string text;
    {
      PhaseTimer t("diagnostics to JSON");
      raw_string_ostream out(text);
      json::OStream os(out, litTest ? 2 : 0);
      os.object([&] {
        os.attribute("jsonrpc", "2.0");
        os.attribute("method", "textDocument/publishDiagnostics");
        os.attributeObject("params", [&] {
          os.attributeArray("diagnostics", [&] {
            for (const Diagnostic &d : s.analysis.diagnostics)
              writeDiagnostic(os, s, d);
          });
          os.attribute("uri", s.uri);
          os.attribute("version", s.version);
        });
      });
      if (litTest)
        out << "\n"; // As JSONTransport's pretty output ends.
    }
    PhaseTimer t("diagnostics sent");
    output.sendRaw(text);
  }

  //===--------------------------------------------------------------------===//
  // Requests
  //===--------------------------------------------------------------------===//

  /// Wraps the reply of the request being handled so that it can be
  /// answered later, from any thread, and `$/cancelRequest` can answer it
  /// first. Returns it with its key in `pending` (empty without an id).
  std::pair<std::shared_ptr<Deferred>, std::string>
  defer(Callback<json::Value> reply) {
    auto deferred = std::make_shared<Deferred>();
    deferred->reply = std::move(reply);
    std::string key = input.currentId ? idKey(*input.currentId) : "";
    if (!key.empty()) {
      std::lock_guard<std::mutex> lock(pendingMu);
      pending[key] = deferred;
    }
    return {deferred, key};
  }

  /// Answers `fn(snapshot)` from the latest finished snapshot: now, or, for
  /// a document still being analysed for the first time, when that
  /// finishes (cancellable). Unknown documents get an error. With
  /// `offMainLoop`, `fn` runs on a background thread (it may be slow).
  void withSnapshot(const URIForFile &uri, Callback<json::Value> reply,
                    std::function<json::Value(const Snapshot &)> fn,
                    bool offMainLoop = false) {
    std::shared_ptr<Deferred> deferred;
    std::string key;
    std::tie(deferred, key) = defer(std::move(reply));
    offMainLoop &= !syncMode;
    bool known = scheduler.withSnapshot(
        uri.uri().str(), [this, deferred, fn, key,
                          offMainLoop](Scheduler::SnapshotPtr s) {
          if (!s) {
            deferred->finish(make_error<LSPError>(
                "the document was closed before it was analysed",
                ErrorCode::ContentModified));
            forget(key);
          } else if (offMainLoop) {
            background([this, deferred, fn, key, s] {
              deferred->finish(fn(*s));
              forget(key);
            });
          } else {
            deferred->finish(fn(*s));
            forget(key);
          }
        });
    if (!known) {
      deferred->finish(make_error<LSPError>(
          "unknown document: " + uri.uri().str() + " (not opened)",
          ErrorCode::InvalidParams));
      forget(key);
    }
  }

  void forget(const std::string &key) {
    if (key.empty())
      return;
    std::lock_guard<std::mutex> lock(pendingMu);
    pending.erase(key);
  }

  void onCancel(const RawParams &params) {
    const json::Object *obj = params.value.getAsObject();
    const json::Value *id = obj ? obj->get("id") : nullptr;
    if (!id)
      return;
    std::shared_ptr<Deferred> d;
    {
      std::lock_guard<std::mutex> lock(pendingMu);
      auto it = pending.find(idKey(*id));
      if (it == pending.end())
        return; // Already answered.
      d = it->second;
      pending.erase(it);
    }
    if (d->onCancel)
      d->onCancel();
    d->finish(make_error<LSPError>("request cancelled",
                                   ErrorCode::RequestCancelled));
  }

  void onHover(const TextDocumentPositionParams &params,
               Callback<json::Value> reply) {
    lsp::Position pos = params.position;
    withSnapshot(params.textDocument.uri, std::move(reply),
                 [pos](const Snapshot &s) -> json::Value {
                   std::optional<Position> p = s.lines.fromLsp(pos);
                   std::optional<HoverResult> h =
                       p ? hover(s.analysis, *p) : std::nullopt;
                   if (!h)
                     return nullptr;
                   Hover out(s.lines.toLsp(h->range));
                   out.contents.kind = MarkupKind::Markdown;
                   out.contents.value = h->markdown;
                   return toJSON(out);
                 });
  }

  void onInlayHint(const InlayHintsParams &params,
                   Callback<json::Value> reply) {
    lsp::Range range = params.range;
    withSnapshot(
        params.textDocument.uri, std::move(reply),
        [range](const Snapshot &s) -> json::Value {
          json::Array out;
          std::optional<tosa_lsp::Range> r = s.lines.fromLsp(range);
          if (!r)
            return out;
          for (const InlayHintData &h :
               inlayHints(s.analysis, *r, s.config.hints)) {
            InlayHint hint(InlayHintKind::Type, s.lines.toLsp(h.position));
            hint.label = h.label;
            hint.paddingLeft = false;
            out.push_back(toJSON(hint));
          }
          return out;
        });
  }

  static json::Value locations(const Snapshot &s, const URIForFile &uri,
                               const std::vector<Range> &rs) {
    json::Array out;
    for (const Range &r : rs)
      if (r.begin.valid())
        // Not toJSON(lsp::Location): it borrows the URI string.
        out.push_back(json::Object{{"uri", uri.uri().str()},
                                   {"range", toJSON(s.lines.toLsp(r))}});
    return out;
  }

  void onDefinition(const TextDocumentPositionParams &params,
                    Callback<json::Value> reply) {
    lsp::Position pos = params.position;
    URIForFile uri = params.textDocument.uri;
    withSnapshot(uri, std::move(reply),
                 [pos, uri](const Snapshot &s) -> json::Value {
                   std::optional<Position> p = s.lines.fromLsp(pos);
                   std::optional<Range> d =
                       p ? definition(s.analysis, *p) : std::nullopt;
                   return locations(s, uri,
                                    d ? std::vector<Range>{*d}
                                      : std::vector<Range>());
                 });
  }

  void onReferences(const ReferenceParams &params,
                    Callback<json::Value> reply) {
    lsp::Position pos = params.position;
    URIForFile uri = params.textDocument.uri;
    bool withDecl = params.context.includeDeclaration;
    withSnapshot(uri, std::move(reply),
                 [pos, uri, withDecl](const Snapshot &s) -> json::Value {
                   std::optional<Position> p = s.lines.fromLsp(pos);
                   return locations(s, uri,
                                    p ? references(s.analysis, *p, withDecl)
                                      : std::vector<Range>());
                 });
  }

  static lsp::DocumentSymbol toLsp(const Snapshot &s, const DocSymbol &d) {
    SymbolKind kind = d.kind == DocSymbol::Section    ? SymbolKind::Namespace
                      : d.kind == DocSymbol::Function ? SymbolKind::Function
                                                      : SymbolKind::Variable;
    lsp::DocumentSymbol out(d.name, kind, s.lines.toLsp(d.range),
                            s.lines.toLsp(d.selection));
    out.detail = d.detail;
    for (const DocSymbol &c : d.children)
      out.children.push_back(toLsp(s, c));
    return out;
  }

  void onDocumentSymbol(const DocumentSymbolParams &params,
                        Callback<json::Value> reply) {
    withSnapshot(params.textDocument.uri, std::move(reply),
                 [](const Snapshot &s) -> json::Value {
                   json::Array out;
                   for (const DocSymbol &d : documentSymbols(s.analysis))
                     out.push_back(toJSON(toLsp(s, d)));
                   return out;
                 });
  }

  /// Quick fixes whose diagnostic overlaps the requested range (validated
  /// on first request, off the main loop), plus the lowering preview and
  /// compile actions on the function under the cursor.
  void onCodeAction(const CodeActionParams &params,
                    Callback<json::Value> reply) {
    lsp::Range range = params.range;
    std::vector<std::string> only = params.context.only;
    auto compute = [this, range, only](const Snapshot &s) -> json::Value {
      json::Array out;
      auto wants = [&](StringRef kind) {
        if (only.empty())
          return true;
        for (const std::string &k : only)
          if (kind.starts_with(k))
            return true;
        return false;
      };
      std::optional<tosa_lsp::Range> r = s.lines.fromLsp(range);
      if (!r)
        return out;
      const SymbolInfo *fn = functionAt(s.analysis, r->begin);
      if (fn && wants("refactor.rewrite")) {
        json::Object args{{"uri", s.uri},
                          {"function", fn->name},
                          {"stage", "linalg"},
                          {"mode", "upstream"}};
        out.push_back(json::Object{
            {"title", "Preview lowering of @" + fn->name + " (TOSA -> linalg)"},
            {"kind", "refactor.rewrite"},
            {"command", json::Object{{"title", "Preview lowering"},
                                     {"command", "tosa.previewLowering"},
                                     {"arguments",
                                      json::Array{std::move(args)}}}}});
      }
      if (fn && wants("source"))
        out.push_back(json::Object{
            {"title", "Compile @" + fn->name + " to native code (shared library)"},
            {"kind", "source"},
            {"command",
             json::Object{{"title", "Compile to native code"},
                          {"command", "tosa.compile"},
                          {"arguments",
                           json::Array{json::Object{{"uri", s.uri},
                                                    {"function", fn->name},
                                                    {"emit", "shared"}}}}}}});
      if (!wants("quickfix"))
        return out;
      json::Array fixes;
      for (size_t i = 0; i < s.fixes().size(); ++i) {
        const FixData &fix = s.fixes()[i];
        const Diagnostic &d = s.analysis.diagnostics[fix.diagnostic];
        if (!overlaps(d.range, *r) || !isValid(s, i))
          continue;
        json::Array edits;
        for (const TextEditData &e : fix.edits)
          edits.push_back(json::Object{{"range", toJSON(s.lines.toLsp(e.range))},
                                       {"newText", e.newText}});
        fixes.push_back(json::Object{
            {"title", fix.title},
            {"kind", "quickfix"},
            {"isPreferred", fix.preferred},
            {"diagnostics", json::Array{diagnosticJSON(s, d)}},
            {"edit", json::Object{{"changes",
                                   json::Object{{s.uri, std::move(edits)}}}}}});
      }
      // Quick fixes first: editors show the first action most prominently.
      for (json::Value &a : out)
        fixes.push_back(std::move(a));
      return fixes;
    };
    // Validation re-analyses a section: keep it off the main loop.
    withSnapshot(params.textDocument.uri, std::move(reply), compute,
                 /*offMainLoop=*/true);
  }

  /// Validates fix `i` of `s` once, remembering the verdict.
  bool isValid(const Snapshot &s, size_t i) {
    {
      std::lock_guard<std::mutex> lock(s.validationMu);
      if (auto it = s.validated.find(i); it != s.validated.end())
        return it->second;
    }
    bool ok;
    {
      std::lock_guard<std::mutex> lock(validatorMu);
      if (!validator)
        validator = std::make_unique<Analyzer>();
      ok = validateFix(*validator, s.analysis, s.text, s.config, s.fixes()[i]);
    }
    std::lock_guard<std::mutex> lock(s.validationMu);
    s.validated[i] = ok;
    return ok;
  }

  static const SymbolInfo *functionAt(const FileAnalysis &fa, Position p) {
    const SymbolInfo *best = nullptr;
    for (const SymbolInfo &s : fa.symbols)
      if (s.opName == "func.func" && contains(s.scope, p))
        best = &s;
    return best;
  }

  /// Parses {uri, position | function, stage, mode} into lowering options.
  Expected<std::pair<std::string, LowerOptions>>
  previewRequest(const json::Value &params) {
    const json::Object *obj = params.getAsObject();
    if (auto *arr = params.getAsArray(); arr && !arr->empty())
      obj = (*arr)[0].getAsObject(); // executeCommand arguments
    if (!obj)
      return make_error<LSPError>("expected {uri, position|function, stage, "
                                  "mode}",
                                  ErrorCode::InvalidParams);
    std::optional<StringRef> uri = obj->getString("uri");
    if (!uri)
      if (const json::Object *td = obj->getObject("textDocument"))
        uri = td->getString("uri");
    if (!uri)
      return make_error<LSPError>("missing uri", ErrorCode::InvalidParams);
    LowerOptions opts;
    opts.annotate = true;
    if (auto st = obj->getString("stage")) {
      auto parsed = parseStage(st->str());
      if (!parsed)
        return make_error<LSPError>("unknown stage '" + st->str() +
                                        "' (expected linalg, loops, llvm)",
                                    ErrorCode::InvalidParams);
      opts.stage = *parsed;
    }
    if (auto md = obj->getString("mode")) {
      auto parsed = parseMode(md->str());
      if (!parsed)
        return make_error<LSPError>("unknown mode '" + md->str() +
                                        "' (expected upstream, safe, "
                                        "versioned)",
                                    ErrorCode::InvalidParams);
      opts.mode = *parsed;
    }
    if (auto fn = obj->getString("function"))
      opts.function = fn->str();
    else if (const json::Value *pos = obj->get("position")) {
      lsp::Position p;
      json::Path::Root root;
      Scheduler::SnapshotPtr snap = scheduler.latest(uri->str());
      if (!snap || !fromJSON(*pos, p, root))
        return make_error<LSPError>("unknown document or bad position",
                                    ErrorCode::InvalidParams);
      std::optional<Position> at = snap->lines.fromLsp(p);
      const SymbolInfo *fn = at ? functionAt(snap->analysis, *at) : nullptr;
      if (!fn)
        return make_error<LSPError>("no function at this position",
                                    ErrorCode::InvalidParams);
      opts.function = fn->name;
    }
    return std::make_pair(uri->str(), opts);
  }

  /// Lowering can take a while: run it on its own thread; the reply (or a
  /// cancellation) comes from there.
  void runLowering(const std::string &uri, const LowerOptions &opts,
                   Callback<json::Value> reply, bool showDocument) {
    auto it = documents.find(uri);
    if (it == documents.end())
      return reply(make_error<LSPError>("unknown document: " + uri +
                                            " (not opened)",
                                        ErrorCode::InvalidParams));
    std::shared_ptr<Deferred> deferred;
    std::string key;
    std::tie(deferred, key) = defer(std::move(reply));
    std::string text = it->second.text, path = it->second.path;
    auto work = [this, deferred, key, text, path, opts, uri, showDocument] {
      LowerResult r = lower(text, path, opts);
      if (!r.ok) {
        std::string msg = "lowering failed";
        for (const std::string &e : r.errors)
          msg += "\n" + e;
        deferred->finish(make_error<LSPError>(msg, ErrorCode::RequestFailed));
        forget(key);
        return;
      }
      LineTable preview(r.text);
      LineTable source(text); // the text that was lowered, not a snapshot
      json::Array mappings;
      for (const PreviewMapping &m : r.mappings) {
        json::Object o{{"previewPosition",
                        toJSON(preview.toLsp(
                            Position{m.previewLine, m.previewColumn + 1}))},
                       {"sourceOp", m.sourceOp}};
        o["sourcePosition"] =
            toJSON(source.toLsp(Position{m.sourceLine, m.sourceColumn}));
        mappings.push_back(std::move(o));
      }
      json::Object result{{"text", r.text},
                          {"pipeline", r.pipeline},
                          {"mappings", std::move(mappings)}};
      if (showDocument) {
        // Editors without a plugin: a read-only temp file they can open.
        std::string content;
        raw_string_ostream os(content);
        os << "// Lowering preview (" << stageName(opts.stage) << ", "
           << modeName(opts.mode) << ") of @" << opts.function
           << " — read-only, regenerated on request\n"
           << r.text;
        std::string file = writePreviewFile(uri, path, opts.function, content);
        if (!file.empty()) {
          std::string fileUri = "file://" + file;
          result["previewUri"] = fileUri;
          if (clientShowDocument)
            showDocumentRequest(
                json::Object{{"uri", fileUri}, {"takeFocus", true}},
                json::Value("tosa-preview-" + std::to_string(++outgoingIds)));
          else
            showMessage(json::Object{
                {"type", int(MessageType::Info)},
                {"message", "tosa-lsp: lowering preview of @" + opts.function +
                                " written to " + file}});
        }
      }
      deferred->finish(json::Value(std::move(result)));
      forget(key);
    };
    if (syncMode) {
      work();
      return;
    }
    background(std::move(work));
  }

  /// One read-only preview file per (document, function), rewritten on
  /// each request, in a directory of this server's own that is removed with
  /// it: previews never pile up in the temp directory. Empty on failure.
  std::string writePreviewFile(const std::string &uri, const std::string &path,
                               const std::string &function, StringRef content) {
    std::lock_guard<std::mutex> lock(previewMu);
    if (!previewDir)
      previewDir.emplace("tosa-lsp-preview");
    if (previewDir->error()) {
      Logger::error("preview: {0}", previewDir->error().message());
      return "";
    }
    std::string &stem = previewFiles[uri + "\n" + function];
    if (stem.empty()) {
      // Function names may hold "/" or "..": sanitised, and numbered so
      // that two documents named alike do not share a file.
      SmallString<256> p(previewDir->path());
      sys::path::append(p, std::to_string(previewFiles.size()) + "-" +
                               sanitizeFileName(sys::path::stem(path).str() +
                                                "-" + function + "-lowered"));
      stem = std::string(p);
    }
    std::string file = stem + ".mlir";
    sys::fs::remove(file); // read-only: replaced, not written to
    Expected<std::vector<std::string>> written = writeOutputs(
        stem, {OutputFile{".mlir", content}}, OnExisting::Fail, {});
    if (!written) {
      Logger::error("preview: {0}", toString(written.takeError()));
      return "";
    }
    sys::fs::setPermissions(file, sys::fs::owner_read | sys::fs::group_read |
                                      sys::fs::others_read);
    return file;
  }

  /// Long work off the main loop, on a big stack (MLIR's parser and passes
  /// recurse); the destructor waits for it.
  void background(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(workMu);
      ++running;
    }
    auto *t = new llvm::thread(std::optional<unsigned>(256u << 20),
                               [this, work = std::move(work)] {
                                 work();
                                 std::lock_guard<std::mutex> lock(workMu);
                                 --running;
                                 workDone.notify_all();
                               });
    t->detach();
    delete t;
  }

public:
  ~Server() {
    // Background lowering threads use this object: let them finish; stop
    // compiles first (exit or end of input without shutdown).
    cancelCompiles();
    std::unique_lock<std::mutex> lock(workMu);
    workDone.wait(lock, [&] { return running == 0; });
  }

private:

  void onPreviewLowering(const RawParams &params, Callback<json::Value> reply) {
    auto req = previewRequest(params.value);
    if (!req)
      return reply(req.takeError());
    runLowering(req->first, req->second, std::move(reply), false);
  }

  void onExecuteCommand(const RawParams &params, Callback<json::Value> reply) {
    const json::Object *obj = params.value.getAsObject();
    std::optional<StringRef> cmd = obj ? obj->getString("command") : std::nullopt;
    if (cmd && *cmd == "tosa.compile")
      return startCompile(*obj, std::move(reply));
    if (!cmd || *cmd != "tosa.previewLowering")
      return reply(make_error<LSPError>(
          "unknown command: " + (cmd ? cmd->str() : std::string("(none)")),
          ErrorCode::InvalidParams));
    const json::Value *args = obj->get("arguments");
    auto req = previewRequest(args ? *args : json::Value(nullptr));
    if (!req)
      return reply(req.takeError());
    runLowering(req->first, req->second, std::move(reply), true);
  }

  /// `tosa.compile {uri, function?, emit?}`: runs `tosa-lsp compile` in a
  /// child process off the main thread, with $/progress and cancellation.
  void startCompile(const json::Object &params, Callback<json::Value> reply) {
    const json::Object *args = nullptr;
    if (const json::Array *a = params.getArray("arguments"); a && !a->empty())
      args = (*a)[0].getAsObject();
    std::optional<StringRef> uri = args ? args->getString("uri") : std::nullopt;
    auto it = uri ? documents.find(uri->str()) : documents.end();
    if (it == documents.end())
      return reply(make_error<LSPError>(
          uri ? "unknown document: " + uri->str() + " (not opened)"
              : std::string("tosa.compile expects [{uri, function?, emit?}]"),
          ErrorCode::InvalidParams));
    CompileJob job;
    job.self = sys::fs::getMainExecutable(nullptr, (void *)&runServer);
    job.text = it->second.text;
    job.name = sys::path::filename(it->second.path).str();
    if (auto f = args->getString("function"))
      job.function = f->str();
    if (auto e = args->getString("emit"))
      job.emit = e->str();
    if (auto m = args->getString("mode")) {
      if (!parseMode(m->str()))
        return reply(make_error<LSPError>(
            "unknown mode '" + m->str() +
                "' (expected upstream, safe, versioned)",
            ErrorCode::InvalidParams));
      job.mode = m->str();
    }
    if (job.emit != "shared" && job.emit != "obj" && job.emit != "asm" &&
        job.emit != "llvm-ir" && job.emit != "mlir-llvm")
      return reply(make_error<LSPError>(
          "unknown emit kind '" + job.emit +
              "' (expected shared, obj, asm, llvm-ir, mlir-llvm)",
          ErrorCode::InvalidParams));
    Config config = configFor(it->second.path);
    job.source = it->second.path;
    job.outputDir = config.compile.outputDir;
    job.outputDirRoot = config.compile.outputDirRoot;
    job.overwrite = config.compile.overwrite;
    job.timeoutSeconds = config.compile.timeoutSeconds;
    job.memoryLimitMB = config.compile.memoryLimitMB;

    // Progress: the client's token if it gave one, else one we create.
    // A client that gives none is taken to be plugin-less (the plugins and
    // the VS Code extension always give one): it is told where the output
    // went with window/showMessage, as it would not show the reply.
    json::Value token = nullptr;
    bool tellOutput = false;
    if (const json::Value *t = params.get("workDoneToken"))
      token = *t;
    else {
      tellOutput = true;
      token = "tosa-compile-" + std::to_string(++outgoingIds);
      createProgress(json::Object{{"token", token}},
                     json::Value("tosa-progress-" + std::to_string(++outgoingIds)));
    }
    std::shared_ptr<Deferred> deferred;
    std::string key;
    std::tie(deferred, key) = defer(std::move(reply));
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    deferred->onCancel = [cancel] { *cancel = true; };
    {
      std::lock_guard<std::mutex> lock(compilesMu);
      *cancel = stopping.load();
      compiles.insert(cancel);
    }
    std::string what = job.function.empty() ? job.name : "@" + job.function;
    std::string title = "Compiling " + what;
    auto work = [this, job, token, deferred, cancel, key, title, what,
                 tellOutput] {
      progress(json::Object{
          {"token", token},
          {"value", json::Object{{"kind", "begin"},
                                 {"title", title},
                                 {"cancellable", true}}}});
      CompileJobResult r = runCompileJob(
          job,
          [&](const std::string &step) {
            progress(json::Object{
                {"token", token},
                {"value", json::Object{{"kind", "report"}, {"message", step}}}});
          },
          *cancel);
      progress(json::Object{
          {"token", token},
          {"value", json::Object{{"kind", "end"},
                                 {"message", r.ok ? "done" : r.error}}}});
      if (r.ok && tellOutput) {
        const json::Object *o = r.result.getAsObject();
        std::string message =
            "tosa-lsp: compiled " + what + " to " +
            (o ? o->getString("output").value_or("").str() : std::string());
        if (std::optional<StringRef> h = o ? o->getString("header") : std::nullopt)
          message += " (header " + h->str() + ")";
        showMessage(json::Object{{"type", int(MessageType::Info)},
                                 {"message", message}});
      }
      if (r.ok)
        deferred->finish(std::move(r.result));
      else
        deferred->finish(make_error<LSPError>(
            r.error, r.cancelled ? ErrorCode::RequestCancelled
                                 : ErrorCode::RequestFailed));
      forget(key);
      std::lock_guard<std::mutex> lock(compilesMu);
      compiles.erase(cancel);
    };
    if (syncMode) {
      work();
      return;
    }
    background(std::move(work));
  }

  TrackingInput &input;
  FramedOutput &output;
  bool litTest;
  MessageHandler handler;
  OutgoingNotification<json::Value> publish;
  OutgoingNotification<json::Value> showMessage;
  OutgoingRequest<json::Value> showDocumentRequest;
  OutgoingRequest<json::Value> createProgress;
  OutgoingNotification<json::Value> progress;
  std::atomic<int> outgoingIds{0};
  std::mutex validatorMu;
  std::unique_ptr<Analyzer> validator; // its own MLIRContext
  std::mutex workMu;
  std::condition_variable workDone;
  int running = 0;
  bool syncMode;
  json::Value clientSettings = nullptr;
  bool clientShowDocument = false; // capabilities.window.showDocument.support
  std::string lastConfigError;
  std::map<std::string, Document> documents; // main thread only
  std::mutex pendingMu;
  std::map<std::string, std::shared_ptr<Deferred>> pending;
  std::mutex compilesMu;
  std::set<std::shared_ptr<std::atomic<bool>>> compiles; // running ones
  std::atomic<bool> stopping{false};
  std::mutex previewMu;
  std::optional<TempDir> previewDir;               // removed with the server
  std::map<std::string, std::string> previewFiles; // uri + function -> stem
  Scheduler scheduler; // last: its worker calls back into the members above
};

} // namespace

int runServer(std::FILE *in, const ServerOptions &options) {
  Logger::setLogLevel(options.verbose ? Logger::Level::Debug
                                      : Logger::Level::Error);
  JSONStreamStyle style =
      options.litTest ? JSONStreamStyle::Delimited : JSONStreamStyle::Standard;
  if (options.litTest)
    URIForFile::registerSupportedScheme("test"); // test:///foo.mlir
  URIForFile::registerSupportedScheme("untitled"); // unsaved editor buffers
  auto input = std::make_unique<TrackingInput>(in, style);
  TrackingInput &inputRef = *input;
  FramedOutput output(llvm::outs());
  JSONTransport transport(std::move(input), output,
                          /*PrettyOutput=*/options.litTest);
  ServerOptions opts = options;
  opts.sync |= options.litTest;
  auto server = std::make_unique<Server>(transport, inputRef, output, opts);
  Error err = transport.run(server->messageHandler());
  bool clean = !err && server->shutdownRequested;
  if (err)
    Logger::error("transport: {0}", toString(std::move(err)));
  server.reset(); // Joins the worker before the transport goes away.
  return clean ? 0 : 1;
}

} // namespace tosa_lsp
