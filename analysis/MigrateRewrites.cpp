//===- MigrateRewrites.cpp - one rewrite per pre-MLIR-22 TOSA form ----------
//===//
//
// Each reads the old op (operands, attributes as written) and fills the
// Rewrite with its MLIR 22 operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "MigrateSupport.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;

namespace tosa_lsp::migrate {

std::string Rewrite::freshName(const char *what) {
  return sc.fresh + what + "_" + std::to_string(sc.counter++);
}
void Rewrite::addOperand(std::string name, std::string type) {
  operands.push_back(std::move(name));
  operandTypes.push_back(std::move(type));
}
/// A new `tosa.const` holding `value`; returns its name.
std::string Rewrite::constant(DenseElementsAttr value, const char *what) {
  std::string name = freshName(what);
  prologue += name + " = \"tosa.const\"() <{values = " + print(value) +
              "}> : () -> " + print(value.getType()) + "\n" + indent;
  return name;
}
void Rewrite::addConstOperand(DenseElementsAttr value, const char *what) {
  addOperand(constant(value, what), print(value.getType()));
}
/// A new `tosa.const_shape` operand.
std::string Rewrite::shapeConstant(ArrayRef<int64_t> dims, const char *what) {
  MLIRContext *ctx = op->getContext();
  auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                    IndexType::get(ctx));
  auto value = DenseIntElementsAttr::get(type, dims);
  std::string name = freshName(what);
  prologue += name + " = tosa.const_shape {values = " + print(value) +
              "} : () -> !tosa.shape<" + std::to_string(dims.size()) + ">\n" +
              indent;
  return name;
}

void Rewrite::addShapeOperand(ArrayRef<int64_t> dims, const char *what) {
  addOperand(shapeConstant(dims, what),
             "!tosa.shape<" + std::to_string(dims.size()) + ">");
}

bool Rewrite::addZeroPoint(Type like, llvm::StringRef attrName,
                           const char *what) {
  double zp = 0;
  if (Attribute a = attrs.get(attrName)) {
    std::optional<double> v = floatValue(a);
    if (!v)
      return false;
    zp = *v;
    attrs.erase(attrName);
  }
  std::optional<DenseElementsAttr> value = scalarTensor(storageType(like), zp);
  if (!value)
    return false;
  addConstOperand(*value, what);
  return true;
}
bool Rewrite::ensureAccType(Type inputElem) {
  if (attrs.get("acc_type"))
    return true;
  std::optional<Type> acc = defaultAccType(storageType(inputElem));
  if (!acc)
    return false;
  attrs.set("acc_type", TypeAttr::get(*acc));
  return true;
}

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

namespace {
/// Every permutation `p` with `out[i] == in[p[i]]` (static shapes), up to
/// two: the perms are recovered only when the shapes allow one.
void permutationsOf(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                    std::vector<int64_t> &p, std::vector<bool> &used,
                    std::vector<std::vector<int64_t>> &found) {
  if (found.size() > 1)
    return;
  if (p.size() == out.size()) {
    found.push_back(p);
    return;
  }
  for (size_t j = 0; j < in.size(); ++j)
    if (!used[j] && in[j] == out[p.size()]) {
      used[j] = true;
      p.push_back(static_cast<int64_t>(j));
      permutationsOf(in, out, p, used, found);
      p.pop_back();
      used[j] = false;
    }
}
} // namespace

bool migrateTranspose(Rewrite &rw) {
  if (rw.op->getNumOperands() != 2 || rw.attrs.get("perms") ||
      rw.op->getNumResults() != 1)
    return false;
  std::optional<std::vector<int64_t>> perms =
      constInts(rw.sc, rw.op->getOperand(1));
  std::string how = "perms operand -> `perms` attribute";
  if (!perms) {
    bool elided = elidedConstant(rw.sc, rw.op->getOperand(1));
    auto in = dyn_cast<RankedTensorType>(rw.op->getOperand(0).getType());
    auto out = dyn_cast<RankedTensorType>(rw.op->getResult(0).getType());
    std::vector<std::vector<int64_t>> found;
    if (in && out && in.hasStaticShape() && out.hasStaticShape() &&
        in.getRank() == out.getRank()) {
      std::vector<int64_t> p;
      std::vector<bool> used(in.getRank(), false);
      permutationsOf(in.getShape(), out.getShape(), p, used, found);
    }
    if (found.size() != 1) {
      rw.why = std::string(elided ? "the perms constant's data is elided "
                                    "(dense_resource<__elided__>)"
                                  : "the perms are not a tosa.const") +
               (found.empty() ? " and the shapes give no permutation"
                              : " and the input and result shapes allow "
                                "several permutations") +
               ": write the `perms` attribute by hand";
      return false;
    }
    perms = found[0];
    how = std::string("perms operand ") + (elided ? "(elided data) " : "") +
          "-> `perms` attribute recovered from the input and result shapes";
  }
  std::vector<int32_t> p(perms->begin(), perms->end());
  rw.attrs.set("perms", DenseI32ArrayAttr::get(rw.op->getContext(), p));
  rw.operands.pop_back();
  rw.operandTypes.pop_back();
  rw.changes.push_back(how);
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

namespace {
/// The value old TOSA padded with when no pad_const operand was given: a
/// `pad_const_int`/`pad_const_fp` attribute of the element's kind, else
/// for integers (quantized or not) the input zero point of the
/// quantization info -- the stored value that means 0 (TOSA 0.x:
/// `tensor_read` minus zp, padding 0, plus zp on write; MLIR's old
/// lowering padded with `input_zp`) -- else 0. TOSA 1.0's pad_const is
/// stored as is ("includes the zero point").
std::optional<double> oldPadValue(Rewrite &rw, Type elem) {
  bool isFloat = isa<FloatType>(elem);
  if (Attribute a = rw.attrs.get(isFloat ? "pad_const_fp" : "pad_const_int"))
    return floatValue(a);
  if (Attribute zp = rw.attrs.get("input_zp"); zp && !isFloat)
    return floatValue(zp);
  return 0.0;
}
} // namespace

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
    if (!p) {
      rw.why = elidedConstant(rw.sc, rw.op->getOperand(1))
                   ? "the padding constant's data is elided "
                     "(dense_resource<__elided__>): the padding cannot be "
                     "recovered; write it as a tosa.const_shape"
                   : "the padding is not a tosa.const: write it as a "
                     "tosa.const_shape";
      return false;
    }
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
      if (!def || !isTosa(def, "tosa.const"))
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
  std::string how = "padding as tosa.const_shape, pad_const operand";
  if (!padConstName.empty()) {
    rw.addOperand(padConstName, padConstType);
  } else {
    std::optional<double> v = oldPadValue(rw, storageType(in));
    if (!v)
      return false;
    std::optional<DenseElementsAttr> c = scalarTensor(storageType(in), *v);
    if (!c)
      return false;
    rw.addConstOperand(*c, "pad_const");
    if (*v != 0 && !rw.attrs.get("pad_const_int") &&
        !rw.attrs.get("pad_const_fp"))
      how += " holding the input zero point";
  }
  for (const char *k : {"pad_const_int", "pad_const_fp", "input_zp"})
    rw.attrs.erase(k);
  rw.changes.push_back(how);
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

/// A reshape's shape for `t`: MLIR 22 infers a -1 from the input, which
/// is how a dynamic batch stays dynamic (`tosa.const_shape` holds no `?`).
static std::vector<int64_t> reshapeDims(RankedTensorType t) {
  std::vector<int64_t> dims(t.getShape().begin(), t.getShape().end());
  for (int64_t &d : dims)
    if (ShapedType::isDynamic(d))
      d = -1;
  return dims;
}

/// tosa.fully_connected (removed in TOSA 1.0): the same sums as a 1x1
/// tosa.conv2d on Nx1x1xIC, between two reshapes. The batch N may be
/// dynamic (a -1 in the reshapes); the weights must be static.
bool migrateFullyConnected(Rewrite &rw) {
  if (rw.op->getNumOperands() != 3 || rw.op->getNumResults() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(rw.op->getOperand(0).getType());
  auto w = dyn_cast<RankedTensorType>(rw.op->getOperand(1).getType());
  auto out = dyn_cast<RankedTensorType>(rw.op->getResult(0).getType());
  if (!in || !w || !out || in.getRank() != 2 || w.getRank() != 2 ||
      out.getRank() != 2)
    return false;
  if (!w.hasStaticShape()) {
    rw.why = "tosa.fully_connected was removed in TOSA 1.0 (MLIR 22) and "
             "its weights' shape is not static, so their reshape to "
             "OCx1x1xIC cannot be written: give the weights a static type";
    return false;
  }
  int64_t n = in.getDimSize(0), ic = w.getDimSize(1), oc = w.getDimSize(0);
  if (ShapedType::isDynamic(n))
    n = out.getDimSize(0); // A static result batch says it too.
  auto in4 = RankedTensorType::get({n, 1, 1, ic}, in.getElementType());
  auto w4 = RankedTensorType::get({oc, 1, 1, ic}, w.getElementType());
  auto out4 = RankedTensorType::get({n, 1, 1, oc}, out.getElementType());
  std::string bias = rw.operands[2], biasType = rw.operandTypes[2];
  // Each step's result becomes the next step's operand 0.
  auto reshape = [&](const std::string &value, const std::string &type,
                     RankedTensorType to, const char *what) {
    rw.operands.assign(1, value);
    rw.operandTypes.assign(1, type);
    rw.addShapeOperand(reshapeDims(to), "shape");
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
  rw.addShapeOperand(reshapeDims(out), "shape");
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

} // namespace tosa_lsp::migrate
