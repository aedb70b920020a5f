//===- OpInference.cpp - One function's inference records ----------------===//
//
// After the pass: each TOSA op's declared and inferred types, the shape
// function asked once more on the refined operands (for the contradictions
// the pass silently skips) and, with one operand at a time made unknown,
// which operands each refined dimension depends on.
//
//===----------------------------------------------------------------------===//

#include "OpInference.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace tosa_lsp::detail {

/// `dims` with MLIR's dynamic size as kDynamic.
static Shape shapeOfDims(ArrayRef<int64_t> dims) {
  Shape s(dims.begin(), dims.end());
  for (int64_t &d : s)
    if (ShapedType::isDynamic(d))
      d = kDynamic;
  return s;
}

MaybeShape shapeOf(Type t) {
  if (auto ranked = dyn_cast<RankedTensorType>(t))
    return shapeOfDims(ranked.getShape());
  return std::nullopt;
}

MaybeShape shapeOf(const ShapedTypeComponents &c) {
  if (!c.hasRank())
    return std::nullopt;
  return shapeOfDims(c.getDims());
}

std::string textOf(llvm::SMRange r) {
  if (!r.Start.isValid() || !r.End.isValid())
    return "";
  return std::string(r.Start.getPointer(),
                     r.End.getPointer() - r.Start.getPointer());
}

/// The op's shape function on `operands` (ranked results only).
static std::optional<std::vector<MaybeShape>>
shapeFunction(Operation *op, ValueRange operands) {
  auto iface = dyn_cast<InferShapedTypeOpInterface>(op);
  if (!iface)
    return std::nullopt;
  SmallVector<ShapedTypeComponents> out;
  if (failed(iface.inferReturnTypeComponents(
          op->getContext(), op->getLoc(), operands,
          op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
          op->getRegions(), out)))
    return std::nullopt;
  std::vector<MaybeShape> shapes;
  for (const ShapedTypeComponents &c : out)
    shapes.push_back(shapeOf(c));
  return shapes;
}

std::string OpInference::nameOf(Value v) const {
  if (auto r = dyn_cast<OpResult>(v)) {
    const auto *d = ps.state.getOpDef(r.getOwner());
    if (!d)
      return "";
    const AsmParserState::OperationDefinition::ResultGroupDefinition *group =
        nullptr;
    for (const auto &g : d->resultGroups)
      if (g.startIndex <= r.getResultNumber() &&
          (!group || g.startIndex > group->startIndex))
        group = &g;
    if (!group)
      return "";
    std::string name = textOf(group->definition.loc);
    unsigned n = r.getResultNumber() - group->startIndex;
    return n || r.getOwner()->getNumResults() > 1 + group->startIndex
               ? name + "#" + std::to_string(n)
               : name;
  }
  auto a = cast<BlockArgument>(v);
  const auto *bd = ps.state.getBlockDef(a.getOwner());
  if (!bd || a.getArgNumber() >= bd->arguments.size())
    return "";
  return textOf(bd->arguments[a.getArgNumber()].loc);
}

uint32_t OpInference::typeId(Type t) {
  auto [it, added] = typeIds.try_emplace(t, 0);
  if (added)
    it->second = writer.internType(ps.typeName(t).str(), shapeOf(t));
  return it->second;
}

Value OpInference::unknown(Type t) {
  Value &arg = unknowns[t];
  if (!arg) {
    Type weak = t;
    if (auto r = dyn_cast<RankedTensorType>(t))
      weak = RankedTensorType::get(
          SmallVector<int64_t>(r.getRank(), ShapedType::kDynamic),
          r.getElementType(), r.getEncoding());
    arg = scratch.addArgument(weak, fn.getLoc());
  }
  return arg;
}

std::vector<OpInference::Result>
OpInference::results(Operation *op,
                     const std::optional<std::vector<MaybeShape>> &fnShapes,
                     std::vector<MaybeShape> &declaredShapes,
                     std::vector<MaybeShape> &inferredShapes) {
  std::vector<Result> results;
  for (OpResult r : op->getResults()) {
    Result ir;
    Type before = declared.lookup(r);
    ir.declared = typeId(before);
    ir.inferred = typeId(r.getType());
    declaredShapes.push_back(shapeOf(before));
    inferredShapes.push_back(shapeOf(r.getType()));
    const MaybeShape &declaredShape = declaredShapes.back();
    if (fnShapes && r.getResultNumber() < fnShapes->size()) {
      const MaybeShape &fnShape = (*fnShapes)[r.getResultNumber()];
      ir.shapeFunction = writer.internShape(fnShape);
      if (declaredShape && fnShape && declaredShape->size() == fnShape->size())
        for (unsigned d = 0; d < declaredShape->size(); ++d) {
          int64_t a = (*declaredShape)[d], b = (*fnShape)[d];
          if (a != kDynamic && b != kDynamic && a != b)
            ir.contradictions.push_back(d);
        }
    }
    results.push_back(std::move(ir));
  }
  return results;
}

std::optional<std::vector<MaybeShape>>
OpInference::shapesWithUnknown(Operation *op,
                               llvm::ArrayRef<OpOperand *> yielded,
                               llvm::function_ref<bool(unsigned)> isUnknown) {
  unsigned numOperands = op->getNumOperands();
  SmallVector<Value> operands(op->getOperands());
  for (unsigned k = 0; k < numOperands; ++k)
    if (isUnknown(k))
      operands[k] = unknown(operands[k].getType());
  SmallVector<Value> kept;
  for (unsigned j = 0; j < yielded.size(); ++j) {
    kept.push_back(yielded[j]->get());
    if (isUnknown(numOperands + j))
      yielded[j]->set(unknown(kept.back().getType()));
  }
  std::optional<std::vector<MaybeShape>> shapes = shapeFunction(op, operands);
  for (unsigned j = 0; j < yielded.size(); ++j)
    yielded[j]->set(kept[j]);
  return shapes;
}

void OpInference::findDimSources(
    Operation *op, llvm::ArrayRef<OpOperand *> yielded,
    std::vector<Result> &results, const std::vector<MaybeShape> &declaredShapes,
    const std::vector<MaybeShape> &inferredShapes) {
  auto refinedAt = [&](unsigned i) {
    return results[i].declared != results[i].inferred && declaredShapes[i] &&
           inferredShapes[i];
  };
  unsigned numInputs = op->getNumOperands() + yielded.size();
  std::vector<std::vector<DimSource>> deps(results.size()),
      alone(results.size());
  for (unsigned k = 0; k < numInputs; ++k) {
    std::optional<std::vector<MaybeShape>> without =
        shapesWithUnknown(op, yielded, [&](unsigned j) { return j == k; });
    for (unsigned i = 0; i < results.size(); ++i) {
      if (!refinedAt(i))
        continue;
      const Shape &decl = *declaredShapes[i], &inf = *inferredShapes[i];
      deps[i].resize(inf.size());
      for (unsigned d = 0; d < inf.size(); ++d) {
        if (d >= decl.size() || decl[d] != kDynamic || inf[d] == kDynamic)
          continue;
        bool lost = !without || i >= without->size() || !(*without)[i] ||
                    (*without)[i]->size() <= d ||
                    (*(*without)[i])[d] == kDynamic;
        if (lost)
          deps[i][d].operands.push_back(k);
      }
    }
  }
  // A size several operands carry (matmul's batch, concat's other
  // dims) survives losing any one of them: name the operands that
  // alone still give it (only asked when there is such a size).
  bool survivors = false;
  for (unsigned i = 0; i < results.size(); ++i) {
    if (!refinedAt(i))
      continue;
    const Shape &decl = *declaredShapes[i], &inf = *inferredShapes[i];
    for (unsigned d = 0; d < inf.size(); ++d)
      survivors |= d < decl.size() && decl[d] == kDynamic &&
                   inf[d] != kDynamic &&
                   (d >= deps[i].size() || deps[i][d].operands.empty());
  }
  for (unsigned k = 0; survivors && k < numInputs; ++k) {
    std::optional<std::vector<MaybeShape>> only =
        shapesWithUnknown(op, yielded, [&](unsigned j) { return j != k; });
    for (unsigned i = 0; i < results.size(); ++i) {
      if (results[i].declared == results[i].inferred || !inferredShapes[i])
        continue;
      const Shape &inf = *inferredShapes[i];
      alone[i].resize(inf.size());
      for (unsigned d = 0; d < inf.size(); ++d)
        if (only && i < only->size() && (*only)[i] && d < (*only)[i]->size() &&
            (*(*only)[i])[d] == inf[d])
          alone[i][d].operands.push_back(k);
    }
  }
  for (unsigned i = 0; i < results.size(); ++i) {
    if (!refinedAt(i))
      continue;
    const Shape &decl = *declaredShapes[i], &inf = *inferredShapes[i];
    std::vector<DimSource> &sources = results[i].dimSources;
    sources.resize(inf.size());
    for (unsigned d = 0; d < inf.size(); ++d) {
      if (d >= decl.size() || decl[d] != kDynamic || inf[d] == kDynamic)
        continue;
      if (d < deps[i].size() && !deps[i][d].operands.empty())
        sources[d] = {DimSource::AllOf, deps[i][d].operands};
      else if (d < alone[i].size() && !alone[i][d].operands.empty())
        sources[d] = {DimSource::AnyOf, alone[i][d].operands};
      else if (op->getNumRegions() == 0)
        sources[d].kind = DimSource::Attributes;
      // else: something in the regions other than what they yield;
      // no source rather than a wrong one.
    }
  }
}

uint32_t OpInference::rejection(Operation *op) {
  // One handler for the function's ops (registering one per op was a tenth
  // of this check), taking what comes only while an op is verified.
  if (!verifierMessages)
    verifierMessages = std::make_unique<ScopedDiagnosticHandler>(
        &ctx, [this](mlir::Diagnostic &d) -> LogicalResult {
          if (!capturing)
            return failure();
          if (message.empty() && d.getSeverity() == DiagnosticSeverity::Error)
            message = d.str();
          return success();
        });
  message.clear();
  capturing = true;
  bool verified = succeeded(mlir::verify(op, /*verifyRecursively=*/false));
  capturing = false;
  if (verified)
    return InferencePool::kNone;
  return writer.intern(message.empty() ? "the op does not verify" : message);
}

InferredOp OpInference::infer(Operation *op, unsigned section) {
  std::vector<InferredOpWriter::Operand> operands(op->getNumOperands());
  bool anyOperandRefined = false;
  for (unsigned k = 0; k < op->getNumOperands(); ++k) {
    Value v = op->getOperand(k);
    auto it = declared.find(v);
    if (it != declared.end() && it->second != v.getType()) {
      operands[k].refined = anyOperandRefined = true;
      operands[k].declared = typeId(it->second);
      operands[k].inferred = typeId(v.getType());
    }
  }
  std::optional<std::vector<MaybeShape>> fnShapes =
      shapeFunction(op, op->getOperands());
  // The shapes each result is compared with (decoded from the pool
  // only when rendered).
  std::vector<MaybeShape> declaredShapes, inferredShapes;
  std::vector<Result> results =
      this->results(op, fnShapes, declaredShapes, inferredShapes);
  bool anyRefined = false;
  for (unsigned i = 0; i < results.size(); ++i)
    anyRefined |= results[i].declared != results[i].inferred &&
                  declaredShapes[i] && inferredShapes[i];
  // What the shape function reads: the op's operands and, for an op
  // with regions, the values they yield (a cond_if's result is the
  // meet of its branches' yields; its operands, made unknown, change
  // nothing, as the regions are not inferred again). Those are made
  // unknown in place and put back.
  std::vector<OpOperand *> yielded;
  if (anyRefined && fnShapes)
    for (Region &region : op->getRegions())
      for (Block &b : region)
        if (b.mightHaveTerminator())
          for (OpOperand &o : b.getTerminator()->getOpOperands())
            yielded.push_back(&o);
  if (anyRefined && fnShapes)
    findDimSources(op, yielded, results, declaredShapes, inferredShapes);
  bool anyTypeChanged = anyOperandRefined;
  for (const Result &r : results)
    anyTypeChanged |= r.declared != r.inferred;
  uint32_t rejected =
      anyTypeChanged ? rejection(op) : uint32_t(InferencePool::kNone);
  // Operands are named in the sources and refined operands only.
  if (anyRefined || anyOperandRefined)
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      operands[k].name = writer.intern(nameOf(op->getOperand(k)));
  else
    operands.clear();
  std::vector<InferredOpWriter::Yielded> yieldedValues;
  for (OpOperand *o : yielded) {
    Value v = o->get();
    auto it = declared.find(v);
    yieldedValues.push_back(
        {writer.intern(nameOf(v)),
         o->getOwner()->getParentRegion()->getRegionNumber(),
         it != declared.end() && it->second != v.getType()});
  }
  auto [nameId, newName] =
      opNameIds.try_emplace(op->getName().getAsOpaquePointer(), 0);
  if (newName)
    nameId->second = writer.intern(op->getName().getStringRef());
  InferredOp io = writer.write(nameId->second, functionId, results, operands,
                               rejected, yieldedValues);
  io.section = section;
  // The ops inferred are those the parser defined (declaredTypes): one
  // lookup for the range and the spans.
  if (const AsmParserState::OperationDefinition *def = ps.state.getOpDef(op)) {
    io.range = ps.toFileRange(def->loc);
    OpReport spans;
    detail::fillOpSpans(ps, *def, spans);
    io.scope = spans.scope;
    io.resultTypeRange = spans.resultTypeRange;
  } else {
    io.range = ps.opRange(op);
  }
  return io;
}

} // namespace tosa_lsp::detail
