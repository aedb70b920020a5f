//===- StaleViewTest.cpp - an older snapshot under the client's text ------===//

#include "StaleView.h"
#include "Hover.h"
#include "Navigation.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;
namespace lsp = llvm::lsp;

namespace {

// Two functions; @b's `%1` is on line 5 (LSP line 4).
const char *kOld = "func.func @a() {\n"
                   "  %0 = x\n"
                   "}\n"
                   "// between\n"
                   "func.func @b() {\n"
                   "  %1 = y\n"
                   "}\n";

std::shared_ptr<const Snapshot> snapshotOf(const std::string &text) {
  auto fa = std::make_shared<FileAnalysis>();
  SymbolInfo a, b;
  a.name = "a";
  b.name = "b";
  a.opName = b.opName = "func.func";
  a.scope = {{1, 1}, {3, 2}};
  b.scope = {{5, 1}, {7, 2}};
  fa->symbols = {a, b};
  return std::make_shared<const Snapshot>(
      "file:///t.mlir", "/t.mlir", 1, std::make_shared<const std::string>(text),
      Config(), std::move(fa));
}

StaleView viewOf(std::string now) {
  return StaleView(snapshotOf(kOld), std::make_shared<const std::string>(now),
                   2);
}

std::string edited(std::string from, const std::string &what,
                   const std::string &with) {
  from.replace(from.find(what), what.size(), with);
  return from;
}

} // namespace

// A line added inside @a: @b moved down by one; a request in @b is answered
// at its place in the old text, and ranges come back one line lower.
TEST(StaleView, AnEditInAnotherFunctionMovesTheAnswer) {
  StaleView v = viewOf(edited(kOld, "  %0 = x\n", "  %0 = x\n  %z = w\n"));
  std::optional<lsp::Position> at = v.answers(lsp::Position(6, 3));
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, lsp::Position(5, 3));
  std::vector<lsp::Range> rs = {lsp::Range(lsp::Position(5, 2), {5, 4}),
                                lsp::Range(lsp::Position(0, 0), {0, 4})};
  v.forward(rs);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0], lsp::Range(lsp::Position(6, 2), {6, 4}));
  EXPECT_EQ(rs[1], lsp::Range(lsp::Position(0, 0), {0, 4})); // before it
  // The comment between the functions: in no function, not edited.
  EXPECT_EQ(v.answers(lsp::Position(4, 3)), lsp::Position(3, 3));
}

// Within the function the edit touched, or on the edited text, the older
// snapshot does not answer (its types and shapes may no longer hold).
TEST(StaleView, NotInTheEditedFunction) {
  StaleView v = viewOf(edited(kOld, "%0 = x", "%0 = xyz"));
  EXPECT_FALSE(v.answers(lsp::Position(1, 3)));  // the edited line
  EXPECT_FALSE(v.answers(lsp::Position(0, 11))); // @a's name
  EXPECT_TRUE(v.answers(lsp::Position(5, 3)));   // in @b
  // A line inserted right above @b touches it.
  StaleView above = viewOf(edited(kOld, "// between\n", "// between\n\n"));
  EXPECT_FALSE(above.answers(lsp::Position(6, 3)));
  EXPECT_TRUE(above.answers(lsp::Position(1, 3)));
  // Past the end of the text.
  EXPECT_FALSE(v.answers(lsp::Position(40, 0)));
}

// Ranges of text the edit replaced have no place in the new text; targets
// in other documents do not move.
TEST(StaleView, RangesInTheEditAreDroppedOtherDocumentsKept) {
  StaleView v = viewOf(edited(kOld, "  %1 = y\n", "  %1 = w\n  %2 = q\n"));
  std::vector<DefinitionTarget> ts = {
      {"", lsp::Range(lsp::Position(5, 7), {5, 8})}, // `y`: replaced
      {"file:///other.mlir", lsp::Range(lsp::Position(5, 7), {5, 8})},
      {"file:///t.mlir", lsp::Range(lsp::Position(1, 2), {1, 4})}};
  v.forward(ts);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].uri, "file:///other.mlir");
  EXPECT_EQ(ts[0].range, lsp::Range(lsp::Position(5, 7), {5, 8}));
  EXPECT_EQ(ts[1].range, lsp::Range(lsp::Position(1, 2), {1, 4}));
  // A hover over replaced text keeps its text, without a range.
  std::optional<lsp::Hover> h(
      lsp::Hover(lsp::Range(lsp::Position(5, 7), {5, 8})));
  h->contents.value = "y";
  v.forward(h);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->range);
  EXPECT_EQ(h->contents.value, "y");
  // An empty range where the replaced text began stays there (it mapped
  // past the end of the replacement before).
  std::vector<lsp::Range> at = {lsp::Range(lsp::Position(5, 7), {5, 7})};
  v.forward(at);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0], lsp::Range(lsp::Position(5, 7), {5, 7}));
  // The closing brace after the edit moved down a line.
  std::vector<lsp::Range> rs = {lsp::Range(lsp::Position(6, 0), {6, 1})};
  v.forward(rs);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0], lsp::Range(lsp::Position(7, 0), {7, 1}));
}

namespace {

/// Four functions of broadcasts, values used across lines.
std::string fourFunctions() {
  std::string out;
  for (int f = 0; f < 4; ++f)
    out += "func.func @f" + std::to_string(f) +
           "(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {\n"
           "  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> "
           "tensor<2x3xf32>\n"
           "  %1 = tosa.sub %0, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> "
           "tensor<2x3xf32>\n"
           "  %2 = tosa.maximum %1, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
           "tensor<2x3xf32>\n"
           "  return %2 : tensor<2x3xf32>\n}\n";
  return out;
}

std::shared_ptr<const Snapshot> analysed(Analyzer &a, const std::string &text,
                                         int64_t version,
                                         AnalysisCache &cache) {
  auto shared = std::make_shared<const std::string>(text);
  return std::make_shared<const Snapshot>(
      "file:///t.mlir", "/t.mlir", version, shared, Config(),
      a.analyzeShared(shared, "/t.mlir", Config(), cache));
}

} // namespace

// Differential: wherever the older snapshot answers, its hover, definition
// and references, moved into the client's text, equal those of the
// analysis of that text the server makes next. Edits of each kind in each
// function: a line added, one removed, a type changed (an error), a comment at
// the top.
TEST(StaleView, AnswersEqualAFreshAnalysisWhereItAnswers) {
  Analyzer analyzer;
  std::string old = fourFunctions();
  AnalysisCache first;
  std::shared_ptr<const Snapshot> before = analysed(analyzer, old, 1, first);
  struct Edit {
    std::string what, with;
  };
  std::vector<Edit> edits;
  for (int f = 0; f < 4; ++f) {
    std::string at = "@f" + std::to_string(f) + "(";
    size_t fn = old.find(at);
    size_t sub = old.find("  %1 = tosa.sub", fn);
    size_t line = old.substr(sub, old.find('\n', sub) - sub + 1).size();
    std::string subLine = old.substr(sub, line);
    // Each edit names text unique to function f by what precedes it.
    edits.push_back({old.substr(fn, sub - fn) + subLine,
                     old.substr(fn, sub - fn) + subLine +
                         "  %9 = tosa.abs %1 : (tensor<2x3xf32>) -> "
                         "tensor<2x3xf32>\n"});
    edits.push_back(
        {old.substr(fn, sub - fn) + subLine, old.substr(fn, sub - fn)});
    edits.push_back({old.substr(fn, sub - fn) + subLine,
                     old.substr(fn, sub - fn) +
                         "  %1 = tosa.sub %0, %b : (tensor<2x3xf32>, "
                         "tensor<4x3xf32>) -> tensor<2x3xf32>\n"});
  }
  edits.push_back({"func.func @f0", "// a comment\nfunc.func @f0"});
  int answered = 0, waited = 0;
  for (const Edit &e : edits) {
    std::string now = edited(old, e.what, e.with);
    auto text = std::make_shared<const std::string>(now);
    StaleView v(before, text, 2);
    // The server's next analysis: after the snapshot's, with its cache (a
    // section that stops parsing keeps its last good results).
    AnalysisCache cache;
    analysed(analyzer, old, 1, cache);
    std::shared_ptr<const Snapshot> fresh = analysed(analyzer, now, 2, cache);
    LineTable lines(now);
    for (unsigned l = 0; l < fresh->lines.index().lineCount(); ++l)
      for (unsigned c = 0; c < 90; ++c) {
        lsp::Position p(l, c);
        std::optional<lsp::Position> at = v.answers(p);
        if (!at) {
          ++waited;
          continue;
        }
        ++answered;
        std::optional<Position> po = before->lines.fromLsp(*at),
                                pn = fresh->lines.fromLsp(p);
        ASSERT_TRUE(po && pn);
        auto hoverOf = [](const Snapshot &s, Position q) {
          std::optional<lsp::Hover> h;
          if (std::optional<HoverResult> r = tosa_lsp::hover(s.analysis, q)) {
            h.emplace(s.lines.toLsp(r->range));
            h->contents.value = r->markdown;
          }
          return h;
        };
        std::optional<lsp::Hover> ho = hoverOf(*before, *po),
                                  hn = hoverOf(*fresh, *pn);
        v.forward(ho);
        // Where the edit broke the section's parse, the next analysis
        // serves its last good results with a note the older snapshot
        // cannot know of.
        static const std::string kStale =
            "\n\n_Stale: this section does not parse now; shown from the "
            "last version that did._\n";
        if (hn && llvm::StringRef(hn->contents.value).ends_with(kStale))
          hn->contents.value.resize(hn->contents.value.size() - kStale.size());
        ASSERT_EQ(bool(ho), bool(hn)) << now << l << ":" << c;
        if (ho) {
          EXPECT_EQ(ho->contents.value, hn->contents.value) << l << ":" << c;
          EXPECT_EQ(ho->range, hn->range) << l << ":" << c;
        }
        auto rangesOf = [](const Snapshot &s, std::vector<Range> rs) {
          std::vector<lsp::Range> out;
          for (const Range &r : rs)
            out.push_back(s.lines.toLsp(r));
          return out;
        };
        std::vector<lsp::Range> ro = rangesOf(
            *before, tosa_lsp::references(before->analysis, *po, true));
        v.forward(ro);
        EXPECT_EQ(ro, rangesOf(*fresh, tosa_lsp::references(fresh->analysis,
                                                            *pn, true)))
            << l << ":" << c;
        std::optional<Range> d = tosa_lsp::definition(before->analysis, *po),
                             dn = tosa_lsp::definition(fresh->analysis, *pn);
        std::vector<DefinitionTarget> to, tn;
        if (d)
          to.push_back({"", before->lines.toLsp(*d)});
        if (dn)
          tn.push_back({"", fresh->lines.toLsp(*dn)});
        v.forward(to);
        ASSERT_EQ(to.size(), tn.size()) << l << ":" << c;
        if (!to.empty())
          EXPECT_EQ(to[0].range, tn[0].range) << l << ":" << c;
      }
  }
  // Most of the text is outside the edited function; the rest waits.
  EXPECT_GT(answered, 3 * waited);
  EXPECT_GT(waited, 0);
}
