//===- MigrateSupport.cpp - reading the parsed section for the migration -----
//===//
//
// Attribute values, SSA names and constants of the section being migrated,
// read from the IR and, where MLIR 22 dropped them, from the text.
//
//===----------------------------------------------------------------------===//

#include "MigrateSupport.h"

#include "TextScan.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tosa_lsp::migrate {

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
  if (!def || !isTosa(def, "tosa.const"))
    return std::nullopt;
  const NamedAttrList &attrs = allAttrs(sc, def);
  Attribute a = attrs.get("values");
  if (!a)
    a = attrs.get("value");
  return intList(a);
}

/// An op being rewritten: its MLIR 22 operands and attributes, and the

void flattenQuantInfo(NamedAttrList &attrs) {
  Attribute q = attrs.get("quantization_info");
  if (!q)
    return;
  auto dict = dyn_cast<DictionaryAttr>(q);
  if (!dict) {
    // `#tosa.conv_quant<input_zp = 1, weight_zp = 2>`: its parameters as a
    // dictionary.
    std::string text = print(q);
    size_t open = text.find('<'), close = text.rfind('>');
    if (open == std::string::npos || close == std::string::npos || close < open)
      return;
    dict = dyn_cast_or_null<DictionaryAttr>(parseAttribute(
        "{" + text.substr(open + 1, close - open - 1) + "}", q.getContext()));
  }
  if (!dict)
    return;
  for (NamedAttribute a : dict)
    if (!attrs.get(a.getName()))
      attrs.append(a);
  attrs.erase("quantization_info");
}

namespace {
/// TOSA's integer array attributes (all i64 in MLIR 22, but `perms`).
bool denseArrayName(llvm::StringRef name) {
  return llvm::is_contained(
      {"pad", "stride", "dilation", "kernel", "out_pad", "out_shape"}, name);
}
} // namespace

bool hasArrayAttrs(Operation *op) {
  for (NamedAttribute a : op->getAttrs())
    if (isa<ArrayAttr>(a.getValue()) && denseArrayName(a.getName()))
      return true;
  return false;
}

bool arrayAttrsAsDense(Rewrite &rw) {
  bool changed = false;
  for (NamedAttribute a :
       NamedAttrList(rw.attrs.getDictionary(rw.op->getContext()))) {
    if (!isa<ArrayAttr>(a.getValue()) || !denseArrayName(a.getName()))
      continue;
    std::optional<std::vector<int64_t>> v = intList(a.getValue());
    if (!v)
      continue;
    rw.attrs.set(a.getName(), DenseI64ArrayAttr::get(rw.op->getContext(), *v));
    changed = true;
  }
  if (changed)
    rw.changes.push_back("array attributes -> dense arrays");
  return changed;
}

bool elidedConstant(SectionCtx &sc, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isTosa(def, "tosa.const"))
    return false;
  const NamedAttrList &attrs = allAttrs(sc, def);
  Attribute a = attrs.get("values") ? attrs.get("values") : attrs.get("value");
  auto r = dyn_cast_or_null<DenseResourceElementsAttr>(a);
  return r && r.getRawHandle().getKey() == "__elided__";
}

std::string tosaName(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  if (llvm::StringRef(name).starts_with("tosx."))
    name[3] = 'a';
  return name;
}

bool isTosa(Operation *op, llvm::StringRef name) {
  llvm::StringRef own = op->getName().getStringRef();
  return own == name ||
         (own.starts_with("tosx.") && name.starts_with("tosa.") &&
          own.drop_front(5) == name.drop_front(5));
}

} // namespace tosa_lsp::migrate
