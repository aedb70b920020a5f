//===- SignatureHelp.cpp - the operands of the op being typed -------------===//

#include "SignatureHelp.h"

#include "Completion.h"
#include "Lexer.h"
#include "LineIndex.h"
#include "OpSignatures.h"

namespace tosa_lsp {

std::optional<SignatureData>
signatureHelp(std::string_view text, const LineIndex &lines, Position pos) {
  CompletionContext ctx = completionContext(text, lines, pos);
  const OpSignature *sig = findOpSignature(ctx.opName);
  if (!sig)
    return std::nullopt;
  SignatureData out;
  out.label = sig->name;
  out.documentation = sig->summary;
  auto param = [&](const OpArgument &a, const std::string &shown) {
    unsigned b = static_cast<unsigned>(out.label.size());
    out.label += shown;
    std::string doc = "`" + shown + "`";
    std::string role = a.attribute ? "" : operandRole(a.name);
    if (!role.empty())
      doc += ": " + role;
    doc += std::string(role.empty() ? ": " : " — ") + a.constraint;
    if (*a.defaultValue)
      doc += std::string(" (default ") + a.defaultValue + ")";
    else if (a.optional)
      doc += " (optional)";
    if (*a.cases) {
      std::string cases = a.cases;
      for (char &c : cases)
        if (c == '|')
          c = ',';
      doc += "; one of " + cases;
    }
    out.parameters.push_back(
        {b, static_cast<unsigned>(out.label.size()), std::move(doc)});
  };
  std::string sep = " ";
  auto operands = sig->operands();
  for (const OpArgument *a : operands) {
    out.label += sep;
    param(*a, std::string("%") + a->name + (a->variadic ? "..." : ""));
    sep = ", ";
  }
  auto attrs = sig->attributes();
  if (!attrs.empty()) {
    out.label += " {";
    sep = "";
    for (const OpArgument *a : attrs) {
      out.label += sep;
      param(*a, std::string(a->name) +
                    (a->optional || *a->defaultValue ? "?" : ""));
      sep = ", ";
    }
    out.label += "}";
  }
  switch (ctx.kind) {
  case CompletionContext::Value:
    if (ctx.operandIndex < operands.size())
      out.active = static_cast<int>(ctx.operandIndex);
    else if (!operands.empty() && operands.back()->variadic)
      out.active = static_cast<int>(operands.size() - 1);
    break;
  case CompletionContext::AttrName:
  case CompletionContext::AttrValue: {
    // The attribute whose name is last before the cursor.
    size_t lineStart = lines.lineStart(pos.line - 1);
    Lexer lex(text.substr(0, ctx.wordOffset), lineStart);
    std::string_view last;
    Token prev;
    for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
      if (t.kind == TokKind::Punct && t.first(text) == '=' &&
          prev.kind == TokKind::BareId)
        last = prev.text(text);
      prev = t;
    }
    if (ctx.kind == CompletionContext::AttrName)
      last = ctx.word;
    for (size_t i = 0; i < attrs.size(); ++i)
      if (!last.empty() && std::string_view(attrs[i]->name).rfind(last, 0) == 0)
        out.active = static_cast<int>(operands.size() + i);
    break;
  }
  default:
    break;
  }
  return out;
}

} // namespace tosa_lsp
