//===- CompletionTests.cpp - completion and signature help ----------------===//

#include "TestSupport.h"

#include "Aliases.h"
#include "Completion.h"
#include "LineIndex.h"
#include "OpCatalogue.h"
#include "OpSignatures.h"
#include "SignatureHelp.h"

#include <map>

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

/// The analysis of `analysed`, completion in `typed` at its `$$`.
struct Session {
  std::string text;
  Position cursor;
  FileAnalysis fa;
  LineIndex lines;
  std::vector<AliasInfo> aliases;
  Session(const std::string &analysed, const std::string &typed)
      : text(typed), fa(analyzeText(analysed)), lines("") {
    size_t at = text.find("$$");
    text.erase(at, 2);
    lines = LineIndex(text);
    cursor = lines.position(at);
    aliases = scanAliases(text, lines, fa.sections);
  }
  CompletionResult complete(bool snippets = false,
                            std::optional<std::string> inferred = {},
                            size_t limit = 1000) {
    CompletionInput in{text, lines, fa, aliases, completionCatalogue()};
    in.snippets = snippets;
    if (inferred)
      in.inferredType = [inferred](unsigned) { return inferred; };
    return tosa_lsp::complete(in, cursor, limit);
  }
  std::vector<std::string> labels(bool snippets = false) {
    std::vector<std::string> out;
    for (const auto &i : complete(snippets).items)
      out.push_back(i.label);
    return out;
  }
};

const char *kFile = R"(!row = tensor<1x4xf32>
func.func @f(%arg_a: tensor<2x4xf32>, %arg_b: !row, %i: tensor<2x4xi8>) -> tensor<2x4xf32> {
  %s = tosa.const_shape {values = dense<[2, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.add %arg_a, %arg_b : (tensor<2x4xf32>, !row) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
)";

std::string withLine(const std::string &line) {
  std::string t = kFile;
  size_t at = t.find("  return");
  return t.insert(at, line + "\n");
}

bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Completion, OpNamesOfADialectAndDialects) {
  Session s(kFile, withLine("  %r = tosa.$$"));
  auto labels = s.labels();
  EXPECT_GT(labels.size(), 80u);
  EXPECT_TRUE(has(labels, "conv2d"));
  EXPECT_TRUE(has(labels, "add"));
  EXPECT_FALSE(has(labels, "tosa.add"));
  Session d(kFile, withLine("  %r = to$$"));
  auto dl = d.labels();
  EXPECT_TRUE(has(dl, "tosa"));
  EXPECT_TRUE(has(dl, "linalg"));
  EXPECT_TRUE(has(dl, "return"));
}

TEST(Completion, Tosa10SnippetsWithEveryOperandInOrder) {
  Session s(kFile, withLine("  %r = tosa.con$$"));
  for (bool snippets : {true, false}) {
    auto r = s.complete(snippets);
    auto it = std::find_if(r.items.begin(), r.items.end(),
                           [](const auto &i) { return i.label == "conv2d"; });
    ASSERT_NE(it, r.items.end());
    EXPECT_EQ(it->snippet, snippets);
    const std::string &t = it->insertText;
    size_t in = t.find("%input"), w = t.find("%weight"), b = t.find("%bias"),
           izp = t.find("%input_zp"), wzp = t.find("%weight_zp");
    ASSERT_NE(izp, std::string::npos) << t;
    EXPECT_LT(in, w);
    EXPECT_LT(w, b);
    EXPECT_LT(b, izp);
    EXPECT_LT(izp, wzp);
    EXPECT_NE(t.find("pad = array<i64: "), std::string::npos) << t;
    EXPECT_NE(t.find("acc_type = "), std::string::npos) << t;
    EXPECT_EQ(t.find("local_bound"), std::string::npos) << t; // optional
    EXPECT_EQ(t.find("${") != std::string::npos, snippets) << t;
    if (snippets) // holes numbered in order
      EXPECT_LT(t.find("operand types"), t.find("result type")) << t;
    if (snippets)
      EXPECT_NE(t.find("(${10:operand types}) -> ${11:result type}$0"),
                std::string::npos)
          << t;
  }
  // tosa.mul's shift; rescale's zero points and enum.
  Session m(kFile, withLine("  %r = tosa.mu$$"));
  for (const auto &i : m.complete(true).items)
    if (i.label == "mul")
      EXPECT_NE(i.insertText.find("%shift"), std::string::npos);
  Session r(kFile, withLine("  %r = tosa.resc$$"));
  for (const auto &i : r.complete(true).items)
    if (i.label == "rescale") {
      EXPECT_NE(i.insertText.find("%output_zp"), std::string::npos);
      EXPECT_NE(i.insertText.find("rounding_mode = ${"), std::string::npos);
      EXPECT_NE(i.insertText.find("DOUBLE_ROUND"), std::string::npos);
    }
}

TEST(Completion, ValuesInScopeThatFitTheOpFirst) {
  Session s(kFile, withLine("  %r = tosa.add %arg_a, %$$"));
  auto r = s.complete();
  std::vector<std::string> labels;
  for (const auto &i : r.items)
    labels.push_back(i.label);
  // Everything defined above in @f, not the shape, not from another line's
  // future; f32 tensors before the i8 one and the shape.
  EXPECT_TRUE(has(labels, "%0"));
  EXPECT_TRUE(has(labels, "%s"));
  EXPECT_TRUE(has(labels, "%i"));
  std::sort(r.items.begin(), r.items.end(), [](const auto &a, const auto &b) {
    return a.sortText < b.sortText;
  });
  EXPECT_EQ(r.items.back().label == "%s" || r.items.back().label == "%i", true);
  auto i0 = std::find_if(r.items.begin(), r.items.end(),
                         [](const auto &i) { return i.label == "%0"; });
  EXPECT_EQ(i0->detail, "tensor<2x4xf32>");
  EXPECT_EQ(i0->replaceFrom.column, 25u); // the `%`
  // Without the `%`, after a comma: values too (as upstream's parser).
  Session t(kFile, withLine("  %r = tosa.add %arg_a, $$"));
  EXPECT_TRUE(has(t.labels(), "%arg_b"));
  // A reshape's second operand is a shape: %s first.
  Session sh(kFile, withLine("  %r = tosa.reshape %arg_a, %$$"));
  auto rs = sh.complete().items;
  std::sort(rs.begin(), rs.end(), [](const auto &a, const auto &b) {
    return a.sortText < b.sortText;
  });
  EXPECT_EQ(rs.front().label, "%s");
}

TEST(Completion, TypesWithTheInferredResultFirst) {
  Session s(kFile,
            withLine("  %r = tosa.add %arg_a, %arg_b : (tensor<2x4xf32>, "
                     "!row) -> $$"));
  auto r = s.complete(false, std::string("tensor<2x4xf32>"));
  ASSERT_FALSE(r.items.empty());
  std::stable_sort(
      r.items.begin(), r.items.end(),
      [](const auto &a, const auto &b) { return a.sortText < b.sortText; });
  EXPECT_EQ(r.items.front().label, "tensor<2x4xf32>");
  EXPECT_EQ(r.items.front().detail, "inferred result type");
  std::vector<std::string> labels;
  for (const auto &i : r.items)
    labels.push_back(i.label);
  for (const char *t : {"tensor", "memref", "f32", "i<N>", "!tosa", "!row"})
    EXPECT_TRUE(has(labels, t)) << t;
  Session arg(kFile, withLine("  %r = tosa.add %arg_a, %arg_b : ($$"));
  EXPECT_TRUE(has(arg.labels(), "tensor"));
  EXPECT_FALSE(has(arg.labels(), "tensor<2x4xf32>")); // no inference asked
}

TEST(Completion, AttributesBlocksSymbolsAliases) {
  Session names(kFile, withLine("  %r = tosa.transpose %arg_a {$$"));
  EXPECT_TRUE(has(names.labels(), "perms"));
  Session values(kFile, withLine("  %r = tosa.rescale %arg_a, %m, %sh, %z, %z "
                                 "{rounding_mode = $$"));
  auto v = values.labels();
  EXPECT_TRUE(has(v, "DOUBLE_ROUND"));
  EXPECT_TRUE(has(v, "dense"));
  EXPECT_TRUE(has(v, "#tosa"));
  Session sym(kFile, withLine("  %r = func.call @$$"));
  EXPECT_TRUE(has(sym.labels(), "@f"));
  Session al(kFile, withLine("  %r = tosa.abs %arg_b : (!$$"));
  EXPECT_TRUE(has(al.labels(), "!row"));
  EXPECT_TRUE(has(al.labels(), "!tosa"));
  Session sig(kFile, "func.func @g($$");
  EXPECT_TRUE(has(sig.labels(), "tensor"));
  Session sig2(kFile, "func.func @g(%x: tensor<2xf32>, %$$");
  EXPECT_TRUE(has(sig2.labels(), "f32"));
  Session none(kFile, withLine("  // a comment tosa.$$"));
  EXPECT_TRUE(none.labels().empty());
  // An attribute's type, in a dictionary, as upstream offers it.
  Session attrType(kFile,
                   withLine("  %r = tosa.reduce_min %arg_a {axis = 0 : "
                            "$$} : (tensor<2x4xf32>) -> tensor<1x4xf32>"));
  auto at = attrType.labels();
  EXPECT_TRUE(has(at, "i32") && has(at, "tensor") && has(at, "f32"));
  Session denseType(kFile, withLine("  %r = \"tosa.const\"() {values = "
                                    "dense<0> : $$"));
  EXPECT_TRUE(has(denseType.labels(), "tensor"));
}

TEST(Completion, ValuesFromTheTextWhenTheSectionNeverParsed) {
  std::string typed = withLine("  %r = tosa.add %arg_a, %$$") + "func.func @h(";
  Session s("", typed); // nothing analysed
  auto r = s.complete().items;
  std::map<std::string, std::string> types;
  for (const auto &i : r)
    types[i.label] = i.detail;
  EXPECT_EQ(types["%arg_a"], "tensor<2x4xf32>");
  EXPECT_EQ(types["%arg_b"], "!row");
  EXPECT_EQ(types["%s"], "!tosa.shape<2>");
  EXPECT_EQ(types["%0"], "tensor<2x4xf32>");
}

// A function header over several lines (as MLIR's printer and LLVM's
// TOSA tests write long signatures): every argument is in scope, with
// its type, also those on the lines after `func.func`'s (found by the
// project's parity run on mlir/test/Dialect/Tosa; upstream lists them).
TEST(Completion, ArgumentsOfAFunctionHeaderOverSeveralLines) {
  std::string typed =
      "func.func @g(\n"
      "    %a: tensor<2xf32>, %b: tensor<2x3xf32>,\n"
      "    %c: tensor<4xi8> {tosa.x = 1 : i32}) -> (tensor<2xf32>,\n"
      "       tensor<2xf32>) attributes {k = 1 : i32} {\n"
      "  %0 = tosa.abs %$$\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n";
  Session s("", typed); // nothing analysed (the line does not parse)
  std::map<std::string, std::string> types;
  for (const auto &i : s.complete().items)
    types[i.label] = i.detail;
  EXPECT_EQ(types["%a"], "tensor<2xf32>");
  EXPECT_EQ(types["%b"], "tensor<2x3xf32>");
  EXPECT_EQ(types["%c"], "tensor<4xi8>"); // not its attributes
  EXPECT_EQ(types.size(), 3u);
  // The same with the first argument on `func.func`'s line.
  Session t("", "func.func @g(%a: tensor<2xf32>,\n"
                "             %b: tensor<2xf32>) -> tensor<2xf32> {\n"
                "  %0 = tosa.add %a, %$$\n}\n");
  std::vector<std::string> labels = t.labels();
  EXPECT_TRUE(has(labels, "%a") && has(labels, "%b"));
}

// A region's arguments bound to initial values (tosa.while_loop's
// `(%arg2 = %0, ...) : (types)`), typed by position; a result's type
// stops before the op's region.
TEST(Completion, RegionArgumentsBoundToInitialValues) {
  Session s("", "func.func @w(%arg0: tensor<10xi32>) {\n"
                "  %0 = \"tosa.const\"() {values = dense<0> : tensor<i32>} : "
                "() -> tensor<i32>\n"
                "  %1:2 = tosa.while_loop (%arg2 = %0, %arg4 = %arg0) : "
                "(tensor<i32>, tensor<10xi32>) -> (tensor<i32>, "
                "tensor<10xi32>) {\n"
                "    tosa.yield %$$\n");
  std::map<std::string, std::string> types;
  for (const auto &i : s.complete().items)
    types[i.label] = i.detail;
  EXPECT_EQ(types["%arg2"], "tensor<i32>");
  EXPECT_EQ(types["%arg4"], "tensor<10xi32>");
  EXPECT_EQ(types["%1"], "(tensor<i32>, tensor<10xi32>)");
  EXPECT_EQ(types["%arg0"], "tensor<10xi32>");
}

TEST(Completion, ManyValuesAreCutAndMarkedIncomplete) {
  std::string text = absChain(3000);
  Session s(text, text.substr(0, text.find("  return")) +
                      "  %x = tosa.abs %v29$$\n" +
                      text.substr(text.find("  return")));
  auto r = s.complete(false, {}, 100);
  EXPECT_TRUE(r.incomplete);
  ASSERT_EQ(r.items.size(), 100u);
  EXPECT_EQ(r.items.front().label, "%v29");
}

TEST(Completion, ElementwiseResultTypeOfALineBeingTyped) {
  EXPECT_EQ(
      elementwiseResultType("tosa.add", {"tensor<2x1xf32>", "tensor<1x3xf32>"}),
      "tensor<2x3xf32>");
  EXPECT_EQ(elementwiseResultType("tosa.greater",
                                  {"tensor<?x3xf32>", "tensor<1x3xf32>"}),
            "tensor<?x3xi1>");
  EXPECT_EQ(elementwiseResultType(
                "tosa.mul", {"tensor<4xi32>", "tensor<1xi32>", "tensor<1xi8>"}),
            "tensor<4xi32>");
  EXPECT_EQ(
      elementwiseResultType("tosa.select",
                            {"tensor<2xi1>", "tensor<2xf16>", "tensor<1xf16>"}),
      "tensor<2xf16>");
  EXPECT_FALSE(elementwiseResultType("tosa.conv2d", {"tensor<2xf32>"}));
  EXPECT_FALSE(
      elementwiseResultType("tosa.add", {"tensor<2xf32>", "tensor<3xf32>"}));
  EXPECT_FALSE(elementwiseResultType("tosa.add", {"tensor<*xf32>"}));
}

TEST(SignatureHelp, ActiveOperandAndAttribute) {
  auto help = [](const std::string &typed) {
    Session s(kFile, withLine(typed));
    return signatureHelp(s.text, s.lines, s.cursor);
  };
  auto h = help("  %r = tosa.conv2d %a, %w, %$$");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->label.substr(0, 19), "tosa.conv2d %input,");
  EXPECT_EQ(h->active, 2);
  const auto &p = h->parameters[h->active];
  EXPECT_EQ(h->label.substr(p.begin, p.end - p.begin), "%bias");
  auto zp = help("  %r = tosa.conv2d %a, %w, %b, %$$")->parameters[3];
  EXPECT_NE(zp.documentation.find("input zero point"), std::string::npos);
  auto attr = help("  %r = tosa.conv2d %a, %w, %b, %i, %j {stride = $$");
  const auto &q = attr->parameters[attr->active];
  EXPECT_EQ(attr->label.substr(q.begin, q.end - q.begin), "stride");
  EXPECT_FALSE(help("  %r = arith.addf %a, $$"));
  EXPECT_EQ(help("  %r = tosa.add %a, %b : ($$")->active, -1);
}

TEST(OpSignatures, GeneratedFromMlirsRecords) {
  EXPECT_GT(opSignatures().size(), 80u);
  const OpSignature *mul = findOpSignature("tosa.mul");
  ASSERT_TRUE(mul);
  auto ops = mul->operands();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_STREQ(ops[2]->name, "shift");
  EXPECT_FALSE(findOpSignature("tosa.nope"));
}

} // namespace
