//===- SemanticTokens.cpp - what each name in the text is -----------------===//

#include "SemanticTokens.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <algorithm>
#include <unordered_set>

namespace tosa_lsp {

const std::vector<const char *> &semanticTypeNames() {
  static const std::vector<const char *> names = {
      "variable", "parameter", "label",    "function",   "namespace",
      "method",   "type",      "property", "enumMember", "keyword"};
  return names;
}

const std::vector<const char *> &semanticModifierNames() {
  static const std::vector<const char *> names = {"declaration", "dynamic",
                                                  "refinable", "error"};
  return names;
}

namespace {

/// What the parser knows about the name at an offset.
struct Mark {
  size_t offset;
  SemanticType type;
  uint8_t modifiers;
};

bool isDynamicType(std::string_view t) {
  return t.find('?') != std::string_view::npos ||
         t.find('*') != std::string_view::npos;
}

std::vector<Mark> collectMarks(const FileAnalysis &fa,
                               const std::vector<AliasInfo> &aliases,
                               const LineIndex &lines) {
  std::vector<Mark> marks;
  auto live = [&](unsigned section) {
    return section >= fa.sections.size() || !fa.sections[section].stale;
  };
  auto add = [&](const Range &r, SemanticType type, uint8_t mods) {
    if (auto o = lines.offset(r.begin))
      marks.push_back({*o, type, mods});
  };
  marks.reserve(fa.values.size() * 3);
  for (const ValueInfo &v : fa.values) {
    if (!live(v.section))
      continue;
    bool arg = std::string_view(v.origin.str()).substr(0, 8) == "argument";
    SemanticType type = arg ? SemanticType::Parameter : SemanticType::Variable;
    uint8_t mods = isDynamicType(v.type.str()) ? ModDynamic : 0;
    uint8_t defMods = mods | ModDeclaration;
    if (const OpReport *op = fa.opOf(v))
      if (op->summary && op->summary->anyRefinable)
        defMods |= ModRefinable;
    add(v.def, type, defMods);
    for (const Range &u : v.uses)
      add(u, type, mods);
  }
  for (const BlockInfo &b : fa.blocks) {
    if (!live(b.section))
      continue;
    add(b.def, SemanticType::Label, ModDeclaration);
    for (const Range &u : b.uses)
      add(u, SemanticType::Label, 0);
  }
  for (const SymbolInfo &s : fa.symbols) {
    if (!live(s.section))
      continue;
    add(s.nameRange, SemanticType::Function, ModDeclaration);
    for (const Range &u : s.uses)
      add(u, SemanticType::Function, 0);
  }
  for (const AliasInfo &a : aliases)
    add(a.def, a.isType() ? SemanticType::Type : SemanticType::EnumMember,
        ModDeclaration);
  std::sort(marks.begin(), marks.end(),
            [](const Mark &a, const Mark &b) { return a.offset < b.offset; });
  return marks;
}

bool isBuiltinType(std::string_view s) {
  static const std::unordered_set<std::string_view> names = {
      "tensor", "memref",     "vector",     "complex",       "tuple",
      "none",   "index",      "f16",        "bf16",          "f32",
      "f64",    "f80",        "f128",       "tf32",          "f8E4M3FN",
      "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3",
      "f8E3M4", "f4E2M1FN",   "f6E2M3FN",   "f6E3M2FN",      "f8E8M0FNU"};
  if (names.count(s))
    return true;
  size_t digits = s[0] == 'i'                                          ? 1
                  : (s.substr(0, 2) == "si" || s.substr(0, 2) == "ui") ? 2
                                                                       : 0;
  return digits && s.size() > digits &&
         std::all_of(s.begin() + digits, s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool isKeyword(std::string_view s) {
  static const std::unordered_set<std::string_view> words = {
      "attributes", "loc",        "dense",  "dense_resource", "array",
      "affine_map", "affine_set", "true",   "false",          "unit",
      "to",         "into",       "from",   "else",           "do",
      "step",       "iter_args",  "ins",    "outs",           "unknown",
      "fused",      "callsite",   "sparse", "strided",        "distinct",
      "private",    "public",     "nested", "symbol",         "opaque"};
  return words.count(s);
}

/// The end of `<...>` opening at `open` when it closes on the same line.
std::optional<size_t> angleEnd(std::string_view text, size_t open) {
  if (open >= text.size() || text[open] != '<')
    return std::nullopt;
  size_t nl = text.find('\n', open);
  std::string_view line =
      text.substr(0, nl == std::string_view::npos ? text.size() : nl);
  Lexer lex(line, open);
  int depth = 0;
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind != TokKind::Punct)
      continue;
    char c = t.first(text);
    if (c == '<')
      ++depth;
    else if (c == '>' && --depth == 0)
      return t.offset + 1;
  }
  return std::nullopt;
}

bool firstOnLine(std::string_view text, size_t offset) {
  while (offset > 0 && (text[offset - 1] == ' ' || text[offset - 1] == '\t'))
    --offset;
  return offset == 0 || text[offset - 1] == '\n';
}

} // namespace

std::vector<SemanticToken> semanticTokens(const FileAnalysis &fa,
                                          const std::vector<AliasInfo> &aliases,
                                          std::string_view text,
                                          const LineIndex &lines) {
  std::vector<Mark> marks = collectMarks(fa, aliases, lines);
  // Where errors begin: an op name on that line, at or after it, is marked.
  std::vector<size_t> errors;
  for (uint32_t i : fa.errorIndices())
    if (auto o = lines.offset(fa.diagnostics[i].range.begin))
      errors.push_back(*o);
  std::sort(errors.begin(), errors.end());

  std::vector<SemanticToken> out;
  out.reserve(marks.size() * 2);
  auto emit = [&](size_t offset, size_t length, SemanticType type,
                  uint8_t mods) {
    Position p = lines.position(offset);
    out.push_back(
        {p.line, p.column, static_cast<unsigned>(length), type, mods});
  };
  size_t m = 0;
  Lexer lex(text);
  Token t = lex.next();
  while (t.kind != TokKind::End) {
    Token next = lex.next();
    std::string_view s = t.text(text);
    auto markAt = [&](size_t offset) -> const Mark * {
      while (m < marks.size() && marks[m].offset < offset)
        ++m;
      return m < marks.size() && marks[m].offset == offset ? &marks[m]
                                                           : nullptr;
    };
    // A type or attribute with its `<...>` when they close on its line.
    auto withAngles = [&](SemanticType type, uint8_t mods) {
      size_t end = t.offset + t.length;
      if (auto close = angleEnd(text, end)) {
        end = *close;
        lex = Lexer(text, end);
        next = lex.next();
      }
      emit(t.offset, end - t.offset, type, mods);
    };
    switch (t.kind) {
    case TokKind::ValueId:
    case TokKind::BlockId:
    case TokKind::SymbolId: {
      SemanticType def = t.kind == TokKind::ValueId   ? SemanticType::Variable
                         : t.kind == TokKind::BlockId ? SemanticType::Label
                                                      : SemanticType::Function;
      const Mark *mk = markAt(t.offset);
      emit(t.offset, t.length, mk ? mk->type : def, mk ? mk->modifiers : 0);
      break;
    }
    case TokKind::HashId:
    case TokKind::BangId: {
      const Mark *mk = markAt(t.offset);
      uint8_t mods = mk ? mk->modifiers : 0;
      SemanticType type = t.kind == TokKind::BangId ? SemanticType::Type
                                                    : SemanticType::EnumMember;
      if (next.kind == TokKind::Punct && next.first(text) == '=' && mk)
        emit(t.offset, t.length, type, mods); // an alias definition
      else
        withAngles(type, mods);
      break;
    }
    case TokKind::BareId: {
      if (next.kind == TokKind::Punct && next.first(text) == '=') {
        emit(t.offset, t.length, SemanticType::Property, 0);
      } else if (isBuiltinType(s)) {
        withAngles(SemanticType::Type, 0);
      } else if (size_t dot = s.find('.'); dot != std::string_view::npos &&
                                           dot > 0 && dot + 1 < s.size()) {
        // An op name: an error on its line, up to its end, marks it.
        size_t lineStart = lines.lineStart(lines.position(t.offset).line - 1);
        auto e = std::lower_bound(errors.begin(), errors.end(), lineStart);
        bool error = e != errors.end() && *e <= t.offset + t.length;
        emit(t.offset, dot, SemanticType::Namespace, 0);
        emit(t.offset + dot + 1, t.length - dot - 1, SemanticType::Method,
             error ? ModError : 0);
      } else if (isKeyword(s)) {
        emit(t.offset, t.length, SemanticType::Keyword, 0);
      } else if (firstOnLine(text, t.offset)) {
        // An op of the enclosing dialect, printed without it (`return`).
        emit(t.offset, t.length, SemanticType::Method, 0);
      }
      break;
    }
    default:
      break;
    }
    t = next;
  }
  return out;
}

IntArrayEdit diffIntArrays(const std::vector<uint32_t> &before,
                           const std::vector<uint32_t> &after) {
  size_t prefix = 0, n = std::min(before.size(), after.size());
  while (prefix < n && before[prefix] == after[prefix])
    ++prefix;
  size_t suffix = 0;
  while (suffix < n - prefix &&
         before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
    ++suffix;
  IntArrayEdit edit;
  edit.start = static_cast<uint32_t>(prefix);
  edit.deleteCount = static_cast<uint32_t>(before.size() - prefix - suffix);
  edit.data.assign(after.begin() + prefix, after.end() - suffix);
  return edit;
}

} // namespace tosa_lsp
