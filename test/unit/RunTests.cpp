//===- RunTests.cpp - `run`'s memref descriptors --------------------------===//
//
// Results are read through MLIR's StridedMemRefType/DynamicMemRefType; these
// tests fail when a descriptor field (offset, sizes, strides) or the layout
// of several result descriptors is read wrong.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Lowering.h"
#include "Run.h"
#include "RunMemRef.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;
using detail::ElementKind;

namespace {

std::string compact(const llvm::json::Value &v) {
  return llvm::formatv("{0}", v).str();
}

llvm::Expected<RunResult> run(const std::string &text,
                              const std::string &function,
                              const std::string &inputs) {
  RunOptions options;
  options.function = function;
  options.inputs = inputs;
  return runFunction(text, "t.mlir", options);
}

/// The "results" of a successful run, compact.
std::string runResults(const std::string &text, const std::string &function,
                       const std::string &inputs) {
  llvm::Expected<RunResult> r = run(text, function, inputs);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return "";
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(r->json);
  if (!json) {
    ADD_FAILURE() << llvm::toString(json.takeError());
    return "";
  }
  const llvm::json::Value *results = json->getAsObject()->get("results");
  return results ? compact(*results) : "";
}

/// The error of a failed run, every line.
std::string runError(const std::string &text, const std::string &function,
                     const std::string &inputs) {
  llvm::Expected<RunResult> r = run(text, function, inputs);
  if (r) {
    ADD_FAILURE() << "ran: " << r->json;
    return "";
  }
  return llvm::toString(r.takeError());
}

TEST(RunMemRef, HonoursOffsetAndStrides) {
  int32_t buffer[12];
  for (int32_t i = 0; i < 12; ++i)
    buffer[i] = i;
  // A 2x3 view from element 1, column-major with a padded column of 4.
  StridedMemRefType<int32_t, 2> m{buffer, buffer, 1, {2, 3}, {1, 4}};
  std::optional<llvm::json::Value> v =
      detail::memrefToJSON(ElementKind::I32, 2, &m);
  ASSERT_TRUE(v);
  EXPECT_EQ(compact(*v), "[[1,5,9],[2,6,10]]");
}

TEST(RunMemRef, RankZeroAndBytesOfI1) {
  float floats[3] = {0.5f, 1.5f, 2.5f};
  StridedMemRefType<float, 0> scalar{floats, floats, 2};
  std::optional<llvm::json::Value> v =
      detail::memrefToJSON(ElementKind::F32, 0, &scalar);
  ASSERT_TRUE(v);
  EXPECT_EQ(compact(*v), "2.5");

  int8_t bytes[3] = {0, 2, 1};
  StridedMemRefType<int8_t, 1> bools{bytes, bytes, 0, {3}, {1}};
  v = detail::memrefToJSON(ElementKind::I1, 1, &bools);
  ASSERT_TRUE(v);
  EXPECT_EQ(compact(*v), "[false,true,true]");
}

TEST(RunMemRef, RankAboveTheLimitIsNoValue) {
  StridedMemRefType<float, detail::kMaxRunRank> m{};
  EXPECT_TRUE(detail::memrefToJSON(ElementKind::F32, detail::kMaxRunRank, &m));
  EXPECT_FALSE(
      detail::memrefToJSON(ElementKind::F32, detail::kMaxRunRank + 1, &m));
}

// Descriptors of ranks 2, 0 and 1 back to back: a wrong size for any of
// them shifts the ones after it.
TEST(Run, SeveralResultsOfMixedRanks) {
  const char *text =
      "func.func @multi(%a: tensor<2x3xi32>, %b: tensor<i32>, %c: "
      "tensor<3xi1>) -> (tensor<2x3xi32>, tensor<i32>, tensor<3xi1>, "
      "tensor<1x3xi32>) {\n"
      "  %s = tosa.const_shape {values = dense<[1, 1]> : tensor<2xindex>} : "
      "() -> !tosa.shape<2>\n"
      "  %r = tosa.reshape %b, %s : (tensor<i32>, !tosa.shape<2>) -> "
      "tensor<1x1xi32>\n"
      "  %0 = tosa.add %a, %r : (tensor<2x3xi32>, tensor<1x1xi32>) -> "
      "tensor<2x3xi32>\n"
      "  %1 = tosa.logical_not %c : (tensor<3xi1>) -> tensor<3xi1>\n"
      "  %2 = tosa.sub %r, %a : (tensor<1x1xi32>, tensor<2x3xi32>) -> "
      "tensor<2x3xi32>\n"
      "  %3 = tosa.reduce_sum %2 {axis = 0 : i32} : (tensor<2x3xi32>) -> "
      "tensor<1x3xi32>\n"
      "  return %0, %b, %1, %3 : tensor<2x3xi32>, tensor<i32>, tensor<3xi1>, "
      "tensor<1x3xi32>\n"
      "}\n";
  EXPECT_EQ(
      runResults(text, "multi", "[[[1,2,3],[4,5,6]], 10, [true,false,true]]"),
      "[{\"data\":[[11,12,13],[14,15,16]],\"shape\":[2,3]},"
      "{\"data\":10,\"shape\":[]},"
      "{\"data\":[false,true,false],\"shape\":[3]},"
      "{\"data\":[[15,13,11]],\"shape\":[1,3]}]");
}

// `return %0, %0`: both results are one buffer. Freeing it before the
// second result was read put the allocator's free-list pointers in its
// first 8 bytes.
TEST(Run, AliasedResultsAreReadBeforeTheBufferIsFreed) {
  const char *text =
      "func.func @f(%a: tensor<64x25xi16>, %b: tensor<64x25xi16>) -> "
      "(tensor<64x25xi16>, tensor<64x25xi16>) {\n"
      "  %0 = tosa.add %a, %b : (tensor<64x25xi16>, tensor<64x25xi16>) -> "
      "tensor<64x25xi16>\n"
      "  return %0, %0 : tensor<64x25xi16>, tensor<64x25xi16>\n"
      "}\n";
  std::string a = "[", sum = "[";
  for (int i = 0; i < 64; ++i) {
    a += i ? ",[" : "[";
    sum += i ? ",[" : "[";
    for (int j = 0; j < 25; ++j) {
      a += (j ? "," : "") + std::to_string(i * 25 + j);
      sum += (j ? "," : "") + std::to_string(2 * (i * 25 + j));
    }
    a += "]";
    sum += "]";
  }
  a += "]";
  sum += "]";
  std::string one = "{\"data\":" + sum + ",\"shape\":[64,25]}";
  RunOptions options;
  options.function = "f";
  options.inputs = "[" + a + "," + a + "]";
  options.mode = LowerMode::Upstream;
  llvm::Expected<RunResult> r = runFunction(text, "t.mlir", options);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(r->json);
  ASSERT_TRUE(static_cast<bool>(json)) << llvm::toString(json.takeError());
  EXPECT_EQ(compact(*json->getAsObject()->get("results")),
            "[" + one + "," + one + "]");
}

// JSON has no NaN or infinity: results print them as strings (a bare
// `-nan` made the whole output unparsable), and inputs take them back.
TEST(Run, NaNAndInfinityAreStringsBothWays) {
  const char *text =
      "func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %0 = tosa.log %a : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = tosa.reciprocal %a : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0, %1 : tensor<4xf32>, tensor<4xf32>\n"
      "}\n"
      "func.func @twice(%a: tensor<4xf64>) -> tensor<4xf64> {\n"
      "  %0 = tosa.add %a, %a : (tensor<4xf64>, tensor<4xf64>) -> "
      "tensor<4xf64>\n"
      "  return %0 : tensor<4xf64>\n"
      "}\n";
  EXPECT_EQ(runResults(text, "f", "[[-1, 0, 1, 4]]"),
            "[{\"data\":[\"nan\",\"-inf\",0,1.3862943649291992],"
            "\"shape\":[4]},"
            "{\"data\":[-1,\"inf\",1,0.25],\"shape\":[4]}]");
  EXPECT_EQ(runResults(text, "twice", "[[\"nan\", \"inf\", \"-inf\", 1.5]]"),
            "[{\"data\":[\"nan\",\"inf\",\"-inf\",3],\"shape\":[4]}]");
  EXPECT_EQ(runError(text, "twice", "[[\"NaN\", 1, 2, 3]]"),
            "argument #0 at [0]: inputs must be numbers, \"nan\", \"inf\", "
            "\"-inf\", booleans or nested lists of them");
}

// A C cast wrapped 2147483648 to -2147483648 in i32 and 300 to 44 in i8,
// and cut 3.7 to 3: integer inputs must be integers in range, named by
// argument and index when not.
TEST(Run, IntegerInputsMustBeIntegersInRange) {
  const char *text =
      "func.func @f(%a: tensor<2xi32>, %b: tensor<2x2xi8>, %c: tensor<2xi1>) "
      "-> (tensor<2xi32>, tensor<2x2xi8>, tensor<2xi1>) {\n"
      "  return %a, %b, %c : tensor<2xi32>, tensor<2x2xi8>, tensor<2xi1>\n"
      "}\n";
  EXPECT_EQ(runResults(text, "f",
                       "[[-2147483648, 2147483647], [[-128, 127], [0, 1]], "
                       "[true, 0]]"),
            "[{\"data\":[-2147483648,2147483647],\"shape\":[2]},"
            "{\"data\":[[-128,127],[0,1]],\"shape\":[2,2]},"
            "{\"data\":[true,false],\"shape\":[2]}]");
  EXPECT_EQ(runError(text, "f", "[[2147483648, 0], [[0, 0], [0, 0]], [0, 1]]"),
            "argument #0 at [0]: 2147483648 is out of range for i32 "
            "(-2147483648 to 2147483647)");
  EXPECT_EQ(runError(text, "f", "[[0, 3.7], [[0, 0], [0, 0]], [0, 1]]"),
            "argument #0 at [1]: 3.7 is not an integer (i32)");
  EXPECT_EQ(runError(text, "f", "[[0, 0], [[0, 0], [300, 0]], [0, 1]]"),
            "argument #1 at [1, 0]: 300 is out of range for i8 (-128 to 127)");
  EXPECT_EQ(runError(text, "f", "[[0, 0], [[0, 0], [0, 0]], [0, 2]]"),
            "argument #2 at [1]: 2 is not a boolean (i1 takes true, false, 0 "
            "or 1)");
}

TEST(Run, RankZeroResult) {
  const char *text =
      "func.func @scalar(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "  return %0 : tensor<f32>\n"
      "}\n";
  EXPECT_EQ(runResults(text, "scalar", "[1.5, 2.25]"),
            "[{\"data\":3.75,\"shape\":[]}]");
}

TEST(Run, HighestRank) {
  const char *text =
      "func.func @r8(%a: tensor<1x1x1x1x1x1x2x3xi16>) -> "
      "tensor<1x1x1x1x1x1x2x3xi16> {\n"
      "  %0 = tosa.add %a, %a : (tensor<1x1x1x1x1x1x2x3xi16>, "
      "tensor<1x1x1x1x1x1x2x3xi16>) -> tensor<1x1x1x1x1x1x2x3xi16>\n"
      "  return %0 : tensor<1x1x1x1x1x1x2x3xi16>\n"
      "}\n";
  EXPECT_EQ(runResults(text, "r8", "[[[[[[[[[1,2,3],[4,5,6]]]]]]]]]"),
            "[{\"data\":[[[[[[[[2,4,6],[8,10,12]]]]]]]],"
            "\"shape\":[1,1,1,1,1,1,2,3]}]");
}

TEST(Run, RankAboveTheLimitIsAnError) {
  const char *argument = "func.func @r9(%a: tensor<1x1x1x1x1x1x1x1x2xf32>) -> "
                         "tensor<1x1x1x1x1x1x1x1x2xf32> {\n"
                         "  return %a : tensor<1x1x1x1x1x1x1x1x2xf32>\n"
                         "}\n";
  EXPECT_EQ(runError(argument, "r9", "[[[[[[[[[[1,2]]]]]]]]]]"),
            "argument #0 has rank 9; run supports ranks up to 8");
  const char *result =
      "func.func @r9(%a: tensor<2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32> {\n"
      "  %s = tosa.const_shape {values = dense<[1, 1, 1, 1, 1, 1, 1, 1, 2]> "
      ": tensor<9xindex>} : () -> !tosa.shape<9>\n"
      "  %0 = tosa.reshape %a, %s : (tensor<2xf32>, !tosa.shape<9>) -> "
      "tensor<1x1x1x1x1x1x1x1x2xf32>\n"
      "  return %0 : tensor<1x1x1x1x1x1x1x1x2xf32>\n"
      "}\n";
  EXPECT_EQ(runError(result, "r9", "[[1,2]]"),
            "result #0 has rank 9; run supports ranks up to 8");
}

// Library errors describe the thing; the option it is about is a topic the
// CLI turns into its flag. No "tosa-lsp:" or "error:" in them.
TEST(Run, ErrorsHaveTopicsNotFlags) {
  const char *text = "func.func @add(%a: tensor<2xf32>, %b: tensor<2xf32>) -> "
                     "tensor<2xf32> {\n"
                     "  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<2xf32>) "
                     "-> tensor<2xf32>\n"
                     "  return %0 : tensor<2xf32>\n"
                     "}\n";
  auto failure = [&](const RunOptions &options) {
    llvm::Expected<RunResult> r = runFunction(text, "t.mlir", options);
    std::pair<std::optional<ErrorTopic>, std::string> out;
    if (r) {
      ADD_FAILURE() << "ran: " << r->json;
      return out;
    }
    llvm::handleAllErrors(r.takeError(), [&](const llvm::ErrorInfoBase &e) {
      out = {topicOf(e), e.message()};
    });
    return out;
  };
  RunOptions options;
  options.function = "add";
  options.inputs = "[[1, 2]]";
  EXPECT_EQ(failure(options),
            std::make_pair(std::optional<ErrorTopic>(ErrorTopic::Inputs),
                           std::string("@add takes 2 arguments, given 1")));
  options.inputs = "[1, 2";
  auto [topic, message] = failure(options);
  EXPECT_EQ(topic, ErrorTopic::Inputs);
  EXPECT_EQ(message.rfind("the inputs are not valid JSON: ", 0), 0u) << message;
  options.inputs.clear();
  options.shapes = {"2y"};
  EXPECT_EQ(failure(options),
            std::make_pair(std::optional<ErrorTopic>(ErrorTopic::Shapes),
                           std::string("bad shape '2y' for argument #0, "
                                       "expected e.g. 2x3")));
  options.function.clear();
  EXPECT_EQ(failure(options).first, ErrorTopic::Function);
  options.function = "nope";
  EXPECT_EQ(failure(options),
            std::make_pair(std::optional<ErrorTopic>(),
                           std::string("no function @nope in t.mlir")));
}

// MLIR's diagnostics stay data, at file positions (the second section
// starts on line 3), in mlir-opt's form when printed.
TEST(Lowering, DiagnosticsAreDataAtFilePositions) {
  const char *text = "func.func @ok() { return }\n"
                     "// -----\n"
                     "func.func @bad(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
                     "  return %a : tensor<2xf32>\n"
                     "}\n";
  llvm::Expected<LowerResult> r = lower(text, "t.mlir", LowerOptions());
  ASSERT_FALSE(static_cast<bool>(r));
  std::vector<SourceDiagnostic> diags;
  llvm::handleAllErrors(
      r.takeError(), [&](const SourceErrors &e) { diags = e.diagnostics(); },
      [&](const llvm::ErrorInfoBase &e) {
        ADD_FAILURE() << "not a diagnostic: " << e.message();
      });
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, "t.mlir");
  EXPECT_EQ(diags[0].line, 4u);
  EXPECT_EQ(diags[0].column, 3u);
  EXPECT_EQ(diags[0].str().rfind("t.mlir:4:3: error: ", 0), 0u)
      << diags[0].str();
}

// Matmul and conv2d through the kernels (lowering/Kernels.cpp), where the
// host has FMA vectors: the vector stage holds FMAs and `run` (the JIT)
// gives the exact products of small integers (every partial sum is exact in
// f32, whatever the summation order), also for sizes that are not
// multiples of the register tile (padding) and a strided convolution.
TEST(RunKernels, MatmulAndConvAreExactOnSmallIntegers) {
  const int m = 9, k = 3, n = 17;
  std::string a = "[[", b = "[[";
  std::vector<std::vector<int>> av(m, std::vector<int>(k)),
      bv(k, std::vector<int>(n));
  for (int i = 0; i < m; ++i) {
    a += std::string(i ? "," : "") + "[";
    for (int j = 0; j < k; ++j) {
      av[i][j] = (i * 7 + j * 3) % 5 - 2;
      a += std::string(j ? "," : "") + std::to_string(av[i][j]);
    }
    a += "]";
  }
  for (int i = 0; i < k; ++i) {
    b += std::string(i ? "," : "") + "[";
    for (int j = 0; j < n; ++j) {
      bv[i][j] = (i * 5 + j) % 7 - 3;
      b += std::string(j ? "," : "") + std::to_string(bv[i][j]);
    }
    b += "]";
  }
  a += "]]";
  b += "]]";
  std::string want = "[{\"data\":[[";
  for (int i = 0; i < m; ++i) {
    want += std::string(i ? "," : "") + "[";
    for (int j = 0; j < n; ++j) {
      int c = 0;
      for (int l = 0; l < k; ++l)
        c += av[i][l] * bv[l][j];
      want += std::string(j ? "," : "") + std::to_string(c);
    }
    want += "]";
  }
  want += "]],\"shape\":[1,9,17]}]";
  const std::string mm = R"(
func.func @mm(%a: tensor<1x9x3xf32>, %b: tensor<1x3x17xf32>) -> tensor<1x9x17xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x9x3xf32>, tensor<1x3x17xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x17xf32>
  return %r : tensor<1x9x17xf32>
})";
  std::string got = runResults(mm, "mm", "[" + a + "," + b + "]");
  // Whole numbers print as "3.0" or "3": compare the numbers.
  std::string digits;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == '.' && i + 1 < got.size() && got[i + 1] == '0'))
      digits += got[i];
    else
      ++i;
  EXPECT_EQ(digits, want);

  // 1x5x5x1 input of ones, 3x3 weights of ones, 16 output channels with
  // biases 0..15, pad 1, stride 2: 3x3 outputs, corners sum 4 taps, edges
  // 6, the centre 9.
  const std::string conv = R"(
func.func @conv(%x: tensor<1x5x5x1xf32>) -> tensor<1x3x3x16xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<16x3x3x1xf32>}> : () -> tensor<16x3x3x1xf32>
  %b = "tosa.const"() <{values = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32>}> : () -> tensor<16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x5x5x1xf32>, tensor<16x3x3x1xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x16xf32>
  return %r : tensor<1x3x3x16xf32>
})";
  std::string ones = "[[[[1],[1],[1],[1],[1]]";
  for (int i = 1; i < 5; ++i)
    ones += ",[[1],[1],[1],[1],[1]]";
  ones += "]]";
  llvm::Expected<RunResult> r = run(conv, "conv", "[" + ones + "]");
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(r->json);
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  const llvm::json::Array *res =
      json->getAsObject()->getArray("results")->front().getAsObject()->getArray(
          "data");
  const int taps[3][3] = {{4, 6, 4}, {6, 9, 6}, {4, 6, 4}};
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x)
      for (int f = 0; f < 16; ++f)
        EXPECT_EQ(*(*(*(*res)[0].getAsArray())[y].getAsArray())[x]
                       .getAsArray()
                       ->operator[](f)
                       .getAsNumber(),
                  taps[y][x] + f)
            << y << "," << x << "," << f;

  // The kernel path is what ran: its FMAs are in the vector stage.
  if (pipelineFor(LowerStage::Vector, LowerMode::Fast)
          .find("tosa-lsp-kernels") == std::string::npos)
    GTEST_SKIP() << "no FMA vectors on this host";
  LowerOptions options;
  options.stage = LowerStage::Vector;
  options.mode = LowerMode::Fast;
  for (const std::string *text : {&mm, &conv}) {
    llvm::Expected<LowerResult> lowered = lower(*text, "t.mlir", options);
    ASSERT_TRUE(bool(lowered)) << llvm::toString(lowered.takeError());
    EXPECT_NE(lowered->text.find("vector.fma"), std::string::npos)
        << lowered->text;
  }
}

} // namespace

TEST(Elided, FillSpellings) {
  std::optional<ElidedFill> zeros = parseElidedFill("zeros");
  ASSERT_TRUE(zeros);
  EXPECT_EQ(zeros->how, ElidedData::Zeros);
  std::optional<ElidedFill> seeded = parseElidedFill("random:42");
  ASSERT_TRUE(seeded);
  EXPECT_EQ(seeded->how, ElidedData::Random);
  EXPECT_EQ(seeded->seed, 42u);
  EXPECT_EQ(parseElidedFill("random")->seed, 0u);
  EXPECT_EQ(parseElidedFill("ones")->how, ElidedData::Ones);
  for (const char *bad :
       {"", "zero", "random:", "random:x", "random:-1", "ones:1", "Random"})
    EXPECT_FALSE(parseElidedFill(bad)) << bad;
}

// Elided weights: refused by default with the count and where, filled on
// request with values of every element type run takes.
TEST(Elided, RunRefusesOrFills) {
  const char *text =
      "func.func @f(%x: tensor<2xi8>) -> (tensor<2xi8>, tensor<2xf64>) {\n"
      "  %w = \"tosa.const\"() <{values = dense_resource<__elided__> : "
      "tensor<2xi8>}> : () -> tensor<2xi8>\n"
      "  %d = \"tosa.const\"() <{values = dense_resource<__elided__> : "
      "tensor<2xf64>}> : () -> tensor<2xf64>\n"
      "  %0 = tosa.add %x, %w : (tensor<2xi8>, tensor<2xi8>) -> "
      "tensor<2xi8>\n"
      "  return %0, %d : tensor<2xi8>, tensor<2xf64>\n"
      "}\n";
  RunOptions o;
  o.function = "f";
  o.inputs = "[[1, 2]]";
  llvm::Expected<RunResult> refused = runFunction(text, "e.mlir", o);
  ASSERT_FALSE(refused);
  std::string why = llvm::toString(refused.takeError());
  EXPECT_NE(why.find("e.mlir:2:8: error: 2 constants have elided data: "
                     "dense_resource<__elided__>"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("e.mlir:3:8: note: elided: tosa.const values : "
                     "tensor<2xf64>"),
            std::string::npos)
      << why;
  o.elided = *parseElidedFill("ones");
  llvm::Expected<RunResult> ones = runFunction(text, "e.mlir", o);
  ASSERT_TRUE(!!ones) << llvm::toString(ones.takeError());
  EXPECT_NE(ones->json.find("\"data\": [\n    2,\n    3\n   ]"),
            std::string::npos)
      << ones->json;
}
