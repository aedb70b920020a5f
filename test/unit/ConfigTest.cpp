//===- ConfigTest.cpp - .tosa-lsp.json parsing ----------------------------===//

#include "Config.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

TEST(Config, DefaultsIncludeTestAndTfOps) {
  Config c;
  EXPECT_TRUE(c.isBroadcastableName("test.broadcastable"));
  EXPECT_TRUE(c.isBroadcastableName("tfl.add"));
  EXPECT_TRUE(c.isBroadcastableName("tf.AddV2"));
  EXPECT_FALSE(c.isBroadcastableName("tfl.conv_2d"));
}

TEST(Config, ExtraOpsAndOptions) {
  std::string err;
  auto c = parseConfig(R"({"extraBroadcastableOps": ["my.add"],
                           "hints": {"inferredShapes": false},
                           "info": {"refinable": false}})",
                       err);
  ASSERT_TRUE(c) << err;
  EXPECT_TRUE(c->isBroadcastableName("my.add"));
  EXPECT_TRUE(c->isBroadcastableName("tfl.add"));
  EXPECT_FALSE(c->hints.inferredShapes);
  EXPECT_TRUE(c->hints.runtimeChecks);
  EXPECT_FALSE(c->info.refinable);
}

TEST(Config, BroadcastableOpsReplacesDefaults) {
  std::string err;
  auto c = parseConfig(R"({"broadcastableOps": ["my.add"]})", err);
  ASSERT_TRUE(c) << err;
  EXPECT_FALSE(c->isBroadcastableName("tfl.add"));
}

TEST(Config, LenientDialects) {
  Config d;
  EXPECT_TRUE(d.lenient.allows("util"));
  std::string err;
  auto some = parseConfig(R"({"lenientDialects": ["util", "check"]})", err);
  ASSERT_TRUE(some) << err;
  EXPECT_TRUE(some->lenient.allows("check"));
  EXPECT_FALSE(some->lenient.allows("flow"));
  EXPECT_NE(some->fingerprint(), d.fingerprint());
  auto off = parseConfig(R"({"lenientDialects": false})", err);
  ASSERT_TRUE(off) << err;
  EXPECT_FALSE(off->lenient.allows("util"));
  EXPECT_FALSE(parseConfig(R"({"lenientDialects": "util"})", err));
  EXPECT_NE(err.find("lenientDialects must be"), std::string::npos) << err;
}

TEST(Config, BadJsonNamesThePosition) {
  std::string err;
  EXPECT_FALSE(parseConfig("{\"hints\": {", err));
  EXPECT_NE(err.find("invalid JSON"), std::string::npos) << err;
  EXPECT_NE(err.find("line 1, column 12"), std::string::npos) << err;
}

TEST(Config, UnknownKeysAreErrors) {
  std::string err;
  EXPECT_FALSE(parseConfig(R"({"hint": {}})", err));
  EXPECT_NE(err.find("unknown key 'hint'"), std::string::npos) << err;
  EXPECT_FALSE(parseConfig(R"({"hints": {"inlay": true}})", err));
  EXPECT_NE(err.find("unknown key 'inlay' in hints"), std::string::npos) << err;
}

TEST(Config, WrongTypes) {
  std::string err;
  EXPECT_FALSE(parseConfig(R"({"hints": {"inferredShapes": 1}})", err));
  EXPECT_NE(err.find("true or false"), std::string::npos) << err;
  EXPECT_FALSE(parseConfig(R"({"extraBroadcastableOps": "tfl.add"})", err));
  EXPECT_FALSE(parseConfig(R"({"extraBroadcastableOps": ["noDot"]})", err));
  EXPECT_FALSE(parseConfig("[]", err));
}

TEST(Config, CompileLimitsAreBounded) {
  std::string err;
  // 2^32 used to wrap to 0 (no time at all); 0 MB meant "no limit".
  for (const char *text :
       {R"({"compile": {"timeoutSeconds": 4294967296}})",
        R"({"compile": {"timeoutSeconds": 0}})",
        R"({"compile": {"timeoutSeconds": 3601}})",
        R"({"compile": {"timeoutSeconds": -5}})",
        R"({"compile": {"timeoutSeconds": 1.5}})",
        R"({"compile": {"memoryLimitMB": 0}})",
        R"({"compile": {"memoryLimitMB": 63}})",
        R"({"compile": {"memoryLimitMB": 65537}})",
        R"({"compile": {"memoryLimitMB": 18446744073709551615}})"}) {
    EXPECT_FALSE(parseConfig(text, err)) << text;
    EXPECT_NE(err.find("must be an integer from"), std::string::npos) << err;
  }
  auto c = parseConfig(
      R"({"compile": {"timeoutSeconds": 3600, "memoryLimitMB": 64}})", err);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->compile.timeoutSeconds, 3600u);
  EXPECT_EQ(c->compile.memoryLimitMB, 64u);
  c = parseConfig(
      R"({"compile": {"timeoutSeconds": 1, "memoryLimitMB": 65536}})", err);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->compile.timeoutSeconds, 1u);
}

TEST(Config, OutputDirRootFollowsWhoSetIt) {
  std::string err;
  Config project;
  project.compile.outputDir = "out";
  project.compile.outputDirRoot = "/repo";
  // Editor settings that set outputDir own it; others keep the project's.
  auto c = parseConfig(R"({"compile": {"outputDir": "/abs"}})", err, project);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->compile.outputDirRoot, "");
  c = parseConfig(R"({"compile": {"overwrite": true}})", err, project);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->compile.outputDirRoot, "/repo");
  EXPECT_TRUE(c->compile.overwrite);
}

// The nesting check runs on every protocol message before any recursive JSON
// code: brackets inside strings never count, whatever the escapes before
// the closing quote.
TEST(Config, DeepJsonNestingSkipsStrings) {
  using tosa_lsp::findDeepJsonNesting;
  EXPECT_EQ(findDeepJsonNesting("[[[", 2), std::optional<size_t>(2));
  EXPECT_EQ(findDeepJsonNesting("[[]]", 2), std::nullopt);
  EXPECT_EQ(findDeepJsonNesting(R"(["[[[["])", 2), std::nullopt);
  // An escaped quote does not end the string; an escaped backslash does not
  // escape the quote after it.
  EXPECT_EQ(findDeepJsonNesting(R"(["\"[[[["])", 2), std::nullopt);
  EXPECT_EQ(findDeepJsonNesting(R"(["\\", [[ ])", 2), std::optional<size_t>(8));
  EXPECT_EQ(findDeepJsonNesting(R"(["\\\"[[", [[ ])", 2),
            std::optional<size_t>(12));
  EXPECT_EQ(findDeepJsonNesting(R"({"a":"", "b":[[]]})", 2),
            std::optional<size_t>(14));
  EXPECT_EQ(findDeepJsonNesting(R"(["unterminated [[[[)", 2), std::nullopt);
}
