//===- ShapeInference.cpp - MLIR's shape inference, per function ----------===//
//
// Each requested section is parsed again in this inferrer's own context
// (with an AsmParserState, to map ops back to the text); on every function
// that verified, the declared types are recorded, MLIR's own
// `tosa-infer-shapes` pass runs (under runContained), and the types it
// leaves are compared with the declared ones. The op's shape function
// (InferShapedTypeOpInterface) is then asked once more on the refined
// operands: for the contradictions the pass silently skips, and, with one
// operand at a time replaced by an unknown value of the same rank, for
// which operands each refined dimension depends on.
//
//===----------------------------------------------------------------------===//

#include "ShapeInference.h"

#include "CrashGuard.h"
#include "IR.h"
#include "LineIndex.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace tosa_lsp {

namespace {

MaybeShape shapeOf(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked)
    return std::nullopt;
  Shape s(ranked.getShape().begin(), ranked.getShape().end());
  for (int64_t &d : s)
    if (ShapedType::isDynamic(d))
      d = kDynamic;
  return s;
}

MaybeShape shapeOf(const ShapedTypeComponents &c) {
  if (!c.hasRank())
    return std::nullopt;
  Shape s(c.getDims().begin(), c.getDims().end());
  for (int64_t &d : s)
    if (ShapedType::isDynamic(d))
      d = kDynamic;
  return s;
}

std::string textOf(llvm::SMRange r) {
  if (!r.Start.isValid() || !r.End.isValid())
    return "";
  return std::string(r.Start.getPointer(),
                     r.End.getPointer() - r.Start.getPointer());
}

bool overlapsLines(const Range &r, unsigned first, unsigned last) {
  return r.begin.valid() && r.begin.line <= last &&
         (r.end.valid() ? r.end.line : r.begin.line) >= first;
}

bool inside(const Range &outer, Position p) {
  auto key = [](Position x) { return std::make_pair(x.line, x.column); };
  return p.valid() && key(outer.begin) <= key(p) && key(p) <= key(outer.end);
}

/// The op's shape function on `operands` (ranked results only).
std::optional<std::vector<MaybeShape>> shapeFunction(Operation *op,
                                                     ValueRange operands) {
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

} // namespace

struct ShapeInferrer::Impl {
  std::unique_ptr<MLIRContext> context = makeContext();

  static std::unique_ptr<MLIRContext> makeContext() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    auto ctx = std::make_unique<MLIRContext>(registry,
                                             MLIRContext::Threading::DISABLED);
    ctx->allowUnregisteredDialects();
    ctx->loadDialect<tosa::TosaDialect, func::FuncDialect>();
    return ctx;
  }

  void inferSection(const std::string &text, const LineIndex &lines,
                    const FileAnalysis &fa, const Section &sec, unsigned first,
                    unsigned last, ShapeInference &out);
};

ShapeInferrer::ShapeInferrer() : impl(std::make_unique<Impl>()) {}
ShapeInferrer::~ShapeInferrer() = default;

ShapeInference ShapeInferrer::infer(const std::string &text,
                                    const FileAnalysis &fa, unsigned firstLine,
                                    unsigned lastLine) {
  ShapeInference out;
  LineIndex lines(text);
  for (const Section &sec : fa.sections) {
    if (sec.lastLine < firstLine || sec.firstLine > lastLine)
      continue;
    bool wanted = llvm::any_of(fa.symbols, [&](const SymbolInfo &s) {
      return s.section == sec.index && s.opName == "func.func" &&
             overlapsLines(s.scope, firstLine, lastLine);
    });
    if (!wanted)
      continue;
    if (!sec.parsed || sec.stale || sec.endOffset > text.size())
      continue;
    impl->inferSection(text, lines, fa, sec, firstLine, lastLine, out);
  }
  return out;
}

void ShapeInferrer::Impl::inferSection(const std::string &text,
                                       const LineIndex &lines,
                                       const FileAnalysis &fa,
                                       const Section &sec, unsigned first,
                                       unsigned last, ShapeInference &out) {
  // Errors decide what is skipped: a function with an error inside, or the
  // whole section when an error has no place in it.
  std::vector<Position> errors;
  for (const Diagnostic &d : fa.diagnostics)
    if (d.section == sec.index && d.severity == Severity::Error) {
      if (!d.range.begin.valid())
        return;
      errors.push_back(d.range.begin);
    }

  MLIRContext &ctx = *context;
  // Owned here and intentionally leaked if MLIR crashes (see CrashGuard.h).
  auto ps = std::make_unique<detail::ParsedSection>();
  ps->section = sec;
  ps->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(text).substr(sec.beginOffset,
                                       sec.endOffset - sec.beginOffset),
          fa.path),
      llvm::SMLoc());
  ps->lines = &lines;
  ps->bufferStart =
      ps->sourceMgr.getMemoryBuffer(ps->sourceMgr.getMainFileID())
          ->getBufferStart();
  ScopedDiagnosticHandler silence(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });

  std::vector<FunctionInference> results;
  std::optional<std::string> crash = runContained([&] {
    Block block;
    ParserConfig config(&ctx, /*verifyAfterParse=*/false);
    if (failed(parseAsmSourceFile(ps->sourceMgr, &block, config, &ps->state)))
      return;
    if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
      Operation *m = &block.front();
      m->remove();
      ps->module = OwningOpRef<ModuleOp>(cast<ModuleOp>(m));
    } else {
      OpBuilder b(&ctx);
      ps->module = OwningOpRef<ModuleOp>(b.create<ModuleOp>(b.getUnknownLoc()));
      ps->module->getBody()->getOperations().splice(
          ps->module->getBody()->begin(), block.getOperations());
    }
    for (Operation &top : *ps->module->getBody()) {
      auto fn = dyn_cast<func::FuncOp>(top);
      const AsmParserState::OperationDefinition *def = ps->state.getOpDef(&top);
      if (!fn || !def)
        continue;
      FunctionInference fi;
      fi.name = fn.getSymName().str();
      fi.scope = ps->toFileRange(def->scopeLoc);
      fi.section = sec.index;
      if (!overlapsLines(fi.scope, first, last))
        continue;
      if (llvm::any_of(errors,
                       [&](Position p) { return inside(fi.scope, p); })) {
        fi.skipped = "the function has errors";
        results.push_back(std::move(fi));
        continue;
      }
      if (fn.isExternal()) {
        fi.skipped = "the function has no body";
        results.push_back(std::move(fi));
        continue;
      }
      // Before the pass: the ops to report and every value's declared type.
      std::vector<Operation *> ops;
      llvm::DenseMap<Value, Type> declared;
      fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
        for (Region &r : op->getRegions())
          for (Block &b : r)
            for (BlockArgument a : b.getArguments())
              declared[a] = a.getType();
        if (op == fn.getOperation())
          return;
        for (Value v : op->getResults())
          declared[v] = v.getType();
        if (op->getDialect() && isa<tosa::TosaDialect>(op->getDialect()) &&
            op->getNumResults() && ps->state.getOpDef(op))
          ops.push_back(op);
      });
      PassManager pm(&ctx, func::FuncOp::getOperationName());
      pm.addPass(tosa::createTosaInferShapesPass());
      // What the pass leaves may not verify: a declared static size that
      // contradicts a propagated one stays (the pass keeps declared types
      // it cannot join) and its op then fails. Those are the
      // contradictions reported below, so no verification here.
      pm.enableVerifier(false);
      if (failed(pm.run(fn))) {
        fi.skipped = "tosa-infer-shapes failed on the function";
        results.push_back(std::move(fi));
        continue;
      }
      auto nameOf = [&](Value v) -> std::string {
        if (auto r = dyn_cast<OpResult>(v)) {
          const auto *d = ps->state.getOpDef(r.getOwner());
          if (!d)
            return "";
          const AsmParserState::OperationDefinition::ResultGroupDefinition
              *group = nullptr;
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
        const auto *bd = ps->state.getBlockDef(a.getOwner());
        if (!bd || a.getArgNumber() >= bd->arguments.size())
          return "";
        return textOf(bd->arguments[a.getArgNumber()].loc);
      };
      for (Operation *op : ops) {
        InferredOp io;
        io.name = op->getName().getStringRef().str();
        io.function = fi.name;
        io.section = sec.index;
        io.range = ps->opRange(op);
        OpReport spans;
        detail::fillOpSpans(*ps, op, spans);
        io.scope = spans.scope;
        io.resultTypeRange = spans.resultTypeRange;
        for (unsigned k = 0; k < op->getNumOperands(); ++k) {
          Value v = op->getOperand(k);
          auto it = declared.find(v);
          if (it != declared.end() && it->second != v.getType())
            io.refinedOperands.push_back("`" + nameOf(v) + "` (operand #" +
                                         std::to_string(k) + "): `" +
                                         ps->typeName(it->second) + "` -> `" +
                                         ps->typeName(v.getType()) + "`");
        }
        std::optional<std::vector<MaybeShape>> fnShapes =
            shapeFunction(op, op->getOperands());
        for (OpResult r : op->getResults()) {
          InferredResult ir;
          Type before = declared.lookup(r);
          ir.declared = ps->typeName(before);
          ir.inferred = ps->typeName(r.getType());
          ir.declaredShape = shapeOf(before);
          ir.inferredShape = shapeOf(r.getType());
          if (fnShapes && r.getResultNumber() < fnShapes->size())
            ir.shapeFunction = (*fnShapes)[r.getResultNumber()];
          if (ir.declaredShape && ir.shapeFunction &&
              ir.declaredShape->size() == ir.shapeFunction->size())
            for (unsigned d = 0; d < ir.declaredShape->size(); ++d) {
              int64_t a = (*ir.declaredShape)[d], b = (*ir.shapeFunction)[d];
              if (a != kDynamic && b != kDynamic && a != b)
                ir.contradictions.push_back(d);
            }
          io.results.push_back(std::move(ir));
        }
        // Sources of refined dims: which operands, made unknown, lose them.
        bool anyRefined = false;
        for (const InferredResult &ir : io.results)
          anyRefined |= ir.refined() && ir.declaredShape && ir.inferredShape;
        // An operand made unknown: same rank, every size dynamic, and not
        // a constant any more (a block argument).
        auto weaken = [](Type t) -> Type {
          if (auto r = dyn_cast<RankedTensorType>(t))
            return RankedTensorType::get(
                SmallVector<int64_t>(r.getRank(), ShapedType::kDynamic),
                r.getElementType(), r.getEncoding());
          return t;
        };
        auto operandLabel = [&](unsigned k) {
          Value v = op->getOperand(k);
          std::string name = nameOf(v);
          name = name.empty()
                     ? "operand #" + std::to_string(k)
                     : "`" + name + "` (operand #" + std::to_string(k) + ")";
          auto it = declared.find(v);
          if (it != declared.end() && it->second != v.getType())
            name += ", itself refined";
          return name;
        };
        if (anyRefined && fnShapes) {
          std::vector<std::vector<std::string>> deps(io.results.size());
          for (unsigned k = 0; k < op->getNumOperands(); ++k) {
            Value v = op->getOperand(k);
            Block scratch;
            SmallVector<Value> operands(op->getOperands());
            operands[k] =
                scratch.addArgument(weaken(v.getType()), op->getLoc());
            std::optional<std::vector<MaybeShape>> without =
                shapeFunction(op, operands);
            std::string name = operandLabel(k);
            for (unsigned i = 0; i < io.results.size(); ++i) {
              const InferredResult &ir = io.results[i];
              if (!ir.refined() || !ir.declaredShape || !ir.inferredShape)
                continue;
              deps[i].resize(ir.inferredShape->size());
              for (unsigned d = 0; d < ir.inferredShape->size(); ++d) {
                if (d >= ir.declaredShape->size() ||
                    (*ir.declaredShape)[d] != kDynamic ||
                    (*ir.inferredShape)[d] == kDynamic)
                  continue;
                bool lost = !without || i >= without->size() ||
                            !(*without)[i] || (*without)[i]->size() <= d ||
                            (*(*without)[i])[d] == kDynamic;
                if (lost) {
                  std::string &s = deps[i][d];
                  s += (s.empty() ? "" : " and ") + name;
                }
              }
            }
          }
          // A size several operands carry (matmul's batch, concat's other
          // dims) survives losing any one of them: name the operands that
          // alone still give it.
          std::vector<std::vector<std::string>> alone(io.results.size());
          for (unsigned k = 0; k < op->getNumOperands(); ++k) {
            Block scratch;
            SmallVector<Value> operands(op->getOperands());
            for (unsigned j = 0; j < operands.size(); ++j)
              if (j != k)
                operands[j] = scratch.addArgument(weaken(operands[j].getType()),
                                                  op->getLoc());
            std::optional<std::vector<MaybeShape>> only =
                shapeFunction(op, operands);
            for (unsigned i = 0; i < io.results.size(); ++i) {
              const InferredResult &ir = io.results[i];
              if (!ir.refined() || !ir.inferredShape)
                continue;
              alone[i].resize(ir.inferredShape->size());
              for (unsigned d = 0; d < ir.inferredShape->size(); ++d)
                if (only && i < only->size() && (*only)[i] &&
                    d < (*only)[i]->size() &&
                    (*(*only)[i])[d] == (*ir.inferredShape)[d]) {
                  std::string &s = alone[i][d];
                  s += (s.empty() ? "" : " or ") + operandLabel(k);
                }
            }
          }
          for (unsigned i = 0; i < io.results.size(); ++i) {
            InferredResult &ir = io.results[i];
            if (!ir.refined() || !ir.declaredShape || !ir.inferredShape)
              continue;
            ir.dimSources.resize(ir.inferredShape->size());
            for (unsigned d = 0; d < ir.inferredShape->size(); ++d) {
              if (d >= ir.declaredShape->size() ||
                  (*ir.declaredShape)[d] != kDynamic ||
                  (*ir.inferredShape)[d] == kDynamic)
                continue;
              ir.dimSources[d] = d < deps[i].size() && !deps[i][d].empty()
                                     ? deps[i][d]
                                 : d < alone[i].size() && !alone[i][d].empty()
                                     ? alone[i][d]
                                     : "the op's attributes";
            }
          }
        }
        fi.ops.push_back(std::move(io));
      }
      results.push_back(std::move(fi));
    }
  });
  if (crash) {
    // The context may be half-updated: abandon it and what lives in it.
    (void)ps.release();
    (void)context.release();
    context = makeContext();
    for (const SymbolInfo &s : fa.symbols)
      if (s.section == sec.index && s.opName == "func.func" &&
          overlapsLines(s.scope, first, last)) {
        FunctionInference fi;
        fi.name = s.name;
        fi.scope = s.scope;
        fi.section = sec.index;
        fi.skipped = "MLIR crashed while inferring shapes (" + *crash + ")";
        out.functions.push_back(std::move(fi));
      }
    return;
  }
  for (FunctionInference &f : results)
    out.functions.push_back(std::move(f));
}

} // namespace tosa_lsp
