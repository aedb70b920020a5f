//===- OpSignatures.cpp - operands and attributes of TOSA ops -------------===//

#include "OpSignatures.h"

#include <algorithm>
#include <string>

namespace tosa_lsp {

const std::vector<OpSignature> &opSignatures() {
  static const std::vector<OpSignature> all = [] {
    std::vector<OpSignature> v = {
#include "OpSignatures.inc"
    };
    std::sort(v.begin(), v.end(),
              [](const OpSignature &a, const OpSignature &b) {
                return std::string_view(a.name) < std::string_view(b.name);
              });
    return v;
  }();
  return all;
}

const OpSignature *findOpSignature(std::string_view name) {
  const auto &all = opSignatures();
  auto it = std::lower_bound(
      all.begin(), all.end(), name,
      [](const OpSignature &s, std::string_view n) { return s.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

std::vector<const OpArgument *> OpSignature::operands() const {
  std::vector<const OpArgument *> out;
  for (const OpArgument &a : arguments)
    if (!a.attribute)
      out.push_back(&a);
  return out;
}

std::vector<const OpArgument *> OpSignature::attributes() const {
  std::vector<const OpArgument *> out;
  for (const OpArgument &a : arguments)
    if (a.attribute)
      out.push_back(&a);
  return out;
}

bool OpSignature::plainFormat() const {
  std::string_view f = format;
  if (f == "operands attr-dict `:` functional-type(operands, results)")
    return true;
  return f.empty() && !hasRegions && std::string_view(name) != "tosa.const";
}

std::string operandRole(std::string_view name) {
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
  };
  std::string base(name);
  if (ends("_zp"))
    return base.substr(0, base.size() - 3) + " zero point";
  if (name == "shift")
    return "shift (right shift of the product, 0 for floats)";
  if (name == "multiplier")
    return "scale multiplier";
  if (name == "shape" || ends("_shape"))
    return "a !tosa.shape operand (tosa.const_shape)";
  if (name == "bias")
    return "bias, added to each output channel";
  if (name == "weight")
    return "weights";
  return "";
}

} // namespace tosa_lsp
