//===- ValidateTest.cpp - TOSA validation (tosa-validate) -----------------===//

#include "Validate.h"
#include "Analysis.h"
#include "Config.h"
#include "ValidateTarget.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

ValidateTarget target(const std::string &items) {
  llvm::Expected<ValidateTarget> t = parseValidateTarget(items);
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return {};
  }
  return *t;
}

FileAnalysis analyze(const std::string &text, const Config &config) {
  Analyzer analyzer;
  return analyzer.analyze(text, "test.mlir", config);
}

std::vector<const Diagnostic *> validation(const FileAnalysis &fa) {
  std::vector<const Diagnostic *> out;
  for (const Diagnostic &d : fa.diagnostics)
    if (d.source == DiagSource::Validation)
      out.push_back(&d);
  return out;
}

// A dynamic size: TOSA 1.0 at level 8k rejects it (tosa-validate's level
// check); MLIR's verifier accepts it.
const char *kDynamicAbs =
    R"(func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tosa.abs %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
)";

const char *kIntAbs = R"(func.func @f(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %0 = tosa.abs %x : (tensor<2x4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}
)";

} // namespace

TEST(ValidateTarget, ItemsMapToMlirOptOptions) {
  ValidateTarget t = target("pro_int,pro_fp,int16,level=none,strict");
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.profiles, (std::vector<std::string>{"pro_int", "pro_fp"}));
  EXPECT_EQ(t.extensions, std::vector<std::string>{"int16"});
  EXPECT_EQ(t.level, "none");
  EXPECT_TRUE(t.strict);
  EXPECT_EQ(t.items(), "pro_int,pro_fp,int16,level=none,strict");
  EXPECT_EQ(t.mlirOptArgs(),
            "--tosa-attach-target=\"profiles=pro_int,pro_fp extensions=int16 "
            "level=none\" --tosa-validate=strict-op-spec-alignment");
  // No target item: the module's own target (or MLIR's default).
  ValidateTarget none = target("");
  EXPECT_TRUE(none.enabled);
  EXPECT_FALSE(none.attaches());
  EXPECT_EQ(none.mlirOptArgs(), "--tosa-validate");
  EXPECT_EQ(target("version=1.1.draft").mlirOptArgs(),
            "--tosa-attach-target=\"specification_version=1.1.draft\" "
            "--tosa-validate");
}

TEST(ValidateTarget, UnknownItemsAreNamed) {
  for (const char *bad : {"pro_intt", "level=4k", "version=2.0", "int8"}) {
    llvm::Expected<ValidateTarget> t = parseValidateTarget(bad);
    ASSERT_FALSE(t) << bad;
    std::string why = llvm::toString(t.takeError());
    EXPECT_NE(why.find(std::string(bad).substr(std::string(bad).find('=') + 1)),
              std::string::npos)
        << why;
  }
}

TEST(ValidateTarget, ConfigKey) {
  llvm::Expected<Config> on = parseConfig(R"({"validate": true})");
  ASSERT_TRUE(!!on);
  EXPECT_TRUE(on->validate.enabled);
  EXPECT_FALSE(on->validate.attaches());
  llvm::Expected<Config> items =
      parseConfig(R"({"validate": "pro_fp,level=8k"})");
  ASSERT_TRUE(!!items);
  EXPECT_EQ(items->validate.items(), "pro_fp,level=8k");
  EXPECT_NE(Config().fingerprint(), items->fingerprint());
  EXPECT_NE(on->fingerprint(), items->fingerprint());
  llvm::Expected<Config> bad = parseConfig(R"({"validate": "pro_x"})");
  ASSERT_FALSE(bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("validate: unknown"),
            std::string::npos);
  EXPECT_FALSE(Config().validate.enabled);
}

TEST(Validate, ClassifiesEachRule) {
  EffectiveTarget t{"1.0", "8k", {"pro_int"}, {}};
  EXPECT_EQ(classifyValidation("'tosa.abs' op failed level check: operand "
                               "shape dimension cannot be dynamic",
                               t)
                .code,
            "tosa-level");
  ValidationRule fp = classifyValidation(
      "'tosa.abs' op illegal: requires [pro_fp] but not enabled in target", t);
  EXPECT_EQ(fp.code, "tosa-profile");
  EXPECT_NE(fp.note.find("profile pro_fp"), std::string::npos) << fp.note;
  EXPECT_NE(fp.note.find("TOSA 1.0, level 8k, profiles pro_int"),
            std::string::npos)
      << fp.note;
  EXPECT_EQ(classifyValidation("'tosa.abs' op illegal: requires [bf16] but "
                               "not enabled in target",
                               t)
                .code,
            "tosa-extension");
  EXPECT_EQ(classifyValidation("'tosa.abs' op illegal: operation "
                               "operand/result data types did not align with "
                               "any profile or extension, got (i16,i16)",
                               t)
                .code,
            "tosa-data-types");
  EXPECT_EQ(classifyValidation("'tosa.pad' op expected compile time "
                               "resolvable constant",
                               t)
                .code,
            "tosa-spec");
}

TEST(Validate, OnlyWhenAsked) {
  Config off;
  EXPECT_TRUE(validation(analyze(kDynamicAbs, off)).empty());
  Config on;
  on.validate = target("");
  FileAnalysis fa = analyze(kDynamicAbs, on);
  std::vector<const Diagnostic *> v = validation(fa);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->code.str(), "tosa-level");
  EXPECT_EQ(v[0]->range.begin.line, 2u);
  EXPECT_EQ(v[0]->range.begin.column, 8u);
  EXPECT_NE(v[0]->message.str().find("failed level check"), std::string::npos);
  ASSERT_FALSE(v[0]->notes.empty());
  EXPECT_NE(v[0]->notes.back().message.find("spec rule: TOSA level 8k"),
            std::string::npos);
  // level=none allows dynamic sizes.
  on.validate = target("level=none");
  EXPECT_TRUE(validation(analyze(kDynamicAbs, on)).empty());
}

TEST(Validate, ProfilesNeedStrictAsInMlirOpt) {
  Config c;
  c.validate = target("pro_fp");
  EXPECT_TRUE(validation(analyze(kIntAbs, c)).empty());
  c.validate = target("pro_fp,strict");
  FileAnalysis fa = analyze(kIntAbs, c); // outlives the pointers into it
  std::vector<const Diagnostic *> v = validation(fa);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->code.str(), "tosa-profile");
  c.validate = target("pro_int,strict");
  EXPECT_TRUE(validation(analyze(kIntAbs, c)).empty());
}

TEST(Validate, ModuleTargetIsUsedUnlessOneIsGiven) {
  std::string text = std::string("module attributes {tosa.target_env = "
                                 "#tosa.target_env<specification_version = "
                                 "\"1.0\", level = none, profiles = [pro_fp], "
                                 "extensions = [int16]>} {\n") +
                     kDynamicAbs + "}\n";
  Config c;
  c.validate = target("");
  EXPECT_TRUE(validation(analyze(text, c)).empty());
  c.validate = target("level=8k");
  EXPECT_EQ(validation(analyze(text, c)).size(), 1u);
}

TEST(Validate, SectionsThatFailToVerifyAreNotValidated) {
  // mlir-opt-22 runs no pass on a module that does not verify.
  std::string text = std::string(kDynamicAbs) +
                     "// -----\nfunc.func @g(%x: tensor<?x4xf32>) -> "
                     "tensor<2x4xf32> {\n  %0 = tosa.abs %x : "
                     "(tensor<?x4xf32>) -> tensor<?x5xf32>\n  return %0 : "
                     "tensor<?x5xf32>\n}\n";
  Config c;
  c.validate = target("");
  FileAnalysis fa = analyze(text, c);
  std::vector<const Diagnostic *> v = validation(fa);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->section, 0u);
}
