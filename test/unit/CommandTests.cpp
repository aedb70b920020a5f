//===- CommandTests.cpp - the CLI commands through their options ----------===//
//
// Each command is called as main.cpp calls it, with its options struct and
// two string streams: exit code, output and errors, no process or parser.
//
//===----------------------------------------------------------------------===//

#include "CheckCommand.h"
#include "FixCommand.h"
#include "GraphCommand.h"
#include "LowerCommand.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tosa_lsp::cli;

namespace {

/// A result that could be refined (`?` -> 3) and that lowers.
constexpr const char *kRefinable =
    "func.func @h(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<1xf32>, tensor<3xf32>) -> "
    "tensor<?xf32>\n"
    "  return %0 : tensor<?xf32>\n"
    "}\n";

/// Operands that do not broadcast: an error.
constexpr const char *kBroken =
    "func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> "
    "tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

/// A .mlir file with `text`, removed at the end of the test.
class TempFile {
public:
  explicit TempFile(const std::string &text) {
    llvm::SmallString<128> p;
    int fd;
    EXPECT_FALSE(
        llvm::sys::fs::createTemporaryFile("command-test", "mlir", fd, p));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    path_ = std::string(p);
  }
  ~TempFile() { llvm::sys::fs::remove(path_); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// A command's exit code, output and errors.
struct Ran {
  int rc;
  std::string out, err;
};

template <typename Options, typename Command>
Ran call(Command command, const Options &opts) {
  Ran r;
  llvm::raw_string_ostream out(r.out), err(r.err);
  r.rc = command(opts, out, err);
  return r;
}

TEST(CheckCommand, ReportsErrorsWithExitCode1) {
  TempFile f(kBroken);
  CheckOptions opts;
  opts.files = {f.path()};
  Ran r = call(runCheck, opts);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find(":2:8: error: 'tosa.add' op "), std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CheckCommand, CleanFileAndJson) {
  TempFile f(kRefinable);
  CheckOptions opts;
  opts.files = {f.path()};
  Ran text = call(runCheck, opts);
  EXPECT_EQ(text.rc, 0);
  // Informational findings only with showInfo.
  EXPECT_EQ(text.out, "");
  opts.showInfo = true;
  Ran info = call(runCheck, opts);
  EXPECT_EQ(info.rc, 0);
  EXPECT_NE(info.out.find("remark: "), std::string::npos) << info.out;
  opts.format = "json";
  Ran json = call(runCheck, opts);
  EXPECT_EQ(json.rc, 0);
  EXPECT_EQ(json.out.rfind("{\n \"files\": [", 0), 0u) << json.out;
}

TEST(CheckCommand, UsageErrors) {
  CheckOptions opts;
  Ran none = call(runCheck, opts);
  EXPECT_EQ(none.rc, 2);
  EXPECT_EQ(none.err, "tosa-lsp: error: check: no input files\n"
                      "run 'tosa-lsp --help' for usage\n");
  opts.files = {"x.mlir"};
  opts.format = "xml";
  Ran fmt = call(runCheck, opts);
  EXPECT_EQ(fmt.rc, 2);
  EXPECT_EQ(fmt.err.rfind("tosa-lsp: error: unknown format 'xml' (expected "
                          "text, json)\n",
                          0),
            0u)
      << fmt.err;
  EXPECT_EQ(fmt.out, "");
}

TEST(CheckCommand, UnreadableFileIsExitCode2AndTheOthersAreChecked) {
  TempFile f(kBroken);
  CheckOptions opts;
  opts.files = {"/nonexistent/x.mlir", f.path()};
  Ran r = call(runCheck, opts);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("tosa-lsp: error: "), std::string::npos);
  EXPECT_NE(r.out.find("error: 'tosa.add' op"), std::string::npos);
}

TEST(ExplainCommand, ExactlyOneFileAndItsFormats) {
  ExplainOptions opts;
  Ran none = call(runExplain, opts);
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("explain: expected exactly one FILE[:LINE[:COL]]"),
            std::string::npos);
  TempFile f(kRefinable);
  opts.files = {f.path() + ":2"};
  opts.format = "markdown";
  Ran md = call(runExplain, opts);
  EXPECT_EQ(md.rc, 0) << md.err;
  EXPECT_NE(md.out.find("tosa.add"), std::string::npos);
  opts.format = "html";
  EXPECT_EQ(call(runExplain, opts).rc, 2);
}

TEST(FixCommand, ListsAndAppliesValidatedFixes) {
  TempFile f(kRefinable);
  FixOptions opts;
  opts.files = {f.path()};
  Ran list = call(runFix, opts);
  EXPECT_EQ(list.rc, 0) << list.err;
  EXPECT_NE(list.out.find("0: "), std::string::npos);
  EXPECT_NE(list.out.find("[refinable-result]"), std::string::npos);
  opts.apply = 0;
  Ran fixed = call(runFix, opts);
  EXPECT_EQ(fixed.rc, 0);
  EXPECT_NE(fixed.out.find("-> tensor<3xf32>"), std::string::npos) << fixed.out;
  opts.apply = 7;
  Ran none = call(runFix, opts);
  EXPECT_EQ(none.rc, 2);
  EXPECT_EQ(none.err, "tosa-lsp: error: no fix #7 (there are 1 validated "
                      "fixes; --candidates lists unvalidated ones too)\n");
}

TEST(FixCommand, OptionErrors) {
  TempFile f(kRefinable);
  FixOptions opts;
  opts.files = {f.path()};
  opts.migrate = opts.refineAll = true;
  Ran both = call(runFix, opts);
  EXPECT_EQ(both.rc, 2);
  EXPECT_EQ(both.err.rfind("tosa-lsp: error: fix: --migrate and --refine-all "
                           "exclude each other\n",
                           0),
            0u);
  opts.migrate = false;
  opts.function = "@";
  Ran empty = call(runFix, opts);
  EXPECT_EQ(empty.rc, 2);
  EXPECT_EQ(empty.err.rfind("tosa-lsp: error: --function needs a function "
                            "name\n",
                            0),
            0u);
  opts.function = "@nope";
  Ran nope = call(runFix, opts);
  EXPECT_EQ(nope.rc, 2);
  EXPECT_EQ(nope.err, "tosa-lsp: error: no function @nope with inferable "
                      "shapes\n");
  // `@h` as MLIR spells it.
  opts.function = "@h";
  Ran refined = call(runFix, opts);
  EXPECT_EQ(refined.rc, 0) << refined.err;
  EXPECT_NE(refined.out.find("-> tensor<3xf32>"), std::string::npos);
  opts.files.push_back(f.path());
  Ran two = call(runFix, opts);
  EXPECT_EQ(two.rc, 2);
  EXPECT_NE(two.err.find("fix: expected one FILE, got 2"), std::string::npos);
}

TEST(GraphCommand, FormatsAndTheFunction) {
  std::string two = std::string(kBroken) + kRefinable;
  TempFile f(two);
  GraphOptions opts;
  opts.files = {f.path()};
  // No --function: the first, and a note naming the others' way.
  Ran first = call(runGraph, opts);
  EXPECT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.out.find("\"function\": \"f\""), std::string::npos);
  EXPECT_NE(first.err.find("has 2 functions; drawing @f"), std::string::npos);
  // FILE:LINE: the function there; its error on the op's node.
  opts.files = {f.path() + ":6"};
  Ran at = call(runGraph, opts);
  EXPECT_EQ(at.rc, 0) << at.err;
  EXPECT_NE(at.out.find("\"function\": \"h\""), std::string::npos);
  opts.files = {f.path()};
  opts.function = "@f";
  Ran f1 = call(runGraph, opts);
  EXPECT_NE(f1.out.find("don't have broadcast-compatible shapes"),
            std::string::npos)
      << f1.out;
  opts.format = "dot";
  Ran dot = call(runGraph, opts);
  EXPECT_EQ(dot.rc, 0);
  EXPECT_EQ(dot.out.rfind("digraph \"f\" {\n", 0), 0u) << dot.out;
  EXPECT_NE(dot.out.find("\"%a\" -> \"%0\" [label=\"%a 2xf32\"];"),
            std::string::npos)
      << dot.out;
  EXPECT_NE(dot.out.find("color=red"), std::string::npos);
  opts.format = "html";
  Ran html = call(runGraph, opts);
  EXPECT_EQ(html.rc, 0);
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
  // The page carries its layout library and renderer: nothing is fetched.
  EXPECT_NE(html.out.find("TosaGraph.mount("), std::string::npos);
  EXPECT_NE(html.out.find("elk"), std::string::npos);
  EXPECT_EQ(html.out.find("<script src"), std::string::npos);
  EXPECT_EQ(html.out.find("</script", html.out.find("tosa-graph-model")),
            html.out.find("</script>\n<script>\nconst text = id =>"));
}

TEST(GraphCommand, Errors) {
  TempFile f(kRefinable);
  GraphOptions opts;
  opts.files = {f.path()};
  opts.format = "png";
  Ran bad = call(runGraph, opts);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("'png'"), std::string::npos) << bad.err;
  opts.format = "";
  opts.function = "@nope";
  Ran nope = call(runGraph, opts);
  EXPECT_EQ(nope.rc, 2);
  EXPECT_EQ(nope.err.rfind("tosa-lsp: error: no function @nope in ", 0), 0u)
      << nope.err;
  // A file that does not parse: no function, and the parse error said.
  TempFile broken("func.func @f(%a: tensor<2xf32>) {\n  %0 = tosa.add %a\n}\n");
  opts.files = {broken.path()};
  opts.function.reset();
  Ran parse = call(runGraph, opts);
  EXPECT_EQ(parse.rc, 2);
  EXPECT_NE(parse.err.find("no function in"), std::string::npos) << parse.err;
  EXPECT_NE(parse.err.find("errors; the first at 2:"), std::string::npos)
      << parse.err;
  // svg without node: a clear error, exit 1.
  opts.files = {f.path()};
  opts.format = "svg";
  opts.node = "/nonexistent/node";
  Ran svg = call(runGraph, opts);
  EXPECT_EQ(svg.rc, 1);
  EXPECT_NE(svg.err.find("node failed"), std::string::npos) << svg.err;
}

TEST(LowerCommand, NamesAreCheckedAgainstTheLoweringsTable) {
  TempFile f(kRefinable);
  LowerCommandOptions opts;
  opts.files = {f.path()};
  opts.stage = "asm";
  Ran stage = call(runLower, opts);
  EXPECT_EQ(stage.rc, 2);
  EXPECT_EQ(stage.err.rfind("tosa-lsp: error: unknown stage 'asm' (expected "
                            "linalg, vector, loops, llvm)\n",
                            0),
            0u);
  opts.stage = "linalg";
  opts.mode = "fastest";
  Ran mode = call(runLower, opts);
  EXPECT_EQ(mode.rc, 2);
  EXPECT_NE(mode.err.find("unknown mode 'fastest'"), std::string::npos);
  opts.mode = "upstream";
  opts.function = "h";
  Ran lowered = call(runLower, opts);
  EXPECT_EQ(lowered.rc, 0) << lowered.err;
  EXPECT_NE(lowered.out.find("linalg."), std::string::npos) << lowered.out;
}

TEST(CompileCommand, OptionErrorsBeforeAnyWork) {
  TempFile f(kRefinable);
  CompileCommandOptions opts;
  opts.files = {f.path()};
  Ran noOut = call(runCompile, opts);
  EXPECT_EQ(noOut.rc, 2);
  EXPECT_NE(noOut.err.find("compile: expected -o OUTPUT"), std::string::npos);
  opts.output = f.path() + ".o";
  opts.force = opts.newName = true;
  EXPECT_NE(call(runCompile, opts)
                .err.find("compile: --force and --new-name exclude each other"),
            std::string::npos);
  opts.force = opts.newName = false;
  opts.optLevel = 7;
  EXPECT_NE(
      call(runCompile, opts).err.find("-O7: the optimisation level is 0 to 3"),
      std::string::npos);
  opts.optLevel = 2;
  opts.streamingStores = "lots";
  EXPECT_NE(call(runCompile, opts).err.find("not 'lots'"), std::string::npos);
  opts.streamingStores = "auto";
  opts.emit = "exe";
  EXPECT_NE(call(runCompile, opts).err.find("unknown emit kind 'exe'"),
            std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(opts.output));
}

TEST(RunCommand, InputsOrSeed) {
  TempFile f(kBroken);
  RunCommandOptions opts;
  opts.files = {f.path()};
  opts.function = "@f";
  Ran neither = call(runRun, opts);
  EXPECT_EQ(neither.rc, 2);
  EXPECT_NE(neither.err.find("run: give either --inputs JSON or --random SEED"),
            std::string::npos);
  opts.inputs = "[]";
  opts.seed = 1;
  EXPECT_EQ(call(runRun, opts).rc, 2);
  opts.inputs.reset();
  opts.maxBytes = "0";
  EXPECT_NE(call(runRun, opts).err.find("--max-bytes takes a positive size"),
            std::string::npos);
  opts.maxBytes.reset();
  opts.format = "text";
  EXPECT_NE(
      call(runRun, opts).err.find("unknown format 'text' (expected json)"),
      std::string::npos);
  opts.format = "";
  opts.function.reset();
  EXPECT_NE(call(runRun, opts).err.find("run: expected FILE and --function F"),
            std::string::npos);
}

} // namespace
