//===- FunctionSplit.cpp - where a section can be cut, from its text ------===//

#include "FunctionSplit.h"
#include "TextScan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace tosa_lsp::detail {

const char kCutTerminator[] = "tosa_lsp.cut";

namespace {

constexpr size_t npos = std::string_view::npos;

bool isIdChar(char c) {
  static const std::array<bool, 256> id = [] {
    std::array<bool, 256> k{};
    for (int c = 0; c < 256; ++c)
      k[c] = std::isalnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
    return k;
  }();
  return id[static_cast<unsigned char>(c)];
}

/// The SSA name (`%` and identifier characters) that starts at `at`.
std::string_view nameAt(std::string_view t, size_t at) {
  size_t e = at + 1;
  while (e < t.size() && isIdChar(t[e]))
    ++e;
  return t.substr(at, e - at);
}

/// The first part's top-level definitions by name: an open-addressing
/// table of (hash, offset) pairs whose names are compared in the text. A
/// DenseMap of string views missed the cache on most of the ~3 lookups per
/// line of the second part (~70 ms at 200k lines); these slots are 12
/// bytes.
class DefinitionTable {
public:
  explicit DefinitionTable(std::string_view text)
      : text(text), slots(size_t(1) << 16) {}
  /// The name defined at `at` (a later definition replaces an earlier one).
  void insert(size_t at, bool group) {
    if (2 * (count + 1) > slots.size())
      grow();
    std::string_view name = nameAt(text, at);
    if (place(Slot{hash(name), static_cast<uint32_t>(at), group, true}, name))
      ++count;
  }
  struct Found {
    size_t at;
    bool group;
  };
  std::optional<Found> find(std::string_view name) const {
    uint32_t h = hash(name);
    size_t mask = slots.size() - 1;
    for (size_t i = h & mask; slots[i].used; i = (i + 1) & mask)
      if (slots[i].hash == h && nameAt(text, slots[i].at) == name)
        return Found{slots[i].at, slots[i].group};
    return std::nullopt;
  }

private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t at = 0;
    bool group = false;
    bool used = false;
  };
  static uint32_t hash(std::string_view name) {
    uint32_t h = 2166136261u; // FNV-1a
    for (char c : name)
      h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
  }
  /// False when the name was there already (replaced).
  bool place(Slot s, std::string_view name) {
    size_t mask = slots.size() - 1;
    size_t i = s.hash & mask;
    for (; slots[i].used; i = (i + 1) & mask)
      if (slots[i].hash == s.hash && nameAt(text, slots[i].at) == name) {
        slots[i] = s;
        return false;
      }
    slots[i] = s;
    return true;
  }
  void grow() {
    std::vector<Slot> old(slots.size() * 2);
    old.swap(slots);
    for (const Slot &s : old)
      if (s.used)
        place(s, nameAt(text, s.at));
  }
  std::string_view text;
  std::vector<Slot> slots;
  size_t count = 0;
};

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/// After blanks, line breaks and `//` comments.
size_t skipTrivia(std::string_view t, size_t i) {
  while (i < t.size()) {
    if (std::isspace(static_cast<unsigned char>(t[i]))) {
      ++i;
    } else if (commentAt(t, i)) {
      i = commentEnd(t, i);
      if (i == npos)
        return t.size();
    } else {
      break;
    }
  }
  return i;
}

bool startsWithWord(std::string_view t, size_t i, std::string_view word) {
  return t.substr(i, word.size()) == word &&
         (i + word.size() >= t.size() || !isIdChar(t[i + word.size()]));
}

/// Walks `t` from `i` with the bracket depth (`<>` with `angles`; strings
/// skipped, `->` one step): `stop(i, depth)` sees every other offset, with
/// the depth before its bracket counts. Returns the first offset where it
/// is true, npos if none.
template <typename Stop>
size_t scanBrackets(std::string_view t, size_t i, Stop stop,
                    bool angles = true) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '"') {
      i = skipString(t, i) - 1;
      continue;
    }
    if (stop(i, depth))
      return i;
    if (c == '-' && i + 1 < t.size() && t[i + 1] == '>')
      ++i;
    else if (c == '(' || c == '[' || c == '{' || (angles && c == '<'))
      ++depth;
    else if (c == ')' || c == ']' || c == '}' || (angles && c == '>'))
      --depth;
  }
  return npos;
}

/// After the bracket that matches the one at `i` (`(`, `[`, `{`, or `<`
/// when `angles`), skipping strings and `->`; npos when unbalanced.
size_t skipBalanced(std::string_view t, size_t i, bool angles) {
  size_t end = scanBrackets(
      t, i,
      [&](size_t k, int depth) {
        char c = t[k];
        return depth <= 1 &&
               (c == ')' || c == ']' || c == '}' || (angles && c == '>'));
      },
      angles);
  return end == npos ? npos : end + 1;
}

/// After `@name` or `@"name"` at `i`; npos when there is none.
size_t skipSymbol(std::string_view t, size_t i) {
  if (i >= t.size() || t[i] != '@')
    return npos;
  if (i + 1 < t.size() && t[i + 1] == '"')
    return skipString(t, i + 1);
  size_t e = i + 1;
  while (e < t.size() && isIdChar(t[e]))
    ++e;
  return e == i + 1 ? npos : e;
}

/// The `{` opening an op's region at `i`, after an optional `attributes
/// {...}` and trivia; npos when there is none.
size_t bodyBrace(std::string_view t, size_t i) {
  if (startsWithWord(t, i, "attributes")) {
    i = skipTrivia(t, i + 10);
    if (i >= t.size() || t[i] != '{')
      return npos;
    i = skipBalanced(t, i, false);
    if (i == npos)
      return npos;
    i = skipTrivia(t, i);
  }
  return i < t.size() && t[i] == '{' ? i : npos;
}

/// After an alias definition (`#a = ...`, `!t = ...`) starting at `i`: the
/// end of the line where its brackets are balanced.
size_t skipAliasDefinition(std::string_view t, size_t i) {
  size_t end = scanBrackets(
      t, i, [&](size_t k, int depth) { return t[k] == '\n' && depth <= 0; });
  return end == npos ? t.size() : end + 1;
}

/// `[b, e)` without blanks and line breaks at either end.
std::pair<size_t, size_t> trimmed(std::string_view t, size_t b, size_t e) {
  while (b < e && std::isspace(static_cast<unsigned char>(t[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(t[e - 1])))
    --e;
  return {b, e};
}

/// Is the line [b, e) a `}` closing an op, optionally followed by its
/// location and a comment? Returns the offset of the `}`.
std::optional<size_t> closingBraceLine(std::string_view t, size_t b, size_t e) {
  auto [s, end] = trimmed(t, b, e);
  if (s >= end || t[s] != '}')
    return std::nullopt;
  size_t i = s + 1;
  while (i < end && isBlank(t[i]))
    ++i;
  if (t.substr(i, 4) == "loc(") {
    i = skipBalanced(t, i + 3, false);
    if (i == npos || i > end)
      return std::nullopt;
    while (i < end && isBlank(t[i]))
      ++i;
  }
  if (i < end && t.substr(i, 2) != "//")
    return std::nullopt;
  return s;
}

/// The line before offset `ls` (a line start): [begin, end).
std::pair<size_t, size_t> lineBefore(std::string_view t, size_t ls) {
  size_t e = ls - 1; // the '\n' ending it
  size_t b = t.rfind('\n', e == 0 ? npos : e - 1);
  return {b == npos ? 0 : b + 1, e};
}

/// The type an op's text (after `=`) declares for its single result:
/// after the last top-level `->` (a parenthesised list of one type is
/// unwrapped), else after the last top-level `:` (and ` to ` after it, as
/// casts write it); std::nullopt otherwise.
std::optional<std::string_view> declaredResultType(std::string_view op) {
  auto [b, e] = trimmed(op, 0, op.size());
  op = op.substr(b, e - b);
  // A trailing location is not part of the type.
  if (!op.empty() && op.back() == ')') {
    for (size_t at = op.rfind("loc("); at != npos && at > 0;
         at = op.rfind("loc(", at - 1)) {
      if (skipBalanced(op, at + 3, false) == op.size()) {
        op = op.substr(0, trimmed(op, 0, at).second);
        break;
      }
    }
  }
  size_t arrow = npos, colon = npos;
  scanBrackets(op, 0, [&](size_t i, int depth) {
    if (depth == 0 && op[i] == ':')
      colon = i;
    else if (depth == 0 && op.substr(i, 2) == "->")
      arrow = i;
    return false;
  });
  std::string_view type;
  if (arrow != npos) {
    size_t s = trimmed(op, arrow + 2, op.size()).first;
    size_t end = typeEnd(llvm::StringRef(op.data(), op.size()), s);
    // What follows the type: nothing, or the op's regions.
    size_t rest = trimmed(op, end, op.size()).first;
    if (end == s || (rest < op.size() && op[rest] != '{'))
      return std::nullopt;
    type = op.substr(s, end - s);
    if (type.front() == '(') {
      if (type.back() != ')' || skipBalanced(type, 0, true) != type.size())
        return std::nullopt;
      // One type, not a list: no comma at depth 1.
      if (scanBrackets(type, 0, [&](size_t i, int depth) {
            return depth == 1 && type[i] == ',';
          }) != npos)
        return std::nullopt;
      auto [tb, te] = trimmed(type, 1, type.size() - 1);
      type = type.substr(tb, te - tb);
    }
  } else if (colon != npos) {
    size_t s = trimmed(op, colon + 1, op.size()).first;
    std::string_view rest = op.substr(s);
    // A cast's `: T1 to T2`: the text after ` to ` is then one type.
    if (size_t to = rest.rfind(" to "); to != npos) {
      size_t after = trimmed(rest, to + 4, rest.size()).first;
      if (typeEnd(llvm::StringRef(rest.data(), rest.size()), after) ==
          rest.size())
        rest = rest.substr(after);
    }
    if (rest.empty() ||
        typeEnd(llvm::StringRef(rest.data(), rest.size()), 0) != rest.size())
      return std::nullopt;
    type = rest;
  } else {
    return std::nullopt;
  }
  if (type.empty())
    return std::nullopt;
  return type;
}

/// End of the statement that starts at `i` in the body: a line break at
/// bracket depth 0 followed by a line that starts another op (or the
/// body's `}`) rather than continuing this one.
size_t statementEnd(std::string_view t, size_t i, size_t limit) {
  int depth = 0;
  for (; i < limit; ++i) {
    char c = t[i];
    if (c == '"') {
      i = skipString(t, i) - 1;
    } else if (c == '/' && i + 1 < limit && commentAt(t, i)) {
      i = commentEnd(t, i);
      if (i == npos || i >= limit)
        return limit;
      --i; // the line break itself is looked at next
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == '\n' && depth <= 0) {
      size_t next = i + 1;
      while (next < limit && isBlank(t[next]))
        ++next;
      if (next >= limit)
        return i;
      char n = t[next];
      if (n == '%' || n == '"' || n == '^' || n == '}' || n == '\n' ||
          std::isalpha(static_cast<unsigned char>(n)) ||
          t.substr(next, 2) == "//")
        return i;
    }
  }
  return limit;
}

/// How much parsing and analysing the line [b, e) costs, in bytes of ops:
/// a long line's text between its first and last quote (a model's weights,
/// `dense<"0x...">`) counts a kStringShare of its bytes. MLIR parsed 5 MB
/// of hex literals in 15 ms and 0.4 MB of element-wise ops in 15 ms (plus
/// their verification, op reports and index, which a constant barely has).
constexpr size_t kLongLine = 4096, kStringShare = 16;
size_t lineWork(std::string_view t, size_t b, size_t e) {
  if (e - b < kLongLine)
    return e - b;
  size_t q1 = t.find('"', b);
  if (q1 >= e)
    return e - b;
  size_t q2 = t.rfind('"', e - 1);
  size_t literal = q2 - q1;
  return e - b - literal + literal / kStringShare;
}

/// Whether [b, e) may have a line of kLongLine bytes: one has a whole
/// block of half that many without a line break. A memchr per block stops
/// at the block's first line break (a line-by-line pass took 7 ms at 200k
/// lines, for files that have none).
bool mayHaveLongLine(std::string_view t, size_t b, size_t e) {
  constexpr size_t block = kLongLine / 2;
  for (size_t k = b; k + block <= e; k += block)
    if (!std::memchr(t.data() + k, '\n', block))
      return true;
  return false;
}

} // namespace

size_t workTarget(std::string_view t, size_t b, size_t e, double fraction) {
  size_t bytes = b + static_cast<size_t>((e - b) * fraction);
  if (!mayHaveLongLine(t, b, e))
    return bytes;
  size_t total = 0;
  for (size_t ls = b; ls < e;) {
    size_t le = std::min(t.find('\n', ls), e);
    total += lineWork(t, ls, le);
    ls = le + 1;
  }
  size_t want = static_cast<size_t>(total * fraction), sum = 0;
  for (size_t ls = b; ls < e;) {
    size_t le = std::min(t.find('\n', ls), e);
    sum += lineWork(t, ls, le);
    if (sum >= want)
      return le;
    ls = le + 1;
  }
  return bytes;
}

std::optional<FunctionCut> planFunctionCut(std::string_view t,
                                           double fraction) {
  FunctionCut fc;
  size_t i = skipTrivia(t, 0);
  while (i < t.size() && (t[i] == '#' || t[i] == '!'))
    i = skipTrivia(t, skipAliasDefinition(t, i));
  unsigned closers = 1;
  if (startsWithWord(t, i, "module")) {
    i = skipTrivia(t, i + 6);
    if (i < t.size() && t[i] == '@') {
      i = skipSymbol(t, i);
      if (i == npos)
        return std::nullopt;
      i = skipTrivia(t, i);
    }
    i = bodyBrace(t, i);
    if (i == npos)
      return std::nullopt;
    i = skipTrivia(t, i + 1);
    closers = 2;
  }
  if (!startsWithWord(t, i, "func.func"))
    return std::nullopt;
  i = skipTrivia(t, i + 9);
  for (std::string_view v : {"private", "public", "nested"})
    if (startsWithWord(t, i, v))
      i = skipTrivia(t, i + v.size());
  i = skipSymbol(t, i);
  if (i == npos)
    return std::nullopt;
  i = skipTrivia(t, i);
  if (i >= t.size() || t[i] != '(')
    return std::nullopt;
  size_t afterArgs = skipBalanced(t, i, false);
  if (afterArgs == npos)
    return std::nullopt;
  fc.argsEnd = afterArgs - 1;
  fc.noArgs = trimmed(t, i + 1, fc.argsEnd).first == fc.argsEnd;
  i = skipTrivia(t, afterArgs);
  if (t.substr(i, 2) == "->") {
    i = skipTrivia(t, i + 2);
    size_t e = i < t.size() && t[i] == '('
                   ? skipBalanced(t, i, false)
                   : typeEnd(llvm::StringRef(t.data(), t.size()), i);
    if (e == npos || e == i)
      return std::nullopt;
    i = skipTrivia(t, e);
  }
  fc.bodyOpen = bodyBrace(t, i);
  if (fc.bodyOpen == npos)
    return std::nullopt;

  // The body's `}`, from the end: past comments and alias definitions (a
  // location alias may be defined after its uses), the closing lines of the
  // module and of the function.
  size_t e = t.size();
  bool closing = false;
  while (closers) {
    while (e > 0 && std::isspace(static_cast<unsigned char>(t[e - 1])))
      --e;
    if (e <= fc.bodyOpen)
      return std::nullopt;
    size_t ls = t.rfind('\n', e - 1);
    ls = ls == npos ? 0 : ls + 1;
    size_t s = trimmed(t, ls, e).first;
    if (t.substr(s, 2) == "//" || (!closing && (t[s] == '#' || t[s] == '!'))) {
      e = ls;
      continue;
    }
    std::optional<size_t> brace = closingBraceLine(t, ls, e);
    if (!brace || *brace <= fc.bodyOpen)
      return std::nullopt;
    closing = true;
    fc.bodyClose = *brace;
    e = ls;
    --closers;
  }

  // The cut: a line past `fraction` of the body that starts an op with a
  // result at the indentation of the body's first op.
  size_t first = skipTrivia(t, fc.bodyOpen + 1);
  if (first >= fc.bodyClose)
    return std::nullopt;
  size_t firstLine = t.rfind('\n', first);
  if (firstLine == npos || firstLine < fc.bodyOpen)
    return std::nullopt; // The first op shares the header's line.
  size_t indent = first - (firstLine + 1);
  size_t target = workTarget(t, fc.bodyOpen, fc.bodyClose, fraction);
  size_t ls = t.find('\n', std::max(target, first));
  for (unsigned tries = 0; ls != npos && ls < fc.bodyClose && tries < 100000;
       ++tries, ls = t.find('\n', ls)) {
    ++ls;
    if (ls + indent >= fc.bodyClose || t[ls + indent] != '%' ||
        (indent && !isBlank(t[ls + indent - 1])))
      continue;
    bool blanks = true;
    for (size_t k = ls; k < ls + indent && blanks; ++k)
      blanks = isBlank(t[k]);
    if (!blanks)
      continue;
    // The line before ends a statement: not `,` or an open bracket.
    auto [pb, pe] = lineBefore(t, ls);
    auto [ts, te] = trimmed(t, pb, pe);
    if (te == ts || t.substr(ts, 2) == "//")
      continue;
    char last = t[te - 1];
    if (last == ',' || last == '(' || last == '[' || last == '{' || last == '=')
      continue;
    fc.cut = ls;
    return fc;
  }
  return std::nullopt;
}

std::optional<std::vector<CrossCutValue>>
crossCutValues(std::string_view t, const FunctionCut &fc) {
  if (t.size() > UINT32_MAX)
    return std::nullopt;
  // Both scans look at line starts and `%` only, found with memchr: the
  // whole body is scanned on the second part's thread before it parses
  // (byte by byte, with brackets, strings and comments followed, ~50 ms at
  // 200k lines). What that would exclude is checked on the first part's
  // IR instead (top-level ops, one block); a `%` in a comment or string
  // of the second part at most declares an argument nothing uses.
  DefinitionTable defs(t);
  const size_t cut = fc.cut, end = fc.bodyClose;
  for (size_t i = t.find('\n', fc.bodyOpen); i != npos && i < cut;
       i = t.find('\n', i + 1)) {
    size_t s = i + 1;
    while (s < cut && isBlank(t[s]))
      ++s;
    if (s >= cut || t[s] != '%')
      continue;
    size_t e = s + nameAt(t, s).size();
    size_t k = e;
    while (k < cut && isBlank(t[k]))
      ++k;
    if (k < cut && t[k] == '=' && (k + 1 >= cut || t[k + 1] != '='))
      defs.insert(s, false);
    else if (k < cut && (t[k] == ':' || t[k] == ','))
      defs.insert(s, true);
  }

  std::vector<CrossCutValue> out;
  // A model's values are used far from their definitions too: a set, not a
  // scan of those declared so far at every use.
  llvm::DenseSet<size_t> declared;
  for (const char *p = static_cast<const char *>(
           std::memchr(t.data() + cut, '%', end - cut));
       p; p = static_cast<const char *>(
              std::memchr(p + 1, '%', t.data() + end - (p + 1)))) {
    size_t i = p - t.data();
    std::string_view name = nameAt(t.substr(0, end), i);
    std::optional<DefinitionTable::Found> d = defs.find(name);
    if (!d)
      continue;
    if (d->group || (i + name.size() < end && t[i + name.size()] == '#'))
      return std::nullopt;
    if (!declared.insert(d->at).second)
      continue;
    size_t eq = t.find('=', d->at);
    size_t stmtEnd = statementEnd(t, d->at, cut);
    std::optional<std::string_view> type =
        declaredResultType(t.substr(eq + 1, stmtEnd - eq - 1));
    if (!type)
      return std::nullopt;
    out.push_back({name, d->at, *type});
  }
  return out;
}

std::string secondPartPrefix(std::string_view t, const FunctionCut &fc,
                             const std::vector<CrossCutValue> &values) {
  std::string out(t.substr(0, fc.argsEnd));
  bool first = fc.noArgs;
  for (const CrossCutValue &v : values) {
    out += first ? "" : ", ";
    first = false;
    out += v.name;
    out += ": ";
    out += v.type;
  }
  out += t.substr(fc.argsEnd, fc.bodyOpen + 1 - fc.argsEnd);
  out += '\n';
  return out;
}

bool definedByConstant(std::string_view t, const CrossCutValue &v) {
  size_t i = v.def + v.name.size();
  auto skipBlanks = [&] {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t'))
      ++i;
  };
  skipBlanks();
  if (i >= t.size() || t[i] != '=')
    return true; // not the form crossCutValues reads: assume the worst
  ++i;
  skipBlanks();
  if (i < t.size() && t[i] == '"')
    ++i;
  size_t b = i;
  while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) ||
                          t[i] == '_' || t[i] == '.' || t[i] == '$'))
    ++i;
  return t.substr(b, i - b).find("const") != std::string_view::npos;
}

std::optional<std::string> renumberPartValues(std::string_view t,
                                              const PartNumbering &n) {
  auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
  auto isIdent = [&](char c) {
    return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_' || c == '$' || c == '.' || c == '-';
  };
  auto number = [&](size_t &i, unsigned long long &v) {
    size_t b = i;
    v = 0;
    while (i < t.size() && isDigit(t[i]) && i - b < 10)
      v = v * 10 + static_cast<unsigned>(t[i++] - '0');
    return i > b && (i == t.size() || !isIdent(t[i]));
  };
  std::string out;
  out.reserve(t.size() + 16);
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (c == '"') { // a string literal is copied as it is
      size_t e = i + 1;
      while (e < t.size() && t[e] != '"')
        e += t[e] == '\\' ? 2 : 1;
      e = std::min(e + 1, t.size());
      out.append(t.substr(i, e - i));
      i = e;
      continue;
    }
    if (c == '^' && i + 1 < t.size() && isIdent(t[i + 1]))
      return std::nullopt;
    if (c != '%' || i + 1 >= t.size() || !isIdent(t[i + 1])) {
      out += c;
      ++i;
      continue;
    }
    size_t j = i + 1;
    unsigned long long v = 0;
    if (isDigit(t[j])) {
      if (!number(j, v))
        return std::nullopt;
      if (v >= n.topLevel && !n.nestedKnown)
        return std::nullopt;
      out += '%';
      out += std::to_string(v +
                            (v < n.topLevel ? n.shiftTopLevel : n.shiftNested));
    } else if (t.substr(j, 3) == "arg" && j + 3 < t.size() &&
               isDigit(t[j + 3])) {
      j += 3;
      if (!number(j, v))
        return std::nullopt;
      size_t declared = n.declaredIds.size();
      if (v < n.args)
        out += "%arg" + std::to_string(v);
      else if (v >= n.args + declared)
        out += "%arg" + std::to_string(v - declared);
      else if (unsigned id = n.declaredIds[v - n.args];
               id != PartNumbering::kUnmapped)
        out += "%" + std::to_string(id);
      else
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    i = j;
  }
  return out;
}

std::string firstPartSuffix(std::string_view t, const FunctionCut &fc) {
  // A blank first: the stand-in starts past the part's end, so no position
  // of it maps into the file.
  std::string out = " \"";
  out += kCutTerminator;
  out += "\"() : () -> ()\n";
  out += t.substr(fc.bodyClose);
  return out;
}

namespace {
/// Offset of the last `->` at bracket depth 0 of `scope`, npos if none: a
/// scan from the start that follows brackets and skips strings.
size_t lastArrowForwards(llvm::StringRef scope) {
  // Most bytes are none of those the scan looks at: a table skips them.
  static const auto interesting = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : {'"', '-', '(', '[', '{', '<', ')', ']', '}', '>'})
      t[c] = true;
    return t;
  }();
  int depth = 0;
  size_t arrow = llvm::StringRef::npos;
  const char *p = scope.data();
  for (size_t i = 0, n = scope.size(); i < n; ++i) {
    char c = p[i];
    if (!interesting[static_cast<unsigned char>(c)])
      continue;
    if (c == '"') { // skip strings (attribute values; the op parsed)
      i = stringEnd(std::string_view(p, n), i);
      continue;
    }
    if (c == '-') {
      if (i + 1 < n && p[i + 1] == '>') {
        if (depth == 0)
          arrow = i;
        ++i;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<')
      ++depth;
    else
      depth = std::max(0, depth - 1);
  }
  return arrow;
}

/// The same found from the end, where it usually is (`... -> tensor<..>`):
/// the result type is a few dozen bytes back, the scan from the start read
/// the whole op (~4 % of an open). The first quote seen from the end closes
/// a string (none is after it), which opens at the quote before it that no
/// odd number of backslashes escapes: strings are skipped as forwards (a
/// model's ops end with `loc("...")`). std::nullopt where only the scan
/// from the start can tell: brackets that do not balance after the arrow,
/// a string that does not open.
std::optional<size_t> lastArrowBackwards(llvm::StringRef scope) {
  int depth = 0; // closers seen minus openers, from the end
  const char *p = scope.data();
  for (size_t i = scope.size(); i-- > 0;) {
    switch (p[i]) {
    case '"':
      do {
        if (i == 0)
          return std::nullopt;
        --i;
      } while (p[i] != '"' || escapedAt(p, i, 0));
      continue;
    case '>':
      if (i > 0 && p[i - 1] == '-') {
        if (depth == 0)
          return i - 1;
        --i;
        continue;
      }
      ++depth;
      continue;
    case ')':
    case ']':
    case '}':
      ++depth;
      continue;
    case '(':
    case '[':
    case '{':
    case '<':
      if (--depth < 0)
        return std::nullopt;
      continue;
    default:
      continue;
    }
  }
  // No arrow: the scan from the start finds none at depth 0 either when the
  // brackets balance (its depth at each byte is then this one's).
  if (depth == 0)
    return llvm::StringRef::npos;
  return std::nullopt;
}
} // namespace

std::optional<std::pair<size_t, size_t>> findResultType(llvm::StringRef scope) {
  // The last `->` at bracket depth 0 introduces the result type(s).
  std::optional<size_t> back = lastArrowBackwards(scope);
  size_t arrow = back ? *back : lastArrowForwards(scope);
  if (arrow == llvm::StringRef::npos)
    return std::nullopt;
  size_t b = arrow + 2;
  while (b < scope.size() && (scope[b] == ' ' || scope[b] == '\t'))
    ++b;
  size_t e = typeEnd(scope, b);
  if (e == b)
    return std::nullopt;
  return std::make_pair(b, e);
}

size_t typeEnd(llvm::StringRef text, size_t b) {
  size_t e = b;
  int depth = 0;
  for (; e < text.size(); ++e) {
    char c = text[e];
    if (c == '-' && e + 1 < text.size() && text[e + 1] == '>') {
      ++e;
      continue;
    }
    if (c == '<' || c == '(' || c == '[')
      ++depth;
    else if (c == '>' || c == ')' || c == ']') {
      if (depth == 0)
        break;
      --depth;
    } else if (depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
                              c == ',' || c == '{'))
      break;
  }
  return e;
}

std::optional<std::vector<SymbolRef>> symbolRefsIn(std::string_view text) {
  std::vector<SymbolRef> out;
  for (size_t i = text.find('@'); i != std::string_view::npos;
       i = text.find('@', i + 1)) {
    size_t b = i + 1, e = b;
    if (b < text.size() && text[b] == '"') {
      e = text.find('"', b + 1);
      if (e == std::string_view::npos)
        break;
      out.push_back({i, text.substr(b + 1, e - b - 1)});
      ++e;
    } else {
      while (e < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[e])) ||
              text[e] == '_' || text[e] == '$' || text[e] == '.' ||
              text[e] == '-'))
        ++e;
      if (e == b)
        continue;
      out.push_back({i, text.substr(b, e - b)});
    }
    if (text.substr(e, 2) == "::")
      return std::nullopt;
  }
  return out;
}

namespace {

/// Where the range [begin, end) of a section's text can be cut into two
/// halves that parse and verify alone exactly as they do together: the
/// start of the top-level op nearest the middle of its work (workTarget),
/// after a `}` closing the op before it at column 0, with no symbol named
/// on both sides (calls, duplicates). `refs` are the range's symbol references.
/// A wrong guess (a cut inside an op) fails to parse and the caller analyses
/// the section whole.
std::optional<size_t> splitPoint(std::string_view text, size_t begin,
                                 size_t end, llvm::ArrayRef<SymbolRef> refs) {
  size_t cut = std::string_view::npos;
  for (size_t at =
           text.find("\n}\n", detail::workTarget(text, begin, end, 0.5));
       at != std::string_view::npos && at + 3 <= end;
       at = text.find("\n}\n", at + 1)) {
    size_t next = text.find_first_not_of(" \t\r\n", at + 3);
    if (next >= end)
      return std::nullopt; // The last op: nothing after it.
    // The next op starts at column 0 (a function's `}` at column 0 inside
    // an indented module would be followed by an indented line).
    if (text[next - 1] == '\n' && text[next] != '}') {
      cut = at + 3;
      break;
    }
  }
  if (cut == std::string_view::npos)
    return std::nullopt;
  auto second = llvm::partition_point(
      refs, [&](const SymbolRef &r) { return r.offset < cut; });
  llvm::ArrayRef<SymbolRef> before = refs.take_front(second - refs.begin());
  llvm::ArrayRef<SymbolRef> after = refs.drop_front(before.size());
  if (before.size() > after.size())
    std::swap(before, after);
  llvm::DenseSet<llvm::StringRef> names;
  for (const SymbolRef &r : before)
    names.insert(llvm::StringRef(r.name.data(), r.name.size()));
  for (const SymbolRef &r : after)
    if (names.contains(llvm::StringRef(r.name.data(), r.name.size())))
      return std::nullopt;
  return cut;
}

constexpr unsigned kMaxPartsLog2 = 3; // 8 parts

} // namespace

std::vector<size_t> splitPoints(std::string_view text, size_t minPart) {
  std::vector<size_t> cuts;
  // Aliases and dialect resources (`#a = `, `!t = `, `{-#` at a line's
  // start) are named across any cut. `#` and `!` are rare in a model's
  // text: finding them is faster than finding each line's start.
  auto atLineStart = [&](char c) {
    for (size_t i = text.find(c); i != std::string_view::npos;
         i = text.find(c, i + 1))
      if (i == 0 || text[i - 1] == '\n' ||
          (c == '#' && i >= 2 && text.substr(i - 2, 2) == "{-"))
        return true;
    return false;
  };
  if (text.empty() || atLineStart('#') || atLineStart('!'))
    return cuts;
  std::optional<std::vector<SymbolRef>> refs = symbolRefsIn(text);
  if (!refs)
    return cuts;
  auto cutRange = [&](auto &self, size_t begin, size_t end,
                      llvm::ArrayRef<SymbolRef> inRange,
                      unsigned depth) -> void {
    if (depth == 0 || end - begin < 2 * minPart)
      return;
    std::optional<size_t> at = splitPoint(text, begin, end, inRange);
    if (!at)
      return;
    size_t k =
        llvm::partition_point(
            inRange, [&](const SymbolRef &r) { return r.offset < *at; }) -
        inRange.begin();
    self(self, begin, *at, inRange.take_front(k), depth - 1);
    cuts.push_back(*at);
    self(self, *at, end, inRange.drop_front(k), depth - 1);
  };
  cutRange(cutRange, 0, text.size(), *refs, kMaxPartsLog2);
  return cuts;
}

} // namespace tosa_lsp::detail
