//===- TestSupport.h - helpers shared by the feature test files -*- C++ -*-===//

#ifndef TOSA_LSP_TEST_UNIT_TESTSUPPORT_H
#define TOSA_LSP_TEST_UNIT_TESTSUPPORT_H

#include "Analysis.h"
#include "Config.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace tosa_lsp {

/// Analyses `text` as t.mlir with the default configuration.
inline FileAnalysis analyzeText(const std::string &text) {
  static Analyzer analyzer;
  return analyzer.analyze(text, "t.mlir", Config());
}

/// `func.func @f`: its 2x3 argument transposed to `?x?`, then `n` abs ops
/// in a chain (`%v1`..`%vn` on lines 2..n+1), all `?x?` until inferred
/// (3x2); n+4 lines with the return and the brace.
inline std::string absChain(int n) {
  std::string text = "func.func @f(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
                     "  %v0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
                     "(tensor<2x3xf32>) -> tensor<?x?xf32>\n";
  for (int i = 1; i <= n; ++i)
    text += "  %v" + std::to_string(i) + " = tosa.abs %v" +
            std::to_string(i - 1) + " : (tensor<?x?xf32>) -> tensor<?x?xf32>\n";
  return text + "  return %v" + std::to_string(n) + " : tensor<?x?xf32>\n}\n";
}

/// `n` element-wise ops of an unregistered dialect (checked by tosa-lsp
/// alone) on random shapes: static, 1, `?` and unranked; equal and mixed
/// ranks. For the shortcuts that read an op's summary instead of its full
/// analysis.
inline std::string randomBroadcastModel(unsigned seed, int n) {
  std::mt19937 rng(seed);
  auto dim = [&] {
    const char *dims[] = {"2", "3", "1", "?"};
    return std::string(dims[rng() % 4]);
  };
  auto shape = [&](unsigned rank) {
    if (rng() % 10 == 0)
      return std::string("*x");
    std::string s;
    for (unsigned i = 0; i < rank; ++i)
      s += dim() + "x";
    return s;
  };
  std::string text = "func.func @f() {\n";
  for (int i = 0; i < n; ++i) {
    unsigned rank = 1 + rng() % 3;
    std::string a = shape(rank), b = shape(rng() % 4 ? rank : 1 + rng() % 3),
                r = shape(rank);
    text += "  %a" + std::to_string(i) + " = \"test.a\"() : () -> tensor<" + a +
            "f32>\n";
    text += "  %b" + std::to_string(i) + " = \"test.b\"() : () -> tensor<" + b +
            "f32>\n";
    text += "  %r" + std::to_string(i) + " = \"tfl.add\"(%a" +
            std::to_string(i) + ", %b" + std::to_string(i) + ") : (tensor<" +
            a + "f32>, tensor<" + b + "f32>) -> tensor<" + r + "f32>\n";
  }
  return text + "  return\n}\n";
}

inline bool has(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

#ifdef TOSA_LSP_CORPUS_DIR
/// The .mlir files under ../shared/corpus (read in place, never copied
/// here), sorted; none when it is absent (the test skips).
inline std::optional<std::vector<std::filesystem::path>> corpusFiles() {
  namespace fs = std::filesystem;
  fs::path corpus = TOSA_LSP_CORPUS_DIR;
  if (!fs::is_directory(corpus))
    return std::nullopt;
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(corpus))
    if (e.is_regular_file() && e.path().extension() == ".mlir")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
#endif

namespace test {
inline std::string pos(const Position &p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}
inline std::string rng(const Range &r) {
  return pos(r.begin) + "-" + pos(r.end);
}
inline std::string rngs(std::vector<Range> rs) {
  std::sort(rs.begin(), rs.end(), [](const Range &a, const Range &b) {
    return std::make_tuple(a.begin.line, a.begin.column) <
           std::make_tuple(b.begin.line, b.begin.column);
  });
  std::string s;
  for (const Range &r : rs)
    s += rng(r) + " ";
  return s;
}
} // namespace test

/// Everything a client can observe of an analysis, as comparable lines:
/// diagnostics and op reports in their order (published, indexed), then
/// values, blocks, symbols and op spans sorted (lookups go through the
/// position index, which sorts).
inline std::vector<std::string> observe(const FileAnalysis &fa) {
  using test::rng;
  using test::rngs;
  std::vector<std::string> out;
  for (const Diagnostic &d : fa.diagnostics) {
    std::string notes;
    for (const DiagNote &n : d.notes)
      notes += rng(n.range) + n.message + ";";
    out.push_back("diag " + rng(d.range) + " " + severityName(d.severity) +
                  " " + d.code + " " + d.message + " " + notes);
  }
  for (const OpReport &op : fa.ops)
    out.push_back("op " + op.name + " " + rng(op.range) + " " + rng(op.scope) +
                  " " + rng(op.resultTypeRange) + " " +
                  rng(op.resultNameRange) + " " +
                  std::to_string(op.verifierFailed) +
                  std::to_string(op.verifierRan) + std::to_string(op.ok()));
  size_t ordered = out.size();
  for (const ValueInfo &v : fa.values)
    out.push_back("value " + v.name + " " + rng(v.def) + " " +
                  rngs(v.uses.vec()) + v.type + " " + v.origin + " " +
                  rng(v.ownerRange) +
                  " op:" + (fa.opOf(v) ? rng(fa.opOf(v)->range) : "-"));
  for (const BlockInfo &b : fa.blocks)
    out.push_back("block " + b.name + " " + rng(b.def) + " " +
                  rngs(b.uses.vec()));
  for (const SymbolInfo &s : fa.symbols)
    out.push_back("symbol " + s.name + " " + s.opName + " " + rng(s.nameRange) +
                  " " + rng(s.scope) + " " + rngs(s.uses));
  for (const OpSpan &o : fa.opSpans)
    out.push_back("span " + o.name + " " + rng(o.nameRange) + " " +
                  rng(o.scope));
  std::sort(out.begin() + ordered, out.end());
  return out;
}

/// Empty when equal, else the first line where they differ (gtest would
/// print both vectors whole: thousands of lines).
inline std::string firstDifference(const std::vector<std::string> &a,
                                   const std::vector<std::string> &b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string x = i < a.size() ? a[i] : "(end)";
    std::string y = i < b.size() ? b[i] : "(end)";
    if (x != y)
      return "line " + std::to_string(i) + ":\n  " + x + "\n  " + y;
  }
  return "";
}

} // namespace tosa_lsp

#endif // TOSA_LSP_TEST_UNIT_TESTSUPPORT_H
