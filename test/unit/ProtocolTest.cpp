//===- ProtocolTest.cpp - the protocol layer's types and error kinds ------===//
//
// Protocol.h's mappers (params read, results written and read back, bad
// params answered with InvalidParams saying what was expected), the
// reader's refusals (Transport.h), and the kinds of changeDocument's errors
// that the protocol layer acts on.
//
//===----------------------------------------------------------------------===//

#include "Protocol.h"
#include "Choices.h"
#include "TosaServer.h"
#include "Transport.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace tosa_lsp;
namespace json = llvm::json;
namespace lsp = llvm::lsp;

namespace {

json::Value parse(llvm::StringRef text) {
  llvm::Expected<json::Value> v = json::parse(text);
  EXPECT_TRUE(bool(v)) << llvm::toString(v.takeError());
  return v ? std::move(*v) : json::Value(nullptr);
}

std::string print(const json::Value &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  return s;
}

/// The error's LSP code and message; "success" when there is none.
template <typename T> std::string failure(llvm::Expected<T> e) {
  if (e)
    return "success";
  std::string out;
  llvm::handleAllErrors(
      e.takeError(),
      [&](const lsp::LSPError &l) {
        out = std::to_string(int(l.code)) + ": " + l.message;
      },
      [&](const llvm::ErrorInfoBase &b) { out = "not an LSPError"; });
  return out;
}

const std::string kInvalidParams =
    std::to_string(int(lsp::ErrorCode::InvalidParams)) + ": ";

TEST(Protocol, OpaqueUrisRoundTrip) {
  for (llvm::StringRef uri :
       {"untitled:Untitled-1", "vscode-notebook-cell:/nb/a%20b.mlir#W1sZm",
        "git:/x.mlir?{\"ref\":\"HEAD\"}"}) {
    ASSERT_TRUE(isOpaqueUri(uri)) << uri.str();
    std::string wrapped = wrapOpaqueUri(uri);
    EXPECT_TRUE(llvm::StringRef(wrapped).starts_with("tosa-lsp-opaque:/"));
    EXPECT_EQ(clientUri(wrapped), uri);
  }
  // Ours as they are.
  for (llvm::StringRef uri : {"file:///a.mlir", "test:///a.mlir", "c:/a.mlir"})
    EXPECT_FALSE(isOpaqueUri(uri)) << uri.str();
  EXPECT_EQ(clientUri("file:///a.mlir"), "file:///a.mlir");
}

TEST(Protocol, InitializeParams) {
  TosaInitializeParams p;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(
      parse(R"({"capabilities":{"window":{"showDocument":{"support":true}}},)"
            R"("initializationOptions":{"shapeChecks":false}})"),
      p, root));
  EXPECT_TRUE(p.showDocument);
  EXPECT_EQ(print(p.initializationOptions), R"({"shapeChecks":false})");
  TosaInitializeParams bare;
  ASSERT_TRUE(fromJSON(parse("{}"), bare, root));
  EXPECT_FALSE(bare.showDocument);
  EXPECT_EQ(bare.initializationOptions.kind(), json::Value::Null);
}

TEST(Protocol, InvalidMessageParamsRoundTrip) {
  InvalidMessageParams in{int64_t(lsp::ErrorCode::ServerNotInitialized),
                          "send initialize first"};
  InvalidMessageParams out;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(toJSON(in), out, root));
  EXPECT_EQ(out.code, in.code);
  EXPECT_EQ(out.message, in.message);
}

TEST(Protocol, PreviewParams) {
  llvm::Expected<PreviewRequest> r = previewRequest(
      parse(R"({"uri":"file:///a.mlir","function":"f","stage":"loops"})"));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->uri, "file:///a.mlir");
  EXPECT_EQ(r->function, std::optional<std::string>("f"));
  EXPECT_EQ(r->stage, "loops");
  EXPECT_EQ(r->mode, "fast"); // the default
  EXPECT_FALSE(r->position);

  // textDocument.uri as the reader left it (wrapped), and a position.
  r = previewRequest(json::Object{
      {"textDocument", json::Object{{"uri", wrapOpaqueUri("untitled:U-1")}}},
      {"position", json::Object{{"line", 3}, {"character", 2}}}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->uri, "untitled:U-1");
  EXPECT_EQ(r->position, lsp::Position(3, 2));
  EXPECT_FALSE(r->function);
}

TEST(Protocol, BadPreviewParamsAreInvalidParams) {
  EXPECT_EQ(failure(previewRequest(parse("[1]"))),
            kInvalidParams + "expected {uri, position|function, stage, mode}");
  EXPECT_EQ(failure(previewRequest(parse(R"({"function":"f"})"))),
            kInvalidParams + "missing uri");
  EXPECT_EQ(failure(previewRequest(parse(R"({"uri":"u","stage":3})"))),
            kInvalidParams +
                "invalid tosa/previewLowering params: expected string at "
                "(root).stage");
  EXPECT_EQ(failure(previewRequest(parse(R"({"uri":"u","position":"x"})"))),
            kInvalidParams + "unknown document or bad position");
}

TEST(Protocol, CompileParams) {
  llvm::Expected<CompileRequest> r = compileRequest(
      parse(R"({"uri":"file:///a.mlir","function":"f","emit":"obj"})"));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->uri, "file:///a.mlir");
  EXPECT_EQ(r->function, "f");
  EXPECT_EQ(r->emit, "obj");
  EXPECT_EQ(r->mode, "fast");
  for (llvm::StringRef bad : {R"({"function":"f"})", R"({"uri":1})", "null"})
    EXPECT_EQ(failure(compileRequest(parse(bad))),
              kInvalidParams + "tosa.compile expects [{uri, function?, emit?}]")
        << bad.str();
}

TEST(Protocol, ExecuteCommandParams) {
  ExecuteCommandParams p;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(
      parse(R"({"command":"tosa.compile","arguments":[{"uri":"u"}, 2]})"), p,
      root));
  EXPECT_EQ(p.command, "tosa.compile");
  EXPECT_EQ(p.workDoneToken.kind(), json::Value::Null);
  EXPECT_EQ(print(firstArgument(p.arguments)), R"({"uri":"u"})");
  // A bare object is its own first argument.
  EXPECT_EQ(print(firstArgument(parse(R"({"uri":"u"})"))), R"({"uri":"u"})");
}

TEST(Protocol, UnreadableDidChangeNamesItsDocument) {
  std::optional<std::string> uri;
  auto ok = didChangeParams(
      parse(R"({"textDocument":{"uri":"test:///a.mlir","version":2},)"
            R"("contentChanges":[{"text":"x"}]})"),
      uri);
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->contentChanges.size(), 1u);
  EXPECT_FALSE(uri);

  std::string bad = failure(didChangeParams(
      parse(R"({"textDocument":{"uri":"test:///a.mlir","version":2},)"
            R"("contentChanges":[{"text":5}]})"),
      uri));
  EXPECT_EQ(bad.rfind(kInvalidParams + "didChange not understood (", 0), 0u)
      << bad;
  EXPECT_EQ(uri, std::optional<std::string>("test:///a.mlir"));

  // Without a readable URI there is no document to close.
  EXPECT_NE(failure(didChangeParams(parse(R"({"contentChanges":[]})"), uri)),
            "success");
  EXPECT_FALSE(uri);
}

TEST(Protocol, CodeActionRangeTakesTheListedDiagnostics) {
  lsp::CodeActionParams p;
  p.range = lsp::Range(lsp::Position(4, 0), lsp::Position(4, 0));
  lsp::Diagnostic onLine, elsewhere;
  onLine.range = lsp::Range(lsp::Position(4, 7), lsp::Position(4, 20));
  elsewhere.range = lsp::Range(lsp::Position(9, 0), lsp::Position(9, 5));
  p.context.diagnostics = {onLine, elsewhere};
  EXPECT_EQ(codeActionRange(p),
            lsp::Range(lsp::Position(4, 0), lsp::Position(4, 20)));
}

TEST(Protocol, CompileResultRoundTrip) {
  CompileOutputs in;
  in.output = "/out/c_add.so";
  in.header = "/out/c_add.h";
  in.symbols = {"add", "_mlir_ciface_add"};
  in.bytes = 16384;
  in.log = "lowering\nlinking\n";
  json::Value v = toJSON(in);
  // As the child's report was passed on before: the same keys, sorted.
  EXPECT_EQ(
      print(v),
      R"({"bytes":16384,"header":"/out/c_add.h","log":"lowering\nlinking\n",)"
      R"("output":"/out/c_add.so","symbols":["add","_mlir_ciface_add"]})");
  CompileOutputs out;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(v, out, root));
  EXPECT_EQ(out.output, in.output);
  EXPECT_EQ(out.header, in.header);
  EXPECT_EQ(out.symbols, in.symbols);
  EXPECT_EQ(out.bytes, in.bytes);
  EXPECT_EQ(out.log, in.log);
  // The child's report read as the CLI writes it (ok and errors aside).
  ASSERT_TRUE(fromJSON(parse(R"({"ok":true,"output":"o","header":"",)"
                             R"("symbols":[],"bytes":0,"log":"","errors":[]})"),
                       out, root));
  EXPECT_FALSE(fromJSON(parse(R"({"output":"o"})"), out, root));
}

TEST(Protocol, PreviewResult) {
  PreviewResult r;
  r.text = "func.func @f() {}";
  r.pipeline = "tosa-infer-shapes";
  r.mappings.push_back({lsp::Position(0, 1), lsp::Position(2, 3), "tosa.add"});
  EXPECT_EQ(print(previewLoweringResult(PreviewResult(r))),
            R"({"mappings":[{"previewPosition":{"character":1,"line":0},)"
            R"("sourceOp":"tosa.add","sourcePosition":{"character":3,)"
            R"("line":2}}],"pipeline":"tosa-infer-shapes",)"
            R"("text":"func.func @f() {}"})");
  json::Value withFile = previewLoweringResult(std::move(r), "file:///p.mlir");
  EXPECT_EQ(withFile.getAsObject()->getString("previewUri"),
            std::optional<llvm::StringRef>("file:///p.mlir"));
}

TEST(Protocol, CompileProgress) {
  EXPECT_EQ(print(toJSON(CompileProgress{CompileProgress::Begin, "Compiling"})),
            R"({"cancellable":true,"kind":"begin","title":"Compiling"})");
  EXPECT_EQ(print(toJSON(CompileProgress{CompileProgress::Report, "linking"})),
            R"({"kind":"report","message":"linking"})");
  EXPECT_EQ(print(toJSON(CompileProgress{CompileProgress::End, "done"})),
            R"({"kind":"end","message":"done"})");
}

TEST(Protocol, InitializeResultCarriesTheDefaultSettings) {
  InitializeResult r;
  r.version = "1.2.3";
  r.defaultSettings = parse(TosaServer::defaultSettingsText());
  json::Value v = toJSON(r);
  const json::Object *tosa = v.getAsObject()
                                 ->getObject("capabilities")
                                 ->getObject("experimental")
                                 ->getObject("tosaLsp");
  ASSERT_NE(tosa, nullptr);
  const json::Object *defaults = tosa->getObject("defaultSettings");
  ASSERT_NE(defaults, nullptr);
  EXPECT_EQ(defaults->getObject("compile")->getInteger("timeoutSeconds"),
            std::optional<int64_t>(120));
  EXPECT_EQ(tosa->getArray("stages")->size(),
            tosa_lsp::choices().stages.size());
  EXPECT_EQ(v.getAsObject()->getObject("serverInfo")->getString("version"),
            std::optional<llvm::StringRef>("1.2.3"));
}

//===----------------------------------------------------------------------===//
// The reader's refusals
//===----------------------------------------------------------------------===//

/// The messages `input` (delimited by `// -----`) reads as, after inspection.
std::vector<std::string> readAll(std::string input) {
  std::FILE *in = fmemopen(input.data(), input.size(), "r");
  EXPECT_NE(in, nullptr);
  MessageReader reader(in, lsp::JSONStreamStyle::Delimited);
  std::vector<std::string> out;
  std::string text;
  while (!reader.isEndOfInput()) {
    if (llvm::failed(reader.readMessage(text)))
      break;
    if (reader.parsed)
      out.push_back(print(*reader.parsed));
    else if (text.find_first_not_of(" \t\r\n") != std::string::npos)
      out.push_back(text);
  }
  std::fclose(in);
  return out;
}

TEST(Transport, RefusalsBecomeInvalidMessageCalls) {
  std::vector<std::string> got =
      readAll(R"({"jsonrpc":"2.0","id":1,"method":"textDocument/hover"})"
              "\n// -----\n"
              R"({"jsonrpc":"2.0","id":2,"method":"initialize"})"
              "\n// -----\n"
              R"({"jsonrpc":"2.0","id":3,"method":"initialize"})"
              "\n// -----\n"
              R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":)"
              R"({"textDocument":{"uri":"untitled:U-1"}}})"
              "\n");
  ASSERT_EQ(got.size(), 4u);
  InvalidMessageParams before{
      int64_t(lsp::ErrorCode::ServerNotInitialized),
      "the server is not initialized: send initialize first"};
  EXPECT_EQ(got[0], print(json::Object{{"jsonrpc", "2.0"},
                                       {"id", 1},
                                       {"method", "$/tosa-lsp/invalid"},
                                       {"params", toJSON(before)}}));
  EXPECT_EQ(got[1], R"({"id":2,"jsonrpc":"2.0","method":"initialize"})");
  EXPECT_NE(got[2].find("initialize was already received"), std::string::npos)
      << got[2];
  // A URI of a scheme llvm::lsp does not know, carried in ours.
  EXPECT_NE(got[3].find(wrapOpaqueUri("untitled:U-1")), std::string::npos)
      << got[3];
}

//===----------------------------------------------------------------------===//
// Error kinds
//===----------------------------------------------------------------------===//

struct Quiet : TosaServer::Callbacks {};

/// The kind of changeDocument's error; nullopt on success.
std::optional<ChangeError::Kind> kindOf(llvm::Error e) {
  std::optional<ChangeError::Kind> kind;
  llvm::handleAllErrors(
      std::move(e), [&](const ChangeError &c) { kind = c.kind; },
      [&](const llvm::ErrorInfoBase &) { ADD_FAILURE() << "not a kind"; });
  return kind;
}

TEST(ErrorKinds, ChangeErrorsSayWhatHappened) {
  Quiet callbacks;
  TosaServer::Options options;
  options.sync = true;
  TosaServer server(options, callbacks);
  lsp::TextDocumentContentChangeEvent change;
  change.text = "func.func @f() {\n  return\n}\n";
  EXPECT_EQ(kindOf(server.changeDocument("test:///none.mlir", 2, {change})),
            ChangeError::NotOpen);

  server.addDocument("test:///a.mlir", "/nonexistent/a.mlir", 1,
                     "func.func @f() {\n  return\n}\n");
  EXPECT_EQ(kindOf(server.changeDocument("test:///a.mlir", 2, {change})),
            std::nullopt);
  lsp::TextDocumentContentChangeEvent outside;
  outside.range = lsp::Range(lsp::Position(99, 0), lsp::Position(99, 1));
  outside.text = "x";
  EXPECT_EQ(kindOf(server.changeDocument("test:///a.mlir", 3, {outside})),
            ChangeError::Desynced);
  // Closed by the desync: a change after it finds no document.
  EXPECT_EQ(kindOf(server.changeDocument("test:///a.mlir", 4, {change})),
            ChangeError::NotOpen);
}

TEST(ErrorKinds, AChangeErrorIsAnInvalidParamsLSPError) {
  llvm::Error e = llvm::make_error<ChangeError>(ChangeError::Desynced, "m");
  std::optional<lsp::ErrorCode> code;
  llvm::handleAllErrors(std::move(e),
                        [&](const lsp::LSPError &l) { code = l.code; });
  EXPECT_EQ(code, lsp::ErrorCode::InvalidParams);
}

} // namespace

namespace {

/// The hand-written semantic tokens reply is the JSON toJSON gives.
TEST(Protocol, SemanticTokensReplyEqualsTheTree) {
  tosa_lsp::SemanticTokensLsp full;
  full.resultId = "3.7";
  full.data = std::make_shared<const std::vector<uint32_t>>(
      std::vector<uint32_t>{0, 0, 4, 6, 1, 1, 2, 3, 0, 0});
  tosa_lsp::SemanticTokensLsp delta;
  delta.resultId = "4.8";
  delta.isDelta = true;
  delta.start = 5;
  delta.deleteCount = 2;
  delta.inserted = {9, 9};
  for (const tosa_lsp::SemanticTokensLsp &t : {full, delta})
    for (bool pretty : {false, true}) {
      std::string text =
          tosa_lsp::semanticTokensReply(llvm::json::Value(12), t, pretty);
      llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
      ASSERT_TRUE(bool(parsed)) << text;
      llvm::json::Value want = llvm::json::Object{
          {"id", 12}, {"jsonrpc", "2.0"}, {"result", tosa_lsp::toJSON(t)}};
      EXPECT_EQ(*parsed, want) << text;
    }
}

// The completion reply written by hand is the message toJSON prints, byte
// for byte, with every field an item can carry (and characters to escape).
TEST(Protocol, CompletionReplyIsTheJSONValuePrinted) {
  llvm::lsp::CompletionList list;
  list.isIncomplete = true;
  llvm::lsp::CompletionItem plain("%0", llvm::lsp::CompletionItemKind::Variable,
                                  "0001");
  plain.detail = "tensor<2x\"q\"xf32>\n";
  plain.textEdit = llvm::lsp::TextEdit{
      llvm::lsp::Range(llvm::lsp::Position(3, 4), llvm::lsp::Position(3, 6)),
      "%0"};
  llvm::lsp::CompletionItem full("add",
                                 llvm::lsp::CompletionItemKind::Function);
  full.documentation = llvm::lsp::MarkupContent{llvm::lsp::MarkupKind::Markdown,
                                                "**add** \u00e9"};
  full.filterText = "add";
  full.insertText = "add ${1:%a}, ${2:%b}";
  full.insertTextFormat = llvm::lsp::InsertTextFormat::Snippet;
  full.additionalTextEdits = {*plain.textEdit, *plain.textEdit};
  full.deprecated = true;
  llvm::lsp::CompletionItem bare;
  bare.label = "x";
  list.items = {plain, full, bare};
  for (const llvm::lsp::CompletionList &l :
       {list, llvm::lsp::CompletionList()}) {
    llvm::json::Value want = llvm::json::Object{
        {"id", "r1"}, {"jsonrpc", "2.0"}, {"result", toJSON(l)}};
    std::string printed;
    llvm::raw_string_ostream os(printed);
    os << want;
    EXPECT_EQ(tosa_lsp::completionReply(llvm::json::Value("r1"), l, false),
              printed);
    llvm::Expected<llvm::json::Value> pretty = llvm::json::parse(
        tosa_lsp::completionReply(llvm::json::Value("r1"), l, true));
    ASSERT_TRUE(bool(pretty));
    EXPECT_EQ(*pretty, want);
  }
}

} // namespace
