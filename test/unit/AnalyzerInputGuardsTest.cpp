//===- AnalyzerInputGuardsTest.cpp - inputs refused before MLIR -----------===//
//
// The scans that refuse an input MLIR would take too deep, or too much
// memory for, before it is parsed: nesting, result numbers, integer widths.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerTestSupport.h"
#include "IR.h"
#include "TextScan.h"

#include <random>

namespace {
/// The nesting scan as first written, a byte at a time: the oracle for the
/// table-driven one.
std::optional<size_t> nestingOracle(std::string_view text, unsigned limit) {
  unsigned depth = 0, minusRun = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-') {
      if (++minusRun > limit)
        return i;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      minusRun = 0;
    if (c == '"') { // stringEnd has its own oracle (TextScanTest)
      i = detail::stringEnd(text, i);
      continue;
    }
    if (detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
      if (i == std::string_view::npos)
        break;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return i;
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      if (depth)
        --depth;
    }
  }
  return std::nullopt;
}
} // namespace

TEST(Nesting, TableDrivenScanAgreesWithTheByteLoop) {
  std::mt19937 rng(11);
  const char alphabet[] = "()[]{}<>-\"\\/\n \ta-/-";
  unsigned refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int i = 0, n = rng() % 48; i < n; ++i)
      text += alphabet[rng() % (sizeof(alphabet) - 1)];
    unsigned limit = 1 + rng() % 4;
    std::optional<size_t> want = nestingOracle(text, limit);
    EXPECT_EQ(findExcessiveNesting(text, limit), want)
        << "limit " << limit << ": " << text;
    refused += want.has_value();
  }
  // Both verdicts occur: the comparison is not vacuous.
  EXPECT_GT(refused, 1000u);
  EXPECT_LT(refused, 19000u);
}

TEST(InputGuards, ResultNumbersBeyondTheTextAreRefused) {
  // The slots a name costs are its highest number + 1; names add up.
  const size_t min = kMinResultSlots;
  EXPECT_EQ(findExcessiveResultNumber("%1#2 %1#0 %x#7", 0), std::nullopt);
  std::string big = "  \"foo.use\"(%1#" + std::to_string(min) + ")";
  EXPECT_EQ(findExcessiveResultNumber(big, 0),
            std::make_optional(std::make_pair(size_t(12), uint64_t(min))));
  // A text as big as the number may define that many results.
  EXPECT_EQ(findExcessiveResultNumber(big, 2 * min), std::nullopt);
  std::string spread;
  for (int i = 0; i < 3; ++i)
    spread += "%v" + std::to_string(i) + "#" + std::to_string(min / 2) + " ";
  EXPECT_TRUE(findExcessiveResultNumber(spread, 0).has_value());
  // The same name again costs nothing more.
  std::string again = "%v#" + std::to_string(min / 2) + " %v#" +
                      std::to_string(min / 2) + " %v#" +
                      std::to_string(min / 2);
  EXPECT_EQ(findExcessiveResultNumber(again, 0), std::nullopt);
  // In a string or a comment it is no reference; `#` alone is an alias.
  EXPECT_EQ(
      findExcessiveResultNumber(
          "\"%1#100000000\" // %2#100000000\n#map = affine_map<() -> ()>", 0),
      std::nullopt);
  EXPECT_EQ(findExcessiveResultNumber("%1#99999999999999999999999", 0)->second,
            UINT64_MAX / 16);
}

TEST(InputGuards, WideIntegerTypesAreCosted) {
  // Types, not names that look like them; widths up to 64 cost nothing.
  EXPECT_EQ(scanWideIntegers("%i100000 = foo.i200000 @i300000 i64 1 2").width,
            0u);
  WideIntegers w = scanWideIntegers(
      "%0 = arith.constant dense<[1, -2, 3]> : tensor<3xi1000>\n"
      "%1 = arith.constant 4 : si128 // i9999999\n\"i8888888\"");
  EXPECT_EQ(w.width, 1000u);
  EXPECT_EQ(w.offset, 49u); // the `i` of `3xi1000`
  EXPECT_EQ(w.numbers, 5u); // 1, -2, 3, the 3 of `3x`, 4 (not %0, %1)
  EXPECT_EQ(w.bytes, w.numbers * 128 * 2);
  EXPECT_EQ(scanWideIntegers("x : ui4096").offset, 4u);
  EXPECT_EQ(scanWideIntegers("x : i16777216").width, 0u); // MLIR refuses it
  // Refused when the estimate exceeds the text's share of the bound.
  std::string consts;
  for (int i = 0; i < 100; ++i)
    consts += "%c" + std::to_string(i) + " = arith.constant " +
              std::to_string(i) + " : i16000000\n";
  EXPECT_TRUE(findExcessiveIntegerWidth(consts, consts.size(), consts.size()));
  // One such number is fine alone, not as one of a thousand such sections.
  std::string one = "%c = arith.constant 1 : i16000000";
  EXPECT_FALSE(findExcessiveIntegerWidth(one, one.size(), one.size()));
  EXPECT_TRUE(findExcessiveIntegerWidth(one, one.size(), 1000 * one.size()));
  // Up to 256 bits nothing is refused, however dense the numbers.
  std::string dense = "dense<[1";
  for (int i = 0; i < 2000000; ++i)
    dense += ",1";
  dense += "]> : tensor<2000001xi256>";
  EXPECT_FALSE(findExcessiveIntegerWidth(dense, dense.size(), dense.size()));
}
