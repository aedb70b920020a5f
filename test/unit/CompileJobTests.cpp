//===- CompileJobTests.cpp - compilation in a child process ---------------===//
//
// Runs the real `tosa-lsp compile` (TOSA_LSP_BINARY) as the server does.
//
//===----------------------------------------------------------------------===//

#include "CompileJob.h"
#include "OutputFiles.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

const char *kModel =
    "func.func @add(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> "
    "tensor<3xf32>\n"
    "  return %0 : tensor<3xf32>\n}\n";

CompileJob jobIn(const std::string &dir) {
  CompileJob job;
  job.self = TOSA_LSP_BINARY;
  job.text = kModel;
  job.name = "model.mlir";
  job.function = "add";
  job.emit = "llvm-ir";
  job.outputDir = dir;
  return job;
}

TEST(CompileJob, WritesOutputsAndReportsSteps) {
  TempDir dir("compile-job-test");
  ASSERT_FALSE(dir.error());
  std::vector<std::string> steps;
  std::atomic<bool> cancel{false};
  CompileJobResult r = runCompileJob(
      jobIn(dir.path()), [&](const std::string &s) { steps.push_back(s); },
      cancel);
  ASSERT_TRUE(r.ok) << r.error;
  llvm::StringRef output = r.result.output;
  EXPECT_TRUE(output.ends_with("model_add.ll")) << output.str();
  EXPECT_TRUE(llvm::sys::fs::exists(output));
  EXPECT_TRUE(llvm::StringRef(r.result.header).ends_with("model_add.h"))
      << r.result.header;
  EXPECT_GT(r.result.bytes, 0u);
  EXPECT_NE(r.result.log.find("\n"), std::string::npos) << r.result.log;
  EXPECT_FALSE(steps.empty());
}

TEST(CompileJob, ThreadsReachTheChild) {
  // compile.threads: the child compiles with --threads=N (its log says so
  // before lowering; which kernels then use them: kernels-threads.mlir).
  TempDir dir("compile-job-test");
  ASSERT_FALSE(dir.error());
  CompileJob job = jobIn(dir.path());
  job.threads = 3;
  std::vector<std::string> steps;
  std::atomic<bool> cancel{false};
  CompileJobResult r = runCompileJob(
      job, [&](const std::string &s) { steps.push_back(s); }, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.result.log.find("threads: 3 for matmuls"), std::string::npos)
      << r.result.log;
  job.threads = 1;
  r = runCompileJob(job, [](const std::string &) {}, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.result.log.find("threads:"), std::string::npos) << r.result.log;
}

TEST(CompileJob, CancelStopsTheChild) {
  TempDir dir("compile-job-test");
  std::atomic<bool> cancel{true};
  CompileJobResult r =
      runCompileJob(jobIn(dir.path()), [](const std::string &) {}, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.error, "compilation cancelled");
}

TEST(CompileJob, FailuresBecomeMessages) {
  TempDir dir("compile-job-test");
  std::atomic<bool> cancel{false};
  CompileJob job = jobIn(dir.path());
  job.function = "nope";
  CompileJobResult r = runCompileJob(job, [](const std::string &) {}, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("compilation failed"), std::string::npos) << r.error;

  job.self = "/nonexistent/tosa-lsp";
  r = runCompileJob(job, [](const std::string &) {}, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot start the compiler process"),
            std::string::npos)
      << r.error;
}

} // namespace
