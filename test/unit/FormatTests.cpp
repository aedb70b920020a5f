//===- FormatTests.cpp - the formatter keeps meaning and is idempotent ----===//

#include "GenericForm.h"
#include "TestSupport.h"

#include "Format.h"
#include "LineIndex.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

std::string format(const std::string &text, std::string *error = nullptr,
                   unsigned first = 0, unsigned last = 0) {
  FileAnalysis fa = analyzeText(text);
  LineIndex lines(text);
  FormatResult r = formatText(text, lines, fa, first, last);
  if (error)
    *error = r.error;
  return applyEdits(text, r.edits);
}

TEST(Format, IndentsAndSpacesAsMlirOptButKeepsTheAuthorsChoices) {
  std::string in = R"(// keep me
#enc = #foo.bar<a,b>
func.func @f(%arg0:   tensor<2xf32>,
             %arg1: tensor<2xf32>) -> tensor<2xf32> {
%x =tosa.add %arg0 ,%arg1 :(tensor<2xf32>,tensor<2xf32>) ->tensor<2xf32>   
      %w = "tosa.const"() <{values = dense<[1.0,2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>  // weights

        cf.br ^bb1
    ^bb1:
  return %x : tensor<2xf32>
    }
)";
  std::string want = R"(// keep me
#enc = #foo.bar<a,b>
func.func @f(%arg0: tensor<2xf32>,
             %arg1: tensor<2xf32>) -> tensor<2xf32> {
  %x = tosa.add %arg0, %arg1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %w = "tosa.const"() <{values = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>  // weights

  cf.br ^bb1
^bb1:
  return %x : tensor<2xf32>
}
)";
  std::string error;
  std::string out = format(in, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(out, want);
  EXPECT_EQ(format(out), out); // idempotent
  EXPECT_EQ(genericForm(out), genericForm(in));
}

TEST(Format, TokensWrittenTogetherStayTogether) {
  std::string in = "#set = affine_set<(d0) : (d0 - 1 >= 0, d0 == 0)>\n"
                   "#map = affine_map<(d0)->(d0)>\n"
                   "func.func @f(%a: f32) -> f32 attributes {s = #set, m = "
                   "#map} {\n  return %a : f32 loc(\"a.py\":1:2)\n}\n";
  std::string error;
  EXPECT_EQ(format(in, &error), in);
  EXPECT_EQ(error, "");
}

TEST(Format, RefusesASectionThatDoesNotParseAndFormatsARange) {
  std::string in = "func.func @f() {\nreturn\n}\n// -----\nfunc.func @g( {\n";
  std::string error;
  EXPECT_EQ(format(in, &error), in);
  EXPECT_NE(error.find("line 5 does not parse"), std::string::npos);
  EXPECT_EQ(format(in, &error, 1, 3), "func.func @f() {\n  return\n}\n"
                                      "// -----\nfunc.func @g( {\n");
  EXPECT_EQ(error, "");
  std::string two =
      "func.func @f() {\nreturn\n}\nfunc.func @g() {\nreturn\n}\n";
  EXPECT_EQ(format(two, nullptr, 5, 5),
            "func.func @f() {\nreturn\n}\nfunc.func @g() {\n  return\n}\n");
}

TEST(Format, CorpusKeepsMeaningAndIsIdempotent) {
#ifdef TOSA_LSP_CORPUS_DIR
  namespace fs = std::filesystem;
  if (!fs::exists(TOSA_LSP_CORPUS_DIR))
    GTEST_SKIP() << "no corpus at " << TOSA_LSP_CORPUS_DIR;
  unsigned checked = 0;
  for (const auto &e : fs::recursive_directory_iterator(TOSA_LSP_CORPUS_DIR)) {
    if (e.path().extension() != ".mlir" || fs::file_size(e.path()) > (2 << 20))
      continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    auto before = genericForm(text);
    if (!before)
      continue; // only what parses as a whole
    std::string error;
    std::string once = format(text, &error);
    ASSERT_EQ(error, "") << e.path();
    EXPECT_EQ(genericForm(once), before) << e.path();
    EXPECT_EQ(format(once), once) << e.path();
    ++checked;
  }
  EXPECT_GT(checked, 20u);
#else
  GTEST_SKIP() << "TOSA_LSP_CORPUS_DIR not set";
#endif
}

} // namespace
