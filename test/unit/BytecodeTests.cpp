//===- BytecodeTests.cpp - bytecode <-> text ------------------------------===//

#include "GenericForm.h"

#include "Bytecode.h"

#include <gtest/gtest.h>

using namespace tosa_lsp;

namespace {

const char *kModule = R"(module {
  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32> loc("model.py":12:3)
    return %0 : tensor<2xf32>
  }
}
)";

TEST(Bytecode, RoundTripKeepsMeaningAndLocations) {
  BytecodeConversion bc = bytecodeFromText(kModule, "m.mlir");
  ASSERT_EQ(bc.error, "");
  EXPECT_TRUE(isBytecode(bc.output));
  BytecodeConversion text = textFromBytecode(bc.output);
  ASSERT_EQ(text.error, "");
  EXPECT_NE(text.output.find("loc(\"model.py\":12:3)"), std::string::npos)
      << text.output;
  EXPECT_EQ(genericForm(text.output), genericForm(kModule));
  // And back again: the same bytes.
  EXPECT_EQ(bytecodeFromText(text.output, "m.mlir").output, bc.output);
}

TEST(Bytecode, SeveralTopLevelOpsGoInAModule) {
  std::string two = "func.func @a() { return }\nfunc.func @b() { return }\n";
  BytecodeConversion bc = bytecodeFromText(two, "t.mlir");
  ASSERT_EQ(bc.error, "");
  BytecodeConversion text = textFromBytecode(bc.output);
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(genericForm(text.output), genericForm(two));
}

TEST(Bytecode, BadInputIsAClearError) {
  EXPECT_NE(
      bytecodeFromText("func.func @a() {\n", "t.mlir").error.find("has errors"),
      std::string::npos);
  EXPECT_NE(bytecodeFromText("func.func @a() { return }\n// -----\n"
                             "func.func @b() { return }\n",
                             "t.mlir")
                .error.find("// -----"),
            std::string::npos);
  EXPECT_NE(bytecodeFromText("func.func @f() {\n  return %1#100000000 : "
                             "i32\n}\n",
                             "t.mlir")
                .error.find("result numbers"),
            std::string::npos);
  EXPECT_NE(textFromBytecode("module {}").error.find("not MLIR bytecode"),
            std::string::npos);
  std::string bc = bytecodeFromText(kModule, "m.mlir").output;
  std::string truncated = bc.substr(0, bc.size() / 2);
  BytecodeConversion t = textFromBytecode(truncated);
  EXPECT_NE(t.error.find("cannot read the bytecode"), std::string::npos);
  EXPECT_TRUE(t.output.empty());
  std::string future = bc;
  future[4] = 120; // a version far beyond this MLIR's
  EXPECT_NE(textFromBytecode(future).error.find("version"), std::string::npos)
      << textFromBytecode(future).error;
}

} // namespace
