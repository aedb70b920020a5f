//===- BroadcastOps.cpp - find Broadcastable ops and analyse them ---------===//

#include "IR.h"
#include "MLIRShared.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace tosa_lsp::detail {
namespace {

/// Element-wise TOSA ops of the RFC (spec 001) under their MLIR 22 names
/// (tosa.div became tosa.intdiv; sin/cos were added). Only some carry
/// ResultsBroadcastableShape in MLIR 22; the same analysis applies to all.
const llvm::StringSet<> &tosaElementwise() {
  static const llvm::StringSet<> names = {
      // Unary.
      "tosa.abs", "tosa.bitwise_not", "tosa.cast", "tosa.ceil", "tosa.clamp",
      "tosa.clz", "tosa.cos", "tosa.erf", "tosa.exp", "tosa.floor", "tosa.log",
      "tosa.logical_not", "tosa.negate", "tosa.reciprocal", "tosa.rsqrt",
      "tosa.sigmoid", "tosa.sin", "tosa.tanh",
      // Binary.
      "tosa.add", "tosa.arithmetic_right_shift", "tosa.bitwise_and",
      "tosa.bitwise_or", "tosa.bitwise_xor", "tosa.intdiv", "tosa.equal",
      "tosa.greater", "tosa.greater_equal", "tosa.logical_and",
      "tosa.logical_left_shift", "tosa.logical_or", "tosa.logical_right_shift",
      "tosa.logical_xor", "tosa.maximum", "tosa.minimum", "tosa.mul",
      "tosa.pow", "tosa.sub",
      // Ternary.
      "tosa.select"};
  return names;
}

/// std::nullopt: not a shaped type; otherwise the shape (inner nullopt for
/// unranked).
std::optional<MaybeShape> shapeOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return std::nullopt;
  if (!shaped.hasRank())
    return MaybeShape();
  return MaybeShape(Shape(shaped.getShape().begin(), shaped.getShape().end()));
}

std::optional<std::vector<int64_t>> intList(Attribute attr) {
  if (!attr)
    return std::nullopt;
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end());
  if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
    return std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end());
  if (auto a = dyn_cast<DenseIntElementsAttr>(attr)) {
    std::vector<int64_t> out;
    for (const APInt &v : a.getValues<APInt>())
      out.push_back(v.getSExtValue());
    return out;
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    std::vector<int64_t> out;
    for (Attribute e : a) {
      auto i = dyn_cast<IntegerAttr>(e);
      if (!i)
        return std::nullopt;
      out.push_back(i.getInt());
    }
    return out;
  }
  return std::nullopt;
}

/// What an op's name decides: an implicit or linalg broadcast, or nothing
/// (then its attributes decide, classifyByAttributes); and whether it is a
/// TOSA element-wise op.
struct NameKind {
  std::optional<OpKind> kind;
  bool tosa = false;
};
NameKind classifyByName(Operation *op, const Config &config) {
  StringRef name = op->getName().getStringRef();
  NameKind k;
  k.tosa = tosaElementwise().contains(name);
  if (k.tosa || op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
      config.isBroadcastableName(std::string_view(name.data(), name.size())))
    k.kind = OpKind::Implicit;
  else if (name == "linalg.broadcast")
    k.kind = OpKind::LinalgBroadcast;
  return k;
}

std::optional<OpKind> classifyByAttributes(Operation *op) {
  if (!op->getDiscardableAttr("broadcast_dimensions") &&
      !op->getInherentAttr("broadcast_dimensions"))
    return std::nullopt;
  if (op->getName().getStringRef().ends_with("broadcast_in_dim") &&
      op->getNumOperands() >= 1 && op->getNumResults() == 1)
    return OpKind::BroadcastInDim;
  if (op->getNumOperands() == 2 && op->getNumResults() == 1)
    return OpKind::BinaryInDim;
  return std::nullopt;
}

Attribute getAttr(Operation *op, StringRef name) {
  if (std::optional<Attribute> a = op->getInherentAttr(name); a && *a)
    return *a;
  return op->getDiscardableAttr(name);
}

} // namespace

void markVerified(const llvm::DenseSet<Operation *> &failed,
                  const llvm::DenseSet<Operation *> &visited,
                  const llvm::DenseMap<Operation *, unsigned> &reportOf,
                  std::vector<OpReport> &reports) {
  for (const auto &[op, i] : reportOf) {
    reports[i].verifierFailed = failed.contains(op);
    reports[i].verifierRan = visited.contains(op);
  }
}

namespace {
/// What an op's report takes from its types (and dimension list).
struct Inputs {
  bool valid = false; // every operand and the result shaped
  CowVector<SharedText> operandTypes;
  SharedText resultType;
  std::optional<BroadcastSummary> summary;
  CowVector<int32_t> packedShapes;
};

Inputs computeInputs(const ParsedSection &section, Operation *op, OpKind kind,
                     bool tosa, unsigned n, Attribute dimsAttr) {
  Inputs in;
  auto result = shapeOf(op->getResult(0).getType());
  if (!result)
    return in;
  std::vector<MaybeShape> shapes;
  llvm::SmallVector<SharedText, 4> types;
  for (unsigned i = 0; i < n; ++i) {
    auto s = shapeOf(op->getOperand(i).getType());
    if (!s)
      return in; // Scalars etc.: not a tensor/vector broadcast.
    shapes.push_back(std::move(*s));
    types.push_back(section.typeName(op->getOperand(i).getType()));
  }
  std::optional<std::vector<int64_t>> dims;
  if (kind == OpKind::Implicit) {
    BroadcastOptions opts;
    opts.requireEqualRanks = tosa;
    in.summary = summarizeBroadcast(shapes, *result, opts);
  } else {
    dims = intList(dimsAttr);
    if (!dims)
      return in;
  }
  in.valid = true;
  in.operandTypes = CowVector<SharedText>(types.data(), types.size());
  in.resultType = section.typeName(op->getResult(0).getType());
  in.packedShapes = packShapes(shapes, *result, dims ? &*dims : nullptr);
  return in;
}
} // namespace

/// What the Broadcastable trait requires of an op MLIR does not verify
/// (spec: exactly one result; operands and result tensors or vectors), in
/// mlir-opt's words for its test op; empty when it holds.
static std::string malformedBroadcastable(Operation *op,
                                          unsigned dataOperands) {
  std::string name = "'" + op->getName().getStringRef().str() + "' op ";
  if (op->getNumResults() != 1)
    return name + "requires one result";
  auto shaped = [](Type t) { return isa<TensorType, VectorType>(t); };
  auto typeText = [](Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    return s;
  };
  for (unsigned i = 0; i < dataOperands && i < op->getNumOperands(); ++i)
    if (!shaped(op->getOperand(i).getType()))
      return name + "operand #" + std::to_string(i) +
             " must be a tensor or vector, but got '" +
             typeText(op->getOperand(i).getType()) + "'";
  if (!shaped(op->getResult(0).getType()))
    return name + "result #0 must be a tensor or vector, but got '" +
           typeText(op->getResult(0).getType()) + "'";
  return "";
}

void collectOpReports(const ParsedSection &section, const Config &config,
                      std::vector<OpReport> &out,
                      llvm::DenseMap<Operation *, unsigned> &reportOf,
                      std::vector<MalformedOp> *malformed) {
  // At most one report per op: reserved once (pages past the reports are
  // never touched), not grown by doubling with a copy each time.
  out.reserve(out.size() + size_t(llvm::size(section.state.getOpDefs()) *
                                  section.capacityFactor));
  // Per op name, what it decides (name lookups in string sets, for every
  // op of a model, were a tenth of this walk).
  llvm::DenseMap<const void *, NameKind> byName;
  llvm::StringMap<Inputs> inputsBySignature;
  llvm::SmallString<64> key;
  section.module.get()->walk([&](Operation *op) {
    auto [named, added] =
        byName.try_emplace(op->getName().getAsOpaquePointer());
    if (added)
      named->second = classifyByName(op, config);
    const NameKind &nk = named->second;
    std::optional<OpKind> kind = nk.kind ? nk.kind : classifyByAttributes(op);
    if (!kind)
      return;
    OpReport r;
    r.name = section.opName(op);
    r.section = section.section.index;
    r.kind = *kind;
    r.registered = op->isRegistered();
    r.numOperands = op->getNumOperands();
    r.hasRegions = op->getNumRegions() != 0;
    if (const auto *def = section.state.getOpDef(op)) {
      r.range = section.toFileRange(def->loc);
      fillOpSpans(section, *def, r);
    } else {
      r.range = section.opRange(op);
    }

    if (*kind == OpKind::LinalgBroadcast) {
      // ins(%input) outs(%init) dimensions = [added dims]
      if (op->getNumOperands() < 2)
        return;
      auto in = shapeOf(op->getOperand(0).getType());
      auto init = shapeOf(op->getOperand(1).getType());
      auto dims = intList(getAttr(op, "dimensions"));
      if (!in || !init || !dims)
        return;
      r.operandTypes = {section.typeName(op->getOperand(0).getType())};
      r.resultType = section.typeName(op->getOperand(1).getType());
      r.packedShapes = packShapes({*in}, *init, &*dims);
      reportOf[op] = out.size();
      out.push_back(std::move(r));
      return;
    }

    if (*kind == OpKind::Implicit && !nk.tosa && !op->isRegistered()) {
      std::string why = malformedBroadcastable(op, numDataOperands(op));
      if (!why.empty()) {
        if (malformed)
          malformed->push_back({op, std::move(why)});
        return;
      }
    }
    if (op->getNumResults() != 1)
      return;
    unsigned n = *kind == OpKind::Implicit         ? numDataOperands(op)
                 : *kind == OpKind::BroadcastInDim ? 1
                                                   : 2;
    n = std::min(n, op->getNumOperands());
    Attribute dimsAttr = *kind == OpKind::Implicit
                             ? Attribute()
                             : getAttr(op, "broadcast_dimensions");
    // The inputs depend on the types and the dimension list only, all
    // uniqued by MLIR: a model's ops have a few dozen of them. Computed
    // once per signature and shared (one count each per op instead of
    // ~7 allocations, the shapes' words and the types' list stored once:
    // ~90 bytes an op).
    key.clear();
    auto addKey = [&](const void *p) {
      const char *bytes = reinterpret_cast<const char *>(&p);
      key.append(bytes, bytes + sizeof(p));
    };
    key.push_back(static_cast<char>(*kind));
    key.push_back(static_cast<char>(nk.tosa));
    addKey(op->getResult(0).getType().getAsOpaquePointer());
    addKey(dimsAttr.getAsOpaquePointer());
    for (unsigned i = 0; i < n; ++i)
      addKey(op->getOperand(i).getType().getAsOpaquePointer());
    auto [at, fresh] = inputsBySignature.try_emplace(key);
    Inputs &in = at->second;
    if (fresh)
      in = computeInputs(section, op, *kind, nk.tosa, n, dimsAttr);
    if (!in.valid)
      return;
    r.operandTypes = in.operandTypes;
    r.resultType = in.resultType;
    if (*kind == OpKind::Implicit) {
      r.tosa = nk.tosa;
      r.summary = in.summary;
    }
    r.packedShapes = in.packedShapes;
    reportOf[op] = out.size();
    out.push_back(std::move(r));
  });
}

} // namespace tosa_lsp::detail
