//===- Protocol.cpp - tosa-lsp's LSP messages as types --------------------===//

#include "Protocol.h"

#include "SemanticTokens.h"

#include "Choices.h"
#include "DiagnosticsJSON.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/LSP/Logging.h"

using namespace llvm;
namespace lsp = llvm::lsp;

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// Documents in schemes llvm::lsp does not know
//===----------------------------------------------------------------------===//

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

std::string clientUri(const lsp::URIForFile &uri) {
  return clientUri(uri.uri());
}

std::string fileUri(const std::string &path) {
  Expected<lsp::URIForFile> uri = lsp::URIForFile::fromFile(path);
  if (!uri) {
    lsp::Logger::error("{0}: {1}", path, toString(uri.takeError()));
    return "";
  }
  return uri->uri().str();
}

//===----------------------------------------------------------------------===//
// Params
//===----------------------------------------------------------------------===//

static Error invalidParams(const Twine &message) {
  return make_error<lsp::LSPError>(message.str(),
                                   lsp::ErrorCode::InvalidParams);
}

bool fromJSON(const json::Value &v, RawParams &r, json::Path) {
  r.value = v;
  return true;
}

bool fromJSON(const json::Value &v, ParamsRef &r, json::Path) {
  r.value = &v;
  return true;
}

/// A member kept as JSON, null when absent.
static bool mapRaw(json::ObjectMapper &o, StringLiteral key, json::Value &out) {
  RawParams raw;
  if (!o.mapOptional(key, raw))
    return false;
  out = std::move(raw.value);
  return true;
}

bool fromJSON(const json::Value &v, TosaInitializeParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  if (const json::Object *obj = v.getAsObject())
    if (const json::Object *caps = obj->getObject("capabilities"))
      if (const json::Object *win = caps->getObject("window"))
        if (const json::Object *sd = win->getObject("showDocument"))
          p.showDocument = sd->getBoolean("support").value_or(false);
  if (const json::Object *obj = v.getAsObject())
    if (const json::Object *caps = obj->getObject("capabilities"))
      if (const json::Object *ws = caps->getObject("workspace"))
        if (const json::Object *ih = ws->getObject("inlayHint"))
          p.inlayHintRefresh = ih->getBoolean("refreshSupport").value_or(false);
  p.editing = editingCapabilities(v);
  if (const json::Object *obj = v.getAsObject()) {
    auto fromUri = [&](std::optional<StringRef> uri) {
      if (!uri || !p.rootPath.empty())
        return;
      if (Expected<lsp::URIForFile> u = lsp::URIForFile::fromURI(*uri))
        p.rootPath = u->file().str();
      else
        consumeError(u.takeError());
    };
    fromUri(obj->getString("rootUri"));
    if (const json::Array *folders = obj->getArray("workspaceFolders"))
      if (!folders->empty())
        if (const json::Object *f = folders->front().getAsObject())
          fromUri(f->getString("uri"));
    if (p.rootPath.empty())
      if (std::optional<StringRef> path = obj->getString("rootPath"))
        p.rootPath = path->str();
  }
  return o && mapRaw(o, "initializationOptions", p.initializationOptions);
}

bool fromJSON(const json::Value &v, DidChangeConfigurationParams &p,
              json::Path path) {
  json::ObjectMapper o(v, path);
  return o && mapRaw(o, "settings", p.settings);
}

bool fromJSON(const json::Value &v, DidSaveParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument);
}

bool fromJSON(const json::Value &v, FileEvent &e, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("uri", e.uri);
}

bool fromJSON(const json::Value &v, DidChangeWatchedFilesParams &p,
              json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("changes", p.changes);
}

bool fromJSON(const json::Value &v, CancelParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  RawParams id;
  if (!o || !o.map("id", id))
    return false;
  p.id = std::move(id.value);
  return true;
}

bool fromJSON(const json::Value &v, InvalidMessageParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.mapOptional("code", p.code) &&
         o.mapOptional("message", p.message);
}

json::Value toJSON(const InvalidMessageParams &p) {
  return json::Object{{"code", p.code}, {"message", p.message}};
}

bool fromJSON(const json::Value &v, ExecuteCommandParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.mapOptional("command", p.command) &&
         mapRaw(o, "arguments", p.arguments) &&
         mapRaw(o, "workDoneToken", p.workDoneToken);
}

const json::Value &firstArgument(const json::Value &args) {
  if (const json::Array *a = args.getAsArray(); a && !a->empty())
    return (*a)[0];
  return args;
}

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

Expected<PreviewRequest> previewRequest(const json::Value &raw) {
  if (!raw.getAsObject())
    return invalidParams("expected {uri, position|function, stage, mode}");
  PreviewParams params;
  json::Path::Root root;
  if (!fromJSON(raw, params, root)) {
    // A malformed position keeps its old wording.
    if (raw.getAsObject()->get("position"))
      return invalidParams("unknown document or bad position");
    return invalidParams("invalid tosa/previewLowering params: " +
                         toString(root.getError()));
  }
  if (!params.uri)
    return invalidParams("missing uri");
  PreviewRequest req;
  req.uri = std::move(*params.uri);
  req.function = std::move(params.function);
  if (!req.function)
    req.position = params.position;
  if (params.stage)
    req.stage = std::move(*params.stage);
  if (params.mode)
    req.mode = std::move(*params.mode);
  return req;
}

bool fromJSON(const json::Value &v, CompileParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("uri", p.uri) && o.mapOptional("function", p.function) &&
         o.mapOptional("emit", p.emit) && o.mapOptional("mode", p.mode);
}

Expected<CompileRequest> compileRequest(const json::Value &arg) {
  CompileParams params;
  json::Path::Root root;
  if (!fromJSON(arg, params, root))
    return invalidParams("tosa.compile expects [{uri, function?, emit?}]");
  CompileRequest req;
  req.uri = std::move(params.uri);
  req.function = params.function.value_or("");
  if (params.emit)
    req.emit = std::move(*params.emit);
  if (params.mode)
    req.mode = std::move(*params.mode);
  return req;
}

lsp::Range codeActionRange(const lsp::CodeActionParams &params) {
  lsp::Range range = params.range;
  for (const lsp::Diagnostic &d : params.context.diagnostics)
    if (d.range.start.line >= params.range.start.line &&
        d.range.start.line <= params.range.end.line) {
      range.start = std::min(range.start, d.range.start);
      range.end = std::max(range.end, d.range.end);
    }
  return range;
}

Expected<lsp::DidChangeTextDocumentParams>
didChangeParams(const json::Value &raw, std::optional<std::string> &uri) {
  uri.reset();
  lsp::DidChangeTextDocumentParams params;
  json::Path::Root root("params");
  if (fromJSON(raw, params, root))
    return std::move(params); // a change may carry a whole file
  std::string message =
      "didChange not understood (" + toString(root.getError()) + ")";
  const json::Object *o = raw.getAsObject();
  const json::Object *doc = o ? o->getObject("textDocument") : nullptr;
  std::optional<StringRef> uriText = doc ? doc->getString("uri") : std::nullopt;
  lsp::URIForFile file;
  json::Path::Root uriRoot;
  if (uriText && fromJSON(json::Value(*uriText), file, uriRoot))
    uri = clientUri(file);
  return invalidParams(message);
}

//===----------------------------------------------------------------------===//
// Results and notifications
//===----------------------------------------------------------------------===//

static json::Array stringArray(const std::vector<std::string> &v) {
  return jsonArray(v, [](const std::string &s) { return s; });
}

json::Value toJSON(const InitializeResult &r) {
  const Choices &c = choices();
  json::Object caps{
      {"textDocumentSync",
       json::Object{{"openClose", true}, {"change", 2}, {"save", false}}},
      {"hoverProvider", true},
      {"inlayHintProvider", true},
      {"definitionProvider", true},
      {"referencesProvider", true},
      {"documentSymbolProvider", true},
      {"documentHighlightProvider", true},
      {"renameProvider", json::Object{{"prepareProvider", true}}},
      {"foldingRangeProvider", true},
      {"selectionRangeProvider", true},
      {"semanticTokensProvider",
       json::Object{
           {"legend",
            json::Object{{"tokenTypes", jsonArray(semanticTypeNames(),
                                                  [](const char *n) {
                                                    return json::Value(n);
                                                  })},
                         {"tokenModifiers", jsonArray(semanticModifierNames(),
                                                      [](const char *n) {
                                                        return json::Value(n);
                                                      })}}},
           {"full", json::Object{{"delta", true}}}}},
      {"workspaceSymbolProvider", true},
      {"documentFormattingProvider", true},
      {"documentRangeFormattingProvider", true},
      {"completionProvider",
       json::Object{{"triggerCharacters",
                     json::Array{".", "%", "^", "!", "#", "(", ",", "<", ":",
                                 "[", " ", "\"", "/", "@", "{", "="}},
                    {"resolveProvider", false}}},
      {"signatureHelpProvider",
       json::Object{{"triggerCharacters", json::Array{"(", ",", " ", "%"}},
                    {"retriggerCharacters", json::Array{","}}}},
      {"codeActionProvider",
       json::Object{
           {"codeActionKinds", json::Array{"quickfix", "refactor.rewrite",
                                           "source", "source.refineShapes"}}}},
      {"executeCommandProvider",
       json::Object{
           {"commands", json::Array{"tosa.previewLowering", "tosa.compile"}}}},
      {"experimental", json::Object{{"tosaLsp",
                                     json::Object{
                                         {"stages", stringArray(c.stages)},
                                         {"modes", stringArray(c.modes)},
                                         {"emits", stringArray(c.emits)},
                                         {"defaultSettings", r.defaultSettings},
                                     }}}},
  };
  return json::Object{{"capabilities", std::move(caps)},
                      {"serverInfo", json::Object{{"name", "tosa-lsp"},
                                                  {"version", r.version}}}};
}

json::Value previewLoweringResult(PreviewResult &&r,
                                  std::optional<std::string> previewUri) {
  json::Array mappings = jsonArray(r.mappings, [](const PreviewMappingLsp &m) {
    return json::Object{{"previewPosition", toJSON(m.preview)},
                        {"sourceOp", m.sourceOp},
                        {"sourcePosition", toJSON(m.source)}};
  });
  json::Object result{{"text", std::move(r.text)},
                      {"pipeline", std::move(r.pipeline)},
                      {"mappings", std::move(mappings)}};
  if (previewUri)
    result["previewUri"] = std::move(*previewUri);
  return result;
}

json::Value toJSON(const CompileOutputs &r) {
  return json::Object{{"output", r.output},
                      {"header", r.header},
                      {"symbols", r.symbols},
                      {"bytes", r.bytes},
                      {"log", r.log}};
}

json::Value toJSON(const CompileProgress &p) {
  switch (p.kind) {
  case CompileProgress::Begin:
    return json::Object{
        {"kind", "begin"}, {"title", p.message}, {"cancellable", true}};
  case CompileProgress::Report:
    return json::Object{{"kind", "report"}, {"message", p.message}};
  case CompileProgress::End:
    break;
  }
  return json::Object{{"kind", "end"}, {"message", p.message}};
}

/// A quick fix: the edit, and its diagnostic with the `code` lsp::Diagnostic
/// lacks (also a finding that is not published: it says what the fix does).
static void addQuickFix(json::Object &out, const Snapshot &s,
                        const CodeActionItem &a) {
  out["isPreferred"] = a.preferred;
  out["diagnostics"] = json::Array{diagnosticJSON(s, *a.diagnostic)};
}

/// A whole-file rewrite: a versioned document change, for review.
static void addReviewedEdit(json::Object &out, const Snapshot &s,
                            const CodeActionItem &a) {
  json::Array edits = jsonArray(a.edits, [](const lsp::TextEdit &e) {
    return json::Object{{"range", toJSON(e.range)}, {"newText", e.newText}};
  });
  out["edit"] =
      json::Object{{"documentChanges",
                    json::Array{json::Object{
                        {"textDocument",
                         json::Object{{"uri", s.uri}, {"version", a.version}}},
                        {"edits", std::move(edits)}}}}};
  out["data"] = json::Object{{"review", true}};
}

static void addCommand(json::Object &out, const Snapshot &s,
                       const CodeActionItem &a) {
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
}

static json::Value codeActionJSON(const Snapshot &s, const CodeActionItem &a) {
  lsp::CodeAction action;
  action.title = a.title;
  action.kind = a.kind;
  if (a.diagnostic && !a.review) { // whole-file rewrites: addReviewedEdit
    action.isPreferred = a.preferred;
    lsp::WorkspaceEdit edit;
    std::vector<lsp::TextEdit> &edits = edit.changes[s.uri];
    for (const lsp::TextEdit &e : a.edits)
      edits.push_back(lsp::TextEdit{e.range, e.newText});
    action.edit = std::move(edit);
  }
  json::Value value = toJSON(action);
  json::Object &out = *value.getAsObject();
  if (a.diagnostic)
    addQuickFix(out, s, a);
  if (a.review)
    addReviewedEdit(out, s, a);
  if (!a.diagnostic && !a.review)
    addCommand(out, s, a);
  return value;
}

json::Value toJSON(const CodeActions &actions) {
  return jsonArray(actions.items, [&](const CodeActionItem &a) {
    return codeActionJSON(*actions.snapshot, a);
  });
}

json::Value locations(StringRef uri, const std::vector<lsp::Range> &ranges) {
  // Not toJSON(lsp::Location): it borrows the URI string.
  return jsonArray(ranges, [&](const lsp::Range &r) {
    return json::Object{{"uri", uri}, {"range", toJSON(r)}};
  });
}

json::Value showMessageParams(lsp::MessageType type, std::string message) {
  return json::Object{{"type", int(type)}, {"message", std::move(message)}};
}

json::Value clearDiagnosticsParams(std::string uri) {
  return json::Object{{"uri", std::move(uri)}, {"diagnostics", json::Array()}};
}

} // namespace tosa_lsp

namespace tosa_lsp {

//===----------------------------------------------------------------------===//
// The editing features
//===----------------------------------------------------------------------===//

bool fromJSON(const json::Value &v, TextDocumentParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument);
}

bool fromJSON(const json::Value &v, RenameParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument) &&
         o.map("position", p.position) && o.map("newName", p.newName);
}

bool fromJSON(const json::Value &v, SelectionRangeParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument) &&
         o.map("positions", p.positions);
}

bool fromJSON(const json::Value &v, SemanticTokensDeltaParams &p,
              json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument) &&
         o.map("previousResultId", p.previousResultId);
}

bool fromJSON(const json::Value &v, WorkspaceSymbolParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("query", p.query);
}

bool fromJSON(const json::Value &v, FormattingParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument) &&
         o.mapOptional("range", p.range);
}

bool fromJSON(const json::Value &v, BytecodeParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("uri", p.uri);
}

bool fromJSON(const json::Value &v, GraphParams &p, json::Path path) {
  json::ObjectMapper o(v, path);
  return o && o.map("textDocument", p.textDocument) &&
         o.mapOptional("position", p.position) &&
         o.mapOptional("function", p.function) &&
         o.mapOptional("stage", p.stage) && o.mapOptional("mode", p.mode);
}

ClientEditingCapabilities editingCapabilities(const json::Value &init) {
  ClientEditingCapabilities c;
  const json::Object *o = init.getAsObject();
  const json::Object *caps = o ? o->getObject("capabilities") : nullptr;
  const json::Object *td = caps ? caps->getObject("textDocument") : nullptr;
  if (!td)
    return c;
  if (const json::Object *comp = td->getObject("completion"))
    if (const json::Object *item = comp->getObject("completionItem"))
      c.snippets = item->getBoolean("snippetSupport").value_or(false);
  if (const json::Object *fold = td->getObject("foldingRange"))
    c.lineFoldingOnly = fold->getBoolean("lineFoldingOnly").value_or(false);
  return c;
}

json::Value toJSON(const DocumentHighlightLsp &h) {
  return json::Object{{"range", toJSON(h.range)}, {"kind", h.write ? 3 : 2}};
}

json::Value toJSON(const FoldingRangeLsp &f) {
  json::Object o{{"startLine", f.startLine}, {"endLine", f.endLine}};
  if (f.startCharacter)
    o["startCharacter"] = *f.startCharacter;
  if (f.endCharacter)
    o["endCharacter"] = *f.endCharacter;
  if (!f.kind.empty())
    o["kind"] = f.kind;
  return o;
}

json::Value toJSON(const PrepareRenameLsp &r) {
  return json::Object{{"range", toJSON(r.range)},
                      {"placeholder", r.placeholder}};
}

json::Value workspaceEdit(const DocumentEditLsp &e) {
  json::Array edits = jsonArray(e.edits, [](const lsp::TextEdit &t) {
    return json::Object{{"range", toJSON(t.range)}, {"newText", t.newText}};
  });
  return json::Object{
      {"documentChanges",
       json::Array{
           json::Object{{"textDocument",
                         json::Object{{"uri", e.uri}, {"version", e.version}}},
                        {"edits", std::move(edits)}}}}};
}

json::Value toJSON(const SemanticTokensLsp &t) {
  auto ints = [](llvm::ArrayRef<uint32_t> v) {
    json::Array a;
    a.reserve(v.size());
    for (uint32_t x : v)
      a.push_back(static_cast<int64_t>(x));
    return a;
  };
  if (t.isDelta)
    return json::Object{
        {"resultId", t.resultId},
        {"edits", json::Array{json::Object{{"start", t.start},
                                           {"deleteCount", t.deleteCount},
                                           {"data", ints(t.inserted)}}}}};
  return json::Object{
      {"resultId", t.resultId},
      {"data", ints(t.data ? *t.data : std::vector<uint32_t>())}};
}

/// A reply message through a json::Value tree, pretty-printed (lit tests).
static std::string prettyReply(const json::Value &id, json::Value result) {
  std::string text;
  raw_string_ostream out(text);
  json::OStream os(out, 2);
  os.object([&] {
    os.attribute("id", id);
    os.attribute("jsonrpc", "2.0");
    os.attribute("result", std::move(result));
  });
  return text;
}

std::string semanticTokensReply(const json::Value &id,
                                const SemanticTokensLsp &t, bool pretty) {
  if (pretty)
    return prettyReply(id, toJSON(t));
  std::string text;
  raw_string_ostream out(text);
  auto ints = [&](llvm::ArrayRef<uint32_t> v) {
    out << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out << ',';
      out << v[i];
    }
    out << ']';
  };
  out << "{\"id\":" << id << ",\"jsonrpc\":\"2.0\",\"result\":{";
  if (t.isDelta) {
    out << "\"edits\":[{\"data\":";
    ints(t.inserted);
    out << ",\"deleteCount\":" << t.deleteCount << ",\"start\":" << t.start
        << "}],";
  } else {
    out << "\"data\":";
    ints(t.data ? llvm::ArrayRef<uint32_t>(*t.data)
                : llvm::ArrayRef<uint32_t>());
    out << ",";
  }
  out << "\"resultId\":" << json::Value(t.resultId) << "}}";
  return text;
}

namespace {

/// Writes JSON values without a json::Value tree: keys in the order
/// json::Value prints them (sorted), strings escaped as it escapes them.
struct RawJSON {
  raw_ostream &out;
  void str(StringRef s) { out << json::Value(s); }
  void key(StringRef k, bool first = false) {
    if (!first)
      out << ',';
    out << '"' << k << "\":";
  }
  void position(const lsp::Position &p) {
    out << "{\"character\":" << p.character << ",\"line\":" << p.line << '}';
  }
  void range(const lsp::Range &r) {
    out << "{\"end\":";
    position(r.end);
    out << ",\"start\":";
    position(r.start);
    out << '}';
  }
  void textEdit(const lsp::TextEdit &e) {
    out << "{\"newText\":";
    str(e.newText);
    out << ",\"range\":";
    range(e.range);
    out << '}';
  }
  void item(const lsp::CompletionItem &i) {
    out << '{';
    bool first = true;
    auto next = [&](StringRef k) {
      key(k, first);
      first = false;
    };
    if (!i.additionalTextEdits.empty()) {
      next("additionalTextEdits");
      out << '[';
      for (size_t k = 0; k < i.additionalTextEdits.size(); ++k) {
        if (k)
          out << ',';
        textEdit(i.additionalTextEdits[k]);
      }
      out << ']';
    }
    if (i.deprecated) {
      next("deprecated");
      out << "true";
    }
    if (!i.detail.empty()) {
      next("detail");
      str(i.detail);
    }
    if (i.documentation) {
      next("documentation");
      out << toJSON(*i.documentation);
    }
    if (!i.filterText.empty()) {
      next("filterText");
      str(i.filterText);
    }
    if (!i.insertText.empty()) {
      next("insertText");
      str(i.insertText);
    }
    if (i.insertTextFormat != lsp::InsertTextFormat::Missing) {
      next("insertTextFormat");
      out << static_cast<int>(i.insertTextFormat);
    }
    if (i.kind != lsp::CompletionItemKind::Missing) {
      next("kind");
      out << static_cast<int>(i.kind);
    }
    next("label");
    str(i.label);
    if (!i.sortText.empty()) {
      next("sortText");
      str(i.sortText);
    }
    if (i.textEdit) {
      next("textEdit");
      textEdit(*i.textEdit);
    }
    out << '}';
  }
};

} // namespace

std::string completionReply(const json::Value &id,
                            const lsp::CompletionList &list, bool pretty) {
  if (pretty)
    return prettyReply(id, toJSON(list));
  std::string text;
  raw_string_ostream out(text);
  RawJSON w{out};
  out << "{\"id\":" << id << ",\"jsonrpc\":\"2.0\",\"result\":{"
      << "\"isIncomplete\":" << (list.isIncomplete ? "true" : "false")
      << ",\"items\":[";
  for (size_t i = 0; i < list.items.size(); ++i) {
    if (i)
      out << ',';
    w.item(list.items[i]);
  }
  out << "]}}";
  return text;
}

json::Value toJSON(const WorkspaceSymbolLsp &w) {
  return json::Object{{"name", w.name},
                      {"kind", static_cast<int>(w.kind)},
                      {"containerName", w.containerName},
                      {"location", toJSON(w.location)}};
}

json::Value selectionRange(const std::vector<lsp::Range> &chain) {
  json::Value out = nullptr;
  for (size_t i = chain.size(); i-- > 0;) {
    json::Object o{{"range", toJSON(chain[i])}};
    if (out.kind() != json::Value::Null)
      o["parent"] = std::move(out);
    out = std::move(o);
  }
  return out;
}

} // namespace tosa_lsp
