//===- Lenient.cpp - custom syntax of dialects MLIR 22 lacks --------------===//

#include "Lenient.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>

using namespace mlir;

namespace tosa_lsp::detail {
namespace {

/// One TypeID per namespace for the process: MLIRContext refuses a second
/// dialect of a namespace with another TypeID.
struct Ids {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<SelfOwningTypeID>, std::less<>> byName;
  llvm::DenseSet<TypeID> all;
};
Ids &ids() {
  static Ids *i = new Ids();
  return *i;
}
/// The namespace's TypeID and a copy of the name that lives as long
/// (Dialect keeps its namespace as a StringRef).
std::pair<TypeID, StringRef> idFor(StringRef ns) {
  Ids &i = ids();
  std::lock_guard<std::mutex> lock(i.mu);
  auto it = i.byName.find(ns);
  if (it == i.byName.end()) {
    it = i.byName.emplace(ns.str(), std::make_unique<SelfOwningTypeID>()).first;
    i.all.insert(it->second->getTypeID());
  }
  return {it->second->getTypeID(), it->first};
}

/// `ns.op (OPERANDS, ATTRS)? ATTRS-DICT? (: TYPES)?`, items being SSA uses
/// or attributes (kept as `itemN`). Types: a function type gives operand
/// and result types; a list with one type per operand and result is split;
/// one type per operand (and as many results) is shared; a single type is
/// every operand's and result's.
ParseResult parseLenientOp(OpAsmParser &p, OperationState &state) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  unsigned item = 0;
  auto parseItem = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult r = p.parseOptionalOperand(operand);
    if (r.has_value()) {
      if (failed(*r))
        return failure();
      operands.push_back(operand);
      ++item;
      return success();
    }
    Attribute attr;
    if (p.parseAttribute(attr))
      return failure();
    state.addAttribute("item" + std::to_string(item++), attr);
    return success();
  };
  if (succeeded(p.parseOptionalLParen())) {
    if (failed(p.parseOptionalRParen())) {
      if (p.parseCommaSeparatedList(parseItem) || p.parseRParen())
        return failure();
    }
  } else {
    // Bare items, up to an attribute dictionary, `:` or the end of the op.
    auto startsItem = [&]() {
      OpAsmParser::UnresolvedOperand operand;
      OptionalParseResult r = p.parseOptionalOperand(operand);
      if (r.has_value()) {
        if (succeeded(*r)) {
          operands.push_back(operand);
          ++item;
        }
        return true;
      }
      Attribute attr;
      if (!p.parseOptionalAttribute(attr).has_value())
        return false;
      if (attr)
        state.addAttribute("item" + std::to_string(item++), attr);
      return true;
    };
    if (startsItem())
      while (succeeded(p.parseOptionalComma()))
        if (parseItem())
          return failure();
  }
  if (p.parseOptionalAttrDict(state.attributes))
    return failure();
  SmallVector<Type> types;
  if (succeeded(p.parseOptionalColon()))
    if (p.parseCommaSeparatedList([&]() -> ParseResult {
          Type t;
          if (p.parseType(t))
            return failure();
          types.push_back(t);
          return success();
        }))
      return failure();
  // `flow.tensor.dynamic_constant dense<1.0> : tensor<4xf32> -> tensor<?xf32>`
  SmallVector<Type> arrowTypes;
  bool arrow = succeeded(p.parseOptionalArrow());
  if (arrow && p.parseCommaSeparatedList([&]() -> ParseResult {
        Type t;
        if (p.parseType(t))
          return failure();
        arrowTypes.push_back(t);
        return success();
      }))
    return failure();
  size_t n = operands.size(), r = p.getNumResults();
  if (arrow) {
    if (types.size() == 1 && n > 1)
      types.assign(n, types[0]);
    if (types.size() != n || arrowTypes.size() != r)
      return p.emitError(p.getCurrentLocation(),
                         "cannot tell operand and result types apart (")
             << n << " operands, " << r << " results)";
    if (p.resolveOperands(operands, types, p.getCurrentLocation(),
                          state.operands))
      return failure();
    state.addTypes(arrowTypes);
    return success();
  }
  // `util.unfoldable_constant dense<1> : tensor<4xi32>`: the attribute took
  // the trailing type; the results have it.
  if (types.empty() && r != 0)
    for (NamedAttribute a : llvm::reverse(state.attributes))
      if (auto typed = dyn_cast<TypedAttr>(a.getValue());
          typed && a.getName().strref().starts_with("item")) {
        types.assign(n + r, typed.getType());
        break;
      }
  SmallVector<Type> operandTypes, resultTypes;
  if (types.size() == 1 && isa<FunctionType>(types[0])) {
    auto f = cast<FunctionType>(types[0]);
    operandTypes.assign(f.getInputs().begin(), f.getInputs().end());
    resultTypes.assign(f.getResults().begin(), f.getResults().end());
  } else if (types.size() == n + r) {
    operandTypes.assign(types.begin(), types.begin() + n);
    resultTypes.assign(types.begin() + n, types.end());
  } else if (types.size() == n && (r == 0 || r == n)) {
    operandTypes = types;
    if (r)
      resultTypes = types;
  } else if (types.size() == 1) {
    operandTypes.assign(n, types[0]);
    resultTypes.assign(r, types[0]);
  } else {
    return p.emitError(p.getCurrentLocation(),
                       "cannot tell operand and result types apart (")
           << n << " operands, " << r << " results, " << types.size()
           << " types)";
  }
  if (p.resolveOperands(operands, operandTypes, p.getCurrentLocation(),
                        state.operands))
    return failure();
  state.addTypes(resultTypes);
  return success();
}

class LenientDialect : public Dialect {
public:
  LenientDialect(std::pair<TypeID, StringRef> id, MLIRContext *ctx)
      : Dialect(id.second, ctx, id.first) {
    allowUnknownOperations();
    allowUnknownTypes();
  }
  std::optional<ParseOpHook>
  getParseOperationHook(StringRef opName) const override {
    return ParseOpHook(parseLenientOp);
  }
  Type parseType(DialectAsmParser &parser) const override {
    return OpaqueType::get(StringAttr::get(getContext(), getNamespace()),
                           parser.getFullSymbolSpec());
  }
  Attribute parseAttribute(DialectAsmParser &parser, Type type) const override {
    return OpaqueAttr::get(StringAttr::get(getContext(), getNamespace()),
                           parser.getFullSymbolSpec(),
                           type ? type : NoneType::get(getContext()));
  }
};

} // namespace

std::optional<std::string> missingDialect(std::string_view message) {
  constexpr std::string_view head = "Dialect `";
  constexpr std::string_view tail = "' not found for custom op";
  if (message.rfind(head, 0) != 0)
    return std::nullopt;
  size_t end = message.find(tail, head.size());
  if (end == std::string_view::npos || end == head.size())
    return std::nullopt;
  return std::string(message.substr(head.size(), end - head.size()));
}

void loadLenientDialect(MLIRContext &ctx, StringRef ns) {
  if (ctx.getLoadedDialect(ns) ||
      llvm::is_contained(ctx.getAvailableDialects(), ns))
    return;
  std::pair<TypeID, StringRef> id = idFor(ns);
  ctx.getOrLoadDialect(id.second, id.first, [&] {
    return std::make_unique<LenientDialect>(id, &ctx);
  });
}

bool isLenientDialect(const Dialect *dialect) {
  if (!dialect)
    return false;
  Ids &i = ids();
  std::lock_guard<std::mutex> lock(i.mu);
  return i.all.count(dialect->getTypeID()) != 0;
}

} // namespace tosa_lsp::detail
