//===- InlayHintsJSON.cpp - an inlay hint reply as text -------------------===//

#include "InlayHintsJSON.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tosa_lsp {

std::string inlayHintsReplyMessage(const json::Value &id,
                                   const std::vector<lsp::InlayHint> &hints,
                                   bool pretty) {
  std::string text;
  text.reserve(128 * hints.size() + 64);
  raw_string_ostream out(text);
  {
    json::OStream os(out, pretty ? 2 : 0);
    // The keys in the order json::Value prints them (sorted), as
    // lsp::toJSON(InlayHint) has them.
    os.object([&] {
      os.attribute("id", id);
      os.attribute("jsonrpc", "2.0");
      os.attributeArray("result", [&] {
        for (const lsp::InlayHint &h : hints)
          os.object([&] {
            os.attribute("kind", static_cast<int>(h.kind));
            os.attribute("label", h.label);
            os.attribute("paddingLeft", h.paddingLeft);
            os.attribute("paddingRight", h.paddingRight);
            os.attributeObject("position", [&] {
              os.attribute("character", h.position.character);
              os.attribute("line", h.position.line);
            });
          });
      });
    });
  }
  if (pretty)
    out << "\n"; // As JSONTransport's pretty output ends.
  out.flush();
  return text;
}

} // namespace tosa_lsp
