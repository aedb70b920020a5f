//===- InferInAnalysisTests.cpp - inference on the analysis' own IR ------===//
//
// Analyzer::setInferShapes infers each function on the IR the analysis
// parsed; ShapeInferrer::infer on a parse of its own. Both must give the
// same records, op by op (the server uses either, per function): on
// hand-written files, on the analysis' paths (whole, parts, small sections
// on two threads, an edit's unit), and on ../shared/corpus (skipped when
// absent).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "ShapeInference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

using namespace tosa_lsp;

namespace {

std::string str(Position p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}
std::string str(Range r) { return str(r.begin) + "-" + str(r.end); }
std::string str(const MaybeShape &s) {
  if (!s)
    return "unranked";
  std::string out;
  for (int64_t d : *s)
    out += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return out;
}

/// Everything a function's inference says, decoded, as text.
std::string describe(const FunctionInference &f) {
  std::ostringstream out;
  out << "@" << f.name << " s" << f.section << " " << str(f.scope) << " ["
      << f.skipped << "]\n";
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const InferredOp &op = f.ops[i];
    out << "  " << op.name() << " " << op.function() << " s" << op.section
        << " " << str(op.range) << " " << str(op.scope) << " "
        << str(op.resultTypeRange) << " r" << op.refined() << " c"
        << op.contradicts() << op.resultContradicts() << " o"
        << op.hasRefinedOperands() << " {" << op.rejection() << "} last "
        << f.lastLineSoFar[i] << "\n";
    for (const InferredResult &r : op.results()) {
      out << "    " << r.declared << " -> " << r.inferred << " "
          << str(r.declaredShape) << " " << str(r.inferredShape) << " fn "
          << str(r.shapeFunction);
      for (const std::string &s : r.dimSources)
        out << " <" << s << ">";
      for (unsigned d : r.contradictions)
        out << " !" << d;
      out << "\n";
    }
    for (const std::string &o : op.refinedOperands())
      out << "    operand " << o << "\n";
    out << "    " << inferredSummary(op) << "\n";
  }
  return out.str();
}

/// Compares every function `analyzer` inferred while analysing `text`
/// with what a ShapeInferrer infers of it (the fill's and requests' way:
/// asked for that function's lines, without refine-all edits). Returns how
/// many were compared.
size_t expectSameAsInferrer(Analyzer &analyzer, const std::string &text,
                            const std::string &path,
                            AnalysisCache *cache = nullptr) {
  FileAnalysis fa = analyzer.analyze(text, path, Config(), cache);
  std::shared_ptr<const ShapeInference> taken = analyzer.takeInferred();
  EXPECT_TRUE(taken);
  if (!taken)
    return 0;
  // With setInferShapes(true, true): and what inferKept delivers.
  auto mine = std::make_shared<ShapeInference>(*taken);
  std::mutex mu;
  auto never = [] { return false; };
  auto add = [&](Analyzer::FunctionPlace,
                 std::shared_ptr<const ShapeInference> part) {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < part->functions.size(); ++i)
      mine->functions.push_back(part->functions.shared(i));
  };
  analyzer.inferKept({never, add});
  EXPECT_FALSE(analyzer.hasKeptIR());
  static ShapeInferrer inferrer;
  LineIndex lines(text);
  for (const FunctionInference &f : mine->functions) {
    ShapeInference theirs =
        inferrer.infer(text, lines, fa, f.scope.begin.line, f.scope.end.line,
                       nullptr, /*withRefineEdits=*/false);
    const FunctionInference *same = nullptr;
    for (const FunctionInference &g : theirs.functions)
      if (g.scope.begin.line == f.scope.begin.line)
        same = &g;
    EXPECT_TRUE(same) << path << ": @" << f.name;
    if (same)
      EXPECT_EQ(describe(f), describe(*same)) << path;
  }
  return mine->functions.size();
}

const char *kFunctions = R"(!in = tensor<2x3xf32>
func.func @alias(%a: !in) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (!in) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @contradiction(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
func.func @bad(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
func.func private @external(tensor<2xf32>) -> tensor<2xf32>
func.func @ifop(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<7xf32>) -> tensor<?xf32> {
  %0 = tosa.cond_if %c (%x = %a, %y = %b) : tensor<i1> (tensor<4xf32>, tensor<7xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    tosa.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    %1 = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    tosa.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<?xf32>
}
func.func @loop(%i0: tensor<i32>, %x: tensor<4xf32>, %limit: tensor<i32>) -> tensor<?xf32> {
  %r:2 = tosa.while_loop (%i = %i0, %v = %x) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<?xf32>) {
    %more = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %more : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %v: tensor<?xf32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = tosa.abs %v : (tensor<?xf32>) -> tensor<?xf32>
    tosa.yield %i1, %v1 : tensor<i32>, tensor<?xf32>
  }
  %c = call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r#1 : tensor<?xf32>
}
)";

// Whole, in parts (parallelSectionBytes 0), split into `// -----` sections
// on two threads: every function the analysis infers equals the
// inferrer's. It infers all (the one with an error listed as such, as the
// inferrer does) but a function cut in two parts (the one-function section
// of the split file, with parts everywhere).
TEST(InferInAnalysis, EqualsTheInferrerOnEveryPath) {
  std::string split = kFunctions;
  for (const char *fn : {"@contradiction", "@bad", "@ifop"})
    split.insert(split.find("func.func " + std::string(fn)),
                 "// -----\n!in = tensor<2x3xf32>\n");
  for (size_t bytes : {size_t(0), size_t(SIZE_MAX)}) {
    for (const std::string &text : {std::string(kFunctions), split}) {
      Analyzer analyzer;
      analyzer.setInferShapes(true);
      analyzer.setParallelSectionBytes(bytes);
      size_t cut = bytes == 0 && text == split ? 1 : 0;
      EXPECT_EQ(expectSameAsInferrer(analyzer, text, "/t/f.mlir"), 6u - cut)
          << bytes << "\n"
          << text;
    }
  }
}

// Inferred after the analysis (setInferShapes(true, true)), on the IR it
// kept: the same, delivered by inferKept; an edit's unit is inferred during
// the analysis; a stop leaves the rest uninferred, its IR destroyed.
TEST(InferInAnalysis, AfterTheAnalysisOnItsKeptIR) {
  for (size_t bytes : {size_t(0), size_t(SIZE_MAX)}) {
    Analyzer analyzer;
    analyzer.setInferShapes(true, /*afterAnalysis=*/true);
    analyzer.setParallelSectionBytes(bytes);
    AnalysisCache cache;
    std::string text = kFunctions;
    (void)analyzer.analyze(text, "/t/f.mlir", Config(), &cache);
    EXPECT_TRUE(analyzer.takeInferred()->functions.empty());
    EXPECT_TRUE(analyzer.hasKeptIR());
    size_t delivered = 0;
    auto always = [] { return true; };
    auto count = [&](Analyzer::FunctionPlace,
                     std::shared_ptr<const ShapeInference> part) {
      delivered += part->functions.size();
    };
    analyzer.inferKept({always, count});
    EXPECT_EQ(delivered, 0u);
    EXPECT_FALSE(analyzer.hasKeptIR());
    text += " ";
    EXPECT_EQ(expectSameAsInferrer(analyzer, text, "/t/f.mlir", &cache), 6u);
    text.insert(text.find("  %c = call"),
                "  %w = tosa.abs %x : (tensor<4xf32>) -> tensor<?xf32>\n");
    (void)analyzer.analyze(text, "/t/f.mlir", Config(), &cache);
    EXPECT_FALSE(analyzer.hasKeptIR());
    EXPECT_EQ(analyzer.takeInferred()->functions.size(), 1u);
  }
}

namespace {
using Clock = std::chrono::steady_clock;
struct Delivery {
  Analyzer::FunctionPlace place;
  std::thread::id thread;
  Clock::time_point at;
};

/// Ten functions that share no symbol (parts the two threads can parse),
/// analysed with their IR kept for inferKept; their places. The IR points
/// into `text`, which must outlive inferKept (as a snapshot's text does in
/// the server).
std::vector<Analyzer::FunctionPlace>
keepTenFunctions(Analyzer &analyzer, size_t parallelBytes, std::string &text) {
  analyzer.setInferShapes(true, /*afterAnalysis=*/true);
  analyzer.setParallelSectionBytes(parallelBytes);
  text.clear();
  for (int i = 0; i < 10; ++i)
    text += "func.func @f" + std::to_string(i) +
            "(%a: tensor<2xf32>) -> tensor<?xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<?xf32>\n"
            "  return %0 : tensor<?xf32>\n}\n";
  (void)analyzer.analyze(text, "/t/f.mlir", Config());
  return analyzer.keptFunctions();
}

/// Those ten inferred after the analysis, with `wanted` asked for from the
/// start.
std::vector<Delivery> inferKeptWanting(Analyzer &analyzer,
                                       Analyzer::FunctionPlace wanted) {
  std::mutex mu;
  std::vector<Delivery> got;
  auto never = [] { return false; };
  auto record = [&](Analyzer::FunctionPlace place,
                    std::shared_ptr<const ShapeInference>) {
    std::lock_guard<std::mutex> lock(mu);
    got.push_back({place, std::this_thread::get_id(), Clock::now()});
  };
  auto wantedNow = [&] { return std::vector<Analyzer::FunctionPlace>{wanted}; };
  Analyzer::KeptHooks hooks{never, record};
  hooks.wanted = wantedNow;
  analyzer.inferKept(hooks);
  EXPECT_FALSE(analyzer.hasKeptIR());
  return got;
}
} // namespace

// What a request waits for goes first, whichever thread parsed it: the
// kept IR is inferred on one thread (the other core is the requests'),
// the helper's parts in its context. Every function is delivered once.
TEST(InferInAnalysis, KeptInferenceTakesTheWantedFunctionFirstOnOneThread) {
  for (size_t parallelBytes : {size_t(SIZE_MAX), size_t(0)}) {
    for (int wantedAt = 0; wantedAt < 10; ++wantedAt) {
      Analyzer analyzer;
      std::string text;
      std::vector<Analyzer::FunctionPlace> places =
          keepTenFunctions(analyzer, parallelBytes, text);
      ASSERT_EQ(places.size(), 10u);
      std::sort(places.begin(), places.end());
      std::vector<Delivery> got = inferKeptWanting(analyzer, places[wantedAt]);
      ASSERT_EQ(got.size(), 10u);
      EXPECT_EQ(got.front().place, places[wantedAt]);
      std::set<Analyzer::FunctionPlace> seen;
      std::set<std::thread::id> threads;
      for (const Delivery &d : got) {
        seen.insert(d.place);
        threads.insert(d.thread);
      }
      EXPECT_EQ(seen.size(), 10u);
      EXPECT_EQ(threads.size(), 1u);
    }
  }
}

// A function a request asks for while another is being inferred does not
// wait for the rest of that one: it is inferred between two of its ops and
// delivered first.
TEST(InferInAnalysis, AWantedFunctionInterruptsTheOneInProgress) {
  Analyzer analyzer;
  analyzer.setInferShapes(true, /*afterAnalysis=*/true);
  analyzer.setParallelSectionBytes(SIZE_MAX); // one thread
  std::string text;
  for (int i = 0; i < 2; ++i) {
    text += "func.func @f" + std::to_string(i) +
            "(%a: tensor<2xf32>) -> tensor<?xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<?xf32>\n";
    for (int k = 1; k < 40; ++k)
      text += "  %" + std::to_string(k) + " = tosa.abs %" +
              std::to_string(k - 1) + " : (tensor<?xf32>) -> tensor<?xf32>\n";
    text += "  return %39 : tensor<?xf32>\n}\n";
  }
  (void)analyzer.analyze(text, "/t/f.mlir", Config());
  std::vector<Analyzer::FunctionPlace> places = analyzer.keptFunctions();
  ASSERT_EQ(places.size(), 2u);
  Analyzer::FunctionPlace first = std::min(places[0], places[1]),
                          second = std::max(places[0], places[1]);
  std::atomic<unsigned> asked{0};
  std::vector<Analyzer::FunctionPlace> wanted, order;
  std::vector<size_t> ops;
  // Asked for the second function from inside the first one's inference
  // (its stop checks), as a hover arriving then would.
  unsigned stopChecks = 0;
  auto stop = [&] {
    if (++stopChecks == 2 && order.empty()) {
      wanted = {second};
      ++asked;
    }
    return false;
  };
  auto record = [&](Analyzer::FunctionPlace place,
                    std::shared_ptr<const ShapeInference> si) {
    order.push_back(place);
    ops.push_back(si && !si->functions.empty() ? si->functions[0].ops.size()
                                               : 0);
  };
  auto wantedNow = [&] { return wanted; };
  Analyzer::KeptHooks hooks{stop, record};
  hooks.wanted = wantedNow;
  hooks.asked = &asked;
  analyzer.inferKept(hooks);
  ASSERT_GE(stopChecks, 2u);
  EXPECT_EQ(order, (std::vector<Analyzer::FunctionPlace>{second, first}));
  EXPECT_EQ(ops, (std::vector<size_t>{40, 40})); // both whole
}

// A hover waits for one op, not for its function: the ops on the wanted
// lines of a wanted function, and those defining their operands, are
// delivered alone right after the function's pass, before the function;
// each record equals the whole function's record of that op.
TEST(InferInAnalysis, AWantedLinesOpsComeBeforeTheirFunction) {
  Analyzer analyzer;
  analyzer.setInferShapes(true, /*afterAnalysis=*/true);
  analyzer.setParallelSectionBytes(SIZE_MAX); // one thread
  std::string text =
      "func.func @f(%a: tensor<2xf32>, %b: tensor<1xf32>) -> tensor<?xf32> {\n"
      "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<?xf32>\n";
  for (int k = 1; k < 40; ++k)
    text += "  %" + std::to_string(k) + " = tosa.add %" +
            std::to_string(k - 1) +
            ", %b : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>\n";
  text += "  return %39 : tensor<?xf32>\n}\n";
  (void)analyzer.analyze(text, "/t/f.mlir", Config());
  std::vector<Analyzer::FunctionPlace> places = analyzer.keptFunctions();
  ASSERT_EQ(places.size(), 1u);
  const unsigned line = 2 + 30; // %30 = tosa.add %29, %b
  std::vector<std::string> events;
  std::shared_ptr<const ShapeInference> early, whole;
  auto never = [] { return false; };
  auto record = [&](Analyzer::FunctionPlace,
                    std::shared_ptr<const ShapeInference> si) {
    events.push_back("whole");
    whole = std::move(si);
  };
  auto wanted = [&] { return places; };
  auto wantedLines = [&](Analyzer::FunctionPlace p) {
    EXPECT_EQ(p, places[0]);
    return std::vector<unsigned>{line};
  };
  auto deliverEarly = [&](Analyzer::FunctionPlace p,
                          std::shared_ptr<const ShapeInference> si) {
    EXPECT_EQ(p, places[0]);
    events.push_back("early");
    early = std::move(si);
  };
  Analyzer::KeptHooks hooks{never, record};
  hooks.wanted = wanted;
  hooks.wantedLines = wantedLines;
  hooks.deliverEarly = deliverEarly;
  analyzer.inferKept(hooks);
  EXPECT_EQ(events, (std::vector<std::string>{"early", "whole"}));
  ASSERT_TRUE(early && whole);
  ASSERT_EQ(early->functions.size(), 1u);
  ASSERT_EQ(whole->functions.size(), 1u);
  const FunctionInference &e = early->functions[0], &w = whole->functions[0];
  ASSERT_EQ(w.ops.size(), 40u);
  // The op on the line and the one defining its operand %29 (%b is an
  // argument): the whole function's records of the same two.
  FunctionInference same;
  same.name = w.name;
  same.scope = w.scope;
  same.section = w.section;
  same.pool = w.pool;
  unsigned last = 0;
  for (const InferredOp &op : w.ops)
    if (op.range.begin.line == line || op.range.begin.line == line - 1) {
      same.ops.push_back(op);
      same.lastLineSoFar.push_back(last = std::max(last, op.lastLine()));
    }
  ASSERT_EQ(same.ops.size(), 2u);
  EXPECT_EQ(describe(e), describe(same));
  EXPECT_TRUE(early->opAt(Position{line, 0}));
  EXPECT_FALSE(early->opAt(Position{line + 1, 0}));
}

// Lenient dialects (an IREE test's util., check.) loaded by one file do not
// stay for the next: with them, nothing of it was kept for inference (nor
// analysed in parts), and a 50k-line file opened after a small IREE test
// took 2-3x as long.
TEST(InferInAnalysis, ALenientFileLeavesTheNextFileKept) {
  Analyzer analyzer;
  std::string iree = "func.func @l(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %0 = util.optimization_barrier %a : tensor<2xf32>\n"
                     "  check.expect_almost_eq(%0, %a) : tensor<2xf32>\n"
                     "  return %0 : tensor<2xf32>\n}\n";
  analyzer.setInferShapes(true, /*afterAnalysis=*/true);
  FileAnalysis fa = analyzer.analyze(iree, "/t/iree.mlir", Config());
  EXPECT_FALSE(fa.hasErrors());
  EXPECT_TRUE(analyzer.keptFunctions().empty()); // parsed leniently
  auto never = [] { return false; };
  auto ignore = [](Analyzer::FunctionPlace,
                   std::shared_ptr<const ShapeInference>) {};
  analyzer.inferKept({never, ignore});
  std::string text;
  EXPECT_EQ(keepTenFunctions(analyzer, 0, text).size(), 10u);
  analyzer.inferKept({never, ignore});
}

// An edit inside one function re-analyses that function alone (a unit,
// with stubs of what it calls): only it is inferred again, as the
// inferrer infers it in the edited text.
TEST(InferInAnalysis, AnEditInfersTheEditedFunctionAlone) {
  Analyzer analyzer;
  analyzer.setInferShapes(true);
  AnalysisCache cache;
  std::string text = kFunctions;
  EXPECT_EQ(expectSameAsInferrer(analyzer, text, "/t/f.mlir", &cache), 6u);
  text.insert(text.find("  %c = call"),
              "  %w = tosa.abs %x : (tensor<4xf32>) -> tensor<?xf32>\n");
  EXPECT_EQ(expectSameAsInferrer(analyzer, text, "/t/f.mlir", &cache), 1u);
  // Off: nothing.
  Analyzer off;
  (void)off.analyze(text, "/t/f.mlir", Config());
  EXPECT_FALSE(off.takeInferred());
}

// Every file of the corpus, whole and cut wherever it can be, inferred
// during the analysis and after it.
TEST(InferInAnalysis, CorpusEqualsTheInferrer) {
  namespace fs = std::filesystem;
  std::optional<std::vector<fs::path>> corpus = corpusFiles();
  if (!corpus)
    GTEST_SKIP() << "no corpus at " << TOSA_LSP_CORPUS_DIR;
  const std::vector<fs::path> &files = *corpus;
  ASSERT_GT(files.size(), 10u);
  size_t compared = 0;
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    for (size_t bytes : {size_t(0), size_t(SIZE_MAX)})
      for (bool after : {false, true}) {
        // Fresh ones: a lenient dialect loaded for one file turns the
        // inference off for the analyzer's next files.
        Analyzer analyzer;
        analyzer.setInferShapes(true, after);
        analyzer.setParallelSectionBytes(bytes);
        compared += expectSameAsInferrer(analyzer, text, f.string());
      }
  }
  EXPECT_GT(compared, 100u);
}

} // namespace
