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
#include "MigrateSupport.h"

#include "CrashGuard.h"
#include "DroppedNanModes.h"
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
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

using namespace mlir;

using namespace mlir;
using namespace tosa_lsp::migrate;

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

const char *kFullyConnectedAdvice =
    "tosa.fully_connected was removed in TOSA 1.0 (MLIR 22): reshape the "
    "input to Nx1x1xIC and the weights to OCx1x1xIC (tosa.reshape) and use "
    "tosa.conv2d with zero points and acc_type, then reshape the result to "
    "NxOC; or use tosa.matmul followed by tosa.add for the bias";

const char *kStrideAdvice =
    "TOSA before MLIR 22 allowed a padded size the stride does not divide: "
    "lower the trailing pad (pad_bottom, pad_right; conv3d's pad_back) by the "
    "remainder, and where that pad is smaller, slice the rest off the input's "
    "end (tosa.slice); the rows dropped are past the last window, so every "
    "output keeps its value (the quick fix and `fix --migrate` do it)";

/// Cheap test on the IR: the op already has MLIR 22's operands (or, for
/// tosa.clamp, attributes), attributes and window sizes.
bool inMlir22Form(Operation *op, llvm::StringRef name) {
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
  if (name == "tosa.fully_connected" || hasArrayAttrs(op) ||
      op->getAttrDictionary().get("quantization_info"))
    return false;
  if (hasStrideRule(name) &&
      strideRemainders(op, op->getAttrDictionary()).value_or(false))
    return false;
  if (name == "tosa.clamp")
    return static_cast<bool>(op->getAttrDictionary().get("min_val"));
  if (name == "tosa.pad")
    return op->getNumOperands() == 3 &&
           !isa<RankedTensorType>(op->getOperand(1).getType());
  auto it = operands.find(name);
  return it == operands.end() || op->getNumOperands() == it->second;
}

/// The op's own rewrite for its old form; false (with `rw.why` when known)
/// when there is none.
bool rewriteOldForm(Rewrite &rw, llvm::StringRef name) {
  unsigned n = rw.op->getNumOperands();
  if (name == "tosa.mul")
    return n == 3 || migrateMul(rw);
  if (name == "tosa.reshape")
    return n == 2 || migrateReshape(rw);
  if (name == "tosa.transpose")
    return n == 1 || migrateTranspose(rw);
  if (name == "tosa.clamp")
    return rw.attrs.get("min_val") || migrateClamp(rw);
  if (name == "tosa.avg_pool2d")
    return n == 3 || migrateAvgPool(rw);
  if (name == "tosa.conv2d" || name == "tosa.depthwise_conv2d" ||
      name == "tosa.conv3d" || name == "tosa.transpose_conv2d")
    return n == 5 || migrateConv(rw);
  if (name == "tosa.matmul")
    return n == 4 || migrateMatmul(rw);
  if (name == "tosa.negate")
    return n == 3 || migrateNegate(rw);
  if (name == "tosa.rescale")
    return n == 5 || migrateRescale(rw);
  if (name == "tosa.pad")
    return (n == 3 && !isa<RankedTensorType>(rw.op->getOperand(1).getType())) ||
           migratePad(rw);
  if (name == "tosa.slice")
    return n == 3 || migrateShapeAttrs(rw, {"start", "size"});
  if (name == "tosa.tile")
    return n == 2 || migrateShapeAttrs(rw, {"multiples"});
  if (name == "tosa.resize")
    return n == 4 || (migrateResizeMode(rw) &&
                      migrateShapeAttrs(rw, {"scale", "offset", "border"}));
  if (name == "tosa.fully_connected") {
    if (migrateFullyConnected(rw))
      return true;
    if (rw.why.empty())
      rw.why = kFullyConnectedAdvice;
    return false;
  }
  return true; // No operand changes for this op.
}

/// `tosa.const {value = ...}` -> `values`, renamed in place.
void migrateConst(SectionCtx &sc, Operation *op, size_t nameBegin, size_t end,
                  MigrationFix fix, MigrationPlan &plan,
                  const PositionAt &pos) {
  if (op->getAttrDictionary().get("values"))
    return;
  std::string_view text = sc.buf.substr(nameBegin, end - nameBegin);
  std::optional<size_t> key = valueKey(text);
  if (!key)
    return;
  size_t at = nameBegin + *key;
  fix.title = "Migrate tosa.const to MLIR 22: `value` -> `values`";
  fix.edits.push_back({{pos(at), pos(at + 5)}, "values"});
  plan.fixes.push_back(std::move(fix));
}

/// The MLIR 22 op's text, in the op's own style (custom or generic), with
/// its trailing location.
std::string renderOp(const Rewrite &rw, llvm::StringRef name,
                     std::string_view opText) {
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
  Operation *op = rw.op;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    results += (i ? ", " : "") + print(op->getResult(i).getType());
  if (op->getNumResults() != 1)
    results = "(" + results + ")";
  std::string out = generic ? "\"" + newName + "\"(" + operands + ")"
                            : newName + " " + operands;
  if (!rw.attrs.empty())
    out += " " + print(rw.attrs.getDictionary(op->getContext()));
  return out + " : (" + types + ") -> " + results + tail;
}

void planSection(SectionCtx &sc, Block &block, const LineIndex &lines,
                 unsigned section, MigrationPlan &plan) {
  PositionAt pos = [&](size_t off) { return lines.position(sc.base + off); };
  block.walk([&](Operation *op) {
    std::string nameStr = tosaName(op);
    llvm::StringRef name = nameStr;
    bool moduleForm = name == "builtin.func" || name == "tosa.variable" ||
                      name.starts_with("tosa.variable.");
    if (!name.starts_with("tosa.") && !moduleForm)
      return;
    const AsmParserState::OperationDefinition *def = sc.state->getOpDef(op);
    if (!def)
      return;
    size_t nameBegin = sc.offset(def->loc.Start),
           nameEnd = sc.offset(def->loc.End),
           end = sc.offset(def->scopeLoc.End);
    MigrationFix fix;
    fix.opName = name.str();
    fix.nameRange = {pos(nameBegin), pos(nameEnd)};
    fix.section = section;
    if (moduleForm) {
      planModuleForm(sc, op, std::move(fix), plan, pos);
      return;
    }
    if (name == "tosa.const")
      return migrateConst(sc, op, nameBegin, end, std::move(fix), plan, pos);
    if (inMlir22Form(op, name))
      return; // Most ops of a model: no text is read for them.
    Rewrite rw{sc, op, "", {}, {}, allAttrs(sc, op), "", {}, "", ""};
    flattenQuantInfo(rw.attrs);
    // The op is rewritten whole: its `nan_mode` string (which MLIR 22
    // drops, DroppedNanModes.h) as MLIR 22's enum.
    if (auto mode = dyn_cast_or_null<StringAttr>(rw.attrs.get("nan_mode")))
      if (std::optional<tosa::NanPropagationMode> m =
              tosa::symbolizeNanPropagationMode(mode.getValue()))
        rw.attrs.set("nan_mode",
                     tosa::NanPropagationModeAttr::get(op->getContext(), *m));
    auto manual = [&](std::string why) {
      plan.manual.push_back({name.str(), fix.nameRange, section,
                             why.empty() ? "no mechanical rewrite of this "
                                           "pre-MLIR-22 form"
                                         : why});
    };
    size_t stmt = def->resultGroups.empty()
                      ? nameBegin
                      : sc.offset(def->resultGroups[0].definition.loc.Start);
    rw.indent = lineIndent(sc.buf, stmt);
    for (Value v : op->getOperands()) {
      std::optional<std::string> n = valueName(sc, v);
      if (!n)
        return manual("an operand has no name in the source");
      rw.addOperand(*n, print(v.getType()));
    }
    if (op->getNumRegions() != 0 || op->getNumSuccessors() != 0)
      return;
    if (!rewriteOldForm(rw, name))
      return manual(rw.why);
    arrayAttrsAsDense(rw);
    if (hasStrideRule(name) && strideRemainders(op, rw.attrs).value_or(false) &&
        !migrateStride(rw))
      return manual(rw.why.empty() ? "the padded size does not divide by the "
                                     "stride"
                                   : rw.why);
    if (rw.changes.empty())
      return;
    std::string what;
    for (const std::string &c : rw.changes)
      what += (what.empty() ? "" : "; ") + c;
    fix.title = "Migrate " + name.str() + " to MLIR 22: " + what;
    if (!rw.prologue.empty())
      fix.edits.push_back({{pos(stmt), pos(stmt)}, rw.prologue});
    fix.edits.push_back(
        {{pos(nameBegin), pos(end)},
         renderOp(rw, name, sc.buf.substr(nameBegin, end - nameBegin))});
    plan.fixes.push_back(std::move(fix));
  });
}

} // namespace

std::optional<std::string> migrationAdvice(std::string_view message) {
  if (message.find("'tosa.fully_connected'") != message.npos)
    return std::string(kFullyConnectedAdvice);
  if (message.find("to be wholly divisible by stride") != message.npos)
    return std::string(kStrideAdvice);
  if (message.find("custom op 'func' is unknown") != message.npos ||
      message.find("custom op 'builtin.func' is unknown") != message.npos)
    return std::string("`func` is `func.func` since MLIR 15 (the func "
                       "dialect); `fix --migrate` renames it");
  if (message.find("'tosa.variable.read'") != message.npos ||
      message.find("'tosa.variable.write'") != message.npos)
    return std::string("tosa.variable.read/.write are tosa.variable_read/"
                       "_write in MLIR 22 (same syntax); `fix --migrate` "
                       "renames them");
  if (message.find("custom op 'tosa.variable' expected valid '@'-identifier") !=
      message.npos)
    return std::string("a tosa.variable named by a number (`tosa.variable 1 "
                       "= ...`) has no MLIR 22 form: variables are symbols; "
                       "name it `@name`, in its reads and writes too");
  if (message.find("'tosa.variable' op symbol's parent must have the "
                   "SymbolTable trait") != message.npos)
    return std::string("MLIR 22 declares a tosa.variable at module level, "
                       "not inside a function; `fix --migrate` moves it");
  return std::nullopt;
}

bool mayNeedMigration(const std::string &text) {
  return text.find("tosa.") != std::string::npos;
}

namespace {
/// `nan_mode = "IGNORE"` strings, which MLIR 22 drops (DroppedNanModes.h),
/// as MLIR 22 writes them; not where an op's rewrite already replaces the
/// text (that op is checked again after the migration).
void addNanModeFixes(const std::string &text, const LineIndex &lines,
                     MigrationPlan &plan) {
  std::vector<detail::DroppedNanMode> found = detail::droppedNanModes(text);
  if (found.empty())
    return;
  std::vector<Section> sections = splitSections(text);
  for (const detail::DroppedNanMode &n : found) {
    Range r{lines.position(n.offset), lines.position(n.offset + n.length)};
    bool covered = llvm::any_of(plan.fixes, [&](const MigrationFix &f) {
      return llvm::any_of(f.edits, [&](const TextEditData &e) {
        return before(e.range.begin, r.end) && before(r.begin, e.range.end);
      });
    });
    if (covered)
      continue;
    MigrationFix fix;
    fix.opName = "nan_mode";
    fix.nameRange = r;
    for (const Section &sec : sections)
      if (sec.beginOffset <= n.offset && n.offset < sec.endOffset)
        fix.section = sec.index;
    fix.title = detail::kNanModeFixTitle;
    fix.edits.push_back({r, detail::kNanModeEnum});
    plan.fixes.push_back(std::move(fix));
  }
}
} // namespace

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
  registerOldSyntaxOps(ctx);
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
        // Quantization attributes TOSA 1.0 dropped, as dictionaries; generic
        // TOSA ops as unregistered ones, which parse with old attributes.
        quantAttrsAsDicts(alternative);
        genericTosaOpsUnregistered(alternative);
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
  addNanModeFixes(text, lines, plan);
  return plan;
}

std::string applyMigration(const std::string &text, const MigrationPlan &plan,
                           PositionMap *map) {
  std::vector<TextEditData> edits;
  for (const MigrationFix &f : plan.fixes)
    edits.insert(edits.end(), f.edits.begin(), f.edits.end());
  return PositionMap::apply(text, edits, map);
}

} // namespace tosa_lsp
