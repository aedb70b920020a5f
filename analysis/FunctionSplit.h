//===- FunctionSplit.h - where a section can be cut, from its text -*- C++
//-*-===//
//
// A big section is analysed in parts on two threads (SectionParts.cpp,
// FunctionParts.cpp); where to cut it is decided here, from the text alone.
// Between top-level ops that name no symbol across the cut (splitPoints),
// or inside one function's body:
//
// A model is often one function of 10^5 ops, and MLIR's parser is single-
// threaded: such a section is parsed as two parts on two threads. The first
// is the text up to a top-level op of the function's body, closed by a
// stand-in terminator; the second is the rest under a copy of the function's
// header whose arguments also declare the first part's values that the
// second uses, with their types as written where they are defined. Text
// only, no MLIR: the analyzer checks every guess against what the first part
// parsed to and analyses the section whole when anything differs.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_FUNCTIONSPLIT_H
#define TOSA_LSP_ANALYSIS_FUNCTIONSPLIT_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tosa_lsp::detail {

/// Offsets in a section's text.
struct FunctionCut {
  size_t argsEnd = 0;   // the `)` closing the function's arguments
  bool noArgs = false;  // nothing but blanks between the parentheses
  size_t bodyOpen = 0;  // the `{` opening the body
  size_t cut = 0;       // start of the line where the second part begins
  size_t bodyClose = 0; // the `}` closing the body
};

/// Where `section` can be cut: one `func.func`, alone or as the only op of
/// a `module`, with alias definitions and comments before or after it, cut
/// at the first line past `fraction` of its body that starts a top-level op
/// (`%name` at the indentation of the body's first op, after a line that
/// does not continue). std::nullopt for any other shape. A wrong guess (a
/// cut inside an op) does not parse, and the caller falls back.
std::optional<FunctionCut> planFunctionCut(std::string_view section,
                                           double fraction = 0.5);

/// A value defined by a top-level op of the first part and used in the
/// second.
struct CrossCutValue {
  std::string_view name; // `%5`, a view into the section
  size_t def = 0;        // offset of that name where it is defined
  std::string_view type; // its type as written there
};

/// The values the second part needs declared, in order of first use: the
/// names it uses that a line of the first part defines (`%name =` at its
/// start). std::nullopt when one cannot be declared as an argument: a
/// result of a group (`%r:2`, `%r#1`) or a type that is not written in a
/// way recognised here. The caller checks on the first part's IR that each
/// is defined by an op of the function's body, and that the body is one
/// block (else an argument would dominate where the value does not).
std::optional<std::vector<CrossCutValue>>
crossCutValues(std::string_view section, const FunctionCut &cut);

/// The second part's buffer: this, then the section's text from the cut. It
/// is the text before the body, with `values` added to the function's
/// arguments, and a line break.
std::string secondPartPrefix(std::string_view section, const FunctionCut &cut,
                             const std::vector<CrossCutValue> &values);

/// The first part's buffer: the section's text up to the cut, then this: a
/// stand-in terminator (an unregistered op, which may terminate a block) and
/// the text from the body's `}` on.
std::string firstPartSuffix(std::string_view section, const FunctionCut &cut);

/// The stand-in terminator's name, `tosa_lsp.cut`.
extern const char kCutTerminator[];

/// How MLIR numbers a cut function's values when it prints one of its ops
/// (a diagnostic's "see current operation"): over the whole function, one
/// number per op with results (a group: %5:2, %5#1), the body's top level
/// from %0 on, each nested region's from where the top level ends; block
/// arguments from %arg0 (nested blocks' after the entry block's). A part
/// numbers within itself: how to map its numbers to the whole function's.
struct PartNumbering {
  /// The part's top-level numbers: %0 .. %(topLevel - 1).
  unsigned topLevel = 0;
  /// Added to a top-level value's number, and to a nested one's; or, with
  /// nestedKnown false, a nested value is not mapped (std::nullopt).
  unsigned shiftTopLevel = 0, shiftNested = 0;
  bool nestedKnown = true;
  /// The function's own arguments (the second part declares more).
  unsigned args = 0;
  /// Per value declared for the second part (crossCutValues' order): its
  /// number in the whole function, or kUnmapped for a constant's: an op
  /// that reads it sees an argument where the whole function has the
  /// constant, and may verify otherwise ("shape operand is not compile
  /// time resolvable" for a `tosa.const_shape` of the first part).
  std::vector<unsigned> declaredIds;
  static constexpr unsigned kUnmapped = ~0u;
};

/// Whether the op that defines `value` (a crossCutValues entry of
/// `section`) is a constant (its name says so: `tosa.const_shape`,
/// `"tosa.const"`, `arith.constant`).
bool definedByConstant(std::string_view section, const CrossCutValue &value);

/// `text` printed by MLIR from a part, with the values named as printing
/// the whole function names them. std::nullopt when it names something
/// whose whole-function name is not known here: a value an op named itself
/// (`%cst`, `%c0`; the suffixes that keep them unique count over the whole
/// function), a block (`^bb1`), a constant's declared value, or a nested
/// value without nestedKnown.
std::optional<std::string> renumberPartValues(std::string_view text,
                                              const PartNumbering &n);

/// The offset in [b, e] of `t` before which `fraction` of the work of
/// parsing and analysing [b, e) lies: bytes, except that a model's weights
/// (long lines of `dense<"0x...">` literals, which MLIR reads ~16x faster
/// a byte than ops) count less. Where to cut so that parts take about as
/// long; the byte at `fraction` when no line is long.
size_t workTarget(std::string_view t, size_t b, size_t e, double fraction);

/// A symbol named in a text: `@name` or `@"name"`, at `offset`.
struct SymbolRef {
  size_t offset;
  std::string_view name;
};

/// Every `@name` reference in `text` (quoted or bare), in text order.
/// std::nullopt when one is nested (`@m::@f`): no stub stands for that, and
/// no cut can tell which symbol it names.
std::optional<std::vector<SymbolRef>> symbolRefsIn(std::string_view text);

/// Where to cut a section into parts that share no symbols: each cut is
/// a splitPoint of a range of at least twice `minPart` bytes, halving it,
/// for at most kMaxParts parts; in text order, none if the whole section
/// cannot be cut. The text is scanned once for what forbids any cut
/// (aliases, dialect resources, nested symbol references) and for its
/// symbol references: each level of cuts then looks at the references
/// only (50k lines: 4.0 -> 0.6 ms before the parts start).
std::vector<size_t> splitPoints(std::string_view text, size_t minPart);

/// Offsets [begin, end) of the result type after the last top-level `->`
/// of an op's text.
std::optional<std::pair<size_t, size_t>> findResultType(llvm::StringRef scope);
/// End of the type written at `b` in `text`: brackets balanced, up to
/// whitespace, `,` or `{` at bracket depth 0, or a closing bracket it did
/// not open.
size_t typeEnd(llvm::StringRef text, size_t b);

} // namespace tosa_lsp::detail

#endif
