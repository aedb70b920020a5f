//===- AnalyzerOneFunctionTest.cpp - one function cut in two --------------===//
//
// One big function analysed in two parts (and edited in its second half):
// the result is always the whole function's.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"

#include <random>

namespace {

/// `text` analysed with its one function cut in two (if it can be) and
/// whole: everything observable is equal. Returns whether it was cut.
bool cutEqualsWhole(const std::string &text) {
  Analyzer cut, whole;
  cut.setParallelSectionBytes(0);
  whole.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis c = cut.analyze(text, "one.mlir", Config());
  FileAnalysis w = whole.analyze(text, "one.mlir", Config());
  EXPECT_EQ(firstDifference(observe(c), observe(w)), "");
  EXPECT_FALSE(w.sections[0].inParts);
  // The analyzer is usable after either outcome.
  FileAnalysis again = cut.analyze(text, "one.mlir", Config());
  EXPECT_EQ(firstDifference(observe(again), observe(w)), "");
  return c.sections[0].inParts;
}

/// `text` analysed by `analyzer` after its previous versions (`cache`):
/// everything observable equals a fresh whole analysis (`what` says which
/// version failed).
FileAnalysis analyzeAsEdited(Analyzer &analyzer, AnalysisCache &cache,
                             const std::string &text, const std::string &what) {
  FileAnalysis fa = analyzer.analyze(text, "one.mlir", Config(), &cache);
  Analyzer whole;
  whole.setParallelSectionBytes(SIZE_MAX);
  EXPECT_EQ(firstDifference(observe(fa),
                            observe(whole.analyze(text, "one.mlir", Config()))),
            "")
      << what;
  return fa;
}

std::string mul(const std::string &name, const std::string &lhs,
                const std::string &result) {
  return "  " + name + " = tosa.maximum " + lhs +
         ", %c : (tensor<4x?xf32>, tensor<1x1xf32>) -> " + result + "\n";
}

/// One function cut in two gives MLIR's verdict once both parts have it
/// (before their op reports and index): not with an error in either part;
/// in two steps the analysis is the whole one's.
TEST(Analyzer, MLIRsVerdictOnACutFunctionComesOnceBothPartsHaveIt) {
  auto bad = [](int at) {
    std::string v = "%v" + std::to_string(at - 1);
    return std::map<int, std::string>{
        {at, "  %bad = tosa.add " + v +
                 ", %b : (tensor<4x?xf32>, tensor<1x?xf32>) -> "
                 "tensor<5x?xf32>\n"}};
  };
  Analyzer twoSteps, whole;
  twoSteps.setParallelSectionBytes(0);
  whole.setParallelSectionBytes(SIZE_MAX);
  for (int errorAt : {0, 10, 50}) {
    std::string text =
        errorAt ? oneFunction(60, bad(errorAt)) : oneFunction(60);
    unsigned calls = 0;
    AnalysisCache cache;
    std::shared_ptr<const FileAnalysis> a = twoSteps.analyzeShared(
        text, "one.mlir", Config(), cache, [&] { ++calls; });
    EXPECT_TRUE(a->sections[0].inParts) << errorAt;
    EXPECT_EQ(firstDifference(observe(*a), observe(whole.analyze(
                                               text, "one.mlir", Config()))),
              "")
        << errorAt;
    EXPECT_EQ(calls, errorAt ? 0u : 1u) << errorAt;
    EXPECT_EQ(errors(*a).size(), errorAt ? 1u : 0u) << errorAt;
  }
}

TEST(Analyzer, OneFunctionCutInTwoEqualsTheWhole) {
  // Findings on both sides, verifier errors (and a consumer of a failed
  // op) in the first part: cut, and the same as the whole.
  std::string text =
      oneFunction(60, {{5, mul("%e1", "%v4", "tensor<4x?x1xf32>") +
                               "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                               "tensor<4x?x1xf32>\n"},
                       {10, "  %bad = tosa.add %v9, %b : (tensor<4x?xf32>, "
                            "tensor<1x?xf32>) -> tensor<5x?xf32>\n"}});
  EXPECT_TRUE(cutEqualsWhole(text));
  FileAnalysis fa = analyzeText(text);
  EXPECT_EQ(errors(fa).size(), 2u);
  EXPECT_GT(fa.ops.size(), 60u); // reports on both sides

  // In a module with attributes, locations and trailing location aliases.
  std::string wrapped =
      "module attributes {tosa.x = \"a{\"} {\n" +
      oneFunction(60, {{40, "  %l = tosa.abs %v1 : (tensor<4x?xf32>) -> "
                            "tensor<4x?xf32> loc(#loc1)\n"}}) +
      "} loc(#loc)\n#loc = loc(\"m.py\":1:1)\n#loc1 = loc(\"m.py\":2:1)\n";
  EXPECT_TRUE(cutEqualsWhole(wrapped));
}

// Verifier errors in either part: MLIR prints their ops with the values
// numbered within the part; renamed as the whole function numbers them
// (top-level results after the first part's, nested ones after the whole
// top level's, arguments).
TEST(Analyzer, OneFunctionCutTakesVerifierErrorsInBothParts) {
  auto replaced = [](std::string text, const std::string &from,
                     const std::string &to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    return text;
  };
  std::string condIf =
      "  %k = tosa.cond_if %cond (%in = %v4) : tensor<i1> "
      "(tensor<4x?xf32>) -> tensor<4x?xf32> {\n"
      "  ^bb0(%t: tensor<4x?xf32>):\n"
      "    %t1 = tosa.abs %t : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
      "    %t2 = tosa.abs %t1 : (tensor<4x?xf32>) -> tensor<3x?xf32>\n"
      "    tosa.yield %t1 : tensor<4x?xf32>\n"
      "  } else {\n"
      "  ^bb0(%f: tensor<4x?xf32>):\n"
      "    tosa.yield %f : tensor<4x?xf32>\n"
      "  }\n";
  auto withCond = [&](std::string text) {
    return replaced(text, "%b: tensor<1x?xf32>)",
                    "%b: tensor<1x?xf32>, %cond: tensor<i1>)");
  };
  // In the second part: on its own values, and on the function's argument.
  std::string late = "  %y = tosa.abs %v49 : (tensor<4x?xf32>) -> "
                     "tensor<5x?xf32>\n"
                     "  %z = tosa.abs %a : (tensor<4x?xf32>) -> "
                     "tensor<2x?xf32>\n";
  EXPECT_TRUE(cutEqualsWhole(oneFunction(60, {{50, late}})));
  // After an op of two results in the first part (one number for both).
  EXPECT_TRUE(cutEqualsWhole(
      oneFunction(60, {{5, "  %g:2 = \"foo.two\"(%v4) : (tensor<4x?xf32>) -> "
                           "(tensor<4x?xf32>, tensor<4x?xf32>)\n"},
                       {50, late}})));
  // Inside a region (nested values are numbered after the whole body's
  // top level), in either part.
  std::string lateIf =
      replaced(replaced(replaced(condIf, "%k", "%k2"), "%v4", "%v49"),
               "tensor<3x?xf32>", "tensor<7x?xf32>");
  EXPECT_TRUE(cutEqualsWhole(withCond(oneFunction(60, {{50, lateIf}}))));
  std::string early = "  %w = tosa.abs %v4 : (tensor<4x?xf32>) -> "
                      "tensor<6x?xf32>\n";
  EXPECT_TRUE(cutEqualsWhole(withCond(oneFunction(60, {{5, early + condIf}}))));
  // In both: the whole function's verification skips what an error of the
  // first part feeds, which the second part cannot tell.
  EXPECT_FALSE(cutEqualsWhole(
      withCond(oneFunction(60, {{5, early + condIf}, {50, late + lateIf}}))));
  FileAnalysis fa = analyzeText(oneFunction(60, {{50, late}}));
  ASSERT_EQ(errors(fa).size(), 2u);
}

// Where the two parts could differ from the whole, the section is analysed
// whole: the result is always the whole's.
TEST(Analyzer, OneFunctionCutFallsBackWhereItCouldDiffer) {
  // An error in the second part on an op that reads a value of the first:
  // an argument there, which a verifier may see otherwise than the
  // defining op (a `tosa.const_shape`).
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{50, mul("%e", "%v49", "tensor<4x?x1xf32>")}})));
  // A value of the first part used before its definition in the second.
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{5, mul("%f", "%late", "tensor<4x?xf32>")},
                       {50, mul("%late", "%v49", "tensor<4x?xf32>")}})));
  // A value defined in a region of the first part, used in the second.
  EXPECT_FALSE(cutEqualsWhole(oneFunction(
      60, {{5, "  %i = scf.execute_region -> tensor<4x?xf32> {\n"
               "  %in = tosa.abs %v4 : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
               "    scf.yield %in : tensor<4x?xf32>\n  }\n"},
           {50, mul("%u", "%in", "tensor<4x?xf32>")}})));
  // The cut in a second block: an argument would dominate the first.
  std::string blocks = oneFunction(60, {{10, "  cf.br ^bb1\n^bb1:\n"}});
  EXPECT_FALSE(cutEqualsWhole(blocks));
  // Two functions of the same signature that call each other (not cut
  // into halves between them): the text looks like one.
  std::string first = oneFunction(30);
  first.insert(first.find("  return"),
               "  %call = func.call @g(%a, %b) : (tensor<4x?xf32>, "
               "tensor<1x?xf32>) -> tensor<4x?xf32>\n");
  std::string second = oneFunction(30);
  second.replace(second.find("@main"), 5, "@g");
  second.insert(second.find("  return"),
                "  %call = func.call @main(%a, %b) : (tensor<4x?xf32>, "
                "tensor<1x?xf32>) -> tensor<4x?xf32>\n");
  EXPECT_FALSE(cutEqualsWhole(first + second));
  // A group's result used across the cut.
  EXPECT_FALSE(cutEqualsWhole(
      oneFunction(60, {{5, "  %g:2 = \"foo.two\"(%v4) : (tensor<4x?xf32>) -> "
                           "(tensor<4x?xf32>, tensor<4x?xf32>)\n"},
                       {50, mul("%h", "%g#1", "tensor<4x?xf32>")}})));
  // A parse error anywhere.
  EXPECT_FALSE(cutEqualsWhole(oneFunction(60, {{50, "  %p = tosa.abs\n"}})));
}

} // namespace

namespace {

// While an edit leaves errors where the cut cannot take them, the next
// versions are not cut (it would fail and be done again whole) until one
// has no errors; every version equals a fresh whole analysis.
TEST(Analyzer, OneFunctionNotCutAgainWhileItsErrorsLast) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  std::string good = oneFunction(60);
  std::string late =
      oneFunction(60, {{50, mul("%e", "%v49", "tensor<4x?x1xf32>")}});
  std::string early =
      oneFunction(60, {{5, mul("%e", "%v4", "tensor<4x?x1xf32>")}});
  // Each version with a comment line more: no text is the previous one's.
  std::vector<std::pair<std::string, bool>> versions = {
      {good, true},  {late, false}, {early, false},
      {good, false}, {good, true},  {early, true}};
  std::string comments;
  for (auto &[text, cut] : versions) {
    comments += "// edit\n";
    std::string version = std::to_string(comments.size() / 8);
    FileAnalysis fa =
        analyzeAsEdited(analyzer, cache, comments + text, version);
    EXPECT_EQ(fa.sections[0].inParts, cut) << version;
  }
}

} // namespace

namespace {

/// `text` with `from` (first occurrence at or after `after`) replaced.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to, size_t after = 0) {
  size_t at = text.find(from, after);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

// A function analysed in parts and edited in its second half keeps what
// lies before the edit and analyses the rest; every version equals a
// fresh whole analysis, whichever way it went.
TEST(Analyzer, OneFunctionEditedInItsSecondHalfKeepsTheFirst) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  // Findings and a verifier error (with a consumer) in the first half.
  std::string text = oneFunction(
      200, {{10, mul("%e1", "%v9", "tensor<4x?x1xf32>") +
                     "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                     "tensor<4x?x1xf32>\n"}});
  auto lineOf = [&](int op) {
    return text.find("  %v" + std::to_string(op) + " =");
  };
  struct Step {
    const char *what;
    std::string text;
    bool tail, inParts;
  };
  std::vector<Step> steps;
  auto step = [&](const char *what, std::string next, bool tail,
                  bool inParts = true) {
    text = std::move(next);
    steps.push_back({what, text, tail, inParts});
  };
  step("the first version", text, false);
  step("an op renamed in the second half",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(150)), true);
  std::string added = mul("%n", "%v20", "tensor<4x?xf32>") +
                      "  %n2 = tosa.add %n, %v30 : (tensor<4x?xf32>, "
                      "tensor<4x?xf32>) -> tensor<4x?xf32>\n";
  step("lines added, using values of the first half",
       replaced(text, "  %v160 =", added + "  %v160 ="), true);
  step("and removed", replaced(text, added, ""), true);
  // Without the error in the first half: after a version analysed whole
  // with errors, the next is cut again only if it has none.
  step("the error in the first half removed",
       replaced(text,
                mul("%e1", "%v9", "tensor<4x?x1xf32>") +
                    "  %e2 = tosa.abs %e1 : (tensor<4x?x1xf32>) -> "
                    "tensor<4x?x1xf32>\n",
                ""),
       false);
  // On an op that reads a value of the first half (`%c`): analysed whole.
  step("a verifier error in the second half",
       replaced(text, "  %v180 =",
                mul("%x", "%v179", "tensor<4x?x1xf32>") + "  %v180 ="),
       false, false);
  step("fixed", replaced(text, mul("%x", "%v179", "tensor<4x?x1xf32>"), ""),
       false, true);
  step("an edit after that",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(170)), true);
  // On an op that reads values of the second half only: the tail takes it,
  // its values named as in the whole function.
  std::string late = "  %y = tosa.abs %v179 : (tensor<4x?xf32>) -> "
                     "tensor<5x?xf32>\n";
  step("a verifier error in the tail",
       replaced(text, "  %v180 =", late + "  %v180 ="), true);
  step("an edit after it", replaced(text, "tosa.abs", "tosa.exp", lineOf(185)),
       true);
  step("fixed again", replaced(text, late, ""), true);
  step("an edit after an analysis whole",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(170)), true);
  step("and the next", replaced(text, "tosa.abs", "tosa.exp", lineOf(170)),
       true);
  step("an edit in the first half",
       replaced(text, "tosa.abs", "tosa.exp", lineOf(30)), false);
  step("the last line of the body",
       replaced(text, "  return %r", "  return %v199"), true);
  step("a comment after the function", text + "// the end\n", true);
  // Twice: the second time with fresh contexts between the versions, as
  // the server has when idle (releaseIdleMemory): nothing kept from one
  // version to the next may refer to what a context uniqued.
  for (bool release : {false, true}) {
    AnalysisCache again;
    for (const Step &st : steps) {
      FileAnalysis fa =
          analyzeAsEdited(analyzer, release ? again : cache, st.text, st.what);
      EXPECT_EQ(fa.sections[0].tail, st.tail) << st.what;
      EXPECT_EQ(fa.sections[0].inParts, st.inParts) << st.what;
      if (release)
        analyzer.releaseIdleMemory(/*forgetAll=*/true);
    }
  }
}

} // namespace

namespace {

// Random small edits in the second half of a function analysed in parts
// (lines and columns moved, ops and types changed, bytes removed): whatever the
// incremental analysis does with each, it equals a fresh whole analysis
// of the edited text wherever that parses (where it does not, the last
// good results are kept, stale, by design).
TEST(Analyzer, OneFunctionRandomEditsInItsSecondHalfEqualTheWhole) {
  std::string base = oneFunction(
      160,
      {{20, "  %g:2 = \"foo.two\"(%v19) : (tensor<4x?xf32>) -> "
            "(tensor<4x?xf32>, tensor<4x?xf32>)\n"},
       {40, "  %i = scf.execute_region -> tensor<4x?xf32> {\n"
            "    %in = tosa.abs %v39 : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
            "    scf.yield %in : tensor<4x?xf32>\n  }\n"},
       {50, mul("%m", "%g#1", "tensor<4x?xf32>") +
                "  %k = tosa.add %i, %m : (tensor<4x?xf32>, "
                "tensor<4x?xf32>) -> tensor<4x?xf32>\n"},
       {130, mul("%n", "%k", "tensor<4x?xf32>")}});
  std::mt19937 rng(20261125);
  unsigned compared = 0, tails = 0, tailsWithErrors = 0;
  for (int trial = 0; trial < 70; ++trial) {
    std::string text = base;
    size_t at = text.size() / 2 + std::uniform_int_distribution<size_t>(
                                      0, text.size() / 2 - 1)(rng);
    size_t lineBegin = text.rfind('\n', at - 1) + 1;
    auto replaceNext = [&](const std::string &from, const std::string &to) {
      size_t k = text.find(from, lineBegin);
      if (k != std::string::npos)
        text.replace(k, from.size(), to);
    };
    switch (trial % 7) {
    case 0: // columns move on one line
      text.insert(lineBegin, " ");
      break;
    case 1: // lines move below
      text.insert(lineBegin, "// an edit\n");
      break;
    case 2: // an operand on a line of its own
      replaceNext(", %", ",\n      %");
      break;
    case 3: // another op
      replaceNext("tosa.maximum", "tosa.minimum");
      break;
    case 4: // a result more static: other findings, or an error
      replaceNext("-> tensor<4x?xf32>", "-> tensor<4x4xf32>");
      break;
    case 5: { // a verifier error (its note prints the op's values)
      size_t def = text.rfind("  %v", lineBegin - 1);
      std::string v = text.substr(def + 2, text.find(' ', def + 2) - def - 2);
      text.insert(lineBegin, "  %err = tosa.abs " + v +
                                 " : (tensor<4x?xf32>) -> tensor<5x?xf32>\n");
      break;
    }
    default: // anything: mostly a parse error
      text.erase(at, 1 + rng() % 3);
      break;
    }
    Analyzer analyzer;
    analyzer.setParallelSectionBytes(0);
    AnalysisCache cache;
    ASSERT_TRUE(analyzer.analyze(base, "one.mlir", Config(), &cache)
                    .sections[0]
                    .inParts);
    FileAnalysis fa = analyzer.analyze(text, "one.mlir", Config(), &cache);
    Analyzer whole;
    whole.setParallelSectionBytes(SIZE_MAX);
    FileAnalysis w = whole.analyze(text, "one.mlir", Config());
    tails += fa.sections[0].tail;
    tailsWithErrors += fa.sections[0].tail && !errors(fa).empty();
    if (!w.sections[0].parsed)
      continue;
    ++compared;
    EXPECT_EQ(firstDifference(observe(fa), observe(w)), "")
        << "trial " << trial << ": " << text.substr(lineBegin, 120);
  }
  // Not vacuous: most edits parse, and some were analysed from the edit on.
  EXPECT_GE(compared, 40u);
  EXPECT_GE(tails, 35u);
  EXPECT_GE(tailsWithErrors, 3u);
}

} // namespace

namespace {

// An error in the first part does not keep a function from being cut:
// after a version analysed whole for an error after the cut, the next
// without one is cut again (it used to wait for a file without errors).
TEST(Analyzer, OneFunctionCutAgainWithErrorsInTheFirstPart) {
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  AnalysisCache cache;
  std::string early = mul("%e1", "%v9", "tensor<4x?x1xf32>");
  std::string late = mul("%x", "%v179", "tensor<4x?x1xf32>");
  std::string base = oneFunction(200, {{10, early}});
  std::string withLate = replaced(base, "  %v180 =", late + "  %v180 =");
  struct Step {
    const char *what;
    std::string text;
    bool inParts;
  };
  std::vector<Step> steps = {
      {"an error in the first part", base, true},
      // On an op that reads `%c`, a value of the first part.
      {"and one after the cut", withLate, false},
      {"that one fixed", base, true},
      {"the next edit",
       replaced(base, "tosa.abs", "tosa.exp", base.find("  %v150 =")), true},
  };
  for (const Step &st : steps) {
    FileAnalysis fa = analyzeAsEdited(analyzer, cache, st.text, st.what);
    EXPECT_EQ(fa.sections[0].inParts, st.inParts) << st.what;
    EXPECT_FALSE(errors(fa).empty()) << st.what;
  }
}

} // namespace
