//===- Migrate.cpp - rewrite pre-MLIR-22 TOSA into TOSA 1.0 ---------------===//
//
// Old forms are recognised on the parsed IR (operand counts, attribute
// names), never by matching text: MLIR 22 parses them (its TOSA formats are
// `operands attr-dict : functional-type`) and only the verifier objects.
// The rewrite replaces the op's own source range, from its name to its end
// (AsmParserState), with the MLIR 22 op in the same style (custom or
// generic), and inserts the constants it needs before the statement. Names
// of operands come from their definitions in AsmParserState; types and
// attributes are printed by MLIR.
//
//===----------------------------------------------------------------------===//

#include "Migrate.h"

#include "CrashGuard.h"
#include "LineIndex.h"
#include "MLIRShared.h"
#include "TextScan.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;

namespace tosa_lsp {
namespace {

/// TOSA ops that MLIR 22 no longer has must still parse (generically) so
/// that the rest of the section can be migrated: the TOSA dialect of the
/// migration's own context accepts unknown ops. `allowUnknownOperations` is
/// protected; a pointer to it named through a derived class is not.
struct DialectAccess : Dialect {
  static void allowUnknownOps(Dialect *d) {
    (d->*(&DialectAccess::allowUnknownOperations))(true);
  }
};

const DialectRegistry &registry() {
  static const DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    registerAllDialects(*reg);
    registerAllExtensions(*reg);
    return reg;
  }();
  return *r;
}

std::string print(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::string print(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  return s;
}

/// Offset just past the bracket matching the one at `open` (strings
/// skipped), or npos.
size_t skipBracket(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(s, i);
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<')
      ++depth;
    else if (c == ')' || c == ']' || c == '}' || c == '>')
      if (--depth == 0)
        return i + 1;
  }
  return std::string_view::npos;
}

std::optional<std::vector<int64_t>> intList(Attribute a) {
  std::vector<int64_t> out;
  if (auto d = dyn_cast_or_null<DenseI64ArrayAttr>(a))
    return std::vector<int64_t>(d.asArrayRef().begin(), d.asArrayRef().end());
  if (auto d = dyn_cast_or_null<DenseI32ArrayAttr>(a))
    return std::vector<int64_t>(d.asArrayRef().begin(), d.asArrayRef().end());
  if (auto d = dyn_cast_or_null<DenseI16ArrayAttr>(a))
    return std::vector<int64_t>(d.asArrayRef().begin(), d.asArrayRef().end());
  if (auto d = dyn_cast_or_null<DenseI8ArrayAttr>(a))
    return std::vector<int64_t>(d.asArrayRef().begin(), d.asArrayRef().end());
  if (auto arr = dyn_cast_or_null<ArrayAttr>(a)) {
    for (Attribute e : arr) {
      auto i = dyn_cast<IntegerAttr>(e);
      if (!i)
        return std::nullopt;
      out.push_back(i.getValue().getSExtValue());
    }
    return out;
  }
  if (auto d = dyn_cast_or_null<DenseIntElementsAttr>(a)) {
    for (const APInt &v : d.getValues<APInt>())
      out.push_back(v.getSExtValue());
    return out;
  }
  return std::nullopt;
}

std::optional<int64_t> intValue(Attribute a) {
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return i.getValue().getSExtValue();
  if (auto l = intList(a); l && l->size() == 1)
    return (*l)[0];
  return std::nullopt;
}

std::optional<double> floatValue(Attribute a) {
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = intValue(a))
    return static_cast<double>(*i);
  return std::nullopt;
}

Type storageType(Type t) {
  Type e = getElementTypeOrSelf(t);
  if (auto q = dyn_cast<quant::QuantizedType>(e))
    return q.getStorageType();
  return e;
}

/// MLIR 22's accumulator for an input element type (what TOSA 1.0 allows
/// and the old, implicit accumulators were).
std::optional<Type> defaultAccType(Type elem) {
  MLIRContext *ctx = elem.getContext();
  if (elem.isF32() || elem.isBF16())
    return Float32Type::get(ctx);
  if (elem.isF16() || isa<Float8E4M3FNType, Float8E5M2Type>(elem))
    return Float16Type::get(ctx);
  if (elem.isInteger(8) || elem.isInteger(4))
    return IntegerType::get(ctx, 32);
  if (elem.isInteger(16))
    return IntegerType::get(ctx, 48);
  return std::nullopt;
}

/// `tensor<1xT>` holding `v` (or 0).
std::optional<DenseElementsAttr> scalarTensor(Type elem, double v) {
  auto type = RankedTensorType::get({1}, elem);
  if (auto f = dyn_cast<FloatType>(elem))
    return DenseElementsAttr::get(type, FloatAttr::get(f, v));
  if (auto i = dyn_cast<IntegerType>(elem))
    return DenseElementsAttr::get(
        type, IntegerAttr::get(i, APInt(i.getWidth(), static_cast<int64_t>(v),
                                        /*isSigned=*/true, /*implicitTrunc=*/
                                        true)));
  return std::nullopt;
}

struct SectionCtx {
  std::string_view buf; // the section's text
  size_t base = 0;      // its offset in the file
  const AsmParserState *state = nullptr;
  std::string fresh; // prefix of new value names, unused in the section
  unsigned counter = 0;
  std::map<Operation *, NamedAttrList> attrsCache;

  size_t offset(llvm::SMLoc loc) const {
    return static_cast<size_t>(loc.getPointer() - buf.data());
  }
  std::string_view textOf(llvm::SMRange r) const {
    return buf.substr(offset(r.Start), offset(r.End) - offset(r.Start));
  }
};

/// The op's attributes, including those written as properties that MLIR 22
/// no longer knows (`"tosa.const"() <{value = ...}>` drops them when
/// parsing): those are read back from the op's text.
const NamedAttrList &allAttrs(SectionCtx &sc, Operation *op) {
  auto [it, inserted] = sc.attrsCache.try_emplace(op);
  if (!inserted)
    return it->second;
  NamedAttrList &attrs = it->second;
  attrs = NamedAttrList(op->getAttrDictionary());
  const AsmParserState::OperationDefinition *def = sc.state->getOpDef(op);
  if (!def)
    return attrs;
  // Every dictionary before the type signature: generic `<{...}>` and
  // `{...}`, or a custom form's attr-dict. MLIR 22 drops what does not fit
  // an op's properties (`mode = "BILINEAR"` on tosa.resize, `value` on
  // tosa.const); the text still has it.
  std::string_view text = sc.textOf({def->loc.End, def->scopeLoc.End});
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ':')
      break;
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(text, i);
      continue;
    }
    size_t open = c == '{' ? i
                  : (c == '<' && i + 1 < text.size() && text[i + 1] == '{')
                      ? i + 1
                      : text.npos;
    if (open == text.npos) {
      if (c == '(' || c == '[' || c == '<') {
        size_t e = skipBracket(text, i);
        if (e == text.npos)
          break;
        i = e - 1;
      }
      continue;
    }
    size_t end = skipBracket(text, open);
    if (end == text.npos)
      break;
    if (auto d = dyn_cast_or_null<DictionaryAttr>(parseAttribute(
            std::string(text.substr(open, end - open)), op->getContext())))
      for (NamedAttribute a : d)
        if (!attrs.get(a.getName()))
          attrs.append(a);
    i = open == i ? end - 1 : end; // past `}` or `}>`
  }
  return attrs;
}

/// The SSA name the source gives `v` (`%0`, `%arg1`, `%x#1`).
std::optional<std::string> valueName(SectionCtx &sc, Value v) {
  if (auto r = dyn_cast<OpResult>(v)) {
    const AsmParserState::OperationDefinition *def =
        sc.state->getOpDef(r.getOwner());
    if (!def)
      return std::nullopt;
    unsigned n = r.getResultNumber();
    const auto &groups = def->resultGroups;
    for (size_t g = 0; g < groups.size(); ++g) {
      unsigned start = groups[g].startIndex;
      unsigned end = g + 1 < groups.size() ? groups[g + 1].startIndex
                                           : r.getOwner()->getNumResults();
      if (n < start || n >= end)
        continue;
      std::string name(sc.textOf(groups[g].definition.loc));
      if (end - start > 1)
        name += "#" + std::to_string(n - start);
      return name;
    }
    return std::nullopt;
  }
  auto a = cast<BlockArgument>(v);
  const AsmParserState::BlockDefinition *bd =
      sc.state->getBlockDef(a.getOwner());
  if (!bd || a.getArgNumber() >= bd->arguments.size())
    return std::nullopt;
  std::string name(sc.textOf(bd->arguments[a.getArgNumber()].loc));
  if (name.empty() || name[0] != '%')
    return std::nullopt;
  return name;
}

/// The integer values of a `tosa.const` feeding `v`.
std::optional<std::vector<int64_t>> constInts(SectionCtx &sc, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getName().getStringRef() != "tosa.const")
    return std::nullopt;
  const NamedAttrList &attrs = allAttrs(sc, def);
  Attribute a = attrs.get("values");
  if (!a)
    a = attrs.get("value");
  return intList(a);
}

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

  std::string freshName(const char *what) {
    return sc.fresh + what + "_" + std::to_string(sc.counter++);
  }
  void addOperand(std::string name, std::string type) {
    operands.push_back(std::move(name));
    operandTypes.push_back(std::move(type));
  }
  /// A new `tosa.const` holding `value`; returns its name.
  std::string constant(DenseElementsAttr value, const char *what) {
    std::string name = freshName(what);
    prologue += name + " = \"tosa.const\"() <{values = " + print(value) +
                "}> : () -> " + print(value.getType()) + "\n" + indent;
    return name;
  }
  void addConstOperand(DenseElementsAttr value, const char *what) {
    addOperand(constant(value, what), print(value.getType()));
  }
  /// A new `tosa.const_shape` operand.
  void addShapeOperand(ArrayRef<int64_t> dims, const char *what) {
    MLIRContext *ctx = op->getContext();
    auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                      IndexType::get(ctx));
    auto value = DenseIntElementsAttr::get(type, dims);
    std::string name = freshName(what);
    std::string shape = "!tosa.shape<" + std::to_string(dims.size()) + ">";
    prologue += name + " = tosa.const_shape {values = " + print(value) +
                "} : () -> " + shape + "\n" + indent;
    addOperand(name, shape);
  }
  /// Zero-point operand for the element type of `like`, from attribute
  /// `attrName` (removed) or 0.
  bool addZeroPoint(Type like, llvm::StringRef attrName, const char *what) {
    double zp = 0;
    if (Attribute a = attrs.get(attrName)) {
      std::optional<double> v = floatValue(a);
      if (!v)
        return false;
      zp = *v;
      attrs.erase(attrName);
    }
    std::optional<DenseElementsAttr> value =
        scalarTensor(storageType(like), zp);
    if (!value)
      return false;
    addConstOperand(*value, what);
    return true;
  }
  bool ensureAccType(Type inputElem) {
    if (attrs.get("acc_type"))
      return true;
    std::optional<Type> acc = defaultAccType(storageType(inputElem));
    if (!acc)
      return false;
    attrs.set("acc_type", TypeAttr::get(*acc));
    return true;
  }
};

bool migrateMul(Rewrite &rw) {
  if (rw.op->getNumOperands() != 2)
    return false;
  int64_t shift = 0;
  if (Attribute a = rw.attrs.get("shift")) {
    std::optional<int64_t> v = intValue(a);
    if (!v)
      return false;
    shift = *v;
    rw.attrs.erase("shift");
  }
  rw.addConstOperand(*scalarTensor(IntegerType::get(rw.op->getContext(), 8),
                                   static_cast<double>(shift)),
                     "shift");
  rw.changes.push_back("`shift` attribute -> operand");
  return true;
}

bool migrateReshape(Rewrite &rw) {
  if (rw.op->getNumOperands() != 1 || rw.op->getNumResults() != 1)
    return false;
  std::optional<std::vector<int64_t>> dims = intList(rw.attrs.get("new_shape"));
  if (!dims)
    return false;
  // TOSA 1.0 infers a -1 from the input; the declared result says it too.
  if (auto r = dyn_cast<RankedTensorType>(rw.op->getResult(0).getType()))
    if (r.getRank() == static_cast<int64_t>(dims->size()))
      for (size_t i = 0; i < dims->size(); ++i)
        if ((*dims)[i] < 0 && !r.isDynamicDim(i))
          (*dims)[i] = r.getDimSize(i);
  rw.attrs.erase("new_shape");
  rw.addShapeOperand(*dims, "shape");
  rw.changes.push_back("`new_shape` attribute -> tosa.const_shape operand");
  return true;
}

bool migrateTranspose(Rewrite &rw) {
  if (rw.op->getNumOperands() != 2 || rw.attrs.get("perms"))
    return false;
  std::optional<std::vector<int64_t>> perms =
      constInts(rw.sc, rw.op->getOperand(1));
  if (!perms)
    return false;
  std::vector<int32_t> p(perms->begin(), perms->end());
  rw.attrs.set("perms", DenseI32ArrayAttr::get(rw.op->getContext(), p));
  rw.operands.pop_back();
  rw.operandTypes.pop_back();
  rw.changes.push_back("perms operand -> `perms` attribute");
  return true;
}

bool migrateClamp(Rewrite &rw) {
  if (rw.op->getNumOperands() != 1 || rw.attrs.get("min_val") ||
      rw.attrs.get("max_val"))
    return false;
  Type elem = storageType(rw.op->getOperand(0).getType());
  Attribute lo, hi;
  if (auto f = dyn_cast<FloatType>(elem)) {
    std::optional<double> a = floatValue(rw.attrs.get("min_fp")),
                          b = floatValue(rw.attrs.get("max_fp"));
    if (!a || !b)
      return false;
    lo = FloatAttr::get(f, *a);
    hi = FloatAttr::get(f, *b);
  } else if (auto i = dyn_cast<IntegerType>(elem)) {
    std::optional<int64_t> a = intValue(rw.attrs.get("min_int")),
                           b = intValue(rw.attrs.get("max_int"));
    if (!a || !b || i.getWidth() > 64)
      return false;
    // The old bounds were i64; values of the element type cannot pass the
    // type's own range, so clamping the bounds to it changes nothing.
    unsigned w = i.getWidth();
    int64_t tmin =
        w == 1 ? 0 : (w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1)));
    int64_t tmax =
        w == 1 ? 1 : (w >= 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1);
    lo = IntegerAttr::get(i, std::clamp(*a, tmin, tmax));
    hi = IntegerAttr::get(i, std::clamp(*b, tmin, tmax));
  } else {
    return false;
  }
  for (const char *old : {"min_fp", "max_fp", "min_int", "max_int"})
    rw.attrs.erase(old);
  rw.attrs.set("min_val", lo);
  rw.attrs.set("max_val", hi);
  rw.changes.push_back("`min_fp`/`max_fp`/`min_int`/`max_int` -> typed "
                       "`min_val`/`max_val`");
  return true;
}

bool migrateAvgPool(Rewrite &rw) {
  if (rw.op->getNumOperands() != 1 || rw.op->getNumResults() != 1)
    return false;
  rw.attrs.erase("quantization_info");
  Type in = rw.op->getOperand(0).getType(), out = rw.op->getResult(0).getType();
  if (!rw.ensureAccType(getElementTypeOrSelf(in)) ||
      !rw.addZeroPoint(in, "input_zp", "input_zp") ||
      !rw.addZeroPoint(out, "output_zp", "output_zp"))
    return false;
  rw.changes.push_back("zero points as operands");
  return true;
}

bool migrateConv(Rewrite &rw) {
  if (rw.op->getNumOperands() != 3)
    return false;
  Type in = rw.op->getOperand(0).getType(), w = rw.op->getOperand(1).getType();
  if (!rw.ensureAccType(getElementTypeOrSelf(in)) ||
      !rw.addZeroPoint(in, "input_zp", "input_zp") ||
      !rw.addZeroPoint(w, "weight_zp", "weight_zp"))
    return false;
  rw.attrs.erase("out_shape"); // transpose_conv2d: the result type says it
  rw.changes.push_back("zero points as operands");
  return true;
}

bool migrateMatmul(Rewrite &rw) {
  if (rw.op->getNumOperands() != 2)
    return false;
  if (!rw.addZeroPoint(rw.op->getOperand(0).getType(), "a_zp", "a_zp") ||
      !rw.addZeroPoint(rw.op->getOperand(1).getType(), "b_zp", "b_zp"))
    return false;
  rw.changes.push_back("zero points as operands");
  return true;
}

bool migrateNegate(Rewrite &rw) {
  if (rw.op->getNumOperands() != 1 || rw.op->getNumResults() != 1)
    return false;
  if (!rw.addZeroPoint(rw.op->getOperand(0).getType(), "input1_zp",
                       "input1_zp") ||
      !rw.addZeroPoint(rw.op->getResult(0).getType(), "output_zp", "output_zp"))
    return false;
  rw.changes.push_back("zero points as operands");
  return true;
}

bool migrateRescale(Rewrite &rw) {
  if (rw.op->getNumOperands() != 1 || rw.op->getNumResults() != 1)
    return false;
  MLIRContext *ctx = rw.op->getContext();
  std::optional<std::vector<int64_t>> mult =
                                          intList(rw.attrs.get("multiplier")),
                                      shift = intList(rw.attrs.get("shift"));
  auto scale32 = dyn_cast_or_null<BoolAttr>(rw.attrs.get("scale32"));
  if (!mult || !shift || mult->size() != shift->size() || mult->empty() ||
      !scale32)
    return false;
  auto n = static_cast<int64_t>(mult->size());
  auto multType = IntegerType::get(ctx, scale32.getValue() ? 32 : 16);
  auto i8 = IntegerType::get(ctx, 8);
  std::vector<APInt> m, s;
  for (int64_t v : *mult)
    m.push_back(APInt(multType.getWidth(), v, true, true));
  for (int64_t v : *shift)
    s.push_back(APInt(8, v, true, true));
  rw.addConstOperand(
      DenseElementsAttr::get(RankedTensorType::get({n}, multType), m),
      "multiplier");
  rw.addConstOperand(DenseElementsAttr::get(RankedTensorType::get({n}, i8), s),
                     "shift");
  rw.attrs.erase("multiplier");
  rw.attrs.erase("shift");
  if (!rw.addZeroPoint(rw.op->getOperand(0).getType(), "input_zp",
                       "input_zp") ||
      !rw.addZeroPoint(rw.op->getResult(0).getType(), "output_zp", "output_zp"))
    return false;
  if (!rw.attrs.get("rounding_mode")) {
    bool twice = false;
    if (auto d = dyn_cast_or_null<BoolAttr>(rw.attrs.get("double_round")))
      twice = d.getValue();
    rw.attrs.set("rounding_mode",
                 tosa::RoundingModeAttr::get(
                     ctx, twice ? tosa::RoundingMode::DOUBLE_ROUND
                                : tosa::RoundingMode::SINGLE_ROUND));
  }
  rw.attrs.erase("double_round");
  if (!rw.attrs.get("per_channel"))
    rw.attrs.set("per_channel", BoolAttr::get(ctx, n > 1));
  for (const char *u : {"input_unsigned", "output_unsigned"})
    if (!rw.attrs.get(u))
      rw.attrs.set(u, BoolAttr::get(ctx, false));
  rw.changes.push_back("multiplier, shift and zero points as operands, "
                       "`double_round` -> `rounding_mode`");
  return true;
}

bool migratePad(Rewrite &rw) {
  unsigned n = rw.op->getNumOperands();
  if (n < 1 || n > 3 || rw.op->getNumResults() != 1)
    return false;
  if (n >= 2 && !isa<RankedTensorType>(rw.op->getOperand(1).getType()))
    return false; // Already a !tosa.shape.
  Type in = rw.op->getOperand(0).getType();
  std::vector<int64_t> padding;
  if (n >= 2) {
    std::optional<std::vector<int64_t>> p =
        constInts(rw.sc, rw.op->getOperand(1));
    if (!p)
      return false;
    padding = *p;
  } else if (auto p = intList(rw.attrs.get("padding"))) {
    padding = *p;
    rw.attrs.erase("padding");
  } else {
    return false;
  }
  std::string padConstName, padConstType;
  if (n == 3) {
    auto t = dyn_cast<RankedTensorType>(rw.op->getOperand(2).getType());
    if (!t || t.getNumElements() != 1)
      return false;
    if (t.getRank() != 1) {
      // A rank-0 constant: the same value as a tensor<1xT>.
      Operation *def = rw.op->getOperand(2).getDefiningOp();
      if (!def || def->getName().getStringRef() != "tosa.const")
        return false;
      const NamedAttrList &ca = allAttrs(rw.sc, def);
      auto d = dyn_cast_or_null<DenseElementsAttr>(
          ca.get("values") ? ca.get("values") : ca.get("value"));
      if (!d || !d.isSplat())
        return false;
      padConstName = rw.constant(
          d.resizeSplat(RankedTensorType::get({1}, t.getElementType())),
          "pad_const");
      padConstType = print(RankedTensorType::get({1}, t.getElementType()));
    } else {
      padConstName = rw.operands[2];
      padConstType = rw.operandTypes[2];
    }
  }
  rw.operands.resize(1);
  rw.operandTypes.resize(1);
  rw.addShapeOperand(padding, "padding");
  if (!padConstName.empty()) {
    rw.addOperand(padConstName, padConstType);
  } else {
    double v = 0;
    for (const char *k : {"pad_const_int", "pad_const_fp"})
      if (Attribute a = rw.attrs.get(k)) {
        std::optional<double> x = floatValue(a);
        if (!x)
          return false;
        if (isa<FloatType>(storageType(in)) == (k[10] == 'f'))
          v = *x;
      }
    std::optional<DenseElementsAttr> c = scalarTensor(storageType(in), v);
    if (!c)
      return false;
    rw.addConstOperand(*c, "pad_const");
  }
  rw.attrs.erase("pad_const_int");
  rw.attrs.erase("pad_const_fp");
  rw.changes.push_back("padding as tosa.const_shape, pad_const operand");
  return true;
}

/// Ops whose array attributes became `tosa.const_shape` operands.
bool migrateShapeAttrs(Rewrite &rw, std::initializer_list<const char *> names) {
  if (rw.op->getNumOperands() != 1)
    return false;
  std::vector<std::vector<int64_t>> values;
  for (const char *name : names) {
    std::optional<std::vector<int64_t>> v = intList(rw.attrs.get(name));
    if (!v)
      return false;
    values.push_back(*v);
  }
  size_t k = 0;
  std::string what;
  for (const char *name : names) {
    rw.attrs.erase(name);
    rw.addShapeOperand(values[k++], name);
    what += (what.empty() ? "`" : ", `") + std::string(name) + "`";
  }
  rw.changes.push_back(what + " -> tosa.const_shape operands");
  return true;
}

/// `mode = "BILINEAR"` (a string before MLIR 22, an enum now).
bool migrateResizeMode(Rewrite &rw) {
  auto mode = dyn_cast_or_null<StringAttr>(rw.attrs.get("mode"));
  if (!mode)
    return true;
  std::optional<tosa::ResizeMode> m =
      tosa::symbolizeResizeMode(mode.getValue());
  if (!m)
    return false;
  rw.attrs.set("mode", tosa::ResizeModeAttr::get(rw.op->getContext(), *m));
  return true;
}

/// tosa.fully_connected (removed in TOSA 1.0): the same sums as a 1x1
/// tosa.conv2d on Nx1x1xIC, between two reshapes. Static shapes only.
bool migrateFullyConnected(Rewrite &rw) {
  if (rw.op->getNumOperands() != 3 || rw.op->getNumResults() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(rw.op->getOperand(0).getType());
  auto w = dyn_cast<RankedTensorType>(rw.op->getOperand(1).getType());
  auto out = dyn_cast<RankedTensorType>(rw.op->getResult(0).getType());
  if (!in || !w || !out || in.getRank() != 2 || w.getRank() != 2 ||
      out.getRank() != 2 || !in.hasStaticShape() || !w.hasStaticShape() ||
      !out.hasStaticShape())
    return false;
  int64_t n = in.getDimSize(0), ic = in.getDimSize(1), oc = w.getDimSize(0);
  auto in4 = RankedTensorType::get({n, 1, 1, ic}, in.getElementType());
  auto w4 = RankedTensorType::get({oc, 1, 1, ic}, w.getElementType());
  auto out4 = RankedTensorType::get({n, 1, 1, oc}, out.getElementType());
  std::string bias = rw.operands[2], biasType = rw.operandTypes[2];
  // Each step's result becomes the next step's operand 0.
  auto reshape = [&](const std::string &value, const std::string &type,
                     RankedTensorType to, const char *what) {
    rw.operands.assign(1, value);
    rw.operandTypes.assign(1, type);
    rw.addShapeOperand(to.getShape(), "shape");
    std::string name = rw.freshName(what);
    rw.prologue += name + " = tosa.reshape " + value + ", " + rw.operands[1] +
                   " : (" + type + ", " + rw.operandTypes[1] + ") -> " +
                   print(to) + "\n" + rw.indent;
    return name;
  };
  std::string input = rw.operands[0], inputType = rw.operandTypes[0];
  std::string weight = rw.operands[1], weightType = rw.operandTypes[1];
  std::string x = reshape(input, inputType, in4, "input");
  std::string wt = reshape(weight, weightType, w4, "weight");
  rw.operands.clear();
  rw.operandTypes.clear();
  rw.attrs.erase("quantization_info");
  if (!rw.ensureAccType(getElementTypeOrSelf(in)) ||
      !rw.addZeroPoint(in, "input_zp", "input_zp") ||
      !rw.addZeroPoint(w, "weight_zp", "weight_zp"))
    return false;
  std::string conv = rw.freshName("conv");
  MLIRContext *ctx = rw.op->getContext();
  NamedAttrList convAttrs;
  convAttrs.set("acc_type", rw.attrs.get("acc_type"));
  convAttrs.set("pad", DenseI64ArrayAttr::get(ctx, {0, 0, 0, 0}));
  convAttrs.set("stride", DenseI64ArrayAttr::get(ctx, {1, 1}));
  convAttrs.set("dilation", DenseI64ArrayAttr::get(ctx, {1, 1}));
  rw.prologue += conv + " = tosa.conv2d " + x + ", " + wt + ", " + bias + ", " +
                 rw.operands[0] + ", " + rw.operands[1] + " " +
                 print(convAttrs.getDictionary(ctx)) + " : (" + print(in4) +
                 ", " + print(w4) + ", " + biasType + ", " +
                 rw.operandTypes[0] + ", " + rw.operandTypes[1] + ") -> " +
                 print(out4) + "\n" + rw.indent;
  rw.operands.assign(1, conv);
  rw.operandTypes.assign(1, print(out4));
  rw.addShapeOperand(out.getShape(), "shape");
  rw.attrs = NamedAttrList();
  for (NamedAttribute a : rw.op->getDiscardableAttrDictionary())
    if (!llvm::is_contained(
            {"input_zp", "weight_zp", "acc_type", "quantization_info"},
            a.getName().getValue()))
      rw.attrs.append(a);
  rw.newName = "tosa.reshape";
  rw.changes.push_back("tosa.fully_connected (removed) -> tosa.conv2d with "
                       "a 1x1 kernel between reshapes");
  return true;
}

/// Where the op's trailing `loc(...)` starts in its text, if it has one.
size_t trailingLoc(std::string_view text) {
  size_t p = text.rfind("loc(");
  if (p == text.npos || p == 0 ||
      !std::isspace(static_cast<unsigned char>(text[p - 1])))
    return text.npos;
  size_t end = skipBracket(text, p + 3);
  return end == text.size() ? p : text.npos;
}

std::string lineIndent(std::string_view text, size_t off) {
  size_t start = text.rfind('\n', off == 0 ? 0 : off - 1);
  start = (start == text.npos || off == 0) ? 0 : start + 1;
  size_t e = start;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t'))
    ++e;
  return std::string(text.substr(start, e - start));
}

/// `tosa.const {value = ...}`: rename the key in place (constants are most
/// of a model's bytes; they are never re-printed).
std::optional<size_t> valueKey(std::string_view text) {
  size_t open = text.find('{');
  if (open == text.npos)
    return std::nullopt;
  int depth = 0;
  bool expectKey = false;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth == 1)
        expectKey = true;
      continue;
    }
    if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (--depth == 0)
        return std::nullopt;
      continue;
    }
    if (depth == 1 && c == ',') {
      expectKey = true;
      continue;
    }
    if (depth == 1 && expectKey &&
        !std::isspace(static_cast<unsigned char>(c))) {
      expectKey = false;
      if (text.compare(i, 5, "value") == 0) {
        size_t j = i + 5;
        while (j < text.size() &&
               std::isspace(static_cast<unsigned char>(text[j])))
          ++j;
        if (j < text.size() && text[j] == '=')
          return i;
      }
    }
  }
  return std::nullopt;
}

/// The text with every generic op's properties `<{...}>` turned into (or
/// merged with) its attribute dictionary, byte for byte the same length so
/// positions stay. MLIR 22 refuses properties on ops that have none now
/// (`"tosa.reshape"(%x) <{new_shape = ...}>`); as attributes they parse
/// and the rewrite reads them. Only used when the text does not parse.
std::string propertiesAsAttributes(std::string_view in) {
  std::string out(in);
  // The text does not parse: a string left open runs on past its line.
  auto skipString = [&](size_t i) {
    return detail::stringEnd(in, i, detail::LineBreaks::Inside);
  };
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    if (in[i] == '"') {
      i = skipString(i);
      continue;
    }
    if (in[i] != '<' || in[i + 1] != '{')
      continue;
    int depth = 0;
    size_t k = i + 1;
    for (; k < in.size(); ++k) {
      if (in[k] == '"') {
        k = skipString(k);
        continue;
      }
      if (in[k] == '{')
        ++depth;
      else if (in[k] == '}' && --depth == 0)
        break;
    }
    if (k + 1 >= in.size() || in[k + 1] != '>')
      continue;
    out[i] = ' ';
    out[k + 1] = ' ';
    size_t m = k + 2;
    while (m < in.size() && std::isspace(static_cast<unsigned char>(in[m])))
      ++m;
    if (m < in.size() && in[m] == '{') {
      size_t n = m + 1;
      while (n < in.size() && std::isspace(static_cast<unsigned char>(in[n])))
        ++n;
      out[m] = ' ';
      if (n < in.size() && in[n] == '}') { // `<{a}> {}`
        out[n] = ' ';
        out[k] = '}';
      } else {
        out[k] = ',';
      }
    }
    i = k + 1;
  }
  return out;
}

/// Offsets of `needle` in `text` outside strings and `//` comments.
std::vector<size_t> codeOccurrences(std::string_view text,
                                    std::string_view needle) {
  std::vector<size_t> out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      i = detail::stringEnd(text, i);
      continue;
    }
    if (detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
      if (i == text.npos)
        break;
      continue;
    }
    if (text.compare(i, needle.size(), needle) == 0)
      out.push_back(i);
  }
  return out;
}

const char *kFullyConnectedAdvice =
    "tosa.fully_connected was removed in TOSA 1.0 (MLIR 22): reshape the "
    "input to Nx1x1xIC and the weights to OCx1x1xIC (tosa.reshape) and use "
    "tosa.conv2d with zero points and acc_type, then reshape the result to "
    "NxOC; or use tosa.matmul followed by tosa.add for the bias";

/// Cheap test on the IR: the op already has MLIR 22's operands (or, for
/// tosa.clamp, attributes).
bool inMlir22Form(Operation *op) {
  static const llvm::StringMap<unsigned> operands = {
      {"tosa.mul", 3},
      {"tosa.reshape", 2},
      {"tosa.transpose", 1},
      {"tosa.avg_pool2d", 3},
      {"tosa.conv2d", 5},
      {"tosa.conv3d", 5},
      {"tosa.depthwise_conv2d", 5},
      {"tosa.transpose_conv2d", 5},
      {"tosa.matmul", 4},
      {"tosa.negate", 3},
      {"tosa.rescale", 5},
      {"tosa.slice", 3},
      {"tosa.tile", 2},
      {"tosa.resize", 4}};
  llvm::StringRef name = op->getName().getStringRef();
  if (name == "tosa.clamp")
    return static_cast<bool>(op->getAttrDictionary().get("min_val"));
  if (name == "tosa.pad")
    return op->getNumOperands() == 3 &&
           !isa<RankedTensorType>(op->getOperand(1).getType());
  if (name == "tosa.fully_connected")
    return false;
  auto it = operands.find(name);
  return it == operands.end() || op->getNumOperands() == it->second;
}

void planSection(SectionCtx &sc, Block &block, const LineIndex &lines,
                 unsigned section, MigrationPlan &plan) {
  auto pos = [&](size_t off) { return lines.position(sc.base + off); };
  block.walk([&](Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (!name.starts_with("tosa."))
      return;
    const AsmParserState::OperationDefinition *def = sc.state->getOpDef(op);
    if (!def)
      return;
    size_t nameBegin = sc.offset(def->loc.Start),
           nameEnd = sc.offset(def->loc.End),
           end = sc.offset(def->scopeLoc.End);
    Range nameRange{pos(nameBegin), pos(nameEnd)};
    if (name == "tosa.const") {
      if (op->getAttrDictionary().get("values"))
        return;
      std::string_view text = sc.buf.substr(nameBegin, end - nameBegin);
      std::optional<size_t> key = valueKey(text);
      if (!key)
        return;
      size_t at = nameBegin + *key;
      MigrationFix fix;
      fix.opName = name.str();
      fix.nameRange = nameRange;
      fix.section = section;
      fix.title = "Migrate tosa.const to MLIR 22: `value` -> `values`";
      fix.edits.push_back({{pos(at), pos(at + 5)}, "values"});
      plan.fixes.push_back(std::move(fix));
      return;
    }
    if (inMlir22Form(op))
      return; // Most ops of a model: no text is read for them.
    Rewrite rw{sc, op, "", {}, {}, allAttrs(sc, op), "", {}, ""};
    size_t stmt = def->resultGroups.empty()
                      ? nameBegin
                      : sc.offset(def->resultGroups[0].definition.loc.Start);
    rw.indent = lineIndent(sc.buf, stmt);
    for (Value v : op->getOperands()) {
      std::optional<std::string> n = valueName(sc, v);
      if (!n)
        return;
      rw.addOperand(*n, print(v.getType()));
    }
    if (op->getNumRegions() != 0 || op->getNumSuccessors() != 0)
      return;
    bool ok = false;
    if (name == "tosa.mul")
      ok = migrateMul(rw);
    else if (name == "tosa.reshape")
      ok = migrateReshape(rw);
    else if (name == "tosa.transpose")
      ok = migrateTranspose(rw);
    else if (name == "tosa.clamp")
      ok = migrateClamp(rw);
    else if (name == "tosa.avg_pool2d")
      ok = migrateAvgPool(rw);
    else if (name == "tosa.conv2d" || name == "tosa.depthwise_conv2d" ||
             name == "tosa.conv3d" || name == "tosa.transpose_conv2d")
      ok = migrateConv(rw);
    else if (name == "tosa.matmul")
      ok = migrateMatmul(rw);
    else if (name == "tosa.negate")
      ok = migrateNegate(rw);
    else if (name == "tosa.rescale")
      ok = migrateRescale(rw);
    else if (name == "tosa.pad")
      ok = migratePad(rw);
    else if (name == "tosa.slice")
      ok = migrateShapeAttrs(rw, {"start", "size"});
    else if (name == "tosa.tile")
      ok = migrateShapeAttrs(rw, {"multiples"});
    else if (name == "tosa.resize")
      ok = migrateResizeMode(rw) &&
           migrateShapeAttrs(rw, {"scale", "offset", "border"});
    else if (name == "tosa.fully_connected")
      ok = migrateFullyConnected(rw);
    if (!ok) {
      if (name == "tosa.fully_connected")
        plan.manual.push_back(
            {name.str(), nameRange, section, kFullyConnectedAdvice});
      return;
    }

    std::string_view opText = sc.buf.substr(nameBegin, end - nameBegin);
    std::string tail;
    if (size_t l = trailingLoc(opText); l != opText.npos)
      tail = " " + std::string(opText.substr(l));
    bool generic = !opText.empty() && opText[0] == '"';
    std::string newName = rw.newName.empty() ? name.str() : rw.newName;
    std::string operands, types, results;
    for (size_t i = 0; i < rw.operands.size(); ++i) {
      operands += (i ? ", " : "") + rw.operands[i];
      types += (i ? ", " : "") + rw.operandTypes[i];
    }
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      results += (i ? ", " : "") + print(op->getResult(i).getType());
    if (op->getNumResults() != 1)
      results = "(" + results + ")";
    std::string out = generic ? "\"" + newName + "\"(" + operands + ")"
                              : newName + " " + operands;
    if (!rw.attrs.empty())
      out += " " + print(rw.attrs.getDictionary(op->getContext()));
    out += " : (" + types + ") -> " + results + tail;

    MigrationFix fix;
    fix.opName = name.str();
    fix.nameRange = nameRange;
    fix.section = section;
    std::string what;
    for (const std::string &c : rw.changes)
      what += (what.empty() ? "" : "; ") + c;
    fix.title = "Migrate " + name.str() + " to MLIR 22: " + what;
    if (!rw.prologue.empty())
      fix.edits.push_back({{pos(stmt), pos(stmt)}, rw.prologue});
    fix.edits.push_back({{pos(nameBegin), pos(end)}, out});
    plan.fixes.push_back(std::move(fix));
  });
}

} // namespace

std::optional<std::string> removedTosaOpAdvice(std::string_view message) {
  if (message.find("'tosa.fully_connected'") != message.npos)
    return std::string(kFullyConnectedAdvice);
  return std::nullopt;
}

bool mayNeedMigration(const std::string &text) {
  return text.find("tosa.") != std::string::npos;
}

MigrationPlan planMigration(const std::string &text) {
  MigrationPlan plan;
  if (!mayNeedMigration(text))
    return plan;
  LineIndex lines(text);
  // A context of our own: the TOSA dialect here accepts ops MLIR 22 removed.
  // On a crash it is abandoned (leaked), never destroyed.
  MLIRContext *ctx = singleThreadedContext(registry()).release();
  ctx->allowUnregisteredDialects();
  DialectAccess::allowUnknownOps(ctx->getOrLoadDialect<tosa::TosaDialect>());
  std::string parseErrors; // of the current section
  ScopedDiagnosticHandler *quiet =
      new ScopedDiagnosticHandler(ctx, [&](mlir::Diagnostic &d) {
        parseErrors += d.str() + "\n";
        return success();
      });
  bool crashed = false;
  for (const Section &sec : splitSections(text)) {
    std::string_view body = std::string_view(text).substr(
        sec.beginOffset, sec.endOffset - sec.beginOffset);
    if (findExcessiveNesting(body) ||
        findExcessiveResultNumber(body, body.size()) ||
        findExcessiveIntegerWidth(body, body.size(), text.size()) ||
        body.find("tosa.") == body.npos)
      continue;
    MigrationPlan part;
    std::optional<std::string> crash = runContained([&] {
      std::string_view buf = body;
      std::string alternative;
      auto parse = [&](AsmParserState &state, Block &block) {
        llvm::SourceMgr sm;
        sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(buf, "", false),
                              llvm::SMLoc());
        ParserConfig config(ctx, /*verifyAfterParse=*/false);
        return succeeded(parseAsmSourceFile(sm, &block, config, &state));
      };
      AsmParserState state;
      Block block;
      parseErrors.clear();
      if (!parse(state, block)) {
        alternative = propertiesAsAttributes(body);
        // `#tosa.rounding_type<...>` became `#tosa.rounding_mode<...>`: a
        // parse error MLIR names; the same length, so positions stay.
        if (parseErrors.find("unknown attribute `rounding_type` in dialect "
                             "`tosa`") != std::string::npos)
          for (size_t at :
               codeOccurrences(alternative, "#tosa.rounding_type<")) {
            size_t key = at + 6;
            alternative.replace(key, 13, "rounding_mode");
            MigrationFix fix;
            fix.opName = "#tosa.rounding_type";
            fix.nameRange = {lines.position(sec.beginOffset + key),
                             lines.position(sec.beginOffset + key + 13)};
            fix.section = sec.index;
            fix.title = "Migrate to MLIR 22: `#tosa.rounding_type` -> "
                        "`#tosa.rounding_mode`";
            fix.edits.push_back({fix.nameRange, "rounding_mode"});
            part.fixes.push_back(std::move(fix));
          }
        if (alternative == body)
          return;
        buf = alternative;
        state = AsmParserState();
        block.clear();
        if (!parse(state, block))
          return;
      }
      SectionCtx sc;
      sc.buf = buf;
      sc.base = sec.beginOffset;
      sc.state = &state;
      sc.fresh = "%v22_";
      while (body.find(sc.fresh) != body.npos)
        sc.fresh.insert(sc.fresh.size() - 1, "x");
      planSection(sc, block, lines, sec.index, part);
    });
    if (crash) {
      crashed = true;
      break;
    }
    for (MigrationFix &f : part.fixes)
      plan.fixes.push_back(std::move(f));
    for (MigrationNote &n : part.manual)
      plan.manual.push_back(std::move(n));
  }
  if (!crashed) {
    delete quiet;
    delete ctx;
  }
  return plan;
}

std::string applyMigration(const std::string &text, const MigrationPlan &plan) {
  std::vector<TextEditData> edits;
  for (const MigrationFix &f : plan.fixes)
    edits.insert(edits.end(), f.edits.begin(), f.edits.end());
  return applyEdits(text, edits);
}

} // namespace tosa_lsp
