//===- ConfigTest.cpp - .tosa-lsp.json parsing ----------------------------===//

#include "Config.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

/// The configuration `text` gives on top of `base`; a test failure naming
/// the error when there is none.
std::optional<Config> parsed(const std::string &text,
                             const Config &base = Config()) {
  llvm::Expected<Config> c = parseConfig(text, base);
  if (!c) {
    ADD_FAILURE() << llvm::toString(c.takeError());
    return std::nullopt;
  }
  return std::move(*c);
}

/// Why `text` is refused; a test failure when it is accepted.
std::string refusal(const std::string &text) {
  llvm::Expected<Config> c = parseConfig(text);
  if (c) {
    ADD_FAILURE() << "accepted: " << text;
    return "";
  }
  return llvm::toString(c.takeError());
}

} // namespace

TEST(Config, DefaultsIncludeTestAndTfOps) {
  Config c;
  EXPECT_TRUE(c.isBroadcastableName("test.broadcastable"));
  EXPECT_TRUE(c.isBroadcastableName("tfl.add"));
  EXPECT_TRUE(c.isBroadcastableName("tf.AddV2"));
  EXPECT_FALSE(c.isBroadcastableName("tfl.conv_2d"));
}

TEST(Config, ExtraOpsAndOptions) {
  auto c = parsed(R"({"extraBroadcastableOps": ["my.add"],
                      "hints": {"inferredShapes": false},
                      "info": {"refinable": false}})");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->isBroadcastableName("my.add"));
  EXPECT_TRUE(c->isBroadcastableName("tfl.add"));
  EXPECT_FALSE(c->hints.inferredShapes);
  EXPECT_TRUE(c->hints.runtimeChecks);
  EXPECT_FALSE(c->info.refinable);
  EXPECT_FALSE(c->info.publish);
  auto published = parsed(R"({"info": {"publish": true}})");
  ASSERT_TRUE(published);
  EXPECT_TRUE(published->info.publish);
  llvm::Expected<Config> wrongType = parseConfig(R"({"info": {"publish": 1}})");
  ASSERT_FALSE(bool(wrongType));
  llvm::consumeError(wrongType.takeError());
}

TEST(Config, BroadcastableOpsReplacesDefaults) {
  auto c = parsed(R"({"broadcastableOps": ["my.add"]})");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->isBroadcastableName("tfl.add"));
}

TEST(Config, LenientDialects) {
  Config d;
  EXPECT_TRUE(d.lenient.allows("util"));
  auto some = parsed(R"({"lenientDialects": ["util", "check"]})");
  ASSERT_TRUE(some);
  EXPECT_TRUE(some->lenient.allows("check"));
  EXPECT_FALSE(some->lenient.allows("flow"));
  EXPECT_NE(some->fingerprint(), d.fingerprint());
  auto off = parsed(R"({"lenientDialects": false})");
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->lenient.allows("util"));
  std::string err = refusal(R"({"lenientDialects": "util"})");
  EXPECT_NE(err.find("lenientDialects must be"), std::string::npos) << err;
}

TEST(Config, RenameInCheckLinesIsOptIn) {
  EXPECT_FALSE(Config().rename.checkLines);
  auto on = parsed(R"({"rename": {"checkLines": true}})");
  ASSERT_TRUE(on);
  EXPECT_TRUE(on->rename.checkLines);
  EXPECT_NE(refusal(R"({"rename": {"checklines": true}})").find("checklines"),
            std::string::npos);
}

TEST(Config, BadJsonNamesThePosition) {
  std::string err = refusal("{\"hints\": {");
  EXPECT_NE(err.find("invalid JSON"), std::string::npos) << err;
  EXPECT_NE(err.find("line 1, column 12"), std::string::npos) << err;
}

TEST(Config, UnknownKeysAreErrors) {
  std::string err = refusal(R"({"hint": {}})");
  EXPECT_NE(err.find("unknown key 'hint'"), std::string::npos) << err;
  err = refusal(R"({"hints": {"inlay": true}})");
  EXPECT_NE(err.find("unknown key 'inlay' in hints"), std::string::npos) << err;
}

TEST(Config, WrongTypes) {
  std::string err = refusal(R"({"hints": {"inferredShapes": 1}})");
  EXPECT_NE(err.find("true or false"), std::string::npos) << err;
  EXPECT_NE(refusal(R"({"extraBroadcastableOps": "tfl.add"})"), "");
  EXPECT_NE(refusal(R"({"extraBroadcastableOps": ["noDot"]})"), "");
  EXPECT_NE(refusal("[]"), "");
}

TEST(Config, CompileLimitsAreBounded) {
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
        R"({"compile": {"memoryLimitMB": 18446744073709551615}})",
        R"({"compile": {"threads": -1}})", R"({"compile": {"threads": 257}})",
        R"({"compile": {"threads": "4"}})"}) {
    std::string err = refusal(text);
    EXPECT_NE(err.find("must be an integer from"), std::string::npos)
        << text << ": " << err;
  }
  auto c =
      parsed(R"({"compile": {"timeoutSeconds": 3600, "memoryLimitMB": 64}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compile.timeoutSeconds, 3600u);
  EXPECT_EQ(c->compile.memoryLimitMB, 64u);
  EXPECT_EQ(c->compile.threads, 1u);
  c = parsed(R"({"compile": {"timeoutSeconds": 1, "memoryLimitMB": 65536}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compile.timeoutSeconds, 1u);
  c = parsed(R"({"compile": {"threads": 256}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compile.threads, 256u);
  c = parsed(R"({"compile": {"threads": 0}})"); // the machine's
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compile.threads, 0u);
}

TEST(Config, OutputDirRootFollowsWhoSetIt) {
  Config project;
  project.compile.outputDir = "out";
  project.compile.outputDirRoot = "/repo";
  // Editor settings that set outputDir own it; others keep the project's.
  auto c = parsed(R"({"compile": {"outputDir": "/abs"}})", project);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compile.outputDirRoot, "");
  c = parsed(R"({"compile": {"overwrite": true}})", project);
  ASSERT_TRUE(c);
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
