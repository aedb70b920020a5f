//===- FunctionSplitTest.cpp - cutting a one-function section in two ------===//

#include "FunctionSplit.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tosa_lsp::detail;

namespace {

/// A function of `n` ops: constants, then a chain, each op on a line.
std::string
chain(int n, const std::string &header = "func.func @f(%a: tensor<2xf32>) -> "
                                         "tensor<2xf32> {\n") {
  std::string text = header;
  text += "  %c = \"tosa.const\"() <{values = dense<1.0> : tensor<2xf32>}> : "
          "() -> tensor<2xf32>\n";
  text += "  %v0 = tosa.add %a, %c : (tensor<2xf32>, tensor<2xf32>) -> "
          "tensor<2xf32>\n";
  for (int i = 1; i < n; ++i)
    text += "  %v" + std::to_string(i) + " = tosa.abs %v" +
            std::to_string(i - 1) + " : (tensor<2xf32>) -> tensor<2xf32>\n";
  return text;
}

std::string close(int n) {
  return "  %r = tosa.add %v" + std::to_string(n - 1) +
         ", %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
         "  return %r : tensor<2xf32>\n}\n";
}

TEST(FunctionSplit, CutsOneFunctionAtATopLevelOpNearTheMiddle) {
  std::string text = chain(20) + close(20);
  std::optional<FunctionCut> fc = planFunctionCut(text);
  ASSERT_TRUE(fc);
  EXPECT_EQ(text.substr(fc->argsEnd, 1), ")");
  EXPECT_FALSE(fc->noArgs);
  EXPECT_EQ(text[fc->bodyOpen], '{');
  EXPECT_EQ(fc->bodyClose, text.size() - 2); // the last `}`
  EXPECT_EQ(text[fc->cut - 1], '\n');
  EXPECT_EQ(text.substr(fc->cut, 5), "  %v1");
  EXPECT_GT(fc->cut, text.size() / 3);
  EXPECT_LT(fc->cut, 2 * text.size() / 3);

  // The second part declares what it uses of the first, typed as written.
  std::optional<std::vector<CrossCutValue>> values = crossCutValues(text, *fc);
  ASSERT_TRUE(values);
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0].name, text.substr((*values)[0].def, 4)); // %v9
  EXPECT_EQ((*values)[1].name, "%c");
  EXPECT_EQ((*values)[1].type, "tensor<2xf32>");
  std::string prefix = secondPartPrefix(text, *fc, *values);
  EXPECT_EQ(prefix, "func.func @f(%a: tensor<2xf32>, " +
                        std::string((*values)[0].name) +
                        ": tensor<2xf32>, %c: tensor<2xf32>) -> "
                        "tensor<2xf32> {\n");
  EXPECT_EQ(firstPartSuffix(text, *fc), " \"tosa_lsp.cut\"() : () -> ()\n}\n");
}

TEST(FunctionSplit, ModuleAttributesAliasesAndLocations) {
  std::string text = "#loc = loc(\"m.py\":1:1)\n"
                     "!t = tensor<2xf32>\n"
                     "module attributes {tosa.profile = \"x{\"} {\n" +
                     chain(20, "  func.func private @f() -> (tensor<2xf32> "
                               "{x.y}) attributes {a = 1} {\n") +
                     "  %a = tosa.abs %c : (!t) -> !t loc(#loc)\n" +
                     "  %w = tensor.cast %a : tensor<2xf32> to tensor<?xf32>\n"
                     "  %k = arith.constant 0 : index\n" +
                     close(20) +
                     "} loc(#loc)\n"
                     "// trailing comment\n"
                     "#loc1 = loc(\"m.py\":2:1)\n";
  // The module's `}` is not the function's: they are on separate lines
  // here, the function's last.
  text.replace(text.rfind("}\n} loc(#loc)"), 2, "  }\n");
  std::optional<FunctionCut> fc = planFunctionCut(text, 0.9);
  ASSERT_TRUE(fc);
  EXPECT_TRUE(fc->noArgs);
  EXPECT_EQ(text.substr(fc->bodyClose, 4), "}\n} ");
  std::optional<std::vector<CrossCutValue>> values = crossCutValues(text, *fc);
  ASSERT_TRUE(values);
  std::string prefix = secondPartPrefix(text, *fc, *values);
  EXPECT_NE(prefix.find("@f(%"), std::string::npos) << prefix; // no comma
  EXPECT_EQ(firstPartSuffix(text, *fc),
            " \"tosa_lsp.cut\"() : () -> ()\n" + text.substr(fc->bodyClose));
}

TEST(FunctionSplit, TypesAsWritten) {
  auto typeOf = [](const std::string &def) -> std::optional<std::string> {
    std::string text = "func.func @f(%a: tensor<2xf32>) {\n  %x = " + def +
                       "\n  %y = tosa.abs %a : (tensor<2xf32>) -> "
                       "tensor<2xf32>\n  %z = tosa.abs %x : (t) -> t\n"
                       "  return\n}\n";
    std::optional<FunctionCut> fc = planFunctionCut(text);
    if (!fc)
      return "no cut";
    std::optional<std::vector<CrossCutValue>> values =
        crossCutValues(text, *fc);
    if (!values)
      return std::nullopt;
    for (const CrossCutValue &v : *values)
      if (v.name == "%x")
        return std::string(v.type);
    return "not used";
  };
  EXPECT_EQ(typeOf("tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>"),
            "tensor<2xf32>");
  EXPECT_EQ(typeOf("\"tosa.const\"() <{values = dense<[1, 2]> : "
                   "tensor<2xi32>}> : () -> tensor<2xi32> loc(\"a\":1:2)"),
            "tensor<2xi32>");
  EXPECT_EQ(typeOf("arith.constant 1 : i32"), "i32");
  EXPECT_EQ(typeOf("tensor.cast %a : tensor<2xf32> to tensor<?xf32>"),
            "tensor<?xf32>");
  EXPECT_EQ(typeOf("scf.for %i = %a to %a step %a iter_args(%s = %a) -> "
                   "(tensor<4xf32>) {\n    scf.yield %s : tensor<4xf32>\n  }"),
            "tensor<4xf32>");
  EXPECT_EQ(typeOf("tosa.const_shape {values = dense<[1, 2]> : "
                   "tensor<2xindex>} : () -> !tosa.shape<2>"),
            "!tosa.shape<2>");
  // Not one type: the second part is not declared this way.
  EXPECT_EQ(typeOf("foo.bar %a : (tensor<2xf32>) -> (tensor<2xf32>, f32)"),
            std::nullopt);
  EXPECT_EQ(typeOf("foo.bar %a"), std::nullopt);
}

TEST(FunctionSplit, GroupsAreNotDeclared) {
  std::string text = "func.func @f(%a: tensor<2xf32>) {\n"
                     "  %g:2 = foo.two %a : (tensor<2xf32>) -> (f32, f32)\n"
                     "  %y = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>\n"
                     "  %z = foo.use %g#1 : (f32) -> f32\n"
                     "  return\n}\n";
  std::optional<FunctionCut> fc = planFunctionCut(text);
  ASSERT_TRUE(fc);
  EXPECT_FALSE(crossCutValues(text, *fc));
}

/// The result type findResultType finds in `op`, as text ("" for none).
std::string resultTypeOf(llvm::StringRef op) {
  std::optional<std::pair<size_t, size_t>> r = findResultType(op);
  return r ? op.substr(r->first, r->second - r->first).str() : "";
}

TEST(FunctionSplit, ResultTypeAfterTheLastArrowOutsideBrackets) {
  // The common forms, found from the end.
  EXPECT_EQ(resultTypeOf("%0 = tosa.add %a, %b : (tensor<2x?xf32>, "
                         "tensor<1x3xf32>) -> tensor<2x3xf32>"),
            "tensor<2x3xf32>");
  EXPECT_EQ(resultTypeOf("%r:2 = foo.two %a : (f32) -> (f32, i32)"),
            "(f32, i32)");
  EXPECT_EQ(resultTypeOf("%0 = foo.x %a : (f32)->f32"), "f32");
  // Arrows inside brackets (a function type, a region) are not the op's.
  EXPECT_EQ(resultTypeOf("%f = foo.make : () -> !foo.fn<(i32) -> f32>"),
            "!foo.fn<(i32) -> f32>");
  EXPECT_EQ(resultTypeOf("%0 = scf.if %c -> (tensor<2xf32>) {\n"
                         "  %1 = foo.x : () -> tensor<4xi8>\n"
                         "  scf.yield %1 : tensor<4xi8>\n"
                         "} else {\n  scf.yield %a : tensor<2xf32>\n}"),
            "(tensor<2xf32>)");
  // No arrow at depth 0.
  EXPECT_EQ(resultTypeOf("%0 = arith.addf %a, %b : f32"), "");
  EXPECT_EQ(resultTypeOf("%0 = foo.x {t = (i32) -> f32} : f32"), "");
  // Strings are skipped, escaped quotes and backslashes in them too.
  EXPECT_EQ(resultTypeOf("%0 = foo.x {s = \"}) -> i1\"} : (i32) -> f32"),
            "f32");
  EXPECT_EQ(resultTypeOf("%0 = foo.x {s = \"(\"} : (i32) -> f32"), "f32");
  EXPECT_EQ(resultTypeOf("foo.print \"a -> b\""), "");
  EXPECT_EQ(resultTypeOf("%0 = foo.x : (i32) -> f32 loc(\"m.py\":3:1)"), "f32");
  EXPECT_EQ(resultTypeOf("%0 = foo.x : (i32) -> f32 loc(\"a\\\"->b)\")"),
            "f32");
  EXPECT_EQ(resultTypeOf("%0 = foo.x : (i32) -> f32 loc(\"a\\\\\")"), "f32");
  EXPECT_EQ(resultTypeOf("foo.print \"x\\\" -> i8\""), "");
  // Brackets that do not balance after the arrow, or a string that does
  // not open: the scan from the start.
  EXPECT_EQ(resultTypeOf("%0 = foo.x : (i32) -> f32 {"), "f32");
}

TEST(FunctionSplit, OnlyOneFunction) {
  std::string one = chain(10) + close(10);
  EXPECT_TRUE(planFunctionCut(one));
  // Two functions look like one here (no bracket is matched in the
  // body); the parts' IR tells them apart (AnalyzerTest).
  EXPECT_FALSE(planFunctionCut("module {\n" + one + "}\n" + one));
  EXPECT_FALSE(planFunctionCut("\"func.func\"() ({\n}) : () -> ()\n"));
  EXPECT_FALSE(planFunctionCut(""));
  EXPECT_FALSE(planFunctionCut(chain(10))); // unterminated
  // No op with a result past the middle: nowhere to cut.
  std::string flat =
      "func.func @f() {\n" + std::string(40, '\n') + "  return\n}\n";
  EXPECT_FALSE(planFunctionCut(flat));
}

// A model's weights come first as `dense<"0x...">` literals of many
// bytes that parse far faster a byte than ops: the cut balances the
// parts' work, not their bytes.
TEST(FunctionSplit, WeightsCountLessThanOpsTowardsTheMiddle) {
  std::string text = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n";
  for (int i = 0; i < 8; ++i)
    text += "  %w" + std::to_string(i) +
            " = \"tosa.const\"() <{values = dense<\"0x" +
            std::string(64 << 10, 'A') +
            "\"> : tensor<2xf32>}> : () -> tensor<2xf32>\n";
  text += "  %v0 = tosa.add %a, %w0 : (tensor<2xf32>, tensor<2xf32>) -> "
          "tensor<2xf32>\n";
  const int ops = 1000;
  for (int i = 1; i < ops; ++i)
    text += "  %v" + std::to_string(i) + " = tosa.add %v" +
            std::to_string(i - 1) + ", %w" + std::to_string(i % 8) +
            " : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n";
  text += "  return %v" + std::to_string(ops - 1) + " : tensor<2xf32>\n}\n";
  std::optional<FunctionCut> fc = planFunctionCut(text);
  ASSERT_TRUE(fc);
  // The byte in the middle is inside the weights; the work's middle is
  // among the ops: the weights (512 KiB of literals, at a 16th) count as
  // ~32 K bytes of ops, the 1000 ops ~90 K.
  ASSERT_LT(text.size() / 2, text.find("%v0 ="));
  ASSERT_EQ(text.substr(fc->cut, 4), "  %v");
  int before = std::stoi(text.substr(fc->cut + 4, 4));
  EXPECT_GT(before, 250);
  EXPECT_LT(before, 450);
}

// Without long lines the work's middle is the byte in the middle; a long
// literal line counts a 16th of its literal, whatever the blocks' phase.
TEST(FunctionSplit, WorkTargetIsTheByteUnlessLinesAreLong) {
  std::string ops;
  for (int i = 0; i < 2000; ++i)
    ops += "  %v" + std::to_string(i) +
           " = tosa.abs %a : (tensor<2xf32>) "
           "-> tensor<2xf32>\n";
  for (double f : {0.25, 0.5, 0.75})
    EXPECT_EQ(workTarget(ops, 3, ops.size(), f),
              3 + static_cast<size_t>((ops.size() - 3) * f));
  for (size_t pad : {0, 1, 2047, 2048, 4095}) {
    std::string weight = "  %w = \"tosa.const\"() <{values = dense<\"0x" +
                         std::string(160 << 10, 'A') + "\">}>\n";
    std::string text = std::string(pad, ' ') + weight + ops;
    size_t at = workTarget(text, 0, text.size(), 0.5);
    // The weight's ~10 K of work and half the ops' ~50 K come first.
    size_t opsBefore = std::count(text.begin(), text.begin() + at, '\n') - 1;
    EXPECT_GT(opsBefore, 800u) << pad;
    EXPECT_LT(opsBefore, 1000u) << pad;
  }
}

} // namespace

namespace {

TEST(FunctionSplit, PartValuesRenamedAsTheWholeFunctionNamesThem) {
  PartNumbering n;
  n.topLevel = 3;       // %0..%2 at the part's top level
  n.shiftTopLevel = 10; // the first part's results
  n.shiftNested = 12;
  n.args = 2;                                    // %arg0, %arg1: the function's
  n.declaredIds = {4, PartNumbering::kUnmapped}; // %arg2, %arg3: declared
  auto r = [&](const char *t) {
    return renumberPartValues(t, n).value_or("<refused>");
  };
  EXPECT_EQ(r("%2 = \"tosa.abs\"(%arg1) : (f32) -> f32"),
            "%12 = \"tosa.abs\"(%arg1) : (f32) -> f32");
  // Nested values, nested block arguments, a group's result.
  EXPECT_EQ(r("%3:2 = \"x.y\"(%3#1, %arg4, %arg2)"),
            "%15:2 = \"x.y\"(%15#1, %arg2, %4)");
  // Strings are copied; `%` not before a name is text.
  EXPECT_EQ(r("%0 = \"x\"() {s = \"%1 \\\" %2\"} : 100 % 3"),
            "%10 = \"x\"() {s = \"%1 \\\" %2\"} : 100 % 3");
  // A constant's declared value, names an op chose, blocks: not known.
  EXPECT_EQ(r("\"x\"(%arg3)"), "<refused>");
  EXPECT_EQ(r("\"x\"(%cst)"), "<refused>");
  EXPECT_EQ(r("\"cf.br\"()[^bb1]"), "<refused>");
  n.nestedKnown = false;
  EXPECT_EQ(r("\"x\"(%2)"), "\"x\"(%12)");
  EXPECT_EQ(r("\"x\"(%3)"), "<refused>");
}

TEST(FunctionSplit, DeclaredValuesOfConstants) {
  std::string t = "  %a = tosa.const_shape {values = dense<1> : "
                  "tensor<1xindex>} : () -> !tosa.shape<1>\n"
                  "  %b = \"tosa.const\"() <{values = dense<1.0> : "
                  "tensor<f32>}> : () -> tensor<f32>\n"
                  "  %c = tosa.abs %x : (tensor<f32>) -> tensor<f32>\n";
  auto at = [&](const char *name) {
    CrossCutValue v;
    v.name = std::string_view(t).substr(t.find(name), 2);
    v.def = t.find(name);
    return definedByConstant(t, v);
  };
  EXPECT_TRUE(at("%a"));
  EXPECT_TRUE(at("%b"));
  EXPECT_FALSE(at("%c"));
}

} // namespace
