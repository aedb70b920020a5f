//===- MigrateModule.cpp - old forms outside TOSA ops' operands -----------===//
//
// Syntax MLIR 22 no longer parses, kept parseable in the migration's own
// context by stand-in ops (custom `tosa.fully_connected`, `func @f` from
// before the func dialect, `tosa.variable.read`/`.write`), and the rewrites
// of what is not a single op's operands: `func` -> `func.func`, the
// variable ops' new names, and `tosa.variable` declared inside a function
// (TOSA before MLIR 21) moved to module level, where MLIR 22 wants a symbol.
//
//===----------------------------------------------------------------------===//

#include "MigrateSupport.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;

namespace tosa_lsp::migrate {
namespace {

/// tosa.fully_connected in its custom form (`tosa.fully_connected %a, %b,
/// %c {...} : (...) -> ...`), which MLIR 22 cannot parse since the op is
/// gone.
class FullyConnectedStub
    : public Op<FullyConnectedStub, OpTrait::VariadicOperands,
                OpTrait::VariadicResults> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FullyConnectedStub)
  using Op::Op;
  static llvm::StringRef getOperationName() { return "tosa.fully_connected"; }
  static ArrayRef<llvm::StringRef> getAttributeNames() { return {}; }
  static ParseResult parse(OpAsmParser &p, OperationState &state) {
    SmallVector<OpAsmParser::UnresolvedOperand> operands;
    FunctionType type;
    llvm::SMLoc loc = p.getCurrentLocation();
    if (p.parseOperandList(operands) ||
        p.parseOptionalAttrDict(state.attributes) || p.parseColonType(type) ||
        p.resolveOperands(operands, type.getInputs(), loc, state.operands))
      return failure();
    state.addTypes(type.getResults());
    return success();
  }
  void print(OpAsmPrinter &p) {
    p << " ";
    p.printOperands(getOperation()->getOperands());
    p.printOptionalAttrDict(getOperation()->getAttrs());
    p << " : ";
    p.printFunctionalType(getOperation());
  }
};

/// `func @f(...) -> ... {...}` (MLIR before the func dialect): MLIR 22's
/// parser looks the bare `func` up as `builtin.func`. Parsed as func.func
/// is, with `func` the default dialect of its body (`return`).
class FuncStub : public Op<FuncStub, OpTrait::OneRegion, OpTrait::ZeroResults,
                           OpTrait::ZeroOperands, OpAsmOpInterface::Trait> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuncStub)
  using Op::Op;
  static llvm::StringRef getOperationName() { return "builtin.func"; }
  static ArrayRef<llvm::StringRef> getAttributeNames() { return {}; }
  static llvm::StringRef getDefaultDialect() { return "func"; }
  static ParseResult parse(OpAsmParser &p, OperationState &state) {
    auto build = [](Builder &b, ArrayRef<Type> args, ArrayRef<Type> results,
                    function_interface_impl::VariadicFlag,
                    std::string &) { return b.getFunctionType(args, results); };
    MLIRContext *ctx = state.getContext();
    return function_interface_impl::parseFunctionOp(
        p, state, /*allowVariadic=*/false,
        StringAttr::get(ctx, "function_type"), build,
        StringAttr::get(ctx, "arg_attrs"), StringAttr::get(ctx, "res_attrs"));
  }
  void print(OpAsmPrinter &p) { p << " ..."; }
};

/// `tosa.variable.read @v : T` / `tosa.variable.write @v, %x : T` (MLIR
/// 18-20), renamed `variable_read`/`variable_write` since, same syntax.
ParseResult parseVariableAccess(OpAsmParser &p, OperationState &state) {
  StringAttr name;
  OpAsmParser::UnresolvedOperand value;
  Type type;
  if (p.parseSymbolName(name))
    return failure();
  state.addAttribute("name", name);
  bool write = succeeded(p.parseOptionalComma());
  if ((write && p.parseOperand(value)) ||
      p.parseOptionalAttrDict(state.attributes) || p.parseColonType(type))
    return failure();
  if (write)
    return p.resolveOperand(value, type, state.operands);
  state.addTypes(type);
  return success();
}

class VariableReadStub
    : public Op<VariableReadStub, OpTrait::ZeroOperands, OpTrait::OneResult> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VariableReadStub)
  using Op::Op;
  static llvm::StringRef getOperationName() { return "tosa.variable.read"; }
  static ArrayRef<llvm::StringRef> getAttributeNames() { return {}; }
  static ParseResult parse(OpAsmParser &p, OperationState &state) {
    return parseVariableAccess(p, state);
  }
  void print(OpAsmPrinter &p) { p << " ..."; }
};

class VariableWriteStub
    : public Op<VariableWriteStub, OpTrait::OneOperand, OpTrait::ZeroResults> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VariableWriteStub)
  using Op::Op;
  static llvm::StringRef getOperationName() { return "tosa.variable.write"; }
  static ArrayRef<llvm::StringRef> getAttributeNames() { return {}; }
  static ParseResult parse(OpAsmParser &p, OperationState &state) {
    return parseVariableAccess(p, state);
  }
  void print(OpAsmPrinter &p) { p << " ..."; }
};

bool isModule(Operation *op) {
  return op && op->getName().getStringRef() == "builtin.module";
}

/// A statement's whole lines when nothing else is on them, else its range.
std::pair<size_t, size_t> statementLines(std::string_view buf, size_t begin,
                                         size_t end) {
  size_t b = begin, e = end;
  while (b > 0 && (buf[b - 1] == ' ' || buf[b - 1] == '\t'))
    --b;
  while (e < buf.size() && (buf[e] == ' ' || buf[e] == '\t'))
    ++e;
  if ((b == 0 || buf[b - 1] == '\n') && e < buf.size() && buf[e] == '\n')
    return {b, e + 1};
  return {begin, end};
}

/// A declaration's custom form, from MLIR 22's attributes or older ones
/// (`name`, a tensor `type`).
std::optional<std::string> variableText(SectionCtx &sc, Operation *op,
                                        std::string *name) {
  const NamedAttrList &attrs = allAttrs(sc, op);
  Attribute n =
      attrs.get("sym_name") ? attrs.get("sym_name") : attrs.get("name");
  if (auto s = dyn_cast_or_null<StringAttr>(n))
    *name = s.getValue().str();
  else if (auto r = dyn_cast_or_null<FlatSymbolRefAttr>(n))
    *name = r.getValue().str();
  else
    return std::nullopt;
  auto t = dyn_cast_or_null<TypeAttr>(attrs.get("type"));
  if (!t)
    return std::nullopt;
  Type type = t.getValue();
  if (auto shape =
          dyn_cast_or_null<DenseIntElementsAttr>(attrs.get("var_shape"))) {
    std::vector<int64_t> dims;
    for (const APInt &d : shape.getValues<APInt>())
      dims.push_back(d.getSExtValue());
    type = RankedTensorType::get(dims, type);
  }
  if (!isa<RankedTensorType>(type))
    return std::nullopt;
  std::string text = "tosa.variable @" + *name;
  if (Attribute init = attrs.get("initial_value"))
    return text + " = " + print(init); // The value prints its type.
  return text + " : " + print(type);
}

/// A tosa.variable inside a function (or in its old generic attributes):
/// declared once before the function, at module level.
void planVariable(SectionCtx &sc, Operation *op, MigrationFix fix,
                  MigrationPlan &plan, const PositionAt &pos) {
  const AsmParserState::OperationDefinition *def = sc.state->getOpDef(op);
  size_t begin = sc.offset(def->loc.Start), end = sc.offset(def->scopeLoc.End);
  std::string_view written = sc.buf.substr(begin, end - begin);
  bool custom = written.rfind("tosa.variable", 0) == 0;
  const NamedAttrList &attrs = allAttrs(sc, op);
  bool oldAttrs = !attrs.get("sym_name") || !attrs.get("var_shape");
  Operation *top = op;
  while (top->getParentOp() && !isModule(top->getParentOp()))
    top = top->getParentOp();
  bool inFunction = top != op;
  std::string name;
  std::optional<std::string> text = variableText(sc, op, &name);
  if (!inFunction && (custom || !oldAttrs)) {
    if (text)
      sc.variables.emplace(name, *text);
    return; // MLIR 22's own form.
  }
  if (!text) {
    plan.manual.push_back({fix.opName, fix.nameRange, fix.section,
                           "a tosa.variable whose name or type cannot be "
                           "read: declare it at module level as `tosa."
                           "variable @name = value : type`"});
    return;
  }
  if (custom)
    text = std::string(written.substr(0, trailingLoc(written)));
  while (!text->empty() && text->back() == ' ')
    text->pop_back();
  if (!inFunction) {
    sc.variables.emplace(name, *text);
    fix.title = "Migrate tosa.variable to MLIR 22: `sym_name`, `var_shape` "
                "and the element type";
    fix.edits.push_back({{pos(begin), pos(end)}, *text});
    plan.fixes.push_back(std::move(fix));
    return;
  }
  auto [it, first] = sc.variables.emplace(name, *text);
  if (!first && it->second != *text) {
    plan.manual.push_back(
        {fix.opName, fix.nameRange, fix.section,
         "another function declares variable @" + name +
             " with a different type or value; MLIR 22 declares a variable "
             "once per module: rename one (and its reads and writes)"});
    return;
  }
  const AsmParserState::OperationDefinition *topDef = sc.state->getOpDef(top);
  if (!topDef)
    return;
  size_t topBegin = sc.offset(topDef->loc.Start);
  std::string indent = lineIndent(sc.buf, topBegin);
  size_t lineStart = topBegin - indent.size();
  fix.title = "Migrate tosa.variable to MLIR 22: declared at module level "
              "(a symbol), not inside a function";
  if (first)
    fix.edits.push_back(
        {{pos(lineStart), pos(lineStart)}, indent + *text + "\n"});
  auto [b, e] = statementLines(sc.buf, begin, end);
  fix.edits.push_back({{pos(b), pos(e)}, ""});
  plan.fixes.push_back(std::move(fix));
}

} // namespace

void registerOldSyntaxOps(MLIRContext *ctx) {
  auto *tosa = ctx->getOrLoadDialect<tosa::TosaDialect>();
  RegisteredOperationName::insert<FullyConnectedStub>(*tosa);
  RegisteredOperationName::insert<VariableReadStub>(*tosa);
  RegisteredOperationName::insert<VariableWriteStub>(*tosa);
  RegisteredOperationName::insert<FuncStub>(
      *ctx->getOrLoadDialect<BuiltinDialect>());
}

bool planModuleForm(SectionCtx &sc, Operation *op, MigrationFix fix,
                    MigrationPlan &plan, const PositionAt &pos) {
  llvm::StringRef own = op->getName().getStringRef();
  const AsmParserState::OperationDefinition *def = sc.state->getOpDef(op);
  if (!def)
    return false;
  size_t nameBegin = sc.offset(def->loc.Start),
         nameEnd = sc.offset(def->loc.End);
  if (own == "builtin.func") {
    fix.opName = "func";
    fix.title = "Migrate func to MLIR 22: `func` -> `func.func` (the func "
                "dialect)";
    fix.edits.push_back({{pos(nameBegin), pos(nameEnd)}, "func.func"});
    plan.fixes.push_back(std::move(fix));
    return true;
  }
  std::string name = tosaName(op);
  if (name == "tosa.variable.read" || name == "tosa.variable.write") {
    std::string_view text = sc.buf.substr(nameBegin, nameEnd - nameBegin);
    size_t dot = text.find("variable.");
    if (dot == text.npos)
      return false;
    size_t at = nameBegin + dot + 8;
    fix.title =
        "Migrate " + name + " to MLIR 22: renamed `" +
        (name.back() == 'd' ? "tosa.variable_read`" : "tosa.variable_write`");
    fix.edits.push_back({{pos(at), pos(at + 1)}, "_"});
    plan.fixes.push_back(std::move(fix));
    return true;
  }
  if (name == "tosa.variable") {
    planVariable(sc, op, std::move(fix), plan, pos);
    return true;
  }
  return false;
}

} // namespace tosa_lsp::migrate
