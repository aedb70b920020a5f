//===- LSPServer.cpp - the language server's protocol layer ---------------===//

#include "LSPServer.h"

#include "Choices.h"
#include "MessageJSON.h"

#include "Config.h"
#include "DiagnosticsJSON.h"
#include "FramedOutput.h"
#include "InlayHintsJSON.h"
#include "TaskThread.h"
#include "Timing.h"
#include "TosaServer.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <utility>

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

/// A notification's params, not copied (a didChange may carry a whole
/// file): valid during the handler's call. Decoded by the handler, so that
/// params it cannot read are not only logged.
struct ParamsRef {
  const json::Value *value = nullptr;
};
bool fromJSON(const json::Value &v, ParamsRef &r, json::Path) {
  r.value = &v;
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
/// URIs of other schemes than `file` (`untitled:Untitled-1`, VS Code's
/// unsaved buffers; `vscode-notebook-cell:/nb#cell`) stand for documents
/// too, but llvm::lsp only resolves `scheme:/path` of schemes it knows. A
/// document's URI in such a scheme is carried
/// through llvm::lsp as kOpaqueScheme with the whole URI escaped as its
/// path, and turned back (clientUri) wherever the server names the
/// document, so the client sees its own URI.
constexpr StringLiteral kOpaqueScheme = "tosa-lsp-opaque";

bool isOpaqueUri(StringRef uri) {
  auto [scheme, rest] = uri.split(':');
  return !rest.empty() && scheme.size() > 1 && llvm::isAlpha(scheme[0]) &&
         !scheme.equals_insensitive("file") && scheme != "test" &&
         llvm::all_of(scheme, [](char c) {
           return llvm::isAlnum(c) || c == '+' || c == '.' || c == '-';
         });
}

std::string wrapOpaqueUri(StringRef uri) {
  std::string out = (kOpaqueScheme + ":/").str();
  for (unsigned char c : uri) {
    if (llvm::isAlnum(c) || StringRef("-_.~").contains(c)) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(llvm::hexdigit(c / 16));
      out.push_back(llvm::hexdigit(c % 16));
    }
  }
  return out;
}

/// The URI the client gave for a document (see kOpaqueScheme).
std::string clientUri(StringRef uri) {
  StringRef body = uri;
  if (!body.consume_front(kOpaqueScheme) || !body.consume_front(":/"))
    return uri.str();
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '%' && i + 2 < body.size() &&
        llvm::isHexDigit(body[i + 1]) && llvm::isHexDigit(body[i + 2])) {
      out.push_back(llvm::hexFromNibbles(body[i + 1], body[i + 2]));
      i += 2;
    } else {
      out.push_back(body[i]);
    }
  }
  return out;
}
std::string clientUri(const URIForFile &uri) { return clientUri(uri.uri()); }

class TrackingInput : public JSONTransportInput {
public:
  static constexpr size_t kMaxMessageBytes = size_t(256) << 20;
  static constexpr unsigned kMaxMessageDepth = 256;
  static constexpr size_t kReserveMessageBytes = size_t(64) << 20;

  TrackingInput(std::FILE *in, JSONStreamStyle style)
      : JSONTransportInput(style), in(in), inner(in, style) {}
  bool hasError() const override { return inner.hasError(); }
  bool isEndOfInput() const override { return inner.isEndOfInput(); }
  LogicalResult readDelimitedMessage(std::string &json) override {
    LogicalResult r = inner.readDelimitedMessage(json);
    keep.emplace();
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
      // Out of step (a bad or too long Content-Length before): a message's
      // body runs into the next header on one line, as clients write no
      // newline after a body. Resynchronise on that header.
      if (!header.starts_with_insensitive("Content-")) {
        size_t at = header.find_insensitive("Content-Length:");
        Logger::error("skipped {0} bytes that are not a message header{1}",
                      at == StringRef::npos ? header.size() : at,
                      at == StringRef::npos ? "" : " (resynchronised)");
        if (at == StringRef::npos)
          continue;
        header = header.drop_front(at);
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
    // A document's text: its buffers go back at once, not kept while the
    // analysis it starts runs (50k lines: the open's peak 184 -> 160 MiB).
    if (*length >= kLongString)
      keep.reset();
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
    // Room for up to 64 MiB at once: grown by doubling, a 10 MB didOpen
    // was copied and faulted in ~twice (reading it 28 -> 15 ms). Past
    // that, grown with the data actually received: an announced size is
    // never trusted further (reserved pages are not touched until read).
    json.clear();
    json.reserve(std::min<size_t>(*length, kReserveMessageBytes));
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
  /// Taken at a message's first byte, reset by the transport loop once the
  /// message is answered: what a request frees (its reply), the next one
  /// allocates again, and a free page given back in between was faulted in
  /// again (inlay requests at 200k lines: ~290 faults each, 0.6 -> 0.9 ms).
  /// Not while waiting for input, when what the analyses free goes back at
  /// once (configureAllocator).
  std::optional<KeepFreePages> keep;
  /// The text of the didOpen just read (`parsed` has "" in its place).
  std::optional<std::string> takeOpenedText() {
    return std::exchange(openedText, std::nullopt);
  }
  /// The message just read, parsed (inspect has to parse it anyway): the
  /// transport loop dispatches it without parsing a 20 MB didOpen twice.
  std::optional<json::Value> parsed;

private:
  std::optional<std::string> openedText;
  /// One header line, at most 8 KiB kept (a longer one is not a header).
  bool readHeaderLine(std::string &line) {
    line.clear();
    for (int c; (c = std::fgetc(in)) != EOF;) {
      if (!keep)
        keep.emplace();
      if (line.size() < 8192)
        line.push_back(static_cast<char>(c));
      if (c == '\n')
        return true;
    }
    return !line.empty();
  }

  static bool tooDeep(StringRef text) {
    return findDeepJsonNesting(std::string_view(text.data(), text.size()),
                               kMaxMessageDepth)
        .has_value();
  }

  void replaceWithError(std::string &text, json::Value id, ErrorCode code,
                        StringRef message) {
    text.clear();
    raw_string_ostream os(text);
    os << json::Value(
        json::Object{{"jsonrpc", "2.0"},
                     {"id", std::move(id)},
                     {"method", "$/tosa-lsp/invalid"},
                     {"params", json::Object{{"code", int(code)},
                                             {"message", message.str()}}}});
  }

  static constexpr const char *kIgnored =
      R"({"jsonrpc":"2.0","method":"$/tosa-lsp/ignored"})";
  /// A request (`id`) is answered with the error; a notification dropped.
  void refuse(std::string &text, const json::Value *id, ErrorCode code,
              StringRef message) {
    if (id)
      replaceWithError(text, *id, code, message);
    else
      text = kIgnored;
  }

  void inspect(std::string &text) {
    currentId.reset();
    parsed.reset();
    openedText.reset();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
      return; // End of a delimited stream.
    // A document's text is taken out first (MessageJSON.h): the nesting
    // check and llvm::json read the rest.
    std::optional<LongStrings> taken = takeLongStrings(text, kLongString);
    if (tooDeep(taken ? StringRef(taken->rest) : StringRef(text))) {
      Logger::error("ignoring a message nested deeper than {0} levels",
                    kMaxMessageDepth);
      replaceWithError(text, nullptr, ErrorCode::ParseError,
                       "message nested too deeply");
      return;
    }
    // A didOpen's text is kept aside, moved into the document later
    // (takeOpenedText); any other message gets it back.
    static constexpr StringRef kOpenedText[] = {"params", "textDocument",
                                                "text"};
    Expected<json::Value> doc =
        taken ? parseMessage(text, std::move(*taken), kOpenedText, openedText)
              : json::parse(text);
    if (!doc) {
      Logger::error("ignoring a malformed message: {0}",
                    toString(doc.takeError()));
      replaceWithError(text, nullptr, ErrorCode::ParseError, "invalid JSON");
      return;
    }
    json::Object *obj = doc->getAsObject();
    json::Value *id = obj ? obj->get("id") : nullptr;
    std::optional<StringRef> method =
        obj ? obj->getString("method") : std::nullopt;
    if (openedText && method != "textDocument/didOpen") {
      // parseMessage found a placeholder there.
      *valueAt(*doc, kOpenedText) = json::Value(std::move(*openedText));
      openedText.reset();
    }
    if (!obj && doc->getAsArray()) { // LSP has no batches
      replaceWithError(text, nullptr, ErrorCode::InvalidRequest,
                       "batches of messages are not supported");
      return;
    }
    if (!obj || obj->getString("jsonrpc") != std::optional<StringRef>("2.0")) {
      Logger::error("ignoring a message that is not a JSON-RPC 2.0 object");
      // A request: JSON-RPC requires an answer.
      refuse(text, method ? id : nullptr, ErrorCode::InvalidRequest,
             "not a JSON-RPC 2.0 request (\"jsonrpc\": \"2.0\" missing)");
      return;
    }
    // An id is an integer or a string, a method a string (LSP's
    // RequestMessage); anything else is answered, with a null id.
    if (id && !id->getAsInteger() && !id->getAsString()) {
      replaceWithError(text, nullptr, ErrorCode::InvalidRequest,
                       "\"id\" must be an integer or a string");
      return;
    }
    if (!method && obj->get("method")) {
      refuse(text, id, ErrorCode::InvalidRequest,
             "\"method\" must be a string");
      return;
    }
    // Before `initialize`, requests get ServerNotInitialized and
    // notifications other than `exit` are dropped; `initialize` once only.
    if (method && *method == "initialize" && id) {
      if (initializeSeen) {
        replaceWithError(text, *id, ErrorCode::InvalidRequest,
                         "initialize was already received");
        return;
      }
      initializeSeen = true;
    } else if (method && !initializeSeen && *method != "exit") {
      refuse(text, id, ErrorCode::ServerNotInitialized,
             "the server is not initialized: send initialize first");
      return;
    }
    if (shutdownSeen && method && *method != "exit") {
      refuse(text, id, ErrorCode::InvalidRequest,
             "the server is shutting down");
      return;
    }
    if (id && method) {
      currentId = *id;
      if (*method == "shutdown")
        shutdownSeen = true;
    }
    if (json::Object *params = obj->getObject("params"))
      if (json::Object *td = params->getObject("textDocument"))
        if (std::optional<StringRef> uri = td->getString("uri")) {
          if (isOpaqueUri(*uri))
            (*td)["uri"] = wrapOpaqueUri(*uri);
          else if (uri->starts_with_insensitive("file:") &&
                   !uri->starts_with("file:")) // schemes ignore case
            (*td)["uri"] = ("file:" + uri->drop_front(5)).str();
        }
    parsed = std::move(*doc);
  }
  std::FILE *in;
  JSONTransportInputOverFile inner;
  bool shutdownSeen = false;
  bool initializeSeen = false;
};

/// JSONTransport::run, dispatching the value TrackingInput parsed instead
/// of parsing the message a second time (~90 ms for a 17 MB didOpen).
/// Returns after `exit` (success) or at the end of the input (an error).
Error runTransport(TrackingInput &in, MessageHandler &handler) {
  std::string text;
  while (!in.isEndOfInput()) {
    if (in.hasError())
      return errorCodeToError(std::error_code(errno, std::system_category()));
    // Ends once this message and its reply are freed (declared first, so
    // it runs last).
    auto answered = llvm::make_scope_exit([&] { in.keep.reset(); });
    // A replaced version's text (allocated here, by its didChange) goes
    // back once the reclaimer has freed it.
    collectWhatOthersFreed();
    if (failed(in.readMessage(text)))
      continue;
    std::optional<json::Value> msg = std::move(in.parsed);
    in.parsed.reset();
    if (!msg) { // Empty, or replaced by inspect (an error to answer).
      if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        continue;
      Expected<json::Value> doc = json::parse(text);
      if (!doc) {
        Logger::error("JSON parse error: {0}", toString(doc.takeError()));
        continue;
      }
      msg = std::move(*doc);
    }
    // A didOpen's text (20 MB at 200k lines) stayed resident after the
    // close as the buffer of the small messages that followed.
    releaseBigBuffer(text);
    // What JSONTransport::handleMessage does.
    json::Object *object = msg->getAsObject();
    if (!object ||
        object->getString("jsonrpc") != std::optional<StringRef>("2.0"))
      return Error::success();
    std::optional<json::Value> id;
    if (json::Value *i = object->get("id"))
      id = std::move(*i);
    std::optional<StringRef> method = object->getString("method");
    bool more;
    if (!method) { // A reply to one of our requests.
      if (!id) {   // JSONTransport would stop here; we carry on.
        Logger::error("ignoring a message with neither method nor id");
        continue;
      }
      Expected<json::Value> result = json::Value(nullptr);
      if (const json::Object *err = object->getObject("error")) {
        StringRef message =
            err->getString("message").value_or("Unspecified error");
        result = make_error<LSPError>(
            message.str(), ErrorCode(err->getInteger("code").value_or(
                               int64_t(ErrorCode::UnknownErrorCode))));
      } else if (json::Value *r = object->get("result")) {
        result = std::move(*r);
      }
      more = handler.onReply(std::move(*id), std::move(result));
    } else {
      json::Value params = nullptr;
      if (json::Value *p = object->get("params"))
        params = std::move(*p);
      more = id ? handler.onCall(*method, std::move(params), std::move(*id))
                : handler.onNotify(*method, std::move(params));
    }
    if (!more)
      return Error::success();
  }
  return errorCodeToError(std::make_error_code(std::errc::io_error));
}

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

/// Editor settings arrive as llvm::json; the configuration reads
/// nlohmann::json. Converted as data (depth is bounded by TrackingInput).
nlohmann::json toNlohmann(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return nullptr;
  case json::Value::Boolean:
    return *v.getAsBoolean();
  case json::Value::Number:
    if (std::optional<int64_t> i = v.getAsInteger())
      return *i;
    if (std::optional<uint64_t> u = v.getAsUINT64())
      return *u;
    return *v.getAsNumber();
  case json::Value::String:
    return v.getAsString()->str();
  case json::Value::Array: {
    nlohmann::json out = nlohmann::json::array();
    for (const json::Value &e : *v.getAsArray())
      out.push_back(toNlohmann(e));
    return out;
  }
  case json::Value::Object: {
    nlohmann::json out = nlohmann::json::object();
    for (const auto &[k, e] : *v.getAsObject())
      out[k.str()] = toNlohmann(e);
    return out;
  }
  }
  return nullptr;
}

/// `items` converted one by one into a JSON array sized first:
/// json::Value's move is not noexcept, so a growing json::Array copies the
/// elements it holds at each doubling, objects and all (an inlay reply at
/// 200k lines had ~110 page faults of it before it was written as text).
template <typename Items, typename Convert>
json::Array jsonArray(const Items &items, Convert convert) {
  json::Array out;
  out.reserve(items.size());
  for (const auto &item : items)
    out.push_back(convert(item));
  return out;
}

json::Value fromNlohmann(const nlohmann::json &v) {
  switch (v.type()) {
  case nlohmann::json::value_t::boolean:
    return v.get<bool>();
  case nlohmann::json::value_t::number_integer:
    return v.get<int64_t>();
  case nlohmann::json::value_t::number_unsigned:
    return v.get<uint64_t>();
  case nlohmann::json::value_t::number_float:
    return v.get<double>();
  case nlohmann::json::value_t::string:
    return v.get<std::string>();
  case nlohmann::json::value_t::array: {
    return jsonArray(v, fromNlohmann);
  }
  case nlohmann::json::value_t::object: {
    json::Object out;
    for (auto it = v.begin(); it != v.end(); ++it)
      out[it.key()] = fromNlohmann(it.value());
    return out;
  }
  default:
    return nullptr;
  }
}

/// `initialize`'s params, as far as we read them.
struct InitializeParams {
  RawParams initializationOptions;
  /// capabilities.window.showDocument.support
  bool showDocument = false;
};
bool fromJSON(const json::Value &v, InitializeParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  if (const json::Object *obj = v.getAsObject())
    if (const json::Object *caps = obj->getObject("capabilities"))
      if (const json::Object *win = caps->getObject("window"))
        if (const json::Object *sd = win->getObject("showDocument"))
          p.showDocument = sd->getBoolean("support").value_or(false);
  return o && o.mapOptional("initializationOptions", p.initializationOptions);
}

struct DidChangeConfigurationParams {
  RawParams settings;
};
bool fromJSON(const json::Value &v, DidChangeConfigurationParams &p,
              json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.mapOptional("settings", p.settings);
}

struct DidSaveParams {
  TextDocumentIdentifier textDocument;
};
bool fromJSON(const json::Value &v, DidSaveParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument);
}

struct FileEvent {
  std::string uri;
};
bool fromJSON(const json::Value &v, FileEvent &e, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("uri", e.uri);
}
struct DidChangeWatchedFilesParams {
  std::vector<FileEvent> changes;
};
bool fromJSON(const json::Value &v, DidChangeWatchedFilesParams &p,
              json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("changes", p.changes);
}

struct CancelParams {
  RawParams id;
};
bool fromJSON(const json::Value &v, CancelParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("id", p.id);
}

/// `$/tosa-lsp/invalid` (see TrackingInput).
struct InvalidParams {
  int64_t code = int(ErrorCode::InvalidRequest);
  std::string message = "invalid request";
};
bool fromJSON(const json::Value &v, InvalidParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.mapOptional("code", p.code) &&
         o.mapOptional("message", p.message);
}

/// `tosa/previewLowering` params, or `tosa.previewLowering`'s first
/// argument: {uri | textDocument.uri, function | position, stage?, mode?}.
struct PreviewParams {
  std::optional<std::string> uri;
  std::optional<std::string> function, stage, mode;
  std::optional<lsp::Position> position;
};
bool fromJSON(const json::Value &v, PreviewParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  if (!o || !o.mapOptional("uri", p.uri) ||
      !o.mapOptional("function", p.function) ||
      !o.mapOptional("stage", p.stage) || !o.mapOptional("mode", p.mode) ||
      !o.mapOptional("position", p.position))
    return false;
  if (!p.uri)
    if (const json::Object *td = v.getAsObject()->getObject("textDocument"))
      if (std::optional<StringRef> u = td->getString("uri"))
        p.uri = clientUri(*u);
  return true;
}

/// `tosa.compile`'s first argument.
struct CompileParams {
  std::string uri;
  std::optional<std::string> function, emit, mode;
};
bool fromJSON(const json::Value &v, CompileParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("uri", p.uri) && o.mapOptional("function", p.function) &&
         o.mapOptional("emit", p.emit) && o.mapOptional("mode", p.mode);
}

struct ExecuteCommandParams {
  std::string command;
  RawParams arguments;
  RawParams workDoneToken;
};
bool fromJSON(const json::Value &v, ExecuteCommandParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.mapOptional("command", p.command) &&
         o.mapOptional("arguments", p.arguments) &&
         o.mapOptional("workDoneToken", p.workDoneToken);
}

/// The first element of executeCommand arguments (or the value itself).
const json::Value &firstArgument(const json::Value &args) {
  if (const json::Array *a = args.getAsArray(); a && !a->empty())
    return (*a)[0];
  return args;
}

std::string uriFor(const std::string &path) {
  Expected<URIForFile> uri = URIForFile::fromFile(path);
  if (!uri) {
    Logger::error("{0}: {1}", path, toString(uri.takeError()));
    return "";
  }
  return uri->uri().str();
}

/// The protocol layer: LSP messages in, TosaServer calls; TosaServer
/// results out, LSP messages. Request ids, cancellation, progress tokens and
/// the wire format of diagnostics live here and nowhere else.
class Server : public TosaServer::Callbacks {
public:
  Server(JSONTransport &transport, TrackingInput &input, FramedOutput &output,
         const ServerOptions &options)
      : input(input), output(output), litTest(options.litTest),
        version(options.version), handler(transport),
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
    handler.method("workspace/executeCommand", this, &Server::onExecuteCommand);
  }

  MessageHandler &messageHandler() { return handler; }
  bool shutdownRequested = false;
  /// Ends running compiles (their children killed, their temp directories
  /// removed) and waits for them, at most `limit`.
  void stopCompiles(std::chrono::milliseconds limit) {
    features.cancelCompiles();
    features.waitCompilesIdle(limit);
  }

private:
  static TosaServer::Options featureOptions(const ServerOptions &o) {
    TosaServer::Options out;
    out.sync = o.sync;
    out.debounce = std::chrono::milliseconds(o.debounceMs);
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
  void onError(const std::string &message) override {
    showMessage(json::Object{{"type", int(MessageType::Error)},
                             {"message", "tosa-lsp: " + message}});
  }

  //===--------------------------------------------------------------------===//
  // Lifecycle and configuration
  //===--------------------------------------------------------------------===//

  void onInitialize(const InitializeParams &params,
                    Callback<json::Value> reply) {
    if (params.initializationOptions.value.kind() != json::Value::Null)
      features.setSettings(toNlohmann(params.initializationOptions.value));
    // Neovim 0.7 and others lack window/showDocument: previews then say
    // where the file is instead.
    clientShowDocument = params.showDocument;
    const Choices &c = choices();
    auto array = [](const std::vector<std::string> &v) {
      return jsonArray(v, [](const std::string &s) { return s; });
    };
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
                       json::Array{"quickfix", "refactor.rewrite", "source",
                                   "source.refineShapes"}}}},
        {"executeCommandProvider",
         json::Object{{"commands",
                       json::Array{"tosa.previewLowering", "tosa.compile"}}}},
        // For clients: the names preview and compile accept, and the
        // settings' defaults (send only what the user set).
        {"experimental",
         json::Object{{"tosaLsp",
                       json::Object{
                           {"stages", array(c.stages)},
                           {"modes", array(c.modes)},
                           {"emits", array(c.emits)},
                           {"defaultSettings",
                            fromNlohmann(TosaServer::defaultSettings())},
                       }}}},
    };
    reply(json::Object{{"capabilities", std::move(caps)},
                       {"serverInfo", json::Object{{"name", "tosa-lsp"},
                                                   {"version", version}}}});
  }

  void onShutdown(const NoParams &, Callback<json::Value> reply) {
    shutdownRequested = true;
    features.cancelCompiles(); // a compile can take minutes: do not wait
    reply(nullptr);
  }

  void onIgnored(const RawParams &) {}

  /// A request the input layer found invalid (see TrackingInput).
  void onInvalid(const InvalidParams &params, Callback<json::Value> reply) {
    reply(make_error<LSPError>(params.message,
                               static_cast<ErrorCode>(params.code)));
  }

  void onDidChangeConfiguration(const DidChangeConfigurationParams &params) {
    features.setSettings(toNlohmann(params.settings.value));
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

  void onDidOpen(const DidOpenTextDocumentParams &params) {
    // The text is moved, never copied (20 MB at 200k lines): a long one
    // from where the message's reading put it aside, a short one from
    // `params`, the message handler's own non-const object, unused after
    // this call.
    std::optional<std::string> text = input.takeOpenedText();
    features.addDocument(
        clientUri(params.textDocument.uri),
        params.textDocument.uri.file().str(), params.textDocument.version,
        text ? std::move(*text)
             : std::move(const_cast<std::string &>(params.textDocument.text)));
  }

  void onDidChange(const ParamsRef &ref) {
    const json::Value &raw = *ref.value;
    DidChangeTextDocumentParams params;
    json::Path::Root root("params");
    if (!fromJSON(raw, params, root)) {
      // Dropped, the edit would leave our text behind the editor's for
      // good: the document is closed, as after a change we cannot apply.
      std::string message =
          "didChange not understood (" + llvm::toString(root.getError()) + ")";
      const json::Object *o = raw.getAsObject();
      const json::Object *doc = o ? o->getObject("textDocument") : nullptr;
      std::optional<StringRef> uriText =
          doc ? doc->getString("uri") : std::nullopt;
      URIForFile file;
      if (!uriText || !fromJSON(json::Value(*uriText), file, root)) {
        Logger::error("{0}", message);
        return;
      }
      desynced(clientUri(file), message);
      return;
    }
    const std::string uri = clientUri(params.textDocument.uri);
    if (Error err = features.changeDocument(uri, params.textDocument.version,
                                            params.contentChanges)) {
      std::string message;
      handleAllErrors(
          std::move(err), [&](const LSPError &e) { message = e.message; },
          [&](const ErrorInfoBase &e) { message = e.message(); });
      if (StringRef(message).starts_with("didChange for a document")) {
        Logger::error("{0}: {1}", uri, message);
        return;
      }
      desynced(uri, message); // changeDocument closed it
    }
  }

  /// The client's text of `uri` is no longer known: it is closed here, its
  /// diagnostics cleared, and the user told how to recover.
  void desynced(const std::string &uri, const std::string &message) {
    Logger::error("{0}: {1}", uri, message);
    features.removeDocument(uri);
    publish(json::Object{{"uri", uri}, {"diagnostics", json::Array()}});
    showMessage(json::Object{
        {"type", int(MessageType::Error)},
        {"message", "tosa-lsp: " + message +
                        "; the file is no longer analysed: close and "
                        "reopen it to resync"}});
  }

  void onDidClose(const DidCloseTextDocumentParams &params) {
    const std::string uri = clientUri(params.textDocument.uri);
    features.removeDocument(uri);
    publish(json::Object{{"uri", uri}, {"diagnostics", json::Array()}});
  }

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

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
      auto it = pending.find(idKey(params.id.value));
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

  void onHover(const TextDocumentPositionParams &params,
               Callback<json::Value> reply) {
    features.hover(
        clientUri(params.textDocument.uri), params.position,
        answer<std::optional<Hover>>(
            std::move(reply), [](std::optional<Hover> h) -> json::Value {
              return h ? toJSON(*h) : json::Value(nullptr);
            }));
  }

  /// Answered with text written straight to the output (InlayHintsJSON.h):
  /// every screen an editor shows asks for its hints.
  void onInlayHint(const InlayHintsParams &params,
                   Callback<json::Value> reply) {
    auto [deferred, key] = defer(std::move(reply));
    std::optional<json::Value> id = input.currentId;
    features.inlayHints(
        clientUri(params.textDocument.uri), params.range,
        [this, deferred = deferred, key = key,
         id = std::move(id)](Expected<std::vector<InlayHint>> r) mutable {
          if (!r || !id)
            deferred->finish(
                r ? json::Value(jsonArray(
                        *r, [](const InlayHint &h) { return toJSON(h); }))
                  : Expected<json::Value>(r.takeError()));
          else if (deferred->claim())
            output.sendRaw(inlayHintsReplyMessage(*id, *r, litTest));
          forget(key);
        });
  }

  static auto locations(const URIForFile &uri) {
    return [uri = clientUri(uri)](std::vector<lsp::Range> rs) -> json::Value {
      // Not toJSON(lsp::Location): it borrows the URI string.
      return jsonArray(rs, [&](const lsp::Range &r) {
        return json::Object{{"uri", uri}, {"range", toJSON(r)}};
      });
    };
  }

  void onDefinition(const TextDocumentPositionParams &params,
                    Callback<json::Value> reply) {
    features.definition(
        clientUri(params.textDocument.uri), params.position,
        answer<std::vector<lsp::Range>>(std::move(reply),
                                        locations(params.textDocument.uri)));
  }

  void onReferences(const ReferenceParams &params,
                    Callback<json::Value> reply) {
    features.references(
        clientUri(params.textDocument.uri), params.position,
        params.context.includeDeclaration,
        answer<std::vector<lsp::Range>>(std::move(reply),
                                        locations(params.textDocument.uri)));
  }

  void onDocumentSymbol(const DocumentSymbolParams &params,
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

  static json::Value codeActionJSON(const Snapshot &s,
                                    const CodeActionItem &a) {
    lsp::CodeAction action;
    action.title = a.title;
    action.kind = a.kind;
    if (a.diagnostic && !a.review) { // whole-file rewrites are built below
      action.isPreferred = a.preferred;
      lsp::WorkspaceEdit edit;
      std::vector<lsp::TextEdit> &edits = edit.changes[s.uri];
      for (const TextEdit &e : a.edits)
        edits.push_back(lsp::TextEdit{e.range, e.newText});
      action.edit = std::move(edit);
    }
    json::Value value = toJSON(action);
    json::Object &out = *value.getAsObject();
    // Where lsp:: lacks a field: the diagnostic keeps its `code`
    // (lsp::Diagnostic has none), an edit to review goes as a versioned
    // document change with annotated edits (lsp::WorkspaceEdit has only
    // `changes`), and refactorings run a command.
    if (a.diagnostic) {
      out["isPreferred"] = a.preferred;
      // Also a finding that is not published: it says what the fix does.
      out["diagnostics"] = json::Array{diagnosticJSON(s, *a.diagnostic)};
    }
    if (a.review) {
      json::Array edits = jsonArray(a.edits, [](const TextEdit &e) {
        return json::Object{{"range", toJSON(e.range)}, {"newText", e.newText}};
      });
      out["edit"] = json::Object{
          {"documentChanges",
           json::Array{json::Object{
               {"textDocument",
                json::Object{{"uri", s.uri}, {"version", a.version}}},
               {"edits", std::move(edits)}}}}};
      out["data"] = json::Object{{"review", true}};
    }
    if (a.diagnostic || a.review)
      return value;
    json::Object args{{"uri", s.uri}, {"function", a.function}};
    if (!a.stage.empty())
      args["stage"] = a.stage;
    if (!a.mode.empty())
      args["mode"] = a.mode;
    if (!a.emit.empty())
      args["emit"] = a.emit;
    out["command"] = json::Object{{"title", a.commandTitle},
                                  {"command", a.command},
                                  {"arguments", json::Array{std::move(args)}}};
    return value;
  }

  void onCodeAction(const CodeActionParams &params,
                    Callback<json::Value> reply) {
    // The diagnostics the client lists on the lines asked about count as
    // asked about: Neovim 0.7 sends the cursor position with the cursor
    // line's diagnostics, and at the start of the line no diagnostic
    // overlaps the position itself.
    lsp::Range range = params.range;
    for (const lsp::Diagnostic &d : params.context.diagnostics)
      if (d.range.start.line >= params.range.start.line &&
          d.range.start.line <= params.range.end.line) {
        range.start = std::min(range.start, d.range.start);
        range.end = std::max(range.end, d.range.end);
      }
    features.codeActions(
        clientUri(params.textDocument.uri), range, params.context.only,
        answer<CodeActions>(
            std::move(reply), [](CodeActions actions) -> json::Value {
              return jsonArray(actions.items, [&](const CodeActionItem &a) {
                return codeActionJSON(*actions.snapshot, a);
              });
            }));
  }

  /// Runs a preview; with `showDocument`, the preview is also written to a
  /// read-only file the client is asked to open.
  void preview(const json::Value &raw, Callback<json::Value> reply,
               bool showDocument) {
    PreviewParams params;
    json::Path::Root root;
    if (!raw.getAsObject())
      return reply(
          make_error<LSPError>("expected {uri, position|function, stage, mode}",
                               ErrorCode::InvalidParams));
    if (!fromJSON(raw, params, root)) {
      // A malformed position keeps its old wording.
      if (raw.getAsObject()->get("position"))
        return reply(make_error<LSPError>("unknown document or bad position",
                                          ErrorCode::InvalidParams));
      return reply(make_error<LSPError>(
          "invalid tosa/previewLowering params: " + toString(root.getError()),
          ErrorCode::InvalidParams));
    }
    if (!params.uri)
      return reply(
          make_error<LSPError>("missing uri", ErrorCode::InvalidParams));
    PreviewRequest req;
    req.uri = *params.uri;
    req.function = params.function;
    if (!params.function)
      req.position = params.position;
    if (params.stage)
      req.stage = *params.stage;
    if (params.mode)
      req.mode = *params.mode;
    req.writeFile = showDocument;
    features.previewLowering(
        std::move(req),
        answer<PreviewResult>(
            std::move(reply),
            [this, function = params.function.value_or(std::string())](
                PreviewResult r) -> json::Value {
              json::Array mappings =
                  jsonArray(r.mappings, [](const PreviewMappingLsp &m) {
                    return json::Object{{"previewPosition", toJSON(m.preview)},
                                        {"sourceOp", m.sourceOp},
                                        {"sourcePosition", toJSON(m.source)}};
                  });
              json::Object result{{"text", std::move(r.text)},
                                  {"pipeline", std::move(r.pipeline)},
                                  {"mappings", std::move(mappings)}};
              if (!r.file.empty()) {
                std::string fileUri = uriFor(r.file);
                result["previewUri"] = fileUri;
                if (clientShowDocument)
                  showDocumentRequest(
                      json::Object{{"uri", fileUri}, {"takeFocus", true}},
                      json::Value("tosa-preview-" +
                                  std::to_string(++outgoingIds)));
                else
                  showMessage(json::Object{
                      {"type", int(MessageType::Info)},
                      {"message", "tosa-lsp: lowering preview" +
                                      (function.empty() ? std::string()
                                                        : " of @" + function) +
                                      " written to " + r.file}});
              }
              return result;
            }));
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
    preview(firstArgument(params.arguments.value), std::move(reply), true);
  }

  /// `tosa.compile {uri, function?, emit?, mode?}`: a child process, with
  /// $/progress and cancellation.
  void startCompile(const ExecuteCommandParams &params,
                    Callback<json::Value> reply) {
    CompileParams args;
    json::Path::Root root;
    if (!fromJSON(firstArgument(params.arguments.value), args, root))
      return reply(
          make_error<LSPError>("tosa.compile expects [{uri, function?, emit?}]",
                               ErrorCode::InvalidParams));
    CompileRequest req;
    req.uri = args.uri;
    req.function = args.function.value_or("");
    if (args.emit)
      req.emit = *args.emit;
    if (args.mode)
      req.mode = *args.mode;

    // Progress: the client's token if it gave one, else one we create.
    json::Value token = params.workDoneToken.value;
    bool create = token.kind() == json::Value::Null;
    if (create)
      token = "tosa-compile-" + std::to_string(++outgoingIds);
    auto report = [this, token, create](const CompileProgress &p) {
      json::Object value;
      switch (p.kind) {
      case CompileProgress::Begin:
        if (create)
          createProgress(
              json::Object{{"token", token}},
              json::Value("tosa-progress-" + std::to_string(++outgoingIds)));
        value = json::Object{
            {"kind", "begin"}, {"title", p.message}, {"cancellable", true}};
        break;
      case CompileProgress::Report:
        value = json::Object{{"kind", "report"}, {"message", p.message}};
        break;
      case CompileProgress::End:
        value = json::Object{{"kind", "end"}, {"message", p.message}};
        break;
      }
      progress(json::Object{{"token", token}, {"value", std::move(value)}});
    };
    // A client that gives no token is taken to be plugin-less (the plugins
    // and the VS Code extension always give one): it is told where the
    // output went with window/showMessage, as it would not show the reply.
    std::string what =
        req.function.empty() ? std::string("the file") : "@" + req.function;
    std::shared_ptr<Deferred> deferred;
    auto cb = answer<json::Value>(
        std::move(reply),
        [this, create, what](json::Value v) {
          const json::Object *o = v.getAsObject();
          if (create && o) {
            std::string message = "tosa-lsp: compiled " + what + " to " +
                                  o->getString("output").value_or("").str();
            if (std::optional<StringRef> h = o->getString("header"))
              message += " (header " + h->str() + ")";
            showMessage(json::Object{{"type", int(MessageType::Info)},
                                     {"message", message}});
          }
          return v;
        },
        &deferred);
    std::function<void()> cancel =
        features.compile(std::move(req), report, std::move(cb));
    std::lock_guard<std::mutex> lock(deferred->mu);
    if (!deferred->done)
      deferred->onCancel = std::move(cancel);
  }

  TrackingInput &input;
  FramedOutput &output;
  bool litTest;
  std::string version;             // serverInfo.version
  bool clientShowDocument = false; // capabilities.window.showDocument.support
  MessageHandler handler;
  OutgoingNotification<json::Value> publish;
  OutgoingNotification<json::Value> showMessage;
  OutgoingRequest<json::Value> showDocumentRequest;
  OutgoingRequest<json::Value> createProgress;
  OutgoingNotification<json::Value> progress;
  std::atomic<int> outgoingIds{0};
  std::mutex pendingMu;
  std::map<std::string, std::shared_ptr<Deferred>> pending;
  TosaServer features; // last: its threads call back into the members above
};

/// SIGTERM, SIGINT and SIGHUP (an editor quitting sends one): the server
/// was killed at once, leaving a compile's child running and the user's
/// text in its temp directory. A handler writes the signal to a pipe; a
/// thread reads it, stops the compiles and exits with the signal's code.
class TerminationWatch {
public:
  explicit TerminationWatch(Server &server) {
    if (::pipe(fds) != 0)
      return;
    (void)fcntl(fds[1], F_SETFL, O_NONBLOCK);
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    writeEnd.store(fds[1]);
    watcher = std::thread([this, &server] {
      unsigned char sig = 0;
      while (::read(fds[0], &sig, 1) < 0 && errno == EINTR) {
      }
      if (sig == 0)
        return; // the server ended normally
      server.stopCompiles(std::chrono::seconds(3));
      std::_Exit(128 + sig);
    });
    struct sigaction act = {};
    act.sa_handler = [](int sig) {
      unsigned char b = static_cast<unsigned char>(sig);
      int fd = writeEnd.load();
      if (fd >= 0)
        (void)!::write(fd, &b, 1);
    };
    sigemptyset(&act.sa_mask);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      struct sigaction old;
      // Left alone when ignored (nohup).
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(sig, &act, nullptr);
    }
  }
  ~TerminationWatch() {
    if (!watcher.joinable())
      return;
    writeEnd.store(-1); // a later signal writes nowhere, then exits as usual
    unsigned char none = 0;
    (void)!::write(fds[1], &none, 1);
    watcher.join();
    ::close(fds[0]);
    ::close(fds[1]);
  }

private:
  static inline std::atomic<int> writeEnd{-1};
  int fds[2] = {-1, -1};
  std::thread watcher;
};

} // namespace

int runServer(std::FILE *in, const ServerOptions &options) {
  Logger::setLogLevel(options.verbose ? Logger::Level::Debug
                                      : Logger::Level::Error);
  JSONStreamStyle style =
      options.litTest ? JSONStreamStyle::Delimited : JSONStreamStyle::Standard;
  if (options.litTest)
    URIForFile::registerSupportedScheme("test");   // test:///foo.mlir
  URIForFile::registerSupportedScheme("untitled"); // unsaved editor buffers
  URIForFile::registerSupportedScheme(kOpaqueScheme);
#ifdef F_SETPIPE_SZ
  // A publish of a big file is megabytes: through the default 64 KiB pipe
  // that is a context switch per 64 KiB on both sides. Best effort (the
  // limit is /proc/sys/fs/pipe-max-size; not a pipe: nothing happens).
  (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
#endif
  auto input = std::make_unique<TrackingInput>(in, style);
  TrackingInput &inputRef = *input;
  FramedOutput output(llvm::outs());
  JSONTransport transport(std::move(input), output,
                          /*PrettyOutput=*/options.litTest);
  ServerOptions opts = options;
  opts.sync |= options.litTest;
  auto server = std::make_unique<Server>(transport, inputRef, output, opts);
  std::optional<TerminationWatch> watch;
  if (!options.litTest)
    watch.emplace(*server);
  Error err = runTransport(inputRef, server->messageHandler());
  bool clean = !err && server->shutdownRequested;
  if (err)
    Logger::error("transport: {0}", toString(std::move(err)));
  watch.reset();  // before the server it would stop
  server.reset(); // Joins the workers before the transport goes away.
  return clean ? 0 : 1;
}

} // namespace tosa_lsp
