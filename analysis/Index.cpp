//===- Index.cpp - values, blocks and symbols as plain data ---------------===//
//
// Copies what AsmParserState knows (definitions and uses of SSA values, block
// labels and symbols) into plain data, so hover/definition/references can be
// answered without the IR, from any thread.
//
//===----------------------------------------------------------------------===//

#include "IR.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <tuple>

using namespace mlir;

namespace tosa_lsp::detail {

/// Distinct ranges in source order (AsmParserState can record a symbol use
/// more than once), built in place: one allocation a list.
static CowVector<Range> toRanges(const ParsedSection &ps,
                                 llvm::ArrayRef<llvm::SMRange> ranges) {
  llvm::SmallVector<Range, 8> out;
  out.reserve(ranges.size());
  for (llvm::SMRange r : ranges)
    out.push_back(ps.toFileRange(r));
  auto key = [](const Range &r) {
    return std::make_tuple(r.begin.line, r.begin.column, r.end.line,
                           r.end.column);
  };
  auto less = [&](const Range &a, const Range &b) { return key(a) < key(b); };
  // Uses are recorded as parsed, in source order, most often.
  if (!std::is_sorted(out.begin(), out.end(), less))
    std::sort(out.begin(), out.end(), less);
  out.erase(std::unique(out.begin(), out.end(),
                        [&](const Range &a, const Range &b) {
                          return key(a) == key(b);
                        }),
            out.end());
  return CowVector<Range>(out.data(), out.size());
}

static std::string textOf(llvm::SMRange r) {
  if (!r.isValid())
    return "";
  return std::string(r.Start.getPointer(),
                     r.End.getPointer() - r.Start.getPointer());
}

void fillOpSpans(const ParsedSection &ps, Operation *op, OpReport &r) {
  if (const AsmParserState::OperationDefinition *def = ps.state.getOpDef(op))
    fillOpSpans(ps, *def, r);
}

void fillOpSpans(const ParsedSection &ps,
                 const AsmParserState::OperationDefinition &def, OpReport &r) {
  r.scope = ps.toFileRange(def.scopeLoc);
  if (!def.resultGroups.empty()) {
    llvm::SMRange name = def.resultGroups[0].definition.loc;
    r.resultNameRange = ps.toFileRange(name);
  }
  llvm::StringRef scope(def.scopeLoc.Start.getPointer(),
                        def.scopeLoc.End.getPointer() -
                            def.scopeLoc.Start.getPointer());
  if (auto t = findResultType(scope)) {
    const char *base = def.scopeLoc.Start.getPointer();
    r.resultTypeRange =
        ps.toFileRange({llvm::SMLoc::getFromPointer(base + t->first),
                        llvm::SMLoc::getFromPointer(base + t->second)});
  }
}

void linkReports(const std::vector<Operation *> &owners,
                 const std::vector<Operation *> &spanOwners,
                 const llvm::DenseMap<Operation *, unsigned> &reportOf,
                 std::vector<ValueInfo> &values, std::vector<OpSpan> &spans) {
  for (size_t i = 0; i < owners.size() && i < values.size(); ++i)
    if (owners[i])
      if (auto it = reportOf.find(owners[i]); it != reportOf.end())
        values[i].opReport = static_cast<int>(it->second);
  size_t kept = 0;
  for (size_t i = 0; i < spans.size(); ++i)
    if (i >= spanOwners.size() || !reportOf.count(spanOwners[i]))
      spans[kept++] = std::move(spans[i]);
  spans.erase(spans.begin() + kept, spans.end());
}

/// A symbol-defining op's name, the range of its `@name` and its uses.
static SymbolInfo symbolInfo(const ParsedSection &ps,
                             const AsmParserState::OperationDefinition &def,
                             StringAttr symName, const SharedText &opName,
                             Range ownerRange, unsigned section) {
  SymbolInfo s;
  s.name = symName.str();
  s.opName = opName;
  s.scope = ps.toFileRange(def.scopeLoc);
  s.nameRange = ownerRange;
  llvm::StringRef scope(def.scopeLoc.Start.getPointer(),
                        def.scopeLoc.End.getPointer() -
                            def.scopeLoc.Start.getPointer());
  for (std::string spelled : {"@" + s.name, "@\"" + s.name + "\""}) {
    size_t at = scope.find(spelled);
    if (at == llvm::StringRef::npos)
      continue;
    const char *p = def.scopeLoc.Start.getPointer() + at;
    s.nameRange =
        ps.toFileRange({llvm::SMLoc::getFromPointer(p),
                        llvm::SMLoc::getFromPointer(p + spelled.size())});
    break;
  }
  s.uses = toRanges(ps, def.symbolUses).vec();
  // The definition's own `@name` is recorded as a use too.
  s.uses.erase(std::remove_if(s.uses.begin(), s.uses.end(),
                              [&](const Range &u) {
                                return u.begin.line == s.nameRange.begin.line &&
                                       u.begin.column ==
                                           s.nameRange.begin.column;
                              }),
               s.uses.end());
  s.section = section;
  return s;
}

/// Block labels and block arguments (as values).
template <typename TypeNameFn, typename SharedFn>
static void collectBlocks(const ParsedSection &ps, TypeNameFn &typeName,
                          SharedFn &shared, SectionResult &out,
                          std::vector<Operation *> *owners) {
  unsigned section = ps.section.index;
  for (const AsmParserState::BlockDefinition &def : ps.state.getBlockDefs()) {
    Block *block = def.block;
    std::string label = textOf(def.definition.loc);
    if (def.definition.loc.isValid()) {
      out.blocks.push_back({label, ps.toFileRange(def.definition.loc),
                            toRanges(ps, def.definition.uses), section});
    }
    Operation *parent = block->getParentOp();
    bool entry = block->isEntryBlock();
    std::string where =
        entry && parent
            ? "of the entry block of `" +
                  parent->getName().getStringRef().str() + "`"
            : "of " + (label.empty() ? std::string("a block") : label);
    for (unsigned i = 0; i < def.arguments.size(); ++i) {
      const AsmParserState::SMDefinition &arg = def.arguments[i];
      if (!arg.loc.isValid() || i >= block->getNumArguments())
        continue;
      ValueInfo v;
      v.name = textOf(arg.loc);
      v.def = ps.toFileRange(arg.loc);
      v.uses = toRanges(ps, arg.uses);
      v.type = typeName(block->getArgument(i).getType());
      v.origin = shared("argument #" + std::to_string(i) + " " + where);
      // "(line N)" in a hover: the block's label for a block of its own,
      // the op for an entry block.
      if (!entry && def.definition.loc.isValid())
        v.ownerRange = ps.toFileRange(def.definition.loc);
      else if (parent)
        if (const auto *pd = ps.state.getOpDef(parent))
          v.ownerRange = ps.toFileRange(pd->loc);
      v.section = section;
      out.values.push_back(std::move(v));
      if (owners)
        owners->push_back(nullptr);
    }
  }
}

void collectIndex(const ParsedSection &ps,
                  const llvm::DenseMap<Operation *, unsigned> &reports,
                  SectionResult &out, std::vector<Operation *> *owners,
                  std::vector<Operation *> *spanOwners) {
  unsigned section = ps.section.index;
  // Beside collectOpReports (`owners` given) the section's own caches are
  // theirs; after them, shared: each type is printed once a section (type
  // printing was ~3% of a 50k-line open).
  ParsedSection::TypeNames typeNames;
  ParsedSection::OpNames opNames;
  auto typeName = [&](Type t) -> const SharedText & {
    return owners ? ps.typeName(t, typeNames) : ps.typeName(t);
  };
  llvm::DenseMap<std::pair<const char *, uint64_t>, SharedText> origins;
  // Origins and multi-result type lists repeat as types do: one string each.
  llvm::StringMap<SharedText> texts;
  auto shared = [&](std::string s) -> const SharedText & {
    auto [it, added] = texts.try_emplace(s);
    if (added)
      it->second = SharedText(std::move(s));
    return it->second;
  };
  // Sized once: grown by doubling, each vector was copied ~18 times at
  // 200k ops and the copies' pages faulted in beside the parse.
  size_t numOps = 0, numValues = 0;
  for (const AsmParserState::OperationDefinition &def : ps.state.getOpDefs()) {
    ++numOps;
    numValues += def.resultGroups.size();
  }
  for (const AsmParserState::BlockDefinition &def : ps.state.getBlockDefs())
    numValues += def.arguments.size();
  out.opSpans.reserve(out.opSpans.size() + size_t(numOps * ps.capacityFactor));
  out.values.reserve(out.values.size() + size_t(numValues * ps.capacityFactor));
  if (owners)
    owners->reserve(owners->size() + numValues);
  for (const AsmParserState::OperationDefinition &def : ps.state.getOpDefs()) {
    Operation *op = def.op;
    const SharedText &opName = owners ? ps.opName(op, opNames) : ps.opName(op);
    Range ownerRange = ps.toFileRange(def.loc);
    // A reported op's name, text, operand count and regions are in its
    // report: a span too was 56 bytes an op, most of a model's ops.
    if (spanOwners)
      spanOwners->push_back(op);
    if (spanOwners || !reports.count(op))
      out.opSpans.push_back({opName, ownerRange, ps.toFileRange(def.scopeLoc),
                             op->getNumOperands(), op->getNumRegions() != 0,
                             section});
    for (const auto &group : def.resultGroups) {
      ValueInfo v;
      v.name = textOf(group.definition.loc);
      v.def = ps.toFileRange(group.definition.loc);
      v.uses = toRanges(ps, group.definition.uses);
      unsigned next = op->getNumResults();
      for (const auto &g : def.resultGroups)
        if (g.startIndex > group.startIndex)
          next = std::min(next, g.startIndex);
      if (next - group.startIndex == 1) {
        v.type = typeName(op->getResult(group.startIndex).getType());
      } else {
        std::string types;
        for (unsigned i = group.startIndex; i < next; ++i)
          types += (types.empty() ? "" : ", ") +
                   typeName(op->getResult(i).getType());
        v.type = shared(std::move(types));
      }
      // One text per op name and results: not built again for each op.
      SharedText &origin = origins[{opName.str().data(),
                                    group.startIndex | (uint64_t(next) << 32)}];
      if (origin.empty())
        origin =
            shared(next - group.startIndex == 1
                       ? "result #" + std::to_string(group.startIndex) +
                             " of `" + opName + "`"
                       : "results #" + std::to_string(group.startIndex) + "-" +
                             std::to_string(next - 1) + " of `" + opName + "`");
      v.origin = origin;
      v.ownerRange = ownerRange;
      if (auto it = reports.find(op); it != reports.end())
        v.opReport = static_cast<int>(it->second);
      v.section = section;
      out.values.push_back(std::move(v));
      if (owners)
        owners->push_back(op);
    }
    if (auto symName =
            op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      out.symbols.push_back(
          symbolInfo(ps, def, symName, opName, ownerRange, section));
  }
  collectBlocks(ps, typeName, shared, out, owners);
}

} // namespace tosa_lsp::detail
