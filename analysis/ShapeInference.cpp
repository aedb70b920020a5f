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
#include "MLIRShared.h"
#include "ParsedInference.h"
#include "TaskThread.h"
#include "TextScan.h"
#include "Timing.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

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

/// A type list in an op's text: [begin, end) offsets of each item (trimmed).
using Items = std::vector<std::pair<size_t, size_t>>;

/// Splits [b, e) of `text` on commas at bracket depth 0.
Items splitItems(llvm::StringRef text, size_t b, size_t e) {
  Items out;
  int depth = 0;
  size_t start = b;
  auto push = [&](size_t from, size_t to) {
    while (from < to && std::isspace(static_cast<unsigned char>(text[from])))
      ++from;
    while (to > from && std::isspace(static_cast<unsigned char>(text[to - 1])))
      --to;
    if (from < to)
      out.push_back({from, to});
  };
  for (size_t i = b; i < e; ++i) {
    char c = text[i];
    if (c == '-' && i + 1 < e && text[i + 1] == '>') {
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<')
      ++depth;
    else if (c == ')' || c == ']' || c == '}' || c == '>')
      --depth;
    else if (c == ',' && depth == 0) {
      push(start, i);
      start = i + 1;
    }
  }
  push(start, e);
  return out;
}

/// The operand and result types of an op written `... : (A, B) -> R` or
/// `-> (R1, R2)`, as offsets in `scope`; false for other forms.
bool signatureItems(llvm::StringRef scope, Items &operands, Items &results) {
  std::optional<std::pair<size_t, size_t>> res = detail::findResultType(scope);
  if (!res)
    return false;
  // The `->` before the result type, then the parenthesised operand list.
  size_t arrow = scope.substr(0, res->first).rfind("->");
  if (arrow == llvm::StringRef::npos)
    return false;
  size_t close = arrow;
  while (close > 0 &&
         std::isspace(static_cast<unsigned char>(scope[close - 1])))
    --close;
  if (close == 0 || scope[close - 1] != ')')
    return false;
  --close;
  int depth = 0;
  size_t open = llvm::StringRef::npos;
  for (size_t i = close + 1; i-- > 0;) {
    char c = scope[i];
    if (c == '>' && i > 0 && scope[i - 1] == '-') {
      --i;
      continue;
    }
    if (c == ')' || c == ']' || c == '}' || c == '>')
      ++depth;
    else if (c == '(' || c == '[' || c == '{' || c == '<')
      if (--depth == 0) {
        open = i;
        break;
      }
  }
  if (open == llvm::StringRef::npos)
    return false;
  operands = splitItems(scope, open + 1, close);
  size_t rb = res->first, re = res->second;
  if (rb < re && scope[rb] == '(' && scope[re - 1] == ')') {
    ++rb;
    --re;
  }
  results = splitItems(scope, rb, re);
  return true;
}

/// The operand types of an op without results written `... : A, B` (after
/// the last `:` at bracket depth 0), e.g. `tosa.yield %1, %2 : A, B`.
bool trailingTypeItems(llvm::StringRef scope, Items &operands) {
  int depth = 0;
  size_t colon = llvm::StringRef::npos;
  for (size_t i = 0; i < scope.size(); ++i) {
    char c = scope[i];
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(scope, i);
      continue;
    }
    if (c == '-' && i + 1 < scope.size() && scope[i + 1] == '>')
      return false; // Has a function type: not this form.
    if (c == '(' || c == '[' || c == '{' || c == '<')
      ++depth;
    else if (c == ')' || c == ']' || c == '}' || c == '>')
      --depth;
    else if (c == ':' && depth == 0)
      colon = i;
  }
  if (colon == llvm::StringRef::npos)
    return false;
  operands = splitItems(scope, colon + 1, scope.size());
  return true;
}

/// The type written after a block argument's name in `^bb0(%x: T, ...)`,
/// as [begin, end) pointers; std::nullopt when the header does not write
/// one there (an argument named by its op, like a while_loop's condition).
std::optional<std::pair<const char *, const char *>>
blockArgType(llvm::SMRange name, const char *limit) {
  const char *p = name.End.getPointer();
  while (p < limit && (*p == ' ' || *p == '\t'))
    ++p;
  if (p >= limit || *p != ':')
    return std::nullopt;
  ++p;
  while (p < limit && (*p == ' ' || *p == '\t'))
    ++p;
  size_t n = detail::typeEnd(llvm::StringRef(p, limit - p), 0);
  if (n == 0)
    return std::nullopt;
  return std::make_pair(p, p + n);
}
} // namespace

struct ShapeInferrer::Impl {
  std::unique_ptr<MLIRContext> context = makeContext();

  static std::unique_ptr<MLIRContext> makeContext() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    std::unique_ptr<MLIRContext> ctx = singleThreadedContext(registry);
    ctx->allowUnregisteredDialects();
    ctx->loadDialect<tosa::TosaDialect, func::FuncDialect>();
    return ctx;
  }

  /// Infers the functions of `sec` that overlap lines [first, last] into
  /// `out` (parsed alone, in this inferrer's context).
  void inferSection(const std::string &text, const LineIndex &lines,
                    const FileAnalysis &fa, const Section &sec, unsigned first,
                    unsigned last, ShapeInference &out,
                    llvm::function_ref<bool()> stop, bool withRefineEdits);
  /// After a crash inside MLIR: the context is abandoned with what lives in
  /// it, and each function asked for says so.
  void abandonAfterCrash(std::unique_ptr<detail::ParsedSection> ps,
                         const FileAnalysis &fa, const Section &sec,
                         unsigned first, unsigned last,
                         const std::string &crash, ShapeInference &out);
};

namespace {

/// Every SSA name the function defines: new names must not collide.
std::set<std::string> definedNames(const detail::ParsedSection &ps,
                                   func::FuncOp fn) {
  std::set<std::string> names;
  fn.walk([&](Operation *op) {
    if (const auto *def = ps.state.getOpDef(op))
      for (const auto &g : def->resultGroups)
        names.insert(textOf(g.definition.loc));
    for (Region &r : op->getRegions())
      for (Block &b : r)
        if (const auto *bd = ps.state.getBlockDef(&b))
          for (const auto &a : bd->arguments)
            names.insert(textOf(a.loc));
  });
  return names;
}

Range rangeOf(const detail::ParsedSection &ps, const char *b, const char *e) {
  return ps.toFileRange(
      {llvm::SMLoc::getFromPointer(b), llvm::SMLoc::getFromPointer(e)});
}

/// The edits of every refined type written in the function's text (region
/// arguments in their block headers, `(operands) -> results`, a
/// terminator's `: types`), and the casts the pass inserted; the problem
/// when one cannot be written.
std::optional<std::string>
typeEdits(const detail::ParsedSection &ps, func::FuncOp fn,
          const llvm::DenseMap<Value, Type> &declared,
          std::vector<tensor::CastOp> &casts,
          std::vector<TextEditData> &edits) {
  auto changed = [&](Value v) {
    auto it = declared.find(v);
    return it != declared.end() && it->second != v.getType();
  };
  auto toRange = [&](const char *b, const char *e) {
    return rangeOf(ps, b, e);
  };
  std::optional<std::string> problem;
  auto fail = [&](std::string why) { problem = std::move(why); };
  fn.walk([&](Operation *op) {
    if (problem)
      return;
    if (auto cast = dyn_cast<tensor::CastOp>(op);
        cast && !ps.state.getOpDef(op)) {
      casts.push_back(cast);
      return;
    }
    // Region arguments (tosa.cond_if, tosa.while_loop): a type written in
    // the block's header is edited there; one the header does not write
    // (a while_loop's condition arguments) comes from the op's operand of
    // the same position, which must then be refined to the same type.
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments()) {
          if (!changed(a))
            continue;
          const auto *bd = ps.state.getBlockDef(&b);
          std::optional<std::pair<const char *, const char *>> at;
          if (bd && a.getArgNumber() < bd->arguments.size() &&
              bd->arguments[a.getArgNumber()].loc.isValid())
            at = blockArgType(bd->arguments[a.getArgNumber()].loc,
                              ps.bufferEnd());
          if (at) {
            edits.push_back(
                {toRange(at->first, at->second), ps.typeName(a.getType())});
            continue;
          }
          unsigned inputs =
              op->getNumOperands() - (isa<tosa::IfOp>(op) ? 1 : 0);
          unsigned k = a.getArgNumber() + (isa<tosa::IfOp>(op) ? 1 : 0);
          if (b.getNumArguments() != inputs || k >= op->getNumOperands() ||
              op->getOperand(k).getType() != a.getType()) {
            return fail("a region argument of `" +
                        op->getName().getStringRef().str() +
                        "` is refined but its type is written nowhere to "
                        "edit");
          }
        }
    if (op == fn.getOperation())
      return;
    bool results = llvm::any_of(op->getResults(), changed);
    bool operands = llvm::any_of(op->getOperands(), changed);
    if (!results && !operands)
      return;
    const auto *def = ps.state.getOpDef(op);
    if (!def) {
      return fail("an op without a place in the text is refined");
    }
    const char *base = def->scopeLoc.Start.getPointer();
    llvm::StringRef scope(base, def->scopeLoc.End.getPointer() - base);
    Items ops, res;
    // `(operands) -> results`; a cond_if writes its condition's type before
    // the list of the others; a terminator `: operand types`.
    unsigned skipped = 0;
    bool written = false;
    if (signatureItems(scope, ops, res) && res.size() == op->getNumResults()) {
      skipped = op->getNumOperands() - ops.size();
      written =
          ops.size() == op->getNumOperands() ||
          (isa<tosa::IfOp>(op) && skipped == 1 && !changed(op->getOperand(0)));
    } else if (op->getNumResults() == 0 && trailingTypeItems(scope, ops) &&
               ops.size() == op->getNumOperands()) {
      written = true;
    }
    if (!written) {
      return fail("the types of `" + op->getName().getStringRef().str() +
                  "` are not written as `(operands) -> results`");
    }
    for (unsigned k = skipped; k < op->getNumOperands(); ++k)
      if (changed(op->getOperand(k)))
        edits.push_back({toRange(base + ops[k - skipped].first,
                                 base + ops[k - skipped].second),
                         ps.typeName(op->getOperand(k).getType())});
    for (unsigned k = 0; k < op->getNumResults(); ++k)
      if (changed(op->getResult(k)))
        edits.push_back({toRange(base + res[k].first, base + res[k].second),
                         ps.typeName(op->getResult(k).getType())});
  });
  return problem;
}

/// The cast the pass inserted after a refined value's producer, for users
/// that keep the declared type: written after the producer with a fresh
/// name (added to `names`), and those users' uses renamed.
std::optional<std::string> castEdits(const detail::ParsedSection &ps,
                                     tensor::CastOp cast,
                                     std::set<std::string> &names,
                                     std::vector<TextEditData> &edits) {
  auto toRange = [&](const char *b, const char *e) {
    return rangeOf(ps, b, e);
  };
  auto fail = [](std::string why) { return std::optional<std::string>(why); };
  Value v = cast.getSource();
  Operation *producer = v.getDefiningOp();
  const auto *def = producer ? ps.state.getOpDef(producer) : nullptr;
  if (!def || def->resultGroups.empty())
    return fail("a refined value needs a cast and its producer has no "
                "result name in the text");
  // Its name: `%x`, or `%x#N` in a group (`%x:2 = ...`).
  unsigned number = llvm::cast<OpResult>(v).getResultNumber();
  const auto *group = &def->resultGroups.front();
  for (const auto &g : def->resultGroups)
    if (g.startIndex <= number)
      group = &g;
  unsigned groupSize = producer->getNumResults() - group->startIndex;
  for (const auto &g : def->resultGroups)
    if (g.startIndex > group->startIndex)
      groupSize = std::min(groupSize, g.startIndex - group->startIndex);
  std::string source = textOf(group->definition.loc);
  if (groupSize > 1)
    source += "#" + std::to_string(number - group->startIndex);
  std::string stem = "%cast_";
  for (char c : llvm::StringRef(source).drop_front())
    stem += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  std::string name = stem;
  for (unsigned n = 1; names.count(name); ++n)
    name = stem + "_" + std::to_string(n);
  names.insert(name);
  // After the producer, on a line of its own, indented like it.
  const char *bufStart = ps.bufferStart;
  const char *lineStart = def->scopeLoc.Start.getPointer();
  while (lineStart > bufStart && lineStart[-1] != '\n')
    --lineStart;
  std::string indent;
  for (const char *p = lineStart;
       p < def->scopeLoc.Start.getPointer() && (*p == ' ' || *p == '\t'); ++p)
    indent += *p;
  const char *end = def->scopeLoc.End.getPointer();
  edits.push_back({toRange(end, end), "\n" + indent + name + " = tensor.cast " +
                                          source + " : " +
                                          ps.typeName(v.getType()) + " to " +
                                          ps.typeName(cast.getType())});
  // The uses the pass moved to the cast: those inside its users' own text
  // (not inside ops nested in them).
  llvm::SmallPtrSet<Operation *, 4> users;
  for (Operation *u : cast->getUsers())
    users.insert(u);
  for (llvm::SMRange use : group->definition.uses) {
    // The parser records `%x` of a use `%x#1`: take the number too.
    const char *e = use.End.getPointer();
    if (groupSize > 1 && e < ps.bufferEnd() && *e == '#') {
      ++e;
      while (e < ps.bufferEnd() && std::isdigit(static_cast<unsigned char>(*e)))
        ++e;
      use.End = llvm::SMLoc::getFromPointer(e);
    }
    if (textOf(use) != source)
      continue; // Another result of the group.
    const char *p = use.Start.getPointer();
    auto within = [&](Operation *op) {
      const auto *d = ps.state.getOpDef(op);
      return d && d->scopeLoc.Start.getPointer() <= p &&
             p < d->scopeLoc.End.getPointer();
    };
    for (Operation *u : users) {
      if (!within(u))
        continue;
      bool nested = false;
      u->walk([&](Operation *inner) {
        if (inner != u && within(inner))
          nested = true;
      });
      if (!nested)
        edits.push_back(
            {toRange(use.Start.getPointer(), use.End.getPointer()), name});
    }
  }
  return std::nullopt;
}

/// The refine-all edits of `fn` after the pass (see
/// FunctionInference::refineEdits), or the problem in `fi.refineProblem`.
void refineEdits(const detail::ParsedSection &ps, func::FuncOp fn,
                 const llvm::DenseMap<Value, Type> &declared,
                 FunctionInference &fi, std::vector<TextEditData> &edits) {
  auto fail = [&](std::string why) {
    edits.clear();
    fi.refineProblem = std::move(why);
  };
  for (const InferredOp &op : fi.ops)
    if (op.contradicts())
      return fail("`" + op.name() + "` on line " +
                  std::to_string(op.range.begin.line) +
                  " contradicts its declared type; fix that first");
  std::set<std::string> names = definedNames(ps, fn);
  std::vector<tensor::CastOp> casts;
  if (std::optional<std::string> problem =
          typeEdits(ps, fn, declared, casts, edits))
    return fail(std::move(*problem));
  // The casts the pass inserted for users that keep the declared type.
  for (tensor::CastOp cast : casts)
    if (std::optional<std::string> problem = castEdits(ps, cast, names, edits))
      return fail(std::move(*problem));
}

} // namespace

bool refinedTextVerifies(Analyzer &analyzer, const FileAnalysis &fa,
                         const std::string &text, const Config &config,
                         const std::vector<TextEditData> &edits) {
  FileAnalysis after =
      analyzer.analyze(applyEdits(text, edits), fa.path, config);
  auto errors = [](const FileAnalysis &a) {
    return llvm::count_if(a.diagnostics, [](const Diagnostic &d) {
      return d.severity == Severity::Error;
    });
  };
  if (after.sections.size() != fa.sections.size())
    return false;
  for (size_t i = 0; i < fa.sections.size(); ++i)
    if (fa.sections[i].parsed && !after.sections[i].parsed)
      return false;
  return errors(after) <= errors(fa);
}

ShapeInferrer::ShapeInferrer() : impl(std::make_unique<Impl>()) {}
ShapeInferrer::~ShapeInferrer() = default;

void ShapeInferrer::warmUp() {
  // What the first inference in a fresh context does besides the work:
  // load the dialects a TOSA function uses and build the pass.
  static constexpr const char *kText =
      "func.func @w(%a: tensor<2xf32>, %b: tensor<1xf32>) -> tensor<?xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<1xf32>) -> "
      "tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n"
      "}\n";
  MLIRContext &ctx = *impl->context;
  (void)runContained([&] {
    ScopedDiagnosticHandler quiet(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(kText, &ctx);
    if (!m)
      return;
    PassManager pm(&ctx, ModuleOp::getOperationName());
    pm.addNestedPass<func::FuncOp>(tosa::createTosaInferShapesPass());
    pm.enableVerifier(false);
    (void)pm.run(*m);
  });
}

namespace {
/// Asks the caller's stop condition (if any) once more unless it already
/// said yes; whether the work is cancelled.
bool stopped(ShapeInference &out, llvm::function_ref<bool()> stop) {
  if (stop && !out.cancelled && stop())
    out.cancelled = true;
  return out.cancelled;
}
} // namespace

ShapeInference ShapeInferrer::infer(const std::string &text,
                                    const FileAnalysis &fa, unsigned firstLine,
                                    unsigned lastLine) {
  return infer(text, LineIndex(text), fa, firstLine, lastLine);
}

ShapeInference ShapeInferrer::infer(const std::string &text,
                                    const LineIndex &lines,
                                    const FileAnalysis &fa, unsigned firstLine,
                                    unsigned lastLine,
                                    llvm::function_ref<bool()> stop,
                                    bool withRefineEdits) {
  PhaseTimer timer("shape inference (lazy, not in the pipeline)");
  ShapeInference out;
  for (const Section &sec : fa.sections) {
    if (stopped(out, stop))
      break;
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
    // Asked for some of the section's functions: parse each of them alone
    // (its text is usually all it needs), the section only when that fails
    // (aliases, ...) or when it is nested in another symbol's op.
    // Counted, not listed: a hover asks for one or two of a file's
    // thousands of functions.
    std::vector<const SymbolInfo *> wantedFns;
    size_t fns = 0;
    bool nested = false;
    for (const SymbolInfo &s : fa.symbols) {
      if (s.section != sec.index)
        continue;
      if (s.opName != "func.func") {
        nested = true;
        continue;
      }
      ++fns;
      if (overlapsLines(s.scope, firstLine, lastLine))
        wantedFns.push_back(&s);
    }
    if (nested || wantedFns.size() == fns) {
      impl->inferSection(text, lines, fa, sec, firstLine, lastLine, out, stop,
                         withRefineEdits);
      continue;
    }
    for (const SymbolInfo *s : wantedFns) {
      std::optional<size_t> b = lines.offset(s->scope.begin),
                            e = lines.offset(s->scope.end);
      size_t before = out.functions.size();
      if (b && e && *b < *e && *b >= sec.beginOffset && *e <= sec.endOffset) {
        Section alone = sec;
        alone.beginOffset = *b;
        alone.endOffset = *e;
        alone.firstLine = s->scope.begin.line;
        alone.firstColumn = s->scope.begin.column;
        alone.lastLine = s->scope.end.line;
        impl->inferSection(text, lines, fa, alone, s->scope.begin.line,
                           s->scope.end.line, out, stop, withRefineEdits);
      }
      if (out.functions.size() == before && !out.cancelled)
        impl->inferSection(text, lines, fa, sec, s->scope.begin.line,
                           s->scope.end.line, out, stop, withRefineEdits);
      if (out.cancelled)
        break;
    }
  }
  return out;
}

namespace {

/// The inference records of one function's ops, after the pass ran on it:
/// `declared` holds every value's type from before. Types, op names and
/// SSA names go into the run's pool once (`writer`).
class OpInference {
public:
  OpInference(const detail::ParsedSection &ps, func::FuncOp fn,
              const llvm::DenseMap<Value, Type> &declared,
              InferredOpWriter &writer, MLIRContext &ctx,
              const std::string &functionName)
      : ps(ps), fn(fn), declared(declared), writer(writer), ctx(ctx),
        functionId(writer.intern(functionName)) {}

  InferredOp infer(Operation *op, unsigned section);

private:
  using Result = InferredOpWriter::Result;
  /// The op's results: declared and inferred types, the shape function's
  /// shapes and where they contradict the declared ones.
  std::vector<Result> results(Operation *op,
                              const std::optional<std::vector<MaybeShape>> &fn,
                              std::vector<MaybeShape> &declaredShapes,
                              std::vector<MaybeShape> &inferredShapes);
  /// The shapes of the shape function with the inputs `isUnknown` names
  /// made unknown (operands, then the `yielded` values).
  std::optional<std::vector<MaybeShape>>
  shapesWithUnknown(Operation *op, llvm::ArrayRef<OpOperand *> yielded,
                    llvm::function_ref<bool(unsigned)> isUnknown);
  /// Sources of refined dims: which inputs, made unknown, lose them.
  void findDimSources(Operation *op, llvm::ArrayRef<OpOperand *> yielded,
                      std::vector<Result> &results,
                      const std::vector<MaybeShape> &declaredShapes,
                      const std::vector<MaybeShape> &inferredShapes);
  /// What mlir-opt reports after the pass: the op's own verifier on the
  /// refined types (it verified as declared).
  uint32_t rejection(Operation *op);
  std::string nameOf(Value v) const;
  uint32_t typeId(Type t);
  Value unknown(Type t);

  const detail::ParsedSection &ps;
  func::FuncOp fn;
  const llvm::DenseMap<Value, Type> &declared;
  InferredOpWriter &writer;
  MLIRContext &ctx;
  uint32_t functionId;
  llvm::DenseMap<Type, uint32_t> typeIds;
  /// An operand made unknown: same rank, every size dynamic, and not a
  /// constant any more (a block argument). One argument per type, for
  /// the whole function (a block per operand of each op was a fifth of
  /// the per-op work).
  Block scratch;
  llvm::DenseMap<Type, Value> unknowns;
};

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
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](mlir::Diagnostic &d) {
    if (message.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      message = d.str();
    return success();
  });
  if (succeeded(mlir::verify(op, /*verifyRecursively=*/false)))
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
  InferredOp io =
      writer.write(writer.intern(op->getName().getStringRef()), functionId,
                   results, operands, rejected, yieldedValues);
  io.section = section;
  io.range = ps.opRange(op);
  OpReport spans;
  detail::fillOpSpans(ps, op, spans);
  io.scope = spans.scope;
  io.resultTypeRange = spans.resultTypeRange;
  return io;
}

/// Like mlir-opt: a lone top-level module is the root, anything else is
/// wrapped in one.
void wrapModule(detail::ParsedSection &ps, Block &block, MLIRContext &ctx) {
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    Operation *m = &block.front();
    m->remove();
    ps.module = OwningOpRef<ModuleOp>(cast<ModuleOp>(m));
    return;
  }
  OpBuilder b(&ctx);
  ps.module = OwningOpRef<ModuleOp>(ModuleOp::create(b, b.getUnknownLoc()));
  ps.module->getBody()->getOperations().splice(ps.module->getBody()->begin(),
                                               block.getOperations());
}

/// Before the pass: the ops to report and every value's declared type.
void declaredTypes(const detail::ParsedSection &ps, func::FuncOp fn,
                   std::vector<Operation *> &ops,
                   llvm::DenseMap<Value, Type> &declared) {
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
        op->getNumResults() && ps.state.getOpDef(op))
      ops.push_back(op);
  });
}

/// `fi.lastLineSoFar` from its ops (appended).
void indexLastLines(FunctionInference &fi) {
  unsigned lastLine = 0;
  for (const InferredOp &op : fi.ops)
    fi.lastLineSoFar.push_back(lastLine = std::max(lastLine, op.lastLine()));
}

/// `early.lines`' ops of `fn` after the pass (`ops` in text order) and the
/// ops defining their operands, recorded alone and delivered.
void recordEarly(const detail::ParsedSection &ps, func::FuncOp fn,
                 MLIRContext &ctx, const FunctionInference &fi,
                 llvm::ArrayRef<Operation *> ops,
                 const llvm::DenseMap<Value, Type> &declared,
                 const detail::EarlyOps &early) {
  auto [lo, hi] = std::minmax_element(early.lines.begin(), early.lines.end());
  llvm::SmallPtrSet<Operation *, 8> chosen;
  for (Operation *op : ops) {
    Range r = ps.opRange(op);
    if (r.begin.line > *hi) // pre-order: by where each op begins
      break;
    if (r.end.line < *lo ||
        llvm::none_of(
            early.lines,
            [&](unsigned l) { return r.begin.line <= l && l <= r.end.line; }))
      continue;
    chosen.insert(op);
    // A hover on an operand shows the op that defines it.
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp())
        chosen.insert(d);
  }
  InferredOpWriter writer;
  OpInference inference(ps, fn, declared, writer, ctx, fi.name);
  FunctionInference out;
  out.name = fi.name;
  out.scope = fi.scope;
  out.section = fi.section;
  for (Operation *op : ops)
    if (chosen.count(op))
      out.ops.push_back(inference.infer(op, fi.section));
  indexLastLines(out);
  out.pool = writer.pool();
  early.deliver(std::move(out));
}

/// One function without errors: upstream's pass on it (in `ctx`, where it
/// was parsed), then its ops' records (and the refine-all edits). False
/// once `stopped`.
bool inferFunction(const detail::ParsedSection &ps, func::FuncOp fn,
                   MLIRContext &ctx, FunctionInference &fi,
                   InferredOpWriter &writer, llvm::function_ref<bool()> stopped,
                   bool withRefineEdits, llvm::function_ref<void()> betweenOps,
                   const detail::EarlyOps *early) {
  std::vector<Operation *> ops;
  llvm::DenseMap<Value, Type> declared;
  declaredTypes(ps, fn, ops, declared);
  PassManager pm(&ctx, func::FuncOp::getOperationName());
  pm.addPass(tosa::createTosaInferShapesPass());
  // What the pass leaves may not verify: a declared static size that
  // contradicts a propagated one stays (the pass keeps declared types
  // it cannot join) and its op then fails. Those are the
  // contradictions reported below, so no verification here.
  pm.enableVerifier(false);
  if (betweenOps)
    betweenOps();
  if (stopped())
    return false;
  if (failed(pm.run(fn))) {
    fi.skipped = "tosa-infer-shapes failed on the function";
    return true;
  }
  if (early && !early->lines.empty())
    recordEarly(ps, fn, ctx, fi, ops, declared, *early);
  OpInference inference(ps, fn, declared, writer, ctx, fi.name);
  // Sized once: grown by doubling, the records were copied and their old
  // buffers freed and faulted in again (~1.5 % of a many-function open).
  fi.ops.reserve(fi.ops.size() + ops.size());
  fi.lastLineSoFar.reserve(fi.lastLineSoFar.size() + ops.size());
  size_t done = 0;
  for (Operation *op : ops) {
    if (betweenOps)
      betweenOps();
    if (++done % 256 == 0 && stopped())
      return false;
    fi.ops.push_back(inference.infer(op, fi.section));
  }
  indexLastLines(fi);
  if (stopped())
    return false;
  if (withRefineEdits) {
    std::vector<TextEditData> edits;
    refineEdits(ps, fn, declared, fi, edits);
    // Kept as ranges and pooled texts (mostly types, repeated).
    fi.refineEdits.reserve(edits.size());
    for (const TextEditData &e : edits)
      fi.refineEdits.push_back({e.range, writer.intern(e.newText)});
    fi.refineKnown = true;
  }
  fi.pool = writer.pool();
  return true;
}

} // namespace

std::vector<detail::ListedFunction>
detail::listTopLevelFunctions(const ParsedSection &ps,
                              const FunctionsToInfer &what) {
  std::vector<ListedFunction> listed;
  for (Operation &top : *ps.module.get().getBody()) {
    auto fn = dyn_cast<func::FuncOp>(top);
    const AsmParserState::OperationDefinition *def = ps.state.getOpDef(&top);
    if (!fn || !def)
      continue;
    ListedFunction f;
    f.fn = fn;
    f.fi.name = fn.getSymName().str();
    f.fi.scope = ps.toFileRange(def->scopeLoc);
    f.fi.section = what.section;
    // Not in the file (a unit's stubs) or not asked for.
    if (!f.fi.scope.begin.valid() ||
        !overlapsLines(f.fi.scope, what.firstLine, what.lastLine))
      continue;
    if (llvm::any_of(what.errors,
                     [&](Position p) { return inside(f.fi.scope, p); }))
      f.fi.skipped = "the function has errors";
    else if (fn.isExternal())
      f.fi.skipped = "the function has no body";
    listed.push_back(std::move(f));
  }
  return listed;
}

bool detail::inferListed(const ParsedSection &ps, MLIRContext &ctx,
                         ListedFunction &f, bool withRefineEdits,
                         llvm::function_ref<bool()> stopped,
                         InferredOpWriter *shared,
                         llvm::function_ref<void()> betweenOps,
                         const EarlyOps *early) {
  if (!f.fi.skipped.empty())
    return true;
  std::optional<InferredOpWriter> own;
  if (!shared)
    own.emplace();
  InferredOpWriter &writer = shared ? *shared : *own;
  if (!inferFunction(ps, cast<func::FuncOp>(f.fn), ctx, f.fi, writer, stopped,
                     withRefineEdits, betweenOps, early))
    return false;
  if (own && f.fi.pool)
    own->shrink();
  return true;
}

bool detail::inferTopLevelFunctions(const ParsedSection &ps, MLIRContext &ctx,
                                    const FunctionsToInfer &what,
                                    llvm::function_ref<bool()> stopped,
                                    InferredOpWriter *shared,
                                    std::vector<FunctionInference> &out) {
  for (ListedFunction &f : listTopLevelFunctions(ps, what)) {
    if (stopped() ||
        !inferListed(ps, ctx, f, what.withRefineEdits, stopped, shared))
      return false;
    out.push_back(std::move(f.fi));
  }
  return true;
}

void ShapeInferrer::Impl::inferSection(
    const std::string &text, const LineIndex &lines, const FileAnalysis &fa,
    const Section &sec, unsigned first, unsigned last, ShapeInference &out,
    llvm::function_ref<bool()> stop, bool withRefineEdits) {
  // Asked between steps; once true, nothing more is done or kept.
  auto stopped = [&] { return tosa_lsp::stopped(out, stop); };
  if (stopped())
    return;
  // Errors decide what is skipped: a function with an error inside, or the
  // whole section when an error has no place in it.
  std::vector<Position> errors;
  for (uint32_t i : fa.errorIndices()) {
    const Diagnostic &d = fa.diagnostics[i];
    if (d.section == sec.index) {
      if (!d.range.begin.valid())
        return;
      errors.push_back(d.range.begin);
    }
  }

  MLIRContext &ctx = *context;
  // Owned here and intentionally leaked if MLIR crashes (see CrashGuard.h).
  auto ps = std::make_unique<detail::ParsedSection>();
  ps->section = sec;
  ps->sourceMgr.AddNewSourceBuffer(
      detail::parserBuffer(
          std::string_view(text).substr(sec.beginOffset,
                                        sec.endOffset - sec.beginOffset),
          text, fa.path),
      llvm::SMLoc());
  ps->lines = &lines;
  ps->bufferStart =
      ps->sourceMgr.getMemoryBuffer(ps->sourceMgr.getMainFileID())
          ->getBufferStart();
  ScopedDiagnosticHandler silence(&ctx,
                                  [](mlir::Diagnostic &) { return success(); });

  std::vector<FunctionInference> results;
  InferredOpWriter writer;
  std::optional<std::string> crash = runContained([&] {
    Block block;
    ParserConfig config(&ctx, /*verifyAfterParse=*/false);
    if (failed(parseAsmSourceFile(ps->sourceMgr, &block, config, &ps->state)) ||
        stopped())
      return;
    wrapModule(*ps, block, ctx);
    detail::FunctionsToInfer what;
    what.section = sec.index;
    what.firstLine = first;
    what.lastLine = last;
    what.errors = std::move(errors);
    what.withRefineEdits = withRefineEdits;
    (void)detail::inferTopLevelFunctions(*ps, ctx, what, stopped, &writer,
                                         results);
  });
  if (crash) {
    abandonAfterCrash(std::move(ps), fa, sec, first, last, *crash, out);
    return;
  }
  writer.shrink();
  // The scratch parse is as big as the analysis' one: its pages go back
  // now, not when this pool thread next allocates, and in bulk: at once
  // only for the moment of the collect, so requests answered meanwhile
  // keep theirs.
  {
    FreeInBulk bulk;
    ps.reset();
  }
  if (out.cancelled)
    return;
  for (FunctionInference &f : results)
    out.functions.push_back(std::move(f));
}

void ShapeInferrer::Impl::abandonAfterCrash(
    std::unique_ptr<detail::ParsedSection> ps, const FileAnalysis &fa,
    const Section &sec, unsigned first, unsigned last, const std::string &crash,
    ShapeInference &out) {
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
      fi.skipped = "MLIR crashed while inferring shapes (" + crash + ")";
      out.functions.push_back(std::move(fi));
    }
}

} // namespace tosa_lsp
