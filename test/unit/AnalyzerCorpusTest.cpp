//===- AnalyzerCorpusTest.cpp - the corpus cut wherever it can be ---------===//
//
// Real files (../shared/corpus, read in place; skipped when absent)
// analysed in parts equal their whole analysis.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

// Every file of the corpus analysed with its sections cut wherever they
// can be (halves, one function in two parts) equals its whole analysis;
// and so does one edited in the second half of such a function.
TEST(Analyzer, CorpusCutEqualsWhole) {
  namespace fs = std::filesystem;
  std::optional<std::vector<fs::path>> corpus = corpusFiles();
  if (!corpus)
    GTEST_SKIP() << "no corpus at " << TOSA_LSP_CORPUS_DIR;
  const std::vector<fs::path> &files = *corpus;
  ASSERT_GT(files.size(), 10u);
  unsigned cutSections = 0, oneFunctionCuts = 0, tails = 0, splitFiles = 0;
  for (const fs::path &f : files) {
    // Fresh ones: a lenient dialect loaded for one file turns the cuts off
    // for the analyzer's next files.
    Analyzer cut, whole;
    cut.setParallelSectionBytes(0);
    whole.setParallelSectionBytes(SIZE_MAX);
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    FileAnalysis c = cut.analyze(text, f.string(), Config());
    FileAnalysis w = whole.analyze(text, f.string(), Config());
    EXPECT_EQ(firstDifference(observe(c), observe(w)), "") << f;
    if (w.sections.size() >= 2) {
      // Every section small: the sections on two threads.
      size_t biggest = 0;
      for (const Section &s : w.sections)
        biggest = std::max(biggest, s.endOffset - s.beginOffset);
      Analyzer small;
      small.setParallelSectionBytes(biggest + 1);
      EXPECT_EQ(
          firstDifference(observe(small.analyze(text, f.string(), Config())),
                          observe(w)),
          "")
          << f << " (small sections on two threads)";
      ++splitFiles;
    }
    std::optional<size_t> edit;
    for (const Section &s : c.sections) {
      if (!s.inParts)
        continue;
      ++cutSections;
      // One function cut in two, or halves of several?
      bool one = llvm::count_if(c.symbols, [&](const SymbolInfo &sym) {
                   return sym.section == s.index;
                 }) == 1;
      oneFunctionCuts += one;
      // A line at three quarters of the first such function.
      if (one && !edit) {
        size_t at = text.find('\n', (s.beginOffset + 3 * s.endOffset) / 4);
        if (at < s.endOffset)
          edit = at + 1;
      }
    }
    if (!edit)
      continue;
    // Edited in its second half: what an incremental analysis gives
    // (keeping the first part where it can) equals the edited text's whole
    // analysis.
    Analyzer incremental;
    incremental.setParallelSectionBytes(0);
    AnalysisCache cache;
    (void)incremental.analyze(text, f.string(), Config(), &cache);
    std::string edited = text;
    edited.insert(*edit, "// an edit\n");
    FileAnalysis e = incremental.analyze(edited, f.string(), Config(), &cache);
    EXPECT_EQ(firstDifference(observe(e), observe(whole.analyze(
                                              edited, f.string(), Config()))),
              "")
        << f << " edited";
    tails +=
        llvm::count_if(e.sections, [](const Section &s) { return s.tail; });
  }
  // Not vacuous: sections of both kinds were analysed in parts, and edited
  // functions analysed from the edit on.
  EXPECT_GE(cutSections, 40u);
  EXPECT_GE(oneFunctionCuts, 20u);
  EXPECT_GE(tails, 15u);
  EXPECT_GE(splitFiles, 10u);
}

} // namespace
