//===- IncrementalTest.cpp - an edit re-analyses one function -------------===//
//
// After every edit, the analysis through the cache (which re-analyses only
// the function the edit is in, when it can) must equal a fresh analysis of
// the same text, item for item.
//
//===----------------------------------------------------------------------===//

#include "Analysis.h"
#include "Config.h"
#include "TestSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <sstream>
#include <tuple>

using namespace tosa_lsp;

namespace {

const char *kFunctions = R"(#map = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %1 = call @g(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

func.func @g(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.sub %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = tosa.maximum %0, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x?xf32>
  %2 = tensor.cast %1 : tensor<?x?xf32> to tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}

func.func @h(%p: tensor<2x1xf32>, %q: tensor<1x4xf32>) -> tensor<2x4xf32> {
  %0 = tosa.maximum %p, %q : (tensor<2x1xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %1 = call @g2(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
func.func @g2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
)";

struct Edit {
  const char *find;
  const char *replace;
  bool incremental; // expected to re-analyse one function only
};

/// `parallelBytes`: the cached analyzer's setParallelSectionBytes (0: a
/// whole section is verified on a second thread, and its bodies destroyed
/// there while its units are collected).
void runEdits(std::string text, const std::vector<Edit> &edits,
              std::optional<size_t> parallelBytes = std::nullopt) {
  Config config;
  config.info.runtimeChecks = true; // more findings to compare
  Analyzer cached, fresh;
  if (parallelBytes)
    cached.setParallelSectionBytes(*parallelBytes);
  AnalysisCache cache;
  FileAnalysis first = cached.analyze(text, "i.mlir", config, &cache);
  EXPECT_EQ(observe(first), observe(fresh.analyze(text, "i.mlir", config)));
  unsigned step = 0;
  for (const Edit &e : edits) {
    ++step;
    size_t at = text.find(e.find);
    ASSERT_NE(at, std::string::npos) << e.find;
    text.replace(at, std::string(e.find).size(), e.replace);
    FileAnalysis inc = cached.analyze(text, "i.mlir", config, &cache);
    FileAnalysis full = fresh.analyze(text, "i.mlir", config);
    std::vector<std::string> a = observe(inc), b = observe(full);
    if (!full.sections[0].parsed) {
      // A section that stops parsing keeps its last good results (stale)
      // through the cache; the diagnostics must still be the same.
      EXPECT_TRUE(inc.sections[0].stale);
      auto diagsOnly = [](std::vector<std::string> &v) {
        llvm::erase_if(
            v, [](const std::string &l) { return l.rfind("diag ", 0) != 0; });
      };
      diagsOnly(a);
      diagsOnly(b);
    }
    EXPECT_EQ(a, b) << "after edit " << step << ": " << e.find << " -> "
                    << e.replace;
    ASSERT_FALSE(inc.sections.empty());
    EXPECT_EQ(inc.sections[0].incremental, e.incremental)
        << "edit " << step << ": " << e.find;
  }
}

TEST(Incremental, EditsInsideOneFunctionEqualAFullAnalysis) {
  runEdits(kFunctions,
           {
               // An op changes; lines are added and removed in a body.
               {"tosa.sub %x, %x", "tosa.add %x, %x", true},
               {"  return %2 : tensor<?x3xf32>",
                "  // a comment\n  // and another\n  return %2 : "
                "tensor<?x3xf32>",
                true},
               {"  // a comment\n", "", true},
               // A verifier error appears in @g (a result that cannot be
               // broadcast), then goes away: once every function verifies,
               // the module's symbol checks run again, on everything.
               {"  %2 = tensor.cast",
                "  %9 = tosa.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) "
                "-> tensor<?x4xf32>\n  %2 = tensor.cast",
                true},
               {"  %9 = tosa.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) "
                "-> tensor<?x4xf32>\n",
                "", false},
               // A broadcast error of operands in @h, unused.
               {"  %1 = call @g2(%0)",
                "  %7 = tosa.maximum %p, %q : (tensor<2x1xf32>, "
                "tensor<1x4xf32>) -> tensor<3x4xf32>\n  %1 = call @g2(%0)",
                true},
               // A discardable attribute on a call.
               {"call @g2(%0)", "call @g2(%0) {note}", true},
               // A parse error in one function: that function alone is
               // parsed (the section goes stale and keeps its last good
               // results), then back: the same text as the last good one.
               {"%1 = call @g(%0)", "%1 = call @g(%0", true},
               {"%1 = call @g(%0", "%1 = call @g(%0)", false},
               // Typed through a parse error (a result type its use does
               // not match): every step is diffed against the last version
               // that parsed, and merged into it when one parses again.
               {"%0 = tosa.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) "
                "-> tensor<?x3xf32>",
                "%0 = tosa.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) "
                "-> tensor<?x31xf32>",
                true},
               {"-> tensor<?x31xf32>", "-> tensor<?x3xf32> loc(\"x\")", true},
               {"%0 = tosa.add %a, %b", "%0 = tosa.add %a, %c", true},
               {"%0 = tosa.add %a, %c", "%0 = tosa.sub %a, %b", true},
               // A brace typed: the function's end may have moved, so the
               // section is parsed whole.
               {"%0 = tosa.sub %a, %b", "%0 = tosa.sub %a, %b {", false},
               {"%0 = tosa.sub %a, %b {", "%0 = tosa.add %a, %b", true},
               // A body grows; its signature stays.
               {"func.func @g2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {\n  "
                "return %x : tensor<2x4xf32>",
                "func.func @g2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {\n  "
                "%0 = tosa.abs %x : (tensor<2x4xf32>) -> tensor<2x4xf32>\n  "
                "return %0 : tensor<2x4xf32>",
                true},
               // A signature changes: callers elsewhere must be re-checked.
               {"func.func @g2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {\n  "
                "%0 = tosa.abs %x : (tensor<2x4xf32>) -> tensor<2x4xf32>\n  "
                "return %0 : tensor<2x4xf32>",
                "func.func @g2(%x: tensor<2x4xf32>) -> tensor<2x5xf32> {\n  "
                "%0 = tosa.abs %x : (tensor<2x4xf32>) -> tensor<2x4xf32>\n  "
                "%1 = tensor.cast %0 : tensor<2x4xf32> to tensor<2x5xf32>\n  "
                "return %1 : tensor<2x5xf32>",
                false},
           });
}

TEST(Incremental, SymbolChecksAfterEveryFunctionVerifies) {
  // Every function verifies: an edit that calls a missing function fails
  // the module's symbol check, which a full analysis reports.
  runEdits(kFunctions, {
                           {"tosa.sub %x, %x", "tosa.add %x, %x", true},
                           {"call @g(%0)", "call @nowhere(%0)", false},
                           {"call @nowhere(%0)", "call @g(%0)", false},
                           {"tosa.add %x, %x", "tosa.sub %x, %x", true},
                       });
}

TEST(Incremental, FunctionsInsideAModule) {
  std::string text = std::string("module {\n") + kFunctions + "}\n";
  // The alias must stay outside the module.
  text.erase(text.find("#map"),
             std::string("#map = affine_map<(d0) -> (d0)>\n").size());
  text = "#map = affine_map<(d0) -> (d0)>\n" + text;
  std::vector<Edit> edits = {
      {"tosa.sub %x, %x", "tosa.add %x, %x", true},
      {"  return %2 : tensor<?x3xf32>", "\n\n  return %2 : tensor<?x3xf32>",
       true},
      {"tosa.maximum %p, %q", "tosa.minimum %p, %q", true},
  };
  runEdits(text, edits);
  // One top-level op (no halves): verified beside the op reports, the
  // function bodies destroyed while the units are collected.
  runEdits(text, edits, 0);
}

} // namespace

namespace {
/// Versions through a cached analyzer, each checked against a fresh
/// analysis of the same text.
struct Versions {
  Config config;
  Analyzer cached, fresh;
  AnalysisCache cache;
  explicit Versions(bool runtimeChecks = true) {
    config.info.runtimeChecks = runtimeChecks; // more findings to compare
  }
  std::shared_ptr<const FileAnalysis> next(const std::string &text) {
    auto v = cached.analyzeShared(text, "i.mlir", config, cache);
    EXPECT_EQ(observe(*v), observe(fresh.analyze(text, "i.mlir", config)));
    return v;
  }
};
} // namespace

// The merge shares each kept item's lists (uses, operand types, shapes)
// with the previous version (CowVector) and copies them only to move their
// lines: the previous version, still shown by the server while the edit is
// analysed, must read as before, and the new one as a fresh analysis.
TEST(Incremental, APreviousVersionIsUntouchedByTheEditsAfterIt) {
  Versions versions;
  std::string text = kFunctions;
  auto v1 = versions.next(text);
  const std::vector<std::string> before = observe(*v1);
  const std::string edits[][2] = {
      // Lines added in the first function: everything below moves.
      {"  %1 = call @g(%0)", "  // moved\n  %1 = call @g(%0)"},
      // Within a line: nothing moves, everything kept is shared.
      {"tosa.sub %x, %x", "tosa.add %x, %x"},
  };
  for (const auto &e : edits) {
    size_t at = text.find(e[0]);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, e[0].size(), e[1]);
    auto next = versions.next(text);
    ASSERT_TRUE(next->sections[0].incremental) << e[0];
    EXPECT_EQ(observe(*v1), before) << "after " << e[0];
  }
}

namespace {
const std::string kChainSignature =
    "(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {\n";

/// `functions` functions @f0, @f1, ..., each a chain of `ops` adds
/// (%v0, %v1, ...) from its arguments.
std::string chainFunctions(int functions, int ops) {
  std::string text;
  for (int f = 0; f < functions; ++f) {
    text += "func.func @f" + std::to_string(f) + kChainSignature;
    std::string last = "%a";
    for (int i = 0; i < ops; ++i) {
      std::string v = "%v" + std::to_string(i);
      text += "  " + v + " = tosa.add " + last +
              ", %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>\n";
      last = v;
    }
    text += "  return " + last + " : tensor<?x3xf32>\n}\n";
  }
  return text;
}
} // namespace

// Big enough for the merge to refill a retired version's vectors (they
// are kept from a few thousand items on): a run of edits, each checked
// against a fresh analysis, sees no item of an older version.
TEST(Incremental, ManyFunctionsEditedInARow) {
  std::string text = chainFunctions(300, 8);
  std::deque<std::string> texts; // Edit points into them
  std::vector<Edit> edits;
  auto edit = [&](std::string find, std::string replace) {
    texts.push_back(std::move(find));
    texts.push_back(std::move(replace));
    edits.push_back(
        {texts[texts.size() - 2].c_str(), texts.back().c_str(), true});
  };
  for (int f : {150, 10, 290}) {
    std::string head = "@f" + std::to_string(f) + kChainSignature;
    // Within a line (nothing moves), then a line added (the rest moves).
    edit(head + "  %v0 = tosa.add", head + "  %v0 = tosa.sub");
    edit(head + "  %v0 = tosa.sub", head + "  // new\n  %v0 = tosa.sub");
  }
  runEdits(text, edits);
}

namespace {

/// The ops and values of `next` outside lines [first, last] that are the
/// very objects of `prev` (shared, not copied), and those inside.
struct Sharing {
  size_t outside = 0, sharedOutside = 0, inside = 0, sharedInside = 0;
};
template <typename Items, typename Anchor>
void countSharing(const Items &prev, const Items &next, unsigned first,
                  unsigned last, Anchor anchor, Sharing &s) {
  for (size_t i = 0; i < next.size(); ++i) {
    unsigned line = anchor(next[i]).line;
    bool in = line >= first && line <= last;
    bool shared = false;
    for (size_t j = 0; j < prev.size() && !shared; ++j)
      shared = next.sharesItem(i, prev, j);
    (in ? s.inside : s.outside) += 1;
    (in ? s.sharedInside : s.sharedOutside) += shared;
  }
}
Sharing sharing(const FileAnalysis &prev, const FileAnalysis &next,
                unsigned first, unsigned last) {
  Sharing s;
  countSharing(
      prev.ops, next.ops, first, last,
      [](const OpReport &o) { return o.range.begin; }, s);
  countSharing(
      prev.values, next.values, first, last,
      [](const ValueInfo &v) { return v.def.begin; }, s);
  return s;
}

unsigned lineOf(const std::string &text, const std::string &what) {
  size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  return 1 + std::count(text.begin(), text.begin() + at, '\n');
}

} // namespace

// An edit that moves no line and keeps the function's op count shares
// every other function's ops and values with the previous version (no
// copy: the merge was O(file), and two copies of the file's items were
// live while it ran); one that moves lines copies what is below.
TEST(Incremental, AnEditWithinALineSharesTheOtherFunctionsItems) {
  Versions versions;
  std::string text = kFunctions;
  auto v1 = versions.next(text);
  unsigned gFirst = lineOf(text, "func.func @g("),
           gLast = lineOf(text, "func.func @h(") - 2;
  text.replace(text.find("tosa.sub %x, %x"), 15, "tosa.add %x, %x");
  auto v2 = versions.next(text);
  ASSERT_TRUE(v2->sections[0].incremental);
  Sharing s = sharing(*v1, *v2, gFirst, gLast);
  EXPECT_GT(s.outside, 10u);
  EXPECT_EQ(s.sharedOutside, s.outside);
  EXPECT_GT(s.inside, 0u);
  EXPECT_EQ(s.sharedInside, 0u);

  // A line added in @g: what is below it is copied (its lines moved),
  // what is above is not.
  text.replace(text.find("  return %2 : tensor<?x3xf32>"), 0, "  // new\n");
  auto v3 = versions.next(text);
  ASSERT_TRUE(v3->sections[0].incremental);
  Sharing below = sharing(*v2, *v3, gFirst, 1000);
  EXPECT_EQ(below.sharedInside, 0u);
  // The previous versions read as before.
  EXPECT_EQ(observe(*v1), observe(versions.fresh.analyze(kFunctions, "i.mlir",
                                                         versions.config)));
}

// Unchanged sections that have not moved are shared too; a section's
// values name their op within the section, so an edit that changes the
// op count of the first section leaves the second's links right.
TEST(Incremental, UnchangedSectionsAreShared) {
  Versions versions;
  std::string second = "func.func @s(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) "
                       "-> tensor<2x3xf32> {\n  %0 = tosa.add %a, %b : "
                       "(tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>\n"
                       "  return %0 : tensor<2x3xf32>\n}\n";
  std::string text = std::string(kFunctions) + "// -----\n" + second;
  auto v1 = versions.next(text);
  ASSERT_EQ(v1->sections.size(), 2u);
  unsigned split = lineOf(text, "// -----");
  // An op more in the first section, on a line of its own (the second
  // section moves: copied), then a change within a line (not moved:
  // shared).
  text.replace(text.find("  %1 = call @g2(%0)"), 0,
               "  %5 = tosa.abs %p : (tensor<2x1xf32>) -> tensor<2x1xf32>\n");
  auto v2 = versions.next(text);
  text.replace(text.find("tosa.abs %p"), 11, "tosa.exp %p");
  auto v3 = versions.next(text);
  Sharing s = sharing(*v2, *v3, 1, split + 1);
  EXPECT_GT(s.outside, 2u);
  EXPECT_EQ(s.sharedOutside, s.outside);
  const ValueInfo *sum = nullptr;
  for (const ValueInfo &v : v3->values)
    if (v.section == 1 && v.name == "%0")
      sum = &v;
  ASSERT_TRUE(sum && v3->opOf(*sum));
  EXPECT_EQ(v3->opOf(*sum)->name, "tosa.add");
  EXPECT_EQ(v3->opOf(*sum)->range.begin.line, sum->def.begin.line);
}

// An edit inside a function of a later section: that section's items
// start past the earlier sections' in the previous version, shared or
// copied from there.
TEST(Incremental, EditsInALaterSection) {
  Versions versions;
  std::string text = std::string(kFunctions) + "// -----\n" + kFunctions;
  versions.next(text);
  size_t second = text.find("// -----");
  for (auto [find, replace] : {std::pair<std::string, std::string>{
                                   "tosa.sub %x, %x", "tosa.add %x, %x"},
                               {"  return %2 : tensor<?x3xf32>",
                                "  // moved\n  return %2 : tensor<?x3xf32>"}}) {
    text.replace(text.find(find, second), find.size(), replace);
    auto v = versions.next(text);
    ASSERT_EQ(v->sections.size(), 2u);
    EXPECT_TRUE(v->sections[1].incremental) << find;
  }
}

// Each shared edit of another function adds runs, and the stores keep the
// replaced functions' old items: past a bound the section is copied whole
// again, and every version still equals a fresh analysis.
TEST(Incremental, SharedRunsStayBounded) {
  std::string text = chainFunctions(120, 1);
  Versions versions(/*runtimeChecks=*/false);
  auto prev = versions.next(text);
  size_t mostRuns = 0;
  for (int f = 0; f < 120; f += 2) {
    std::string head =
        "@f" + std::to_string(f) + kChainSignature + "  %v0 = tosa.";
    size_t at = text.find(head);
    ASSERT_NE(at, std::string::npos);
    text.replace(at + head.size(), 3, "sub");
    auto next = versions.next(text);
    ASSERT_TRUE(next->sections[0].incremental) << f;
    mostRuns = std::max(mostRuns, next->ops.runCount());
    EXPECT_LE(next->ops.storedItems(), 2 * next->ops.size() + 8);
    prev = next;
  }
  EXPECT_GT(mostRuns, 8u);  // shared: runs were made
  EXPECT_LE(mostRuns, 64u); // and copied whole again before too many
}
