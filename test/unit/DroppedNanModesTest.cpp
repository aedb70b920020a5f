//===- DroppedNanModesTest.cpp - `nan_mode` strings MLIR 22 drops ---------===//

#include "DroppedNanModes.h"

#include <gtest/gtest.h>

#include <string>

using namespace tosa_lsp::detail;

namespace {

std::vector<std::string> found(const std::string &text) {
  std::vector<std::string> out;
  for (const DroppedNanMode &d : droppedNanModes(text))
    out.push_back(text.substr(d.offset, d.length));
  return out;
}

TEST(DroppedNanModes, TheStringFormInAnAttributeDictionary) {
  EXPECT_EQ(
      found("%r = tosa.maximum %a, %b {nan_mode = \"IGNORE\"} : (t) -> t"),
      std::vector<std::string>{"nan_mode = \"IGNORE\""});
  // Spacing as written, among other attributes, several on a line.
  EXPECT_EQ(found("{max_val = 6.0 : f32, nan_mode=\"IGNORE\"} {nan_mode  =  "
                  "\"IGNORE\"}"),
            (std::vector<std::string>{"nan_mode=\"IGNORE\"",
                                      "nan_mode  =  \"IGNORE\""}));
}

TEST(DroppedNanModes, NotWhatMLIR22TakesOrRefuses) {
  // The enum form, the default's string (what MLIR 22 uses anyway), a
  // properties dictionary (MLIR 22 reports it), another attribute's name.
  EXPECT_TRUE(found("{nan_mode = #tosa.nan_mode<IGNORE>}").empty());
  EXPECT_TRUE(found("{nan_mode = \"PROPAGATE\"}").empty());
  EXPECT_TRUE(
      found("\"tosa.maximum\"(%a, %b) <{nan_mode = \"IGNORE\"}>").empty());
  EXPECT_TRUE(found("{my_nan_mode = \"IGNORE\"}").empty());
}

TEST(DroppedNanModes, NotInCommentsOrStrings) {
  EXPECT_TRUE(found("// {nan_mode = \"IGNORE\"}\n").empty());
  EXPECT_TRUE(found("%r = op {s = \"{nan_mode = \\\"IGNORE\\\"}\"}").empty());
  // Code after a string on the same line still counts.
  EXPECT_EQ(found("{s = \"//\", nan_mode = \"IGNORE\"}").size(), 1u);
}

} // namespace
