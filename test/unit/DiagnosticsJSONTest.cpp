//===- DiagnosticsJSONTest.cpp - the compact publish is the same JSON -----===//

#include "DiagnosticsJSON.h"

#include "Config.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

Diagnostic diag(Severity sev, Range r, std::string code, std::string message) {
  Diagnostic d;
  d.severity = sev;
  d.range = r;
  d.code = std::move(code);
  d.message = std::move(message);
  return d;
}

std::shared_ptr<const Snapshot> snapshot(std::vector<Diagnostic> ds,
                                         Config config = Config()) {
  auto fa = std::make_shared<FileAnalysis>();
  fa->diagnostics = std::move(ds);
  return std::make_shared<const Snapshot>(
      "file:///a%20b/\"q\".mlir", "/a b/\"q\".mlir", 42,
      std::make_shared<const std::string>("a é😀 b\n  %0 = tosa.add\n"),
      std::move(config), std::move(fa));
}

} // namespace

// The hand-written compact form must parse to exactly what the json::OStream
// form (the one lit transcripts check) does: escapes, UTF-16 columns, notes
// with and without a place, every severity, the extra diagnostics.
TEST(DiagnosticsJSON, CompactAndPrettyAreTheSameValue) {
  std::vector<Diagnostic> ds;
  ds.push_back(diag(Severity::Error, {{1, 10}, {1, 11}}, "verifier-error",
                    "'tosa.add' op \"quoted\"\\ back\tslash\nnew line é😀"));
  Diagnostic withNotes = diag(Severity::Warning, {{2, 3}, {2, 5}},
                              "incompatible-operands", "two notes");
  withNotes.notes.push_back({{{1, 3}, {1, 4}}, "placed note"});
  withNotes.notes.push_back({{}, "note without a place \x01"});
  ds.push_back(withNotes);
  ds.push_back(diag(Severity::Info, {{2, 8}, {}}, "runtime-check", "hint"));
  ds.push_back(diag(Severity::Note, {}, "", ""));
  Config publishInfo;
  publishInfo.info.publish = true;
  auto s = snapshot(ds, publishInfo);
  std::vector<Diagnostic> extra = {
      diag(Severity::Error, {{2, 1}, {2, 2}}, "shape-contradiction", "x")};

  std::string compact = publishDiagnosticsMessage(*s, extra, false);
  std::string pretty = publishDiagnosticsMessage(*s, extra, true);
  EXPECT_EQ(compact.find('\n'), std::string::npos) << compact;
  llvm::Expected<llvm::json::Value> a = llvm::json::parse(compact);
  llvm::Expected<llvm::json::Value> b = llvm::json::parse(pretty);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError()) << "\n" << compact;
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(*a, *b) << compact << "\n---\n" << pretty;

  const llvm::json::Object *params = a->getAsObject()->getObject("params");
  ASSERT_TRUE(params);
  EXPECT_EQ(params->getInteger("version"), 42);
  EXPECT_EQ(params->getArray("diagnostics")->size(), 5u);
  // The 😀 is two UTF-16 units: byte column 10 is character 6.
  const llvm::json::Object *first =
      (*params->getArray("diagnostics"))[0].getAsObject();
  EXPECT_EQ(
      first->getObject("range")->getObject("start")->getInteger("character"),
      6);
}

TEST(DiagnosticsJSON, NoDiagnosticsIsAnEmptyList) {
  auto s = snapshot({});
  llvm::Expected<llvm::json::Value> v =
      llvm::json::parse(publishDiagnosticsMessage(*s, {}, false));
  ASSERT_TRUE(bool(v));
  EXPECT_EQ(
      v->getAsObject()->getObject("params")->getArray("diagnostics")->size(),
      0u);
}

// Informational findings (one per op of a model) stay out of publishes
// unless `info.publish` asks for them: a clean file publishes an empty
// list whatever its size.
TEST(DiagnosticsJSON, InformationalFindingsOnlyWhenAskedFor) {
  std::vector<Diagnostic> ds;
  for (unsigned line = 1; line <= 1000; ++line)
    ds.push_back(diag(Severity::Info, {{line, 8}, {line, 16}},
                      "refinable-result", "result can be refined"));
  ds.push_back(diag(Severity::Warning, {{2, 3}, {2, 5}},
                    "incompatible-operands", "a problem"));
  for (bool pretty : {false, true}) {
    auto s = snapshot(ds);
    std::string text = publishDiagnosticsMessage(*s, {}, pretty);
    EXPECT_LT(text.size(), 1024u);
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
    ASSERT_TRUE(bool(v));
    const llvm::json::Array *list =
        v->getAsObject()->getObject("params")->getArray("diagnostics");
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ((*list)[0].getAsObject()->getString("code"),
              "incompatible-operands");
    Config all;
    all.info.publish = true;
    llvm::Expected<llvm::json::Value> w = llvm::json::parse(
        publishDiagnosticsMessage(*snapshot(ds, all), {}, pretty));
    ASSERT_TRUE(bool(w));
    EXPECT_EQ(
        w->getAsObject()->getObject("params")->getArray("diagnostics")->size(),
        1001u);
  }
}
