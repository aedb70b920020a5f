//===- Transport.cpp - the server's end of the connection -----------------===//

#include "Transport.h"

#include "MessageJSON.h"
#include "Protocol.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <unistd.h>

using namespace llvm;
namespace lsp = llvm::lsp;
using lsp::ErrorCode;
using lsp::Logger;

namespace tosa_lsp {

/// A message that does nothing: what replaces one that is skipped.
static constexpr const char *kIgnored =
    R"({"jsonrpc":"2.0","method":"$/tosa-lsp/ignored"})";

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

LogicalResult MessageReader::readDelimitedMessage(std::string &json) {
  LogicalResult r = inner.readDelimitedMessage(json);
  keep.emplace();
  inspect(json);
  return r;
}

LogicalResult MessageReader::readStandardMessage(std::string &json) {
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
    if (failed(skipBody(*length)))
      return failure();
    json = kIgnored;
    currentId.reset();
    return success();
  }
  if (failed(readBody(*length, json)))
    return failure();
  inspect(json);
  return success();
}

LogicalResult MessageReader::skipBody(size_t length) {
  char chunk[1 << 16];
  for (size_t left = length; left;) {
    size_t n = std::fread(chunk, 1, std::min(left, sizeof(chunk)), in);
    if (n == 0)
      return failure();
    left -= n;
  }
  return success();
}

LogicalResult MessageReader::readBody(size_t length, std::string &json) {
  // Room for up to 64 MiB at once: grown by doubling, a 10 MB didOpen
  // was copied and faulted in ~twice (reading it 28 -> 15 ms). Past
  // that, grown with the data actually received: an announced size is
  // never trusted further (reserved pages are not touched until read).
  json.clear();
  json.reserve(std::min<size_t>(length, kReserveMessageBytes));
  for (size_t left = length; left;) {
    size_t want = std::min<size_t>(left, size_t(1) << 20);
    size_t old = json.size();
    json.resize(old + want);
    size_t n = std::fread(&json[old], 1, want, in);
    json.resize(old + n);
    if (n == 0)
      return failure();
    left -= n;
  }
  return success();
}

bool MessageReader::readHeaderLine(std::string &line) {
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

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

static bool tooDeep(StringRef text) {
  return findDeepJsonNesting(std::string_view(text.data(), text.size()),
                             MessageReader::kMaxMessageDepth)
      .has_value();
}

/// `text` made a `$/tosa-lsp/invalid` call that answers request `id`.
static void replaceWithError(std::string &text, json::Value id, ErrorCode code,
                             StringRef message) {
  text.clear();
  raw_string_ostream os(text);
  os << json::Value(json::Object{
      {"jsonrpc", "2.0"},
      {"id", std::move(id)},
      {"method", "$/tosa-lsp/invalid"},
      {"params", toJSON(InvalidMessageParams{int64_t(code), message.str()})}});
}

/// A request (`id`) is answered with the error; a notification dropped.
static void refuse(std::string &text, const json::Value *id, ErrorCode code,
                   StringRef message) {
  if (id)
    replaceWithError(text, *id, code, message);
  else
    text = kIgnored;
}

/// A document's URI in a form llvm::lsp reads (see kOpaqueScheme).
static void normalizeUri(json::Object &message) {
  json::Object *params = message.getObject("params");
  json::Object *td = params ? params->getObject("textDocument") : nullptr;
  std::optional<StringRef> uri = td ? td->getString("uri") : std::nullopt;
  if (!uri)
    return;
  if (isOpaqueUri(*uri))
    (*td)["uri"] = wrapOpaqueUri(*uri);
  else if (uri->starts_with_insensitive("file:") &&
           !uri->starts_with("file:")) // schemes ignore case
    (*td)["uri"] = ("file:" + uri->drop_front(5)).str();
}

bool MessageReader::refusedByLifecycle(std::string &text,
                                       std::optional<StringRef> method,
                                       const json::Value *id) {
  // Before `initialize`, requests get ServerNotInitialized and
  // notifications other than `exit` are dropped; `initialize` once only.
  if (method && *method == "initialize" && id) {
    if (initializeSeen) {
      replaceWithError(text, *id, ErrorCode::InvalidRequest,
                       "initialize was already received");
      return true;
    }
    initializeSeen = true;
  } else if (method && !initializeSeen && *method != "exit") {
    refuse(text, id, ErrorCode::ServerNotInitialized,
           "the server is not initialized: send initialize first");
    return true;
  }
  if (shutdownSeen && method && *method != "exit") {
    refuse(text, id, ErrorCode::InvalidRequest, "the server is shutting down");
    return true;
  }
  return false;
}

void MessageReader::inspect(std::string &text) {
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
  static constexpr StringRef kOpenedText[] = {"params", "textDocument", "text"};
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
    refuse(text, id, ErrorCode::InvalidRequest, "\"method\" must be a string");
    return;
  }
  if (refusedByLifecycle(text, method, id))
    return;
  if (id && method) {
    currentId = *id;
    if (*method == "shutdown")
      shutdownSeen = true;
  }
  normalizeUri(*obj);
  parsed = std::move(*doc);
}

//===----------------------------------------------------------------------===//
// The connection
//===----------------------------------------------------------------------===//

Transport::Transport(std::FILE *in, bool litTest)
    : Transport(std::make_unique<MessageReader>(
                    in, litTest ? lsp::JSONStreamStyle::Delimited
                                : lsp::JSONStreamStyle::Standard),
                litTest) {}

Transport::Transport(std::unique_ptr<MessageReader> r, bool litTest)
    : reader(*r), output(llvm::outs()),
      transport(std::move(r), output, /*PrettyOutput=*/litTest) {
#ifdef F_SETPIPE_SZ
  // A publish of a big file is megabytes: through the default 64 KiB pipe
  // that is a context switch per 64 KiB on both sides. Best effort (the
  // limit is /proc/sys/fs/pipe-max-size; not a pipe: nothing happens).
  (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
#endif
}

// JSONTransport::run, dispatching the value MessageReader parsed instead of
// parsing the message a second time (~90 ms for a 17 MB didOpen).
Error Transport::run(lsp::MessageHandler &handler) {
  std::string text;
  while (!reader.isEndOfInput()) {
    if (reader.hasError())
      return errorCodeToError(std::error_code(errno, std::system_category()));
    // Ends once this message and its reply are freed (declared first, so
    // it runs last).
    llvm::scope_exit answered([&] { reader.keep.reset(); });
    // A replaced version's text (allocated here, by its didChange) goes
    // back once the reclaimer has freed it.
    collectWhatOthersFreed();
    if (failed(reader.readMessage(text)))
      continue;
    std::optional<json::Value> msg = std::move(reader.parsed);
    reader.parsed.reset();
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
    if (!dispatch(std::move(*msg), handler))
      return Error::success();
  }
  return errorCodeToError(std::make_error_code(std::errc::io_error));
}

// What JSONTransport::handleMessage does, but a message with neither method
// nor id is skipped (JSONTransport would stop).
bool Transport::dispatch(json::Value message, lsp::MessageHandler &handler) {
  json::Object *object = message.getAsObject();
  if (!object ||
      object->getString("jsonrpc") != std::optional<StringRef>("2.0"))
    return false;
  std::optional<json::Value> id;
  if (json::Value *i = object->get("id"))
    id = std::move(*i);
  std::optional<StringRef> method = object->getString("method");
  if (!method) { // A reply to one of our requests.
    if (!id) {
      Logger::error("ignoring a message with neither method nor id");
      return true;
    }
    Expected<json::Value> result = json::Value(nullptr);
    if (const json::Object *err = object->getObject("error")) {
      StringRef text = err->getString("message").value_or("Unspecified error");
      result = make_error<lsp::LSPError>(
          text.str(), ErrorCode(err->getInteger("code").value_or(
                          int64_t(ErrorCode::UnknownErrorCode))));
    } else if (json::Value *r = object->get("result")) {
      result = std::move(*r);
    }
    return handler.onReply(std::move(*id), std::move(result));
  }
  json::Value params = nullptr;
  if (json::Value *p = object->get("params"))
    params = std::move(*p);
  return id ? handler.onCall(*method, std::move(params), std::move(*id))
            : handler.onNotify(*method, std::move(params));
}

} // namespace tosa_lsp
