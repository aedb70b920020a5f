//===- RenameTests.cpp - renames that never change meaning ----------------===//

#include "Annotations.h"
#include "GenericForm.h"
#include "TestSupport.h"

#include "Aliases.h"
#include "LineIndex.h"
#include "Rename.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

struct Doc {
  std::string text;
  LineIndex lines;
  FileAnalysis fa;
  std::vector<AliasInfo> aliases;
  explicit Doc(std::string t)
      : text(std::move(t)), lines(text), fa(analyzeText(text)),
        aliases(scanAliases(text, lines, fa.sections)) {}
  RenameInput input() const { return {fa, aliases, text, lines}; }
};

const char *kFile = R"(!t = tensor<2xf32>
func.func @f(%a: !t, %b: !t) -> !t {
  %0:2 = "test.two"(%a) : (!t) -> (!t, !t)
  %s = tosa.add %0#0, %0#1 : (!t, !t) -> !t
  cf.br ^bb1(%s : !t)
^bb1(%x: !t):
  return %x : !t
}
func.func @g(%a: !t) -> !t {
  %r = func.call @f(%a, %a) : (!t, !t) -> !t
  return %r : !t
}
)";

Position at(const std::string &text, const std::string &needle,
            unsigned skip = 0) {
  LineIndex lines(text);
  size_t o = text.find(needle);
  for (unsigned i = 0; i < skip; ++i)
    o = text.find(needle, o + 1);
  return lines.position(o + 1);
}

/// Renames and checks the meaning: equal generic forms (`symbolFrom` ->
/// `symbolTo` substituted in the one before, for symbols).
std::string renamed(const std::string &text, Position pos,
                    const std::string &name) {
  Doc d(text);
  RenameResult r = rename(d.input(), pos, name);
  EXPECT_EQ(r.error, "");
  return applyEdits(text, r.edits);
}

TEST(Rename, ValueWithResultNumbersKeepsMeaning) {
  std::string out = renamed(kFile, at(kFile, "%0#1"), "%pair");
  EXPECT_NE(out.find("%pair:2 = \"test.two\""), std::string::npos);
  EXPECT_NE(out.find("tosa.add %pair#0, %pair#1"), std::string::npos);
  EXPECT_EQ(genericForm(out), genericForm(kFile));
}

TEST(Rename, ArgumentBlockAndAlias) {
  std::string out = renamed(kFile, at(kFile, "%b"), "weights");
  EXPECT_NE(out.find("%weights: !t"), std::string::npos);
  out = renamed(out, at(out, "^bb1("), "^exit");
  EXPECT_NE(out.find("cf.br ^exit(%s"), std::string::npos);
  EXPECT_NE(out.find("\n^exit(%x"), std::string::npos);
  out = renamed(out, at(out, "!t", 3), "!vec");
  EXPECT_EQ(out.find("!t"), std::string::npos);
  EXPECT_EQ(genericForm(out), genericForm(kFile));
}

TEST(Rename, SymbolAcrossTheDocument) {
  std::string out = renamed(kFile, at(kFile, "@f("), "@body");
  EXPECT_NE(out.find("func.func @body("), std::string::npos);
  EXPECT_NE(out.find("func.call @body("), std::string::npos);
  std::string expected = *genericForm(kFile);
  for (size_t i; (i = expected.find("@f")) != std::string::npos;)
    expected.replace(i, 2, "@body");
  for (size_t i; (i = expected.find("\"f\"")) != std::string::npos;)
    expected.replace(i, 3, "\"body\"");
  EXPECT_EQ(genericForm(out), expected);
}

// With checkLines, FileCheck lines follow: a symbol's in its section, a
// value's in its function; other comments, other sections and other
// functions' CHECK lines (which may name another %s) do not.
TEST(Rename, CheckLinesOnlyWhenAskedAndOnlyWhereTheyCanMeanIt) {
  std::string text = R"(// CHECK-LABEL: func.func @f(
// CHECK: %s = tosa.add
// a note on @f and %s
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: return %s
  %s = tosa.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}
// CHECK-LABEL: func.func @g(
func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: %s = tosa.abs
  // CHECK: call @f(%a) @ff
  %s = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}
// -----
// CHECK-LABEL: @f
func.func @f() { return }
)";
  Doc d(text);
  RenameInput in = d.input();
  std::string plain = applyEdits(text, rename(in, at(text, "@f("), "h").edits);
  EXPECT_NE(plain.find("// CHECK-LABEL: func.func @f("), std::string::npos);
  in.checkLines = true;
  std::string out = applyEdits(text, rename(in, at(text, "@f(%a"), "h").edits);
  EXPECT_NE(out.find("// CHECK-LABEL: func.func @h("), std::string::npos);
  EXPECT_NE(out.find("// CHECK: call @h(%a) @ff"), std::string::npos);
  EXPECT_NE(out.find("// a note on @f and %s"), std::string::npos);
  EXPECT_NE(out.find("// -----\n// CHECK-LABEL: @f\n"), std::string::npos);
  out =
      applyEdits(text, rename(in, at(text, "%s = tosa.add %a"), "%sum").edits);
  EXPECT_NE(out.find("  // CHECK-NEXT: return %sum\n"), std::string::npos);
  EXPECT_NE(out.find("  // CHECK: %s = tosa.abs"), std::string::npos);
  EXPECT_EQ(genericForm(out), genericForm(text));
}

TEST(Rename, RefusesCollisionsBadNamesAndBrokenSections) {
  Doc d(kFile);
  EXPECT_NE(
      rename(d.input(), at(kFile, "%s ="), "%x").error.find("already exists"),
      std::string::npos); // %x is in the same function
  EXPECT_EQ(rename(d.input(), at(kFile, "%s ="), "%r").error, "");
  EXPECT_NE(rename(d.input(), at(kFile, "@f("), "g").error.find("already"),
            std::string::npos);
  EXPECT_NE(rename(d.input(), at(kFile, "%s ="), "%a b")
                .error.find("not a valid MLIR name"),
            std::string::npos);
  EXPECT_NE(rename(d.input(), at(kFile, "%s ="), "%1x").error, "");
  EXPECT_EQ(rename(d.input(), at(kFile, "%s ="), "%17").error, "");
  EXPECT_NE(rename(d.input(), at(kFile, "!t ="), "!a.b").error, "");
  EXPECT_NE(rename(d.input(), at(kFile, "tosa.add"), "x")
                .error.find("nothing to rename"),
            std::string::npos);
  RenameTarget t = prepareRename(d.input(), at(kFile, "%s ="));
  EXPECT_EQ(t.placeholder, "%s");
  EXPECT_EQ(t.error, "");

  std::string broken = std::string(kFile) + "// -----\nfunc.func @h() {\n";
  Doc b(broken);
  EXPECT_EQ(rename(b.input(), at(broken, "%s ="), "%y").error, "");
  std::string bad = "func.func @h(%a: tensor<2xf32>) {\n  %0 = tosa.abs %a : "
                    "(tensor<2xf32>) -> tensor<2xf32>\n  return\n";
  Doc c(bad);
  EXPECT_NE(rename(c.input(), at(bad, "%0"), "%y").error.find("does not parse"),
            std::string::npos);
}

} // namespace
