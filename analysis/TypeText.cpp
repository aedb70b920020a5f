//===- TypeText.cpp - tensor types read from their text -------------------===//

#include "TypeText.h"

#include <algorithm>

namespace tosa_lsp {

std::optional<std::string_view> tensorElementType(std::string_view type) {
  size_t lt = type.find('<');
  if (type.rfind("tensor<", 0) != 0 || lt == std::string_view::npos)
    return std::nullopt;
  size_t x = type.rfind('x');
  std::string_view el =
      type.substr((x != std::string_view::npos && x > lt ? x : lt) + 1);
  if (!el.empty() && el.back() == '>')
    el.remove_suffix(1);
  return el;
}

std::optional<std::pair<Shape, std::string>>
tensorShape(std::string_view type) {
  if (type.rfind("tensor<", 0) != 0 || type.back() != '>')
    return std::nullopt;
  std::string_view body = type.substr(7, type.size() - 8);
  Shape shape;
  while (true) {
    size_t x = body.find('x');
    if (x == std::string_view::npos)
      break;
    std::string_view dim = body.substr(0, x);
    if (dim == "?")
      shape.push_back(kDynamic);
    else if (!dim.empty() && std::all_of(dim.begin(), dim.end(), [](char c) {
               return c >= '0' && c <= '9';
             }))
      shape.push_back(std::stoll(std::string(dim)));
    else
      break;
    body.remove_prefix(x + 1);
  }
  if (body.empty() || body.find_first_of("<>*?,") != std::string_view::npos)
    return std::nullopt;
  return std::make_pair(shape, std::string(body));
}

std::string tensorTypeText(const Shape &shape, std::string_view element) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return t + std::string(element) + ">";
}

} // namespace tosa_lsp
