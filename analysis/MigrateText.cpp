//===- MigrateText.cpp - text scanning for the migration --------------------
//===//
//
// What the migration reads from the text rather than the IR: trailing
// locations, indentation, the `value` key of constants, properties that
// MLIR 22 refuses.
//
//===----------------------------------------------------------------------===//

#include "MigrateSupport.h"

#include "TextScan.h"

#include <cctype>

using namespace mlir;

namespace tosa_lsp::migrate {

size_t trailingLoc(std::string_view text) {
  size_t p = text.rfind("loc(");
  if (p == text.npos || p == 0 ||
      !std::isspace(static_cast<unsigned char>(text[p - 1])))
    return text.npos;
  size_t end = skipBracket(text, p + 3);
  return end == text.size() ? p : text.npos;
}

std::string lineIndent(std::string_view text, size_t off) {
  size_t start = text.rfind('\n', off == 0 ? 0 : off - 1);
  start = (start == text.npos || off == 0) ? 0 : start + 1;
  size_t e = start;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t'))
    ++e;
  return std::string(text.substr(start, e - start));
}

/// `tosa.const {value = ...}`: rename the key in place (constants are most
/// of a model's bytes; they are never re-printed).
std::optional<size_t> valueKey(std::string_view text) {
  size_t open = text.find('{');
  if (open == text.npos)
    return std::nullopt;
  int depth = 0;
  bool expectKey = false;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // the op parsed: its strings end on their line
      i = detail::stringEnd(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth == 1)
        expectKey = true;
      continue;
    }
    if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (--depth == 0)
        return std::nullopt;
      continue;
    }
    if (depth == 1 && c == ',') {
      expectKey = true;
      continue;
    }
    if (depth == 1 && expectKey &&
        !std::isspace(static_cast<unsigned char>(c))) {
      expectKey = false;
      if (text.compare(i, 5, "value") == 0) {
        size_t j = i + 5;
        while (j < text.size() &&
               std::isspace(static_cast<unsigned char>(text[j])))
          ++j;
        if (j < text.size() && text[j] == '=')
          return i;
      }
    }
  }
  return std::nullopt;
}

/// The text with every generic op's properties `<{...}>` turned into (or
/// merged with) its attribute dictionary, byte for byte the same length so
/// positions stay. MLIR 22 refuses properties on ops that have none now
/// (`"tosa.reshape"(%x) <{new_shape = ...}>`); as attributes they parse
/// and the rewrite reads them. Only used when the text does not parse.
std::string propertiesAsAttributes(std::string_view in) {
  std::string out(in);
  // The text does not parse: a string left open runs on past its line.
  auto skipString = [&](size_t i) {
    return detail::stringEnd(in, i, detail::LineBreaks::Inside);
  };
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    if (in[i] == '"') {
      i = skipString(i);
      continue;
    }
    if (in[i] != '<' || in[i + 1] != '{')
      continue;
    int depth = 0;
    size_t k = i + 1;
    for (; k < in.size(); ++k) {
      if (in[k] == '"') {
        k = skipString(k);
        continue;
      }
      if (in[k] == '{')
        ++depth;
      else if (in[k] == '}' && --depth == 0)
        break;
    }
    if (k + 1 >= in.size() || in[k + 1] != '>')
      continue;
    out[i] = ' ';
    out[k + 1] = ' ';
    size_t m = k + 2;
    while (m < in.size() && std::isspace(static_cast<unsigned char>(in[m])))
      ++m;
    if (m < in.size() && in[m] == '{') {
      size_t n = m + 1;
      while (n < in.size() && std::isspace(static_cast<unsigned char>(in[n])))
        ++n;
      out[m] = ' ';
      if (n < in.size() && in[n] == '}') { // `<{a}> {}`
        out[n] = ' ';
        out[k] = '}';
      } else {
        out[k] = ',';
      }
    }
    i = k + 1;
  }
  return out;
}

/// Offsets of `needle` in `text` outside strings and `//` comments.
std::vector<size_t> codeOccurrences(std::string_view text,
                                    std::string_view needle) {
  std::vector<size_t> out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      i = detail::stringEnd(text, i);
      continue;
    }
    if (detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
      if (i == text.npos)
        break;
      continue;
    }
    if (text.compare(i, needle.size(), needle) == 0)
      out.push_back(i);
  }
  return out;
}

std::vector<size_t> quantAttrsAsDicts(std::string &text) {
  std::vector<size_t> at;
  for (size_t start : codeOccurrences(text, "#tosa.")) {
    size_t k = start + 6;
    while (
        k < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_'))
      ++k;
    std::string_view name(text.data() + start + 6, k - start - 6);
    if (name.size() < 6 || name.substr(name.size() - 6) != "_quant" ||
        k >= text.size() || text[k] != '<')
      continue;
    size_t close = skipBracket(text, k);
    if (close == std::string::npos)
      continue;
    // `#tosa.conv_quant<a = 1>` -> `{               a = 1}`, same length.
    text[start] = '{';
    std::fill(text.begin() + static_cast<long>(start) + 1,
              text.begin() + static_cast<long>(k) + 1, ' ');
    text[close - 1] = '}';
    at.push_back(start);
  }
  return at;
}

void genericTosaOpsUnregistered(std::string &text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
      if (i == std::string::npos)
        break;
      continue;
    }
    if (text[i] != '"')
      continue;
    size_t close = detail::stringEnd(text, i, detail::LineBreaks::Inside);
    if (close + 1 < text.size() && text[close + 1] == '(' &&
        text.compare(i + 1, 5, "tosa.") == 0)
      text[i + 4] = 'x';
    i = close;
  }
}

} // namespace tosa_lsp::migrate
