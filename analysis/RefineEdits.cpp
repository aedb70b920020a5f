//===- RefineEdits.cpp - Refine-all edits of one function ----------------===//
//
// The text edits that give a function's values the types
// tosa-infer-shapes found: result types in the op's own type list (its
// generic or custom form), block argument types, and casts where a value's
// refined type must not reach a use that needs the declared one.
//
//===----------------------------------------------------------------------===//

#include "OpInference.h"
#include "TextScan.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <set>

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

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

} // namespace

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

} // namespace tosa_lsp::detail
