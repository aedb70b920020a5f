//===- Navigation.cpp - definition, references, document symbols ----------===//

#include "Navigation.h"

#include "Query.h"

namespace tosa_lsp {

std::optional<Range> definition(const FileAnalysis &fa, Position pos) {
  Lookup l = lookup(fa, pos);
  if (l.value)
    return l.value->def;
  if (l.symbol)
    return l.symbol->nameRange;
  if (l.block)
    return l.block->def;
  if (l.op) // On an op name: its result, when it has one.
    for (const ValueInfo &v : fa.values)
      if (fa.opOf(v) == l.op)
        return v.def;
  return std::nullopt;
}

Occurrences occurrences(const FileAnalysis &fa, Position pos) {
  Lookup l = lookup(fa, pos);
  Occurrences o;
  if (l.value) {
    o.def = l.value->def;
    o.uses.assign(l.value->uses.begin(), l.value->uses.end());
  } else if (l.symbol) {
    o.def = l.symbol->nameRange;
    o.uses = l.symbol->uses;
  } else if (l.block) {
    o.def = l.block->def;
    o.uses.assign(l.block->uses.begin(), l.block->uses.end());
  }
  return o;
}

std::vector<Range> references(const FileAnalysis &fa, Position pos,
                              bool includeDeclaration) {
  Occurrences o = occurrences(fa, pos);
  std::vector<Range> out;
  if (includeDeclaration && o.def.begin.valid())
    out.push_back(o.def);
  out.insert(out.end(), o.uses.begin(), o.uses.end());
  return out;
}

std::vector<DocSymbol> documentSymbols(const FileAnalysis &fa) {
  std::vector<std::vector<DocSymbol>> perSection(fa.sections.size());
  for (const SymbolInfo &s : fa.symbols) {
    if (s.section >= perSection.size())
      continue;
    DocSymbol d;
    bool isFunc = s.opName.find("func") != std::string::npos;
    d.kind = isFunc ? DocSymbol::Function : DocSymbol::Symbol;
    d.name = "@" + s.name;
    d.detail = s.opName;
    d.range = s.scope.begin.valid() ? s.scope : s.nameRange;
    d.selection = s.nameRange;
    perSection[s.section].push_back(std::move(d));
  }
  if (fa.sections.size() <= 1)
    return perSection.empty() ? std::vector<DocSymbol>() : perSection[0];
  std::vector<DocSymbol> out;
  for (const Section &sec : fa.sections) {
    DocSymbol d;
    d.kind = DocSymbol::Section;
    d.name = "section " + std::to_string(sec.index + 1);
    d.detail = sec.parsed ? (sec.stale ? "stale" : "") : "parse error";
    d.range = {{sec.firstLine, 1}, {sec.lastLine, 1}};
    d.selection = {{sec.firstLine, 1}, {sec.firstLine, 1}};
    d.children = std::move(perSection[sec.index]);
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace tosa_lsp
