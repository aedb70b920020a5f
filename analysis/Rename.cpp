//===- Rename.cpp - rename SSA values, blocks, symbols, aliases -----------===//

#include "Rename.h"

#include "Lexer.h"
#include "LineIndex.h"
#include "Query.h"

namespace tosa_lsp {

namespace {

bool isLetterOr_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/// MLIR's suffix-id (after `%` and `^`): digits only, or a letter or one of
/// `$._-` followed by those and digits.
bool isSuffixId(std::string_view s) {
  if (s.empty())
    return false;
  bool digits = std::all_of(s.begin(), s.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  if (digits)
    return true;
  if (s[0] >= '0' && s[0] <= '9')
    return false;
  return std::all_of(s.begin(), s.end(), isIdChar);
}

/// MLIR's bare-id (after `@`, `#`, `!`): a letter or `_`, then letters,
/// digits and `_$.`.
bool isBareId(std::string_view s) {
  if (s.empty() || !isLetterOr_(s[0]))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return isIdChar(c) && c != '-'; });
}

struct Found {
  RenameTarget target;
  Range def;
  std::vector<Range> uses;
  unsigned section = 0;
  const ValueInfo *value = nullptr;
  const BlockInfo *block = nullptr;
  const SymbolInfo *symbol = nullptr;
  const AliasInfo *alias = nullptr;
};

std::string textAt(const RenameInput &in, const Range &r) {
  auto b = in.lines.offset(r.begin), e = in.lines.offset(r.end);
  if (!b || !e || *e < *b)
    return "";
  return std::string(in.text.substr(*b, *e - *b));
}

Found find(const RenameInput &in, Position pos) {
  Found f;
  RenameTarget &t = f.target;
  if (const AliasInfo *a = aliasAt(in.aliases, pos)) {
    t.kind = RenameTarget::Alias;
    t.placeholder = a->name;
    t.range = a->def;
    for (const Range &u : a->uses)
      if (contains(u, pos))
        t.range = u;
    f.def = a->def;
    f.uses = a->uses;
    f.section = a->section;
    f.alias = a;
    return f;
  }
  // A section that does not parse now has nothing to rename safely.
  if (auto off = in.lines.offset(pos))
    for (const Section &sec : in.fa.sections)
      if (sec.beginOffset <= *off && *off <= sec.endOffset &&
          (!sec.parsed || sec.stale)) {
        t.error = "this section does not parse: fix its error before "
                  "renaming";
        return f;
      }
  Lookup l = lookup(in.fa, pos);
  if (l.value) {
    t.kind = RenameTarget::Value;
    f.def = l.value->def;
    f.uses.assign(l.value->uses.begin(), l.value->uses.end());
    f.section = l.value->section;
    f.value = l.value;
  } else if (l.block) {
    t.kind = RenameTarget::Block;
    f.def = l.block->def;
    f.uses.assign(l.block->uses.begin(), l.block->uses.end());
    f.section = l.block->section;
    f.block = l.block;
  } else if (l.symbol) {
    t.kind = RenameTarget::Symbol;
    f.def = l.symbol->nameRange;
    f.uses = l.symbol->uses;
    f.section = l.symbol->section;
    f.symbol = l.symbol;
  } else {
    t.error = "nothing to rename here: put the cursor on an SSA value, a "
              "block label, an @symbol or an alias";
    return f;
  }
  t.range = l.range;
  if (f.section < in.fa.sections.size()) {
    const Section &s = in.fa.sections[f.section];
    if (!s.parsed || s.stale) {
      t.error = "this section does not parse (line " +
                std::to_string(s.firstLine) +
                " on): fix its error before renaming";
      return f;
    }
  }
  t.placeholder = textAt(in, t.range);
  if (f.symbol)
    t.placeholder = "@" + f.symbol->name;
  return f;
}

/// The innermost symbol (function) of the section whose text holds `r`.
const SymbolInfo *enclosingSymbol(const FileAnalysis &fa, const Range &r,
                                  unsigned section) {
  const SymbolInfo *best = nullptr;
  for (const SymbolInfo &s : fa.symbols)
    if (s.section == section && s.scope.begin.valid() &&
        contains(s.scope, r.begin) &&
        (!best || before(best->scope.begin, s.scope.begin)))
      best = &s;
  return best;
}

bool inScope(const SymbolInfo *scope, const Range &r) {
  return !scope || contains(scope->scope, r.begin);
}

/// The name with its sigil, or an error.
std::string normalise(const Found &f, std::string_view newName,
                      std::string &error) {
  std::string sigil;
  switch (f.target.kind) {
  case RenameTarget::Value:
    sigil = "%";
    break;
  case RenameTarget::Block:
    sigil = "^";
    break;
  case RenameTarget::Symbol:
    sigil = "@";
    break;
  case RenameTarget::Alias:
    sigil = f.alias->name.substr(0, 1);
    break;
  }
  std::string_view bare = newName;
  if (!bare.empty() && bare.substr(0, 1) == sigil)
    bare.remove_prefix(1);
  bool ok = f.target.kind == RenameTarget::Value ||
                    f.target.kind == RenameTarget::Block
                ? isSuffixId(bare)
                : isBareId(bare);
  if (ok && f.target.kind == RenameTarget::Alias &&
      bare.find('.') != std::string_view::npos) {
    error = "an alias name cannot contain '.' (MLIR keeps dotted names for "
            "dialect attributes and types)";
    return "";
  }
  if (!ok) {
    error = "'" + std::string(newName) + "' is not a valid MLIR name here: " +
            (f.target.kind == RenameTarget::Value ||
                     f.target.kind == RenameTarget::Block
                 ? "use digits only, or a letter or one of $._- followed by "
                   "letters, digits and $._-"
                 : "use a letter or _ followed by letters, digits and _$.");
    return "";
  }
  return sigil + std::string(bare);
}

/// Why `name` would collide with another entity, or "".
std::string collision(const RenameInput &in, const Found &f,
                      const std::string &name) {
  auto clash = [&](const Range &r) {
    return name + " already exists (line " + std::to_string(r.begin.line) + ")";
  };
  const FileAnalysis &fa = in.fa;
  if (f.value || f.block) {
    const SymbolInfo *scope = enclosingSymbol(fa, f.def, f.section);
    if (f.value) {
      for (const ValueInfo &v : fa.values)
        if (&v != f.value && v.section == f.section && v.name.view() == name &&
            inScope(scope, v.def))
          return clash(v.def);
    } else {
      for (const BlockInfo &b : fa.blocks)
        if (&b != f.block && b.section == f.section && b.name == name &&
            inScope(scope, b.def))
          return clash(b.def);
    }
  } else if (f.symbol) {
    for (const SymbolInfo &s : fa.symbols)
      if (&s != f.symbol && s.section == f.section && "@" + s.name == name)
        return clash(s.nameRange);
  } else if (f.alias) {
    for (const AliasInfo &a : in.aliases)
      if (&a != f.alias && a.section == f.section && a.name == name)
        return clash(a.def);
  }
  return "";
}

} // namespace

RenameTarget prepareRename(const RenameInput &in, Position pos) {
  return find(in, pos).target;
}

namespace {

/// Whether the comment `comment` (from its `//`) is a FileCheck directive
/// (`// CHECK:`, `// CHECK-NEXT:`, `// CHECK-LABEL:`, `// FOO-SAME:`...).
bool isCheckDirective(std::string_view comment) {
  comment.remove_prefix(2);
  size_t b = comment.find_first_not_of(" \t");
  if (b == std::string_view::npos)
    return false;
  comment.remove_prefix(b);
  size_t colon = comment.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return false;
  std::string_view word = comment.substr(0, colon);
  if (!std::all_of(word.begin(), word.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
               c == '_';
      }))
    return false;
  return word.find("CHECK") != std::string_view::npos;
}

/// Occurrences of `old` as a whole name in the FileCheck comments between
/// byte offsets `begin` and `end`.
void renameInCheckLines(const RenameInput &in, size_t begin, size_t end,
                        const std::string &old, const std::string &name,
                        std::vector<TextEditData> &edits) {
  end = std::min(end, in.text.size());
  for (size_t at = begin; at < end;) {
    size_t eol = in.text.find('\n', at);
    if (eol == std::string_view::npos)
      eol = in.text.size();
    std::string_view line = in.text.substr(at, eol - at);
    size_t c = line.find("//");
    if (c != std::string_view::npos &&
        line.substr(0, c).find_first_not_of(" \t") == std::string_view::npos &&
        isCheckDirective(line.substr(c))) {
      for (size_t k = line.find(old, c); k != std::string_view::npos;
           k = line.find(old, k + old.size())) {
        bool startOk =
            k == 0 || !(isIdChar(line[k - 1]) || line[k - 1] == old[0]);
        size_t after = k + old.size();
        bool endOk = after >= line.size() || !isIdChar(line[after]);
        if (startOk && endOk)
          edits.push_back(
              {{in.lines.position(at + k), in.lines.position(at + after)},
               name});
      }
    }
    at = eol + 1;
  }
}

} // namespace

RenameResult rename(const RenameInput &in, Position pos,
                    std::string_view newName) {
  RenameResult out;
  Found f = find(in, pos);
  if (!f.target.error.empty()) {
    out.error = f.target.error;
    return out;
  }
  std::string name = normalise(f, newName, out.error);
  if (!out.error.empty())
    return out;
  out.error = collision(in, f, name);
  if (!out.error.empty())
    return out;
  // Each occurrence starts with the old name (`@f` of `@f::@g`, `%x` of
  // `%x#1` are the parser's ranges); anything else refuses the rename.
  std::string old = f.target.placeholder;
  std::string quoted = f.symbol ? "@\"" + f.symbol->name + "\"" : std::string();
  std::vector<Range> all{f.def};
  all.insert(all.end(), f.uses.begin(), f.uses.end());
  for (const Range &r : all) {
    auto b = in.lines.offset(r.begin);
    if (!b) {
      out.error = "an occurrence lies outside the text";
      out.edits.clear();
      return out;
    }
    std::string_view at = in.text.substr(*b);
    size_t len = 0;
    if (at.substr(0, old.size()) == old &&
        (at.size() == old.size() || !isIdChar(at[old.size()])))
      len = old.size();
    else if (!quoted.empty() && at.substr(0, quoted.size()) == quoted)
      len = quoted.size();
    if (!len) {
      out.error = "the occurrence at line " + std::to_string(r.begin.line) +
                  " is not spelled " + old + "; nothing was renamed";
      out.edits.clear();
      return out;
    }
    out.edits.push_back({{r.begin, in.lines.position(*b + len)}, name});
  }
  if (in.checkLines) {
    // Where CHECK lines can mean this entity: its function for a value or
    // block, its section for a symbol or alias.
    size_t begin = 0, end = in.text.size();
    if (f.value || f.block) {
      const SymbolInfo *fn = nullptr;
      for (const SymbolInfo &s : in.fa.symbols)
        if (s.section == f.section && contains(s.scope, f.def.begin) &&
            (!fn || contains(fn->scope, s.scope.begin)))
          fn = &s;
      if (fn) {
        begin = in.lines.lineStart(fn->scope.begin.line - 1);
        end = in.lines.offset(fn->scope.end).value_or(end);
      }
    } else if (f.section < in.fa.sections.size()) {
      begin = in.fa.sections[f.section].beginOffset;
      end = in.fa.sections[f.section].endOffset;
    }
    renameInCheckLines(in, begin, end, old, name, out.edits);
  }
  return out;
}

} // namespace tosa_lsp
