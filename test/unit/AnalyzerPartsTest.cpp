//===- AnalyzerPartsTest.cpp - big sections over two threads --------------===//
//
// A big section cut into halves (several functions) or a file of small
// sections taken on two threads: the result is one thread's.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"

namespace {

TEST(Analyzer, VerifyingBesideTheReportsChangesNothing) {
  // Big enough for the second thread at the default threshold too, with
  // verifier errors, consumers of failed ops and broadcast errors.
  std::string text;
  for (int i = 0; i < 700; ++i) {
    std::string n = std::to_string(i);
    text += "func.func @f" + n +
            "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
            "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
            "tensor<4x?xf32>\n";
    if (i % 7 == 0) // verifier error, and a consumer of the failed op
      text += "  %1 = tosa.sub %0, %b : (tensor<4x?xf32>, tensor<4x1xf32>) "
              "-> tensor<4x?x1xf32>\n"
              "  %2 = tosa.mul %1, %1 : (tensor<4x?x1xf32>, "
              "tensor<4x?x1xf32>) -> tensor<4x?x1xf32>\n";
    if (i % 11 == 0) // a broadcast error: 5 is not 4
      text += "  %3 = tosa.maximum %0, %b : (tensor<4x?xf32>, "
              "tensor<4x1xf32>) -> tensor<5x?xf32>\n";
    text += "  return %0 : tensor<4x?xf32>\n}\n";
  }
  ASSERT_GE(text.size(), size_t(128) << 10);
  // Three paths: the verifier beside the reports (the section is at least
  // the threshold but under twice it), two halves on two threads, and one
  // thread.
  Analyzer parallel, halves, sequential;
  parallel.setParallelSectionBytes(text.size() - 1);
  halves.setParallelSectionBytes(0);
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis a = parallel.analyze(text, "big.mlir", Config());
  FileAnalysis h = halves.analyze(text, "big.mlir", Config());
  FileAnalysis b = sequential.analyze(text, "big.mlir", Config());
  std::vector<std::string> va = observe(a), vh = observe(h), vb = observe(b);
  EXPECT_EQ(firstDifference(va, vb), "");
  EXPECT_EQ(firstDifference(vh, vb), "");
  EXPECT_FALSE(a.sections[0].inParts);
  EXPECT_TRUE(h.sections[0].inParts);
  // The parts' ops and values are runs of their own, not moved into one.
  EXPECT_GT(h.ops.runCount(), 1u);
  EXPECT_GT(h.values.runCount(), 1u);
  EXPECT_FALSE(b.sections[0].inParts);
  // The comparison is not vacuous: errors, failed ops and reports exist.
  EXPECT_GE(errors(a).size(), 700u / 7 + 700u / 11);
  EXPECT_GE(std::count_if(a.ops.begin(), a.ops.end(),
                          [](const OpReport &op) { return op.verifierFailed; }),
            700 / 7 + 1);
  EXPECT_GE(a.ops.size(), 700u);
  EXPECT_GE(a.values.size(), 700u);

  // Without the position index (`check`): on every path the same
  // diagnostics and op reports, and no index.
  std::vector<std::string> want;
  for (const std::string &line : vb)
    if (line.rfind("diag ", 0) == 0 || line.rfind("op ", 0) == 0)
      want.push_back(line);
  for (size_t bytes : {text.size() - 1, size_t(0), SIZE_MAX}) {
    Analyzer noIndex;
    noIndex.setParallelSectionBytes(bytes);
    noIndex.setCollectIndex(false);
    FileAnalysis n = noIndex.analyze(text, "big.mlir", Config());
    EXPECT_TRUE(n.values.empty() && n.blocks.empty() && n.symbols.empty() &&
                n.opSpans.empty())
        << bytes;
    EXPECT_EQ(firstDifference(observe(n), want), "") << bytes;
  }
}

/// Functions that call each other, or share a name, cannot be cut apart;
/// those that do not can, and an edit after such an analysis is still
/// re-analysed a function at a time with the same result as a full one.
TEST(Analyzer, HalvesOnlyWhereNothingCrossesTheCut) {
  auto fn = [](int i, const std::string &callee) {
    std::string n = std::to_string(i);
    std::string body =
        "func.func @f" + n +
        "(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> tensor<4x?xf32> {\n"
        "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
        "tensor<4x?xf32>\n";
    if (!callee.empty())
      body += "  %1 = func.call @" + callee +
              "(%a, %b) : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
              "tensor<4x?xf32>\n";
    return body + "  return %0 : tensor<4x?xf32>\n}\n";
  };
  std::string apart, calling;
  for (int i = 0; i < 40; ++i) {
    apart += fn(i, "");
    calling += fn(i, i == 39 ? "f0" : ""); // the last calls the first
  }
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0);
  FileAnalysis a = analyzer.analyze(apart, "a.mlir", Config());
  EXPECT_TRUE(a.sections[0].inParts);
  EXPECT_TRUE(errors(a).empty());
  FileAnalysis c = analyzer.analyze(calling, "c.mlir", Config());
  EXPECT_FALSE(c.sections[0].inParts);
  EXPECT_TRUE(errors(c).empty());
  // Cut into up to 8 parts: a call between neighbours near a quarter of
  // the file keeps them in one part (else the callee would be missing),
  // and the result is the whole section's.
  std::string neighbours;
  for (int i = 0; i < 40; ++i)
    neighbours += fn(i, i == 11 ? "f10" : i == 29 ? "f30" : "");
  FileAnalysis n = analyzer.analyze(neighbours, "n.mlir", Config());
  EXPECT_TRUE(n.sections[0].inParts);
  EXPECT_TRUE(errors(n).empty());
  Analyzer whole;
  whole.setParallelSectionBytes(SIZE_MAX);
  EXPECT_EQ(firstDifference(observe(n), observe(whole.analyze(
                                            neighbours, "n.mlir", Config()))),
            "");
  // A file wrapped in `module { ... }` has one top-level op.
  FileAnalysis m =
      analyzer.analyze("module {\n" + apart + "}\n", "m.mlir", Config());
  EXPECT_FALSE(m.sections[0].inParts);
  // Aliases and dialect resources are named across any cut.
  for (const std::string &around :
       {"!t = tensor<4x?xf32>\n" + apart, apart + "#a = 1 : i32\n",
        apart + "{-#\n  dialect_resources: {}\n#-}\n"}) {
    FileAnalysis x = analyzer.analyze(around, "x.mlir", Config());
    EXPECT_FALSE(x.sections[0].inParts) << around.substr(0, 30);
    EXPECT_TRUE(errors(x).empty()) << around.substr(0, 30);
  }

  // Edits in either half, after an analysis in halves.
  AnalysisCache cache;
  Analyzer incremental, fresh;
  incremental.setParallelSectionBytes(0);
  fresh.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis first = incremental.analyze(apart, "a.mlir", Config(), &cache);
  ASSERT_TRUE(first.sections[0].inParts);
  std::string text = apart;
  for (const char *name : {"@f3(", "@f35("}) {
    size_t at = text.find("tosa.add", text.find(name));
    text.replace(at, 8, "tosa.sub");
    text.insert(text.find('\n', at) + 1,
                "  %9 = tosa.exp %a : (tensor<1x?xf32>) -> tensor<1x?xf32>\n");
    FileAnalysis inc = incremental.analyze(text, "a.mlir", Config(), &cache);
    EXPECT_TRUE(inc.sections[0].incremental) << name;
    EXPECT_EQ(firstDifference(observe(inc),
                              observe(fresh.analyze(text, "a.mlir", Config()))),
              "")
        << name;
  }
}

} // namespace

namespace {

/// A split file (`// -----`) whose sections are every kind of part:
/// clean, verifier errors and their consumers, a broadcast error, a parse
/// error, a custom parser failing silently, a lenient dialect, aliases, a
/// module with attributes, an unregistered op; `copies` times over.
std::string splitFile(int copies) {
  static const char *const kParts[] = {
      "func.func @f(%a: tensor<1x?xf32>, %b: tensor<4x1xf32>) -> "
      "tensor<4x?xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<1x?xf32>, tensor<4x1xf32>) -> "
      "tensor<4x?xf32>\n"
      "  return %0 : tensor<4x?xf32>\n}\n",
      "func.func @f(%a: tensor<4x?xf32>, %b: tensor<4x1xf32>) -> "
      "tensor<4x?xf32> {\n"
      "  %1 = tosa.sub %a, %b : (tensor<4x?xf32>, tensor<4x1xf32>) -> "
      "tensor<4x?x1xf32>\n"
      "  %2 = tosa.mul %1, %1 : (tensor<4x?x1xf32>, tensor<4x?x1xf32>) -> "
      "tensor<4x?x1xf32>\n"
      "  %3 = tosa.maximum %a, %b : (tensor<4x?xf32>, tensor<4x1xf32>) -> "
      "tensor<5x?xf32>\n"
      "  return %a : tensor<4x?xf32>\n}\n",
      "func.func @broken(%a: tensor<2xf32>) {\n  %0 = tosa.abs %a :\n",
      "func.func @c(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = tosa.clamp %a {max_val = 6.0 : f32, min_val = 0.0 : f32, } : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n",
      "func.func @l(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = util.optimization_barrier %a : tensor<2xf32>\n"
      "  check.expect_almost_eq(%0, %a) : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n",
      "!t = tensor<2xf32>\n#m = {x = 1 : i32}\n"
      "func.func @g(%a: !t) -> !t attributes {m = #m} {\n"
      "  %0 = tosa.abs %a : (!t) -> !t\n  return %0 : !t\n}\n",
      "module attributes {foo.bar = 1 : i32} {\n"
      "  func.func @h(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"mine.op\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    %1 = tosa.add %0, %a : (tensor<2xf32>, tensor<2xf32>) -> "
      "tensor<?xf32>\n"
      "    return %0 : tensor<2xf32>\n  }\n}\n",
  };
  std::string text;
  for (int i = 0; i < copies; ++i)
    for (const char *part : kParts)
      text += (text.empty() ? "" : "// -----\n") + std::string(part);
  return text;
}

/// An analyzer that takes every section of `text` (at least two) on two
/// threads (see analyzeSmallSections).
void takeAllSmall(Analyzer &a, const FileAnalysis &whole) {
  size_t biggest = 0;
  for (const Section &s : whole.sections)
    biggest = std::max(biggest, s.endOffset - s.beginOffset);
  a.setParallelSectionBytes(biggest + 1);
}

TEST(Analyzer, SmallSectionsOnTwoThreadsEqualOneThread) {
  std::string text = splitFile(8);
  Analyzer sequential, parallel;
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis one = sequential.analyze(text, "s.mlir", Config());
  ASSERT_EQ(one.sections.size(), 56u);
  takeAllSmall(parallel, one);
  parallel.setDeferIRDestruction(true);
  // Again and again (the threads take sections in another order each time;
  // the contexts keep what they loaded, lenient dialects included), the
  // retired IR destroyed one way or another in between.
  for (int round = 0; round < 4; ++round) {
    EXPECT_EQ(
        firstDifference(observe(parallel.analyze(text, "s.mlir", Config())),
                        observe(one)),
        "")
        << "round " << round;
    if (round == 1)
      parallel.destroyRetiredIR();
    if (round == 2)
      parallel.releaseMemory();
  }
  // The helper's context, dropped after the small sections, is made again
  // for a section in parts (an analyzer without lenient dialects: they
  // turn the cuts off).
  std::string small = addFunctions(3), big = addFunctions(40);
  for (int i = 0; i < 6; ++i)
    small += "// -----\n" + addFunctions(3);
  Analyzer again;
  again.setParallelSectionBytes(addFunctions(3).size() + 10);
  for (const std::string *t : {&small, &big, &small, &big}) {
    FileAnalysis fa = again.analyze(*t, "s.mlir", Config());
    EXPECT_EQ(fa.sections[0].inParts, t == &big);
    EXPECT_EQ(firstDifference(observe(fa), observe(sequential.analyze(
                                               *t, "s.mlir", Config()))),
              "");
  }
  // Not vacuous: each kind of part gave what it gives.
  auto has = [&](llvm::StringRef needle) {
    return llvm::count_if(one.diagnostics, [&](const Diagnostic &d) {
      return llvm::StringRef(d.message).contains(needle);
    });
  };
  EXPECT_EQ(has("did not parse and MLIR's parser gave no reason"), 8);
  EXPECT_EQ(has("parsed leniently"), 16);
  EXPECT_EQ(errors(one).size(), 8u * 4);
  EXPECT_EQ(
      llvm::count_if(one.sections, [](const Section &s) { return s.parsed; }),
      8 * 5);
}

TEST(Analyzer, SmallSectionsOnTwoThreadsThenEdits) {
  std::string text = splitFile(6);
  Analyzer parallel, fresh;
  fresh.setParallelSectionBytes(SIZE_MAX);
  takeAllSmall(parallel, fresh.analyze(text, "e.mlir", Config()));
  AnalysisCache cache;
  (void)parallel.analyze(text, "e.mlir", Config(), &cache);
  auto same = [&](const std::string &t, const char *what) {
    FileAnalysis e = parallel.analyze(t, "e.mlir", Config(), &cache);
    EXPECT_EQ(firstDifference(observe(e),
                              observe(fresh.analyze(t, "e.mlir", Config()))),
              "")
        << what;
    return e;
  };
  auto count = [](const FileAnalysis &fa, bool Section::*flag) {
    return llvm::count_if(fa.sections,
                          [&](const Section &s) { return s.*flag; });
  };
  // One function edited: that section alone, the others reused (their
  // entries were kept, whichever thread analysed them).
  size_t at = text.find("tosa.add", text.find("// -----", text.size() / 2));
  text.replace(at, 8, "tosa.sub");
  FileAnalysis e = same(text, "one edit");
  EXPECT_EQ(count(e, &Section::reused), long(e.sections.size()) - 1);
  // Every section but two of each copy changed at once (a replace-all).
  for (size_t p = 0; (p = text.find("tensor<2xf32>", p)) != std::string::npos;
       p += 13)
    text.replace(p, 13, "tensor<3xf32>");
  e = same(text, "replace all");
  EXPECT_EQ(count(e, &Section::reused), 2 * 6);
  // Sections broken at once: each one's last good analysis is served,
  // marked stale (a fresh analysis has none to serve).
  for (size_t p = 0;
       (p = text.find("tosa.abs %a : (!t)", p)) != std::string::npos;)
    text.replace(p, 8, "tosa.abs,");
  e = parallel.analyze(text, "e.mlir", Config(), &cache);
  EXPECT_EQ(count(e, &Section::stale), 6);
  EXPECT_EQ(llvm::count_if(e.ops,
                           [&](const OpReport &op) {
                             return e.sections[op.section].stale;
                           }),
            6); // each one's tosa.abs
  FileAnalysis f = fresh.analyze(text, "e.mlir", Config());
  EXPECT_EQ(e.ops.size(), f.ops.size() + 6);
  EXPECT_EQ(e.diagnostics.size(), f.diagnostics.size());

  // Sections of several functions keep their units, whichever thread
  // analysed them: an edit inside one function analyses it alone.
  std::string fns = addFunctions(4);
  std::string many = fns;
  for (int i = 1; i < 8; ++i)
    many += "// -----\n" + fns;
  AnalysisCache units;
  Analyzer split;
  takeAllSmall(split, fresh.analyze(many, "u.mlir", Config()));
  (void)split.analyze(many, "u.mlir", Config(), &units);
  for (int section : {0, 5}) {
    at = 0;
    for (int i = 0; i < section; ++i)
      at = many.find("// -----", at) + 1;
    at = many.find("tosa.add", many.find("@f2", at));
    many.replace(at, 8, "tosa.sub");
    e = split.analyze(many, "u.mlir", Config(), &units);
    EXPECT_EQ(count(e, &Section::incremental), 1) << section;
    EXPECT_EQ(firstDifference(observe(e),
                              observe(fresh.analyze(many, "u.mlir", Config()))),
              "")
        << section;
  }
}

// A section that crashes MLIR (a million nested aliases, printed, overflow
// even the analysis thread's stack) among small sections on two threads:
// reported on that section like one thread reports it, the others analysed as
// usual, and the next analysis normal.
TEST(Analyzer, SmallSectionsOnTwoThreadsContainACrash) {
  std::string chain = "#a0 = [1]\n";
  for (int i = 1; i < 1000000; ++i)
    chain +=
        "#a" + std::to_string(i) + " = [#a" + std::to_string(i - 1) + "]\n";
  // The crash is in printing the attribute, for the op's error note.
  chain += "func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
           "  %0 = tosa.add %a, %a {x = #a999999} : (tensor<2xf32>, "
           "tensor<2xf32>) -> tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n";
  std::string text =
      splitFile(1) + "// -----\n" + chain + "// -----\n" + splitFile(1);
  Analyzer sequential, parallel;
  sequential.setParallelSectionBytes(SIZE_MAX);
  FileAnalysis one = sequential.analyze(text, "c.mlir", Config());
  size_t crashed = llvm::count_if(one.diagnostics, [](const Diagnostic &d) {
    return d.code == "internal-crash";
  });
  ASSERT_EQ(crashed, 1u);
  takeAllSmall(parallel, one);
  EXPECT_EQ(firstDifference(observe(parallel.analyze(text, "c.mlir", Config())),
                            observe(one)),
            "");
  std::string after = splitFile(3);
  EXPECT_EQ(
      firstDifference(observe(parallel.analyze(after, "c.mlir", Config())),
                      observe(sequential.analyze(after, "c.mlir", Config()))),
      "");
}

/// A one-section file analysed in parts gives MLIR's verdict (parsed and
/// verified without a word) once every part has it, before the op reports
/// and index; in two steps the analysis is the one-step one's.
TEST(Analyzer, MLIRsVerdictComesOnceEveryPartHasIt) {
  const std::string clean = addFunctions(300);
  // An error in the last part: no verdict.
  const std::string lastWrong =
      clean + "func.func @bad(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
              "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<3xf32>\n"
              "  return %0 : tensor<3xf32>\n}\n";
  Analyzer twoSteps, oneStep;
  twoSteps.setParallelSectionBytes(0);
  oneStep.setParallelSectionBytes(0);
  unsigned calls = 0;
  auto count = [&] { ++calls; };
  for (const std::string *text : {&clean, &lastWrong}) {
    calls = 0;
    AnalysisCache c2, c1;
    std::shared_ptr<const FileAnalysis> a =
        twoSteps.analyzeShared(*text, "big.mlir", Config(), c2, count);
    std::shared_ptr<const FileAnalysis> b =
        oneStep.analyzeShared(*text, "big.mlir", Config(), c1);
    EXPECT_TRUE(a->sections[0].inParts);
    EXPECT_EQ(firstDifference(observe(*a), observe(*b)), "");
    EXPECT_EQ(calls, text == &clean ? 1u : 0u);
    EXPECT_EQ(errors(*a).size(), text == &clean ? 0u : 1u);
    EXPECT_GE(a->ops.size(), 300u); // the reports came after the verdict
  }
  // Once per analysis from scratch: not for the same text again (reused)
  // nor for an edit of one function (re-analysed alone).
  calls = 0;
  AnalysisCache cache;
  (void)twoSteps.analyzeShared(clean, "big.mlir", Config(), cache, count);
  (void)twoSteps.analyzeShared(clean, "big.mlir", Config(), cache, count);
  std::string edited = clean;
  size_t at = edited.find("tosa.add", edited.size() / 2);
  edited.replace(at, 8, "tosa.sub");
  std::shared_ptr<const FileAnalysis> e =
      twoSteps.analyzeShared(edited, "big.mlir", Config(), cache, count);
  EXPECT_TRUE(e->sections[0].incremental);
  EXPECT_EQ(calls, 1u);
  // Two sections: one section's verdict is not the file's.
  AnalysisCache two;
  (void)twoSteps.analyzeShared(clean + "// -----\n" + clean, "two.mlir",
                               Config(), two, count);
  EXPECT_EQ(calls, 1u);
}

} // namespace
