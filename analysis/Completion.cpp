//===- Completion.cpp - what may be typed at a position -------------------===//

#include "Completion.h"
#include "TypeText.h"

#include "Broadcast.h"
#include "Lexer.h"
#include "LineIndex.h"
#include "OpSignatures.h"
#include "Query.h"
#include "WorkspaceSymbols.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_set>

namespace tosa_lsp {

namespace {

bool isSigil(char c) {
  return c == '%' || c == '^' || c == '@' || c == '#' || c == '!';
}
bool isPunct(std::string_view text, const Token &t, char c) {
  return t.kind == TokKind::Punct && t.first(text) == c;
}

/// `%a, %b:2 =` (results and `=`), or nothing, before an op name.
bool resultsThenEquals(std::string_view text, const std::vector<Token> &toks) {
  if (toks.empty())
    return true;
  if (!isPunct(text, toks.back(), '='))
    return false;
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    const Token &t = toks[i];
    if (!(t.kind == TokKind::ValueId || t.kind == TokKind::Number ||
          isPunct(text, t, ',') || isPunct(text, t, ':')))
      return false;
  }
  return true;
}

/// The index in `toks` of the op name: the first token after `... =`, or
/// the first token when there are no results.
std::optional<size_t> opNameIndex(std::string_view text,
                                  const std::vector<Token> &toks) {
  for (size_t i = 0; i < toks.size(); ++i)
    if (isPunct(text, toks[i], '=')) {
      std::vector<Token> head(toks.begin(), toks.begin() + i + 1);
      if (resultsThenEquals(text, head) && i + 1 < toks.size() &&
          (toks[i + 1].kind == TokKind::BareId ||
           toks[i + 1].kind == TokKind::String))
        return i + 1;
      return std::nullopt;
    }
  if (!toks.empty() && toks[0].kind == TokKind::BareId)
    return 0;
  return std::nullopt;
}

} // namespace

namespace {} // namespace

std::optional<std::string>
elementwiseResultType(std::string_view opName,
                      const std::vector<std::string> &operandTypes) {
  static const std::unordered_set<std::string_view> binary = {
      "tosa.add",
      "tosa.sub",
      "tosa.mul",
      "tosa.intdiv",
      "tosa.maximum",
      "tosa.minimum",
      "tosa.pow",
      "tosa.bitwise_and",
      "tosa.bitwise_or",
      "tosa.bitwise_xor",
      "tosa.logical_and",
      "tosa.logical_or",
      "tosa.logical_xor",
      "tosa.arithmetic_right_shift",
      "tosa.logical_left_shift",
      "tosa.logical_right_shift",
      "tosa.equal",
      "tosa.greater",
      "tosa.greater_equal",
      "tosa.select"};
  if (!binary.count(opName))
    return std::nullopt;
  bool compare = opName == "tosa.equal" || opName == "tosa.greater" ||
                 opName == "tosa.greater_equal";
  // tosa.mul's shift and tosa.select's condition take no part in the
  // element type.
  size_t data = opName == "tosa.mul" ? 2 : operandTypes.size();
  std::vector<MaybeShape> shapes;
  std::string element;
  for (size_t i = 0; i < operandTypes.size() && i < data; ++i) {
    auto t = tensorShape(operandTypes[i]);
    if (!t)
      return std::nullopt;
    shapes.push_back(t->first);
    if (opName != "tosa.select" || i > 0)
      element = t->second;
  }
  if (shapes.empty())
    return std::nullopt;
  std::optional<Shape> result = inferResultShape(shapes);
  if (!result)
    return std::nullopt;
  return tensorTypeText(*result, compare ? std::string("i1") : element);
}

CompletionContext completionContext(std::string_view text,
                                    const LineIndex &lines, Position pos) {
  CompletionContext ctx;
  auto off = lines.offset(pos);
  if (!off)
    return ctx;
  size_t cursor = *off;
  size_t lineStart = lines.lineStart(pos.line - 1);
  size_t w = cursor;
  while (w > lineStart && isIdChar(text[w - 1]))
    --w;
  if (w > lineStart && isSigil(text[w - 1]))
    --w;
  ctx.word = std::string(text.substr(w, cursor - w));
  ctx.wordOffset = w;
  std::vector<Token> toks;
  Lexer lex(text.substr(0, w), lineStart);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind == TokKind::Comment)
      return ctx; // in a comment
    toks.push_back(t);
  }
  // In an unterminated string.
  if (!toks.empty() && toks.back().kind == TokKind::String &&
      (toks.back().length < 2 ||
       text[toks.back().offset + toks.back().length - 1] != '"'))
    return ctx;
  std::optional<size_t> opAt = opNameIndex(text, toks);
  if (opAt && *opAt < toks.size())
    ctx.opName = std::string(toks[*opAt].text(text));
  if (!ctx.opName.empty() && ctx.opName.front() == '"' &&
      ctx.opName.size() >= 2)
    ctx.opName = ctx.opName.substr(1, ctx.opName.size() - 2);

  char sigil = ctx.word.empty() ? 0 : ctx.word[0];
  if (isSigil(sigil)) {
    ctx.kind = sigil == '%'   ? CompletionContext::Value
               : sigil == '^' ? CompletionContext::Block
               : sigil == '@' ? CompletionContext::Symbol
               : sigil == '#' ? CompletionContext::AttrAlias
                              : CompletionContext::TypeAlias;
  }
  // The brackets open before the word.
  std::vector<size_t> open;
  for (size_t i = 0; i < toks.size(); ++i) {
    char c = toks[i].kind == TokKind::Punct ? toks[i].first(text) : 0;
    if (c == '(' || c == '[' || c == '{' || c == '<')
      open.push_back(i);
    else if ((c == ')' || c == ']' || c == '}' || c == '>') && !open.empty())
      open.pop_back();
  }
  // Operands: values after the op name, before any `:` or bracket.
  if (opAt) {
    unsigned values = 0;
    bool inOperands = true;
    for (size_t i = *opAt + 1; i < toks.size(); ++i) {
      if (toks[i].kind == TokKind::ValueId)
        ++values;
      else if (!(isPunct(text, toks[i], ',') ||
                 toks[i].kind == TokKind::HashNumber))
        inOperands = false;
    }
    ctx.operandIndex = values;
    bool afterOp = *opAt < toks.size();
    if (inOperands && afterOp && ctx.kind == CompletionContext::None &&
        (toks.back().kind != TokKind::ValueId))
      ctx.kind = CompletionContext::Value;
  }
  // A function's argument list (`func.func @f(`, `@f(%a: f32, %`): a type
  // may come first there (unnamed arguments), as upstream's parser expects.
  bool inSignature = ctx.opName.size() >= 4 &&
                     ctx.opName.substr(ctx.opName.size() - 4) == "func" &&
                     !open.empty() && isPunct(text, toks[open.back()], '(') &&
                     open.back() > 0 &&
                     toks[open.back() - 1].kind == TokKind::SymbolId;
  if (inSignature && (ctx.kind == CompletionContext::None ||
                      ctx.kind == CompletionContext::Value)) {
    const Token &last = toks.back();
    if (isPunct(text, last, '(') || isPunct(text, last, ',') ||
        isPunct(text, last, ':')) {
      ctx.kind = CompletionContext::Type;
      return ctx;
    }
  }
  if (ctx.kind != CompletionContext::None &&
      ctx.kind != CompletionContext::Value)
    return ctx;
  if (ctx.kind == CompletionContext::Value && sigil == '%')
    return ctx;
  if (!open.empty() && isPunct(text, toks[open.back()], '{')) {
    const Token &last = toks.back();
    // An attribute's type: `{axis = 0 : `, `{values = dense<0> : `.
    ctx.kind = isPunct(text, last, ':')   ? CompletionContext::Type
               : isPunct(text, last, '=') ? CompletionContext::AttrValue
               : (isPunct(text, last, '{') || isPunct(text, last, ','))
                   ? CompletionContext::AttrName
                   : CompletionContext::None;
    return ctx;
  }
  if (ctx.kind == CompletionContext::Value)
    return ctx;
  if (resultsThenEquals(text, toks)) {
    ctx.kind = CompletionContext::OpName;
    ctx.opName.clear();
    return ctx;
  }
  // A type: `:` or `->` before the cursor, with types, commas and the
  // brackets of type lists between.
  int depth = 0;
  for (size_t i = toks.size(); i-- > 0;) {
    const Token &t = toks[i];
    if (t.kind == TokKind::Punct) {
      char c = t.first(text);
      if (c == ')' || c == '>' || c == ']') {
        ++depth;
        continue;
      }
      if (c == '(' || c == '<' || c == '[') {
        depth = std::max(depth - 1, 0);
        continue;
      }
      if (c == ',' && depth >= 0)
        continue;
      if (c == ':' && depth == 0) {
        ctx.kind = CompletionContext::Type;
        return ctx;
      }
      if (depth > 0)
        continue;
      break;
    }
    if (t.kind == TokKind::Arrow && depth == 0) {
      bool function = ctx.opName.size() >= 4 &&
                      ctx.opName.substr(ctx.opName.size() - 4) == "func";
      ctx.kind =
          function ? CompletionContext::Type : CompletionContext::ResultType;
      return ctx;
    }
    if (depth > 0 || t.kind == TokKind::BareId || t.kind == TokKind::BangId ||
        t.kind == TokKind::Number || t.kind == TokKind::Arrow)
      continue;
    break;
  }
  return ctx;
}

namespace {

struct Builder {
  const CompletionInput &in;
  Position pos;
  CompletionContext ctx;
  Position replaceFrom;
  std::vector<CompletionItemData> items;
  size_t limit = 1000;
  /// Candidates left out before items were made (values of a big function).
  bool cut = false;

  void add(std::string label, CompletionKind kind, std::string detail,
           std::string sort, std::string insert = "") {
    CompletionItemData item;
    item.label = std::move(label);
    item.kind = kind;
    item.detail = std::move(detail);
    item.sortText = std::move(sort);
    item.insertText = std::move(insert);
    item.replaceFrom = replaceFrom;
    items.push_back(std::move(item));
  }

  unsigned section() const {
    auto off = in.lines.offset(pos);
    for (const Section &s : in.fa.sections)
      if (off && s.beginOffset <= *off && *off <= s.endOffset)
        return s.index;
    return 0;
  }

  const SymbolInfo *enclosingFunction(unsigned sec) const {
    const SymbolInfo *best = nullptr;
    for (const SymbolInfo &s : in.fa.symbols)
      if (s.section == sec && s.scope.begin.valid() && contains(s.scope, pos) &&
          (!best || before(best->scope.begin, s.scope.begin)))
        best = &s;
    return best;
  }

  void dialects(const std::string &prefix) {
    for (const std::string &d : in.catalogue.dialects)
      add(prefix + d, CompletionKind::Dialect, "dialect", "3");
  }

  void aliases(char sigil) {
    unsigned sec = section();
    for (const AliasInfo &a : in.aliases)
      if (a.section == sec && a.name[0] == sigil)
        add(a.name, CompletionKind::Alias, "alias: " + a.valueText, "2");
  }

  void opNames();
  void values();
  void blocks();
  void symbols();
  void types(bool result);
  void attributeNames();
  void attributeValues();
};

/// The TOSA op as a snippet (or plain text) with its operands and required
/// attributes, for `operands attr-dict : functional-type(...)` ops.
std::string opSnippet(const OpSignature &sig, std::string_view opLabel,
                      bool snippets) {
  std::string s(opLabel);
  if (!sig.plainFormat())
    return "";
  unsigned n = 0;
  auto hole = [&](const std::string &placeholder) {
    ++n;
    return snippets ? "${" + std::to_string(n) + ":" + placeholder + "}"
                    : placeholder;
  };
  auto choice = [&](const std::string &cases) {
    ++n;
    if (!snippets)
      return cases.substr(0, cases.find('|'));
    std::string c = cases;
    std::replace(c.begin(), c.end(), '|', ',');
    return "${" + std::to_string(n) + "|" + c + "|}";
  };
  std::string sep = " ";
  for (const OpArgument *a : sig.operands()) {
    s += sep + hole(std::string("%") + a->name);
    sep = ", ";
  }
  std::string attrs;
  for (const OpArgument *a : sig.attributes()) {
    if (a->optional || *a->defaultValue)
      continue;
    std::string c = a->constraint, value;
    if (*a->cases)
      value = choice(a->cases);
    else if (c.find("bool attribute") != std::string::npos)
      value = hole("false");
    else if (c.find("dense array attribute with exactly") !=
             std::string::npos) {
      unsigned k = std::stoi(c.substr(c.find("exactly") + 8));
      bool ones = std::string_view(a->name) == "stride" ||
                  std::string_view(a->name) == "dilation" ||
                  std::string_view(a->name) == "kernel";
      std::string list;
      for (unsigned i = 0; i < k; ++i)
        list += (i ? ", " : "") + std::string(ones ? "1" : "0");
      value = "array<i64: " + hole(list) + ">";
    } else if (c.find("type attribute") != std::string::npos)
      value = hole(c.find("32-bit float") != std::string::npos ? "f32" : "i32");
    else
      value = hole(a->name);
    attrs += (attrs.empty() ? "" : ", ") + std::string(a->name) + " = " + value;
  }
  if (!attrs.empty())
    s += " {" + attrs + "}";
  // One hole at a time: the operands of `+` are not sequenced.
  std::string operandTypes = hole("operand types");
  std::string resultType = hole("result type");
  s += " : (" + operandTypes + ") -> " + resultType;
  if (snippets)
    s += "$0";
  return s;
}

void Builder::opNames() {
  size_t dot = ctx.word.find('.');
  if (dot == std::string::npos) {
    dialects("");
    // The ops of `func`, the default dialect inside a function body.
    for (const std::string &op : in.catalogue.ops)
      if (op.rfind("func.", 0) == 0)
        add(op.substr(5), CompletionKind::Operation, "operation", "2");
    return;
  }
  std::string dialect = ctx.word.substr(0, dot);
  // The label is the name after the dialect, as upstream's.
  replaceFrom = in.lines.position(ctx.wordOffset + dot + 1);
  std::string prefix = dialect + ".";
  auto it = std::lower_bound(in.catalogue.ops.begin(), in.catalogue.ops.end(),
                             prefix);
  for (; it != in.catalogue.ops.end() && it->rfind(prefix, 0) == 0; ++it) {
    std::string label = it->substr(prefix.size());
    CompletionItemData item;
    item.label = label;
    item.kind = CompletionKind::Operation;
    item.detail = "operation";
    item.sortText = "1";
    item.replaceFrom = replaceFrom;
    if (const OpSignature *sig = findOpSignature(*it)) {
      item.documentation = sig->summary;
      item.insertText = opSnippet(*sig, label, in.snippets);
      item.snippet = in.snippets && !item.insertText.empty();
    }
    items.push_back(std::move(item));
  }
}

/// Whether a value of type `type` fits operand `index` of `op`: a
/// `!tosa.shape` where the op takes a shape, a tensor elsewhere; for an
/// element-wise op, the element type of the operands already given.
bool fits(const OpSignature *sig, unsigned index, std::string_view type,
          std::string_view elementType) {
  bool shape = type.rfind("!tosa.shape", 0) == 0;
  if (sig) {
    auto ops = sig->operands();
    if (index < ops.size()) {
      bool wantShape = std::string_view(ops[index]->constraint).find("Shape") !=
                       std::string_view::npos;
      if (wantShape != shape)
        return false;
    }
  }
  if (!elementType.empty() && !shape)
    return tensorElementType(type) == elementType;
  return true;
}

/// +1 for a token that opens a type's brackets (`(`, `<`, `[`), -1 for one
/// that closes them, else 0.
int nesting(std::string_view l, const Token &t) {
  char c = t.kind == TokKind::Punct ? t.first(l) : 0;
  return c == '(' || c == '<' || c == '['   ? 1
         : c == ')' || c == '>' || c == ']' ? -1
                                            : 0;
}

/// The type in `toks` from `from` up to a top-level `,`, `{` or `)` (an
/// argument's), or with `toEnd` to the end or a top-level `{`.
std::string typeAfter(std::string_view l, const std::vector<Token> &toks,
                      size_t from, bool toEnd) {
  int depth = 0;
  size_t end = from;
  for (size_t k = from; k < toks.size(); ++k) {
    char c = toks[k].kind == TokKind::Punct ? toks[k].first(l) : 0;
    // (An argument's attributes, `{tosa.x = 1}`, or an op's region, after
    // its result types, are not a type.)
    if (depth == 0 && (c == '{' || (c == ',' && !toEnd)))
      break;
    if (c == '<' || c == '(' || c == '[' || c == '{')
      ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth-- == 0)
      break;
    end = k + 1;
  }
  if (end <= from)
    return std::string();
  size_t tb = toks[from].offset,
         te = toks[end - 1].offset + toks[end - 1].length;
  return std::string(l.substr(tb, te - tb));
}

/// Arguments `%a : type` inside parentheses of `toks` (one line, or a
/// function's header over several).
void argumentsIn(std::string_view l, const std::vector<Token> &toks,
                 std::vector<std::pair<std::string, std::string>> &out) {
  auto punct = [&](size_t k, char c) {
    return toks[k].kind == TokKind::Punct && toks[k].first(l) == c;
  };
  int parens = 0;
  for (size_t k = 0; k + 2 < toks.size(); ++k) {
    parens += punct(k, '(') ? 1 : punct(k, ')') ? -1 : 0;
    if (parens <= 0 || toks[k].kind != TokKind::ValueId || k == 0 ||
        !(punct(k - 1, '(') || punct(k - 1, ',')))
      continue;
    if (punct(k + 1, ':')) {
      out.push_back(
          {std::string(toks[k].text(l)), typeAfter(l, toks, k + 2, false)});
      continue;
    }
    if (!punct(k + 1, '='))
      continue;
    // A region's arguments bound to initial values, `(%a = %x, %b = %y) :
    // (t1, t2) -> ...` (tosa.while_loop; scf's `iter_args(...)`): typed by
    // position in the list after the `:`, where there is one.
    unsigned index = 0;
    size_t open = k - 1;
    while (open > 0 && !punct(open, '(')) {
      index += punct(open, ',');
      --open;
    }
    size_t close = k;
    for (int depth = 0; close < toks.size(); ++close) {
      depth += punct(close, '(') ? 1 : punct(close, ')') ? -1 : 0;
      if (depth < 0)
        break;
    }
    std::string type;
    if (close + 2 < toks.size() && punct(close + 1, ':') &&
        punct(close + 2, '(')) {
      size_t at = close + 3;
      for (unsigned i = 0; i < index && at < toks.size(); ++i) {
        for (int depth = 0; at < toks.size(); ++at) {
          if (depth == 0 && (punct(at, ',') || punct(at, ')')))
            break;
          depth += nesting(l, toks[at]);
        }
        if (at < toks.size() && punct(at, ','))
          ++at;
      }
      if (at < toks.size())
        type = typeAfter(l, toks, at, false);
    }
    out.push_back({std::string(toks[k].text(l)), type});
  }
}

/// The values defined before `pos` in its function, nearest first, read
/// from the text: where the analysis has none (a section that has not
/// parsed since it was opened). Results are `%x =` / `%x:2 =` at a
/// statement's start, typed by what follows the line's last top-level `->`;
/// arguments `%a: type` in a function's parentheses (over as many lines as
/// its header takes) or a block's.
std::vector<std::pair<std::string, std::string>>
valuesFromText(std::string_view text, const LineIndex &lines, Position pos) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t posStart = pos.line - 1 < lines.lineCount()
                        ? lines.lineStart(pos.line - 1)
                        : text.size();
  for (unsigned line = pos.line - 1; line >= 1; --line) {
    size_t b = lines.lineStart(line - 1);
    size_t e = line < lines.lineCount() ? lines.lineStart(line) : text.size();
    std::string_view l = text.substr(0, e);
    std::vector<Token> toks;
    Lexer lex(l, b);
    for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next())
      if (t.kind != TokKind::Comment)
        toks.push_back(t);
    if (toks.empty())
      continue;
    // A function's first line ends the walk.
    bool fnLine = false;
    for (const Token &t : toks)
      if (t.kind == TokKind::BareId) {
        std::string_view n = t.text(l);
        fnLine = n.size() >= 4 && n.substr(n.size() - 4) == "func";
        break;
      }
    // Results.
    if (toks[0].kind == TokKind::ValueId) {
      // `%x =`, `%x:2 =`, `%x, %y =`: names up to the `=` (not an
      // argument's `%c: tensor<..> {k = 1}` on a header's line).
      size_t eq = 0;
      while (eq < toks.size() &&
             (toks[eq].kind == TokKind::ValueId ||
              toks[eq].kind == TokKind::Number ||
              (toks[eq].kind == TokKind::Punct &&
               (toks[eq].first(l) == ',' || toks[eq].first(l) == ':'))))
        ++eq;
      if (eq < toks.size() && toks[eq].kind == TokKind::Punct &&
          toks[eq].first(l) == '=') {
        std::string type;
        int depth = 0;
        for (size_t k = eq; k < toks.size(); ++k) {
          char c = toks[k].kind == TokKind::Punct ? toks[k].first(l) : 0;
          if (c == '<' || c == '(' || c == '[' || c == '{')
            ++depth;
          else if (c == '>' || c == ')' || c == ']' || c == '}')
            --depth;
          else if (toks[k].kind == TokKind::Arrow && depth == 0)
            type = typeAfter(l, toks, k + 1, true);
        }
        for (size_t k = 0; k < eq; ++k)
          if (toks[k].kind == TokKind::ValueId)
            out.push_back({std::string(toks[k].text(l)), type});
      }
    }
    if (!fnLine) {
      argumentsIn(l, toks, out); // a block's (or a one-line op's region's)
      if (l.substr(b, 8) == "// -----")
        break;
      continue;
    }
    // The function's header, up to its body's `{` (or `pos`'s line): its
    // argument list may take several lines.
    std::string_view h = text.substr(0, std::max(e, posStart));
    std::vector<Token> header;
    Lexer headerLex(h, b);
    int depth = 0;
    for (Token t = headerLex.next(); t.kind != TokKind::End;
         t = headerLex.next()) {
      if (t.kind == TokKind::Comment)
        continue;
      char c = t.kind == TokKind::Punct ? t.first(h) : 0;
      if (c == '{' && depth == 0)
        break;
      depth += nesting(h, t);
      header.push_back(t);
    }
    argumentsIn(h, header, out);
    break;
  }
  return out;
}

void Builder::values() {
  unsigned sec = section();
  const SymbolInfo *fn = enclosingFunction(sec);
  const OpSignature *sig = findOpSignature(ctx.opName);
  std::vector<const ValueInfo *> scope;
  for (const ValueInfo &v : in.fa.values) {
    if (v.section != sec || !before(v.def.begin, pos) ||
        v.def.begin.line == pos.line)
      continue;
    if (fn && !contains(fn->scope, v.def.begin))
      continue;
    scope.push_back(&v);
  }
  // Nearest first; of a big function's 50k values only the nearest that
  // match what is typed become items (the client asks again as typing
  // goes on: isIncomplete).
  std::string_view typed = ctx.word;
  if (!typed.empty() && typed[0] == '%')
    typed.remove_prefix(1);
  auto nearer = [](const ValueInfo *a, const ValueInfo *b) {
    return before(b->def.begin, a->def.begin);
  };
  if (scope.size() > limit && !typed.empty()) {
    // Best matches of what is typed, then nearest.
    std::vector<std::pair<double, const ValueInfo *>> scored;
    for (const ValueInfo *v : scope) {
      std::string_view n = v->name.view();
      if (auto sc = fuzzyMatch(typed, n.empty() ? n : n.substr(1)))
        scored.push_back({*sc, v});
    }
    auto better = [&](const auto &a, const auto &b) {
      return a.first != b.first ? a.first > b.first
                                : nearer(a.second, b.second);
    };
    size_t keep = std::min(limit, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(),
                      better);
    cut = scored.size() > keep;
    scope.clear();
    for (size_t i = 0; i < keep; ++i)
      scope.push_back(scored[i].second);
  } else if (scope.size() > limit) {
    // The nearest by a selection on packed positions: a heap of pointers
    // into 50k values spent ~10 ms in cache misses.
    std::vector<std::pair<uint64_t, const ValueInfo *>> keyed;
    keyed.reserve(scope.size());
    for (const ValueInfo *v : scope)
      keyed.push_back(
          {uint64_t(v->def.begin.line) << 32 | v->def.begin.column, v});
    auto later = [](const auto &a, const auto &b) { return a.first > b.first; };
    std::nth_element(keyed.begin(), keyed.begin() + limit, keyed.end(), later);
    keyed.resize(limit);
    std::sort(keyed.begin(), keyed.end(), later);
    scope.clear();
    for (const auto &k : keyed)
      scope.push_back(k.second);
    cut = true;
  } else {
    std::sort(scope.begin(), scope.end(), nearer);
  }
  std::vector<std::pair<std::string, std::string>> named;
  for (const ValueInfo *v : scope)
    named.push_back({std::string(v->name.view()), v->type.str()});
  if (named.empty())
    named = valuesFromText(in.text, in.lines, pos);
  // The element type of the first operand already typed on this line.
  std::string elementType;
  size_t lineStart = in.lines.lineStart(pos.line - 1);
  Lexer lex(in.text.substr(0, ctx.wordOffset), lineStart);
  bool afterOp = false;
  for (Token t = lex.next(); t.kind != TokKind::End && elementType.empty();
       t = lex.next()) {
    if (t.kind == TokKind::BareId && t.text(in.text) == ctx.opName)
      afterOp = true;
    else if (afterOp && t.kind == TokKind::ValueId)
      for (const auto &[name, type] : named)
        if (name == t.text(in.text)) {
          if (auto el = tensorElementType(type))
            elementType = std::string(*el);
          break;
        }
  }
  std::unordered_set<std::string> seen;
  unsigned rank = 0;
  for (const auto &[name, type] : named) {
    if (!seen.insert(name).second)
      continue;
    bool ok = fits(sig, ctx.operandIndex, type, elementType);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%c%08u", ok ? '0' : '1', rank++);
    add(name, CompletionKind::Value, type, buf);
  }
}

void Builder::blocks() {
  unsigned sec = section();
  const SymbolInfo *fn = enclosingFunction(sec);
  for (const BlockInfo &b : in.fa.blocks)
    if (b.section == sec && (!fn || contains(fn->scope, b.def.begin)))
      add(b.name, CompletionKind::Block, "block", "1");
}

void Builder::symbols() {
  unsigned sec = section();
  for (const SymbolInfo &s : in.fa.symbols)
    if (s.section == sec)
      add("@" + s.name, CompletionKind::Symbol, s.opName, "1");
}

void Builder::types(bool result) {
  if (result && in.inferredType)
    if (std::optional<std::string> t = in.inferredType(pos.line)) {
      add(*t, CompletionKind::Type, "inferred result type", "0");
      items.back().documentation =
          "The type the shape inference gives this op's result.";
    }
  for (const char *t :
       {"memref", "tensor", "complex", "tuple", "vector", "bf16", "f16", "f32",
        "f64", "f80", "f128", "index", "none", "i1", "i8", "i16", "i32", "i64"})
    add(t, CompletionKind::Type, "builtin type", "1");
  for (const char *t : {"i", "si", "ui"})
    add(std::string(t) + "<N>", CompletionKind::Type, "builtin integer type",
        "1", t);
  dialects("!");
  aliases('!');
}

void Builder::attributeNames() {
  const OpSignature *sig = findOpSignature(ctx.opName);
  if (!sig)
    return;
  for (const OpArgument *a : sig->attributes()) {
    add(a->name, CompletionKind::Attribute, a->constraint,
        a->optional || *a->defaultValue ? "1" : "0",
        std::string(a->name) + " = ");
    if (*a->defaultValue)
      items.back().documentation =
          std::string("Default: ") + a->defaultValue + ".";
  }
}

void Builder::attributeValues() {
  // The cases of the enum being assigned first.
  if (const OpSignature *sig = findOpSignature(ctx.opName)) {
    size_t lineStart = in.lines.lineStart(pos.line - 1);
    std::string_view before =
        in.text.substr(lineStart, ctx.wordOffset - lineStart);
    size_t eq = before.rfind('=');
    if (eq != std::string_view::npos) {
      std::string_view head = before.substr(0, eq);
      while (!head.empty() && head.back() == ' ')
        head.remove_suffix(1);
      size_t b = head.size();
      while (b > 0 && isIdChar(head[b - 1]))
        --b;
      std::string_view name = head.substr(b);
      for (const OpArgument *a : sig->attributes())
        if (name == a->name && *a->cases) {
          std::string_view cases = a->cases;
          for (size_t s = 0; s <= cases.size();) {
            size_t e = cases.find('|', s);
            if (e == std::string_view::npos)
              e = cases.size();
            add(std::string(cases.substr(s, e - s)), CompletionKind::Attribute,
                a->constraint, "0");
            s = e + 1;
          }
        }
    }
  }
  for (const char *a :
       {"affine_set", "affine_map", "array", "dense", "dense_resource", "false",
        "loc", "sparse", "true", "unit"})
    add(a, CompletionKind::Attribute, "builtin attribute", "1");
  dialects("#");
  aliases('#');
}

} // namespace

CompletionResult complete(const CompletionInput &in, Position pos,
                          size_t limit) {
  Builder b{in, pos, completionContext(in.text, in.lines, pos), {}, {}};
  b.limit = limit;
  b.replaceFrom = in.lines.position(b.ctx.wordOffset);
  switch (b.ctx.kind) {
  case CompletionContext::None:
    break;
  case CompletionContext::OpName:
    b.opNames();
    break;
  case CompletionContext::Value:
    b.values();
    break;
  case CompletionContext::Block:
    b.blocks();
    break;
  case CompletionContext::Symbol:
    b.symbols();
    break;
  case CompletionContext::AttrAlias:
    b.dialects("#");
    b.aliases('#');
    break;
  case CompletionContext::TypeAlias:
    b.dialects("!");
    b.aliases('!');
    break;
  case CompletionContext::Type:
  case CompletionContext::ResultType:
    b.types(b.ctx.kind == CompletionContext::ResultType);
    break;
  case CompletionContext::AttrName:
    b.attributeNames();
    break;
  case CompletionContext::AttrValue:
    b.attributeValues();
    break;
  }
  CompletionResult result;
  result.items = std::move(b.items);
  result.incomplete = b.cut;
  if (result.items.size() > limit) {
    // Too many to send (every value of a 50k-line function): the best
    // matches of what is typed; the client asks again as typing goes on.
    std::string_view typed = b.ctx.word;
    if (!typed.empty() &&
        (typed[0] == '%' || typed[0] == '^' || typed[0] == '@' ||
         typed[0] == '#' || typed[0] == '!'))
      typed.remove_prefix(1);
    std::vector<std::pair<double, size_t>> scored;
    for (size_t i = 0; i < result.items.size(); ++i) {
      std::string_view label = result.items[i].label;
      if (!label.empty() && !std::isalnum(static_cast<unsigned char>(label[0])))
        label.remove_prefix(1);
      if (auto s = fuzzyMatch(typed, label))
        scored.push_back({*s, i});
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [&](const auto &x, const auto &y) {
                       if (x.first != y.first)
                         return x.first > y.first;
                       return result.items[x.second].sortText <
                              result.items[y.second].sortText;
                     });
    if (scored.size() > limit)
      scored.resize(limit);
    std::vector<CompletionItemData> kept;
    for (const auto &[score, i] : scored)
      kept.push_back(std::move(result.items[i]));
    result.items = std::move(kept);
    result.incomplete = true;
  }
  return result;
}

} // namespace tosa_lsp
