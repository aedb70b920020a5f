//===- SemanticTokens.cpp - what each name in the text is -----------------===//

#include "SemanticTokens.h"

#include "Lexer.h"
#include "LineIndex.h"

#include <algorithm>
#include <cstring>
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

bool isDynamicType(std::string_view t) {
  return t.find('?') != std::string_view::npos ||
         t.find('*') != std::string_view::npos;
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

namespace {

/// Appends the tokens starting in [begin, end) of `text`; `begin` is a line
/// start (strings and comments end at line breaks, so each line lexes alone,
/// but for a look-ahead at the next token).
void lexRange(std::string_view text, const LineIndex &lines, size_t begin,
              size_t end, std::vector<LexedToken> &out) {
  auto emit = [&](size_t offset, size_t length, SemanticType type,
                  uint8_t flags) {
    out.push_back({static_cast<uint32_t>(offset),
                   lines.position(offset).line - 1,
                   static_cast<uint32_t>(length), type, flags});
  };
  Lexer lex(text, begin);
  Token t = lex.next();
  while (t.kind != TokKind::End && t.offset < end) {
    Token next = lex.next();
    std::string_view s = t.text(text);
    // A type or attribute with its `<...>` when they close on its line.
    auto withAngles = [&](SemanticType type, uint8_t flags) {
      size_t close = t.offset + t.length;
      if (auto angle = angleEnd(text, close)) {
        close = *angle;
        lex = Lexer(text, close);
        next = lex.next();
      }
      emit(t.offset, close - t.offset, type, flags);
    };
    switch (t.kind) {
    case TokKind::ValueId:
      emit(t.offset, t.length, SemanticType::Variable, LexedMarkable);
      break;
    case TokKind::BlockId:
      emit(t.offset, t.length, SemanticType::Label, LexedMarkable);
      break;
    case TokKind::SymbolId:
      emit(t.offset, t.length, SemanticType::Function, LexedMarkable);
      break;
    case TokKind::HashId:
    case TokKind::BangId: {
      SemanticType type = t.kind == TokKind::BangId ? SemanticType::Type
                                                    : SemanticType::EnumMember;
      if (next.kind == TokKind::Punct && next.first(text) == '=')
        emit(t.offset, t.length, type, LexedMarkable); // an alias definition
      else
        withAngles(type, LexedMarkable);
      break;
    }
    case TokKind::BareId: {
      if (next.kind == TokKind::Punct && next.first(text) == '=') {
        emit(t.offset, t.length, SemanticType::Property, 0);
      } else if (isBuiltinType(s)) {
        withAngles(SemanticType::Type, 0);
      } else if (size_t dot = s.find('.'); dot != std::string_view::npos &&
                                           dot > 0 && dot + 1 < s.size()) {
        emit(t.offset, dot, SemanticType::Namespace, 0);
        emit(t.offset + dot + 1, t.length - dot - 1, SemanticType::Method,
             LexedOpName);
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
}

/// The length of the common prefix of `a` and `b` (`n` bytes each):
/// memcmp by blocks, as a byte loop over a 5 MB text costs milliseconds.
size_t commonPrefix(const char *a, const char *b, size_t n) {
  constexpr size_t block = 4096;
  size_t i = 0;
  while (i + block <= n && std::memcmp(a + i, b + i, block) == 0)
    i += block;
  while (i < n && a[i] == b[i])
    ++i;
  return i;
}

/// The length of the common suffix of the `n` bytes before `aEnd`, `bEnd`.
size_t commonSuffix(const char *aEnd, const char *bEnd, size_t n) {
  constexpr size_t block = 4096;
  size_t i = 0;
  while (i + block <= n &&
         std::memcmp(aEnd - i - block, bEnd - i - block, block) == 0)
    i += block;
  while (i < n && aEnd[-1 - static_cast<ptrdiff_t>(i)] ==
                      bEnd[-1 - static_cast<ptrdiff_t>(i)])
    ++i;
  return i;
}

} // namespace

LexedTokens lexTokens(std::string_view text, const LineIndex &lines) {
  LexedTokens out;
  out.textSize = text.size();
  out.lineCount = lines.lineCount();
  out.tokens.reserve(text.size() / 12);
  lexRange(text, lines, 0, text.size(), out.tokens);
  return out;
}

void relexTokens(LexedTokens &lexed, std::string_view beforeText,
                 std::string_view text, const LineIndex &lines) {
  if (lexed.textSize != beforeText.size() || lines.textSize() != text.size()) {
    lexed = lexTokens(text, lines);
    return;
  }
  size_t n = std::min(beforeText.size(), text.size());
  size_t prefix = commonPrefix(text.data(), beforeText.data(), n);
  if (prefix == n && beforeText.size() == text.size())
    return;
  size_t suffix =
      commonSuffix(text.data() + text.size(),
                   beforeText.data() + beforeText.size(), n - prefix);
  // Whole lines, one more on each side: a name looks at the next token
  // (`name =` is a property), which may sit on the next line.
  size_t first = lines.position(prefix).line - 1;
  first = first ? first - 1 : 0;
  size_t last = lines.position(text.size() - suffix).line; // 0-based + 1
  size_t begin = lines.lineStart(first);
  size_t end =
      last + 1 < lines.lineCount() ? lines.lineStart(last + 1) : text.size();
  int64_t shift = static_cast<int64_t>(text.size()) -
                  static_cast<int64_t>(beforeText.size());
  int64_t lineShift = static_cast<int64_t>(lines.lineCount()) -
                      static_cast<int64_t>(lexed.lineCount);
  uint64_t beforeEnd = static_cast<uint64_t>(static_cast<int64_t>(end) - shift);

  std::vector<LexedToken> &toks = lexed.tokens;
  size_t head =
      static_cast<size_t>(std::lower_bound(toks.begin(), toks.end(), begin,
                                           [](const LexedToken &t, size_t o) {
                                             return t.offset < o;
                                           }) -
                          toks.begin());
  size_t tail = static_cast<size_t>(
      std::lower_bound(
          toks.begin() + head, toks.end(), beforeEnd,
          [](const LexedToken &t, uint64_t o) { return t.offset < o; }) -
      toks.begin());
  std::vector<LexedToken> mid;
  lexRange(text, lines, begin, end, mid);
  // [head, tail) becomes `mid`; what follows moves once.
  if (mid.size() > tail - head)
    toks.insert(toks.begin() + tail, mid.size() - (tail - head), LexedToken{});
  else
    toks.erase(toks.begin() + head + mid.size(), toks.begin() + tail);
  std::copy(mid.begin(), mid.end(), toks.begin() + head);
  for (size_t i = head + mid.size(); i < toks.size(); ++i) {
    toks[i].offset = static_cast<uint32_t>(toks[i].offset + shift);
    toks[i].line = static_cast<uint32_t>(toks[i].line + lineShift);
  }
  lexed.textSize = text.size();
  lexed.lineCount = lines.lineCount();
}

void classifyTokens(const FileAnalysis &fa,
                    const std::vector<AliasInfo> &aliases,
                    const LexedTokens &lexed, const LineIndex &lines,
                    std::vector<TokenClass> &out) {
  const std::vector<LexedToken> &toks = lexed.tokens;
  out.resize(toks.size());
  // The index of the first token of each line: a mark finds its token
  // among a handful instead of through a sort of every mark.
  thread_local std::vector<uint32_t> lineFirst;
  lineFirst.assign(lines.lineCount() + 1, static_cast<uint32_t>(toks.size()));
  for (size_t i = toks.size(); i-- > 0;) {
    lineFirst[toks[i].line] = static_cast<uint32_t>(i);
    out[i] = {toks[i].type, 0};
  }
  for (size_t l = lines.lineCount(); l-- > 0;)
    lineFirst[l] = std::min(lineFirst[l], lineFirst[l + 1]);

  auto mark = [&](const Range &r, SemanticType type, uint8_t mods) {
    if (!r.begin.valid() || r.begin.line > lines.lineCount())
      return;
    unsigned l = r.begin.line - 1;
    size_t offset = lines.lineStart(l) + r.begin.column - 1;
    for (uint32_t i = lineFirst[l]; i < lineFirst[l + 1]; ++i)
      if (toks[i].offset == offset) {
        if (toks[i].flags & LexedMarkable)
          out[i] = {type, mods};
        return;
      }
  };
  auto live = [&](unsigned section) {
    return section >= fa.sections.size() || !fa.sections[section].stale;
  };
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
    mark(v.def, type, defMods);
    for (const Range &u : v.uses)
      mark(u, type, mods);
  }
  for (const BlockInfo &b : fa.blocks) {
    if (!live(b.section))
      continue;
    mark(b.def, SemanticType::Label, ModDeclaration);
    for (const Range &u : b.uses)
      mark(u, SemanticType::Label, 0);
  }
  for (const SymbolInfo &s : fa.symbols) {
    if (!live(s.section))
      continue;
    mark(s.nameRange, SemanticType::Function, ModDeclaration);
    for (const Range &u : s.uses)
      mark(u, SemanticType::Function, 0);
  }
  for (const AliasInfo &a : aliases)
    mark(a.def, a.isType() ? SemanticType::Type : SemanticType::EnumMember,
         ModDeclaration);

  // An error on an op name's line, up to the name's end, marks it.
  std::vector<size_t> errors;
  for (uint32_t i : fa.errorIndices())
    if (auto o = lines.offset(fa.diagnostics[i].range.begin))
      errors.push_back(*o);
  std::sort(errors.begin(), errors.end());
  if (!errors.empty())
    for (size_t i = 0; i < toks.size(); ++i) {
      const LexedToken &t = toks[i];
      if (!(t.flags & LexedOpName))
        continue;
      auto e = std::lower_bound(errors.begin(), errors.end(),
                                lines.lineStart(t.line));
      if (e != errors.end() && *e <= t.offset + t.length)
        out[i].modifiers |= ModError;
    }
}

void semanticTokens(const FileAnalysis &fa,
                    const std::vector<AliasInfo> &aliases,
                    const LexedTokens &lexed, const LineIndex &lines,
                    std::vector<SemanticToken> &out) {
  std::vector<TokenClass> classes;
  classifyTokens(fa, aliases, lexed, lines, classes);
  out.resize(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    const LexedToken &t = lexed.tokens[i];
    out[i] = {t.line + 1,
              static_cast<unsigned>(t.offset - lines.lineStart(t.line) + 1),
              t.length, classes[i].type, classes[i].modifiers};
  }
}

std::vector<SemanticToken> semanticTokens(const FileAnalysis &fa,
                                          const std::vector<AliasInfo> &aliases,
                                          std::string_view text,
                                          const LineIndex &lines) {
  std::vector<SemanticToken> out;
  semanticTokens(fa, aliases, lexTokens(text, lines), lines, out);
  return out;
}

IntArrayEdit diffIntArrays(const std::vector<uint32_t> &before,
                           const std::vector<uint32_t> &after) {
  // Bytes compared a block at a time (two 7 MB arrays at 50k lines), then
  // rounded down to whole elements.
  size_t n = std::min(before.size(), after.size());
  const char *a = reinterpret_cast<const char *>(after.data());
  const char *b = reinterpret_cast<const char *>(before.data());
  size_t prefix = commonPrefix(a, b, n * sizeof(uint32_t)) / sizeof(uint32_t);
  size_t suffix = commonSuffix(a + after.size() * sizeof(uint32_t),
                               b + before.size() * sizeof(uint32_t),
                               (n - prefix) * sizeof(uint32_t)) /
                  sizeof(uint32_t);
  IntArrayEdit edit;
  edit.start = static_cast<uint32_t>(prefix);
  edit.deleteCount = static_cast<uint32_t>(before.size() - prefix - suffix);
  edit.data.assign(after.begin() + prefix, after.end() - suffix);
  return edit;
}

} // namespace tosa_lsp
