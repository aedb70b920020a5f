//===- MigrateSupport.h - shared parts of the TOSA migration ----*- C++ -*-===//
//
// Internal to the migration (Migrate*.cpp): reading the parsed section
// (attributes as written, SSA names, constants), the op being rewritten,
// the per-form rewrites and the text scanning they share.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_MIGRATESUPPORT_H
#define TOSA_LSP_ANALYSIS_MIGRATESUPPORT_H

#include "Migrate.h"

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp::migrate {

std::string print(mlir::Type t);
std::string print(mlir::Attribute a);
/// Offset just past the bracket matching the one at `open` (strings
/// skipped), or npos.
size_t skipBracket(std::string_view s, size_t open);
std::optional<std::vector<int64_t>> intList(mlir::Attribute a);
std::optional<int64_t> intValue(mlir::Attribute a);
std::optional<double> floatValue(mlir::Attribute a);
/// The element type, or a quantized type's storage type.
mlir::Type storageType(mlir::Type t);
/// MLIR 22's accumulator for an input element type.
std::optional<mlir::Type> defaultAccType(mlir::Type elem);
/// `tensor<1xT>` holding `v`.
std::optional<mlir::DenseElementsAttr> scalarTensor(mlir::Type elem, double v);

struct SectionCtx {
  std::string_view buf; // the section's text
  size_t base = 0;      // its offset in the file
  const mlir::AsmParserState *state = nullptr;
  std::string fresh; // prefix of new value names, unused in the section
  unsigned counter = 0;
  std::map<mlir::Operation *, mlir::NamedAttrList> attrsCache;
  /// tosa.variable declarations at module level (moved there or written
  /// there), by name: their text.
  std::map<std::string, std::string> variables;

  size_t offset(llvm::SMLoc loc) const {
    return static_cast<size_t>(loc.getPointer() - buf.data());
  }
  std::string_view textOf(llvm::SMRange r) const {
    return buf.substr(offset(r.Start), offset(r.End) - offset(r.Start));
  }
};

/// The op's attributes, including those written as properties that MLIR 22
/// no longer knows (read back from the op's text).
const mlir::NamedAttrList &allAttrs(SectionCtx &sc, mlir::Operation *op);
/// The SSA name the source gives `v` (`%0`, `%arg1`, `%x#1`).
std::optional<std::string> valueName(SectionCtx &sc, mlir::Value v);
/// The integer values of a `tosa.const` feeding `v`.
std::optional<std::vector<int64_t>> constInts(SectionCtx &sc, mlir::Value v);

using mlir::ArrayRef;
using mlir::Attribute;
using mlir::DenseElementsAttr;
using mlir::NamedAttrList;
using mlir::Operation;
using mlir::Type;

/// An op being rewritten: its MLIR 22 operands and attributes, and the
/// constants to insert before it.
struct Rewrite {
  SectionCtx &sc;
  Operation *op;
  std::string indent;
  std::vector<std::string> operands, operandTypes;
  NamedAttrList attrs;
  std::string prologue;
  std::vector<std::string> changes; // for the title
  std::string newName;              // when the op itself changes
  std::string why; // when no rewrite: the reason, for the manual list

  std::string freshName(const char *what);
  void addOperand(std::string name, std::string type);
  /// A new `tosa.const` holding `value`; returns its name.
  std::string constant(DenseElementsAttr value, const char *what);
  void addConstOperand(DenseElementsAttr value, const char *what);
  /// A new `tosa.const_shape`; returns its name.
  std::string shapeConstant(ArrayRef<int64_t> dims, const char *what);
  /// A new `tosa.const_shape` operand.
  void addShapeOperand(ArrayRef<int64_t> dims, const char *what);
  /// Zero-point operand for the element type of `like`, from attribute
  /// `attrName` (removed) or 0.
  bool addZeroPoint(Type like, llvm::StringRef attrName, const char *what);
  bool ensureAccType(Type inputElem);
};

// Per-form rewrites (MigrateRewrites.cpp): each fills `rw` with the op's
// MLIR 22 operands and attributes, or returns false (no rewrite).
bool migrateMul(Rewrite &rw);
bool migrateReshape(Rewrite &rw);
bool migrateTranspose(Rewrite &rw);
bool migrateClamp(Rewrite &rw);
bool migrateAvgPool(Rewrite &rw);
bool migrateConv(Rewrite &rw);
bool migrateMatmul(Rewrite &rw);
bool migrateNegate(Rewrite &rw);
bool migrateRescale(Rewrite &rw);
bool migratePad(Rewrite &rw);
bool migrateShapeAttrs(Rewrite &rw, std::initializer_list<const char *> names);
bool migrateResizeMode(Rewrite &rw);
bool migrateFullyConnected(Rewrite &rw);
/// Old quantization attributes (`quantization_info = #tosa.conv_quant<...>`
/// or a dictionary) as the plain zero-point attributes the rewrites read.
void flattenQuantInfo(NamedAttrList &attrs);
/// Integer array attributes of TOSA before 2023 (`pad = [0, 0, 0, 0]`) as
/// MLIR 22's dense arrays; returns whether any changed.
bool arrayAttrsAsDense(Rewrite &rw);
/// Whether the op has an attribute in that old array form.
bool hasArrayAttrs(Operation *op);
/// Whether `v` comes from a tosa.const whose data is elided
/// (`dense_resource<__elided__>`).
bool elidedConstant(SectionCtx &sc, mlir::Value v);

// Convolutions and pools (MigrateStride.cpp).
/// Whether MLIR 22 requires the op's padded size to divide by the stride.
bool hasStrideRule(llvm::StringRef name);
/// Whether some axis's padded size leaves a remainder (nullopt: unknown).
std::optional<bool> strideRemainders(Operation *op, const NamedAttrList &attrs);
/// Trailing pad lowered (input sliced) so that the stride divides.
bool migrateStride(Rewrite &rw);

// Forms outside TOSA ops' operands (MigrateModule.cpp).
using PositionAt = std::function<Position(size_t)>;
/// Stand-ins for syntax MLIR 22 no longer parses (custom
/// tosa.fully_connected, `func @f`, tosa.variable.read/.write), registered
/// in the migration's own context only.
void registerOldSyntaxOps(mlir::MLIRContext *ctx);
/// The rewrite of `func`, `tosa.variable.read`/`.write` or a tosa.variable
/// declared inside a function (or with old attributes) into `plan`; false
/// when `op` is none of them.
bool planModuleForm(SectionCtx &sc, mlir::Operation *op, MigrationFix fix,
                    MigrationPlan &plan, const PositionAt &pos);

// Text scanning (MigrateText.cpp).
/// Where the op's trailing `loc(...)` starts in its text, or npos.
size_t trailingLoc(std::string_view text);
std::string lineIndent(std::string_view text, size_t off);
/// `tosa.const {value = ...}`: the offset of the `value` key.
std::optional<size_t> valueKey(std::string_view text);
/// Generic ops' properties `<{...}>` as attributes, the same length.
std::string propertiesAsAttributes(std::string_view in);
/// Offsets of `needle` in `text` outside strings and `//` comments.
std::vector<size_t> codeOccurrences(std::string_view text,
                                    std::string_view needle);
/// Quantization attributes of TOSA before 1.0 (`#tosa.conv_quant<...>`,
/// `#tosa.unary_quant<...>`, some no longer parse) rewritten in place as
/// dictionaries of the same length; returns where.
std::vector<size_t> quantAttrsAsDicts(std::string &text);
/// Generic TOSA ops renamed in place to `"tosx.*"` (same length): an
/// unregistered dialect's ops parse whatever their attributes, where MLIR
/// 22's TOSA ops refuse old ones (`pad = [0, 0, 0, 0]`) while parsing.
void genericTosaOpsUnregistered(std::string &text);

/// The op's TOSA name (`tosx.*` read as `tosa.*`).
std::string tosaName(Operation *op);
/// Whether `op` is the TOSA op `name` (`"tosa.const"`).
bool isTosa(Operation *op, llvm::StringRef name);

} // namespace tosa_lsp::migrate

#endif // TOSA_LSP_ANALYSIS_MIGRATESUPPORT_H
