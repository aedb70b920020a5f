//===- TosaServerTestSupport.h - driving TosaServer in tests ----*- C++ -*-===//
//
// What the TosaServer tests share: sample documents, a recorder of what the
// server publishes, options, and a wait for a callback's answer. Each test
// file gets its own copy (an unnamed namespace, as before the split).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TEST_UNIT_TOSASERVERTESTSUPPORT_H
#define TOSA_LSP_TEST_UNIT_TOSASERVERTESTSUPPORT_H

#include "ExpectedChecks.h"
#include "TosaServer.h"

#include "Choices.h"
#include "TestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <thread>

using namespace tosa_lsp;
namespace lsp = llvm::lsp;

namespace {

// `%0 = tosa.abs` declared 4x3 where 1x3 is inferred: one error, one fix.
[[maybe_unused]] const char *kWrongResult =
    "func.func @f(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {\n"
    "  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
    "  return %0 : tensor<4x3xf32>\n}\n";
// Dynamic operands: informational findings only (refinable result,
// runtime check, dynamic-to-static).
[[maybe_unused]] const char *kDynamic =
    "func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> "
    "tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n"
    "func.func @h(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {\n"
    "  %0 = tosa.add %a, %b : (tensor<1xf32>, tensor<3xf32>) -> "
    "tensor<?xf32>\n"
    "  return %0 : tensor<?xf32>\n}\n";

struct Recorder : TosaServer::Callbacks {
  std::mutex mu;
  std::vector<Scheduler::SnapshotPtr> published;
  std::vector<std::vector<Diagnostic>> extras; // one per publish
  std::vector<std::string> errors;
  void onDiagnostics(Scheduler::SnapshotPtr s,
                     const std::vector<Diagnostic> &extra) override {
    std::lock_guard<std::mutex> lock(mu);
    published.push_back(std::move(s));
    extras.push_back(extra);
  }
  void onError(const std::string &message) override {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(message);
  }
  /// Versions published clean on MLIR's verdict (onCleanDiagnostics).
  std::vector<std::pair<std::string, int64_t>> clean;
  void onCleanDiagnostics(const std::string &uri, int64_t version) override {
    std::lock_guard<std::mutex> lock(mu);
    clean.push_back({uri, version});
  }
  std::vector<std::string> codes() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    if (!published.empty())
      for (const Diagnostic &d : published.back()->analysis.diagnostics)
        out.push_back(d.code);
    return out;
  }
};

[[maybe_unused]] TosaServer::Options syncOptions() {
  TosaServer::Options o;
  o.sync = true;
  return o;
}

/// Work on a pool of two threads, analysed as soon as it changes.
[[maybe_unused]] TosaServer::Options pooledOptions() {
  TosaServer::Options o;
  o.debounce = std::chrono::milliseconds(0);
  o.workers = 2;
  return o;
}

/// `o` where only requests and the fill infer, each on a parse of its own
/// (not the analysis on its IR): how functions the analysis does not infer
/// (a cut function's, refine-all edits) are inferred.
[[maybe_unused]] TosaServer::Options reparsing(TosaServer::Options o) {
  o.inferInAnalysis = false;
  return o;
}

/// pooledOptions without the background inference nor the analysis': every
/// hover in a function not inferred yet infers it.
[[maybe_unused]] TosaServer::Options requestsInferOptions() {
  TosaServer::Options o = reparsing(pooledOptions());
  o.backgroundInference = false;
  return o;
}

/// Calls `fn(callback)` and returns what the callback got (sync or async).
template <typename T, typename Fn> llvm::Expected<T> await(Fn fn) {
  auto promise = std::make_shared<std::promise<llvm::Expected<T>>>();
  std::future<llvm::Expected<T>> future = promise->get_future();
  fn([promise](llvm::Expected<T> r) { promise->set_value(std::move(r)); });
  EXPECT_EQ(future.wait_for(std::chrono::seconds(60)),
            std::future_status::ready);
  return future.get();
}

[[maybe_unused]] std::string errorText(llvm::Error e) {
  std::string out;
  llvm::handleAllErrors(
      std::move(e), [&](const lsp::LSPError &l) { out = l.message; },
      [&](const llvm::ErrorInfoBase &b) { out = b.message(); });
  return out;
}

/// A directory with a .tosa-lsp.json, removed afterwards.
struct Project {
  llvm::SmallString<128> dir;
  Project() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tosa-server-test", dir));
  }
  ~Project() { llvm::sys::fs::remove_directories(dir); }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeConfig(const std::string &text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(file(".tosa-lsp.json"), ec);
    os << text;
  }
};

/// The actions that repair something: upstream's "Add expected-*
/// diagnostic checks", offered on every MLIR diagnostic, left out.
[[maybe_unused]] size_t repairs(const CodeActions &a) {
  return std::count_if(
      a.items.begin(), a.items.end(),
      [](const CodeActionItem &i) { return i.title != kExpectedChecksTitle; });
}
[[maybe_unused]] void dropExpectedChecks(llvm::Expected<CodeActions> &a) {
  if (a)
    llvm::erase_if(a->items, [](const CodeActionItem &i) {
      return i.title == kExpectedChecksTitle;
    });
}

[[maybe_unused]] bool contains(const std::vector<std::string> &v,
                               const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// @g's abs is declared 3x5 where propagation gives 3x2: mlir-opt-22
// accepts the file, its --tosa-infer-shapes output fails to verify.
[[maybe_unused]] const char *kContradiction =
    "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n"
    "func.func @g(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {\n"
    "  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
    "(tensor<2x3xf32>) -> tensor<?x?xf32>\n"
    "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>\n"
    "  return %1 : tensor<3x5xf32>\n"
    "}\n";
} // namespace

#endif // TOSA_LSP_TEST_UNIT_TOSASERVERTESTSUPPORT_H
