//===- AnalyzerMemoryTest.cpp - retired IR and idle release ---------------===//
//
// What the server does to the analyzer's memory between analyses (IR
// destroyed later, contexts forgotten when idle) changes no result.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

/// A server's analyzer keeps each whole parse until after the publish
/// (setDeferIRDestruction): results are the same, whichever way the IR
/// goes — destroyed by destroyRetiredIR, by the next analysis, by
/// releaseMemory (before the contexts it lives in), or after a section
/// that does not parse.
TEST(Analyzer, DeferredIRDestructionChangesNoResult) {
  std::string text = addFunctions(40);
  const std::string versions[] = {
      text,                                      // in halves
      "module {\n" + text + "}\n",               // whole
      text + "func.func @broken(\n",             // does not parse
      text + "// -----\n" + text.substr(0, 400), // two sections
  };
  Analyzer deferred, fresh;
  deferred.setDeferIRDestruction(true);
  deferred.setParallelSectionBytes(0);
  fresh.setParallelSectionBytes(0);
  for (int round = 0; round < 3; ++round)
    for (const std::string &v : versions) {
      EXPECT_EQ(
          firstDifference(observe(deferred.analyze(v, "d.mlir", Config())),
                          observe(fresh.analyze(v, "d.mlir", Config()))),
          "");
      if (round == 1)
        deferred.destroyRetiredIR();
      if (round == 2)
        deferred.releaseMemory();
    }
}

namespace {

#ifdef __GLIBC__
/// Bytes the process' malloc has handed out (every arena, and the chunks
/// it mapped for big requests such as a uniquer's slabs).
size_t mallocInUse() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// An analysis' IR is gone once its results are copied out, but its
// contexts kept every location, type and attribute they uniqued (~100
// bytes an op: ~30 MiB after a 200k-line open) until the server, idle,
// has them forgotten.
TEST(Analyzer, IdleReleaseForgetsWhatTheContextsUniqued) {
  const int ops = 4000;
  std::string text = oneFunction(ops);
  ASSERT_GE(text.size(), kForgetUniquedBytes); // enough to be worth it
  Analyzer analyzer;
  analyzer.setParallelSectionBytes(0); // both contexts: in two parts
  FileAnalysis before = analyzer.analyze(text, "one.mlir", Config());
  ASSERT_TRUE(before.sections[0].inParts);
  size_t kept = mallocInUse();
  analyzer.releaseIdleMemory();
  size_t after = mallocInUse();
  EXPECT_GT(kept, after + size_t(ops) * 50)
      << "kept " << kept << " bytes, " << after << " after the release";
  // The fresh contexts analyse as the old ones did.
  EXPECT_EQ(
      firstDifference(observe(analyzer.analyze(text, "one.mlir", Config())),
                      observe(before)),
      "");
}
#endif

} // namespace
