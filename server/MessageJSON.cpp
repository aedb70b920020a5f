//===- MessageJSON.cpp - parsing a JSON-RPC message with a document in it -===//

#include "MessageJSON.h"

#include "llvm/Support/ConvertUTF.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

using namespace llvm;

namespace tosa_lsp {

namespace {

// A string no client sends: a NUL, then our name (takeLongStrings gives up
// on a message with a string of that value).
constexpr StringLiteral kPlaceholder = "\\u0000tosa-lsp-long-string:";
constexpr char kPlaceholderBytes[] = "\0tosa-lsp-long-string:"; // parsed
const StringRef kPlaceholderValue(kPlaceholderBytes,
                                  sizeof(kPlaceholderBytes) - 1);

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// The code unit of `\uXXXX` at `p` (6 bytes available), or -1.
int codeUnit(const char *p) {
  if (p[0] != '\\' || p[1] != 'u')
    return -1;
  int v = 0;
  for (int i = 2; i < 6; ++i) {
    int h = hexValue(p[i]);
    if (h < 0)
      return -1;
    v = v * 16 + h;
  }
  return v;
}

/// Appends [p, q) after checking it has no control character, which JSON
/// strings may not contain raw; notes a byte outside ASCII (the value is
/// then checked for UTF-8). Eight bytes at a time: a byte loop was a
/// quarter of the time.
bool appendRun(const char *p, const char *q, std::string &out, bool &nonAscii) {
  constexpr uint64_t ones = ~uint64_t(0) / 255, highs = ones * 0x80;
  uint64_t high = 0, control = 0;
  const char *c = p;
  for (; q - c >= 8; c += 8) {
    uint64_t x;
    std::memcpy(&x, c, 8);
    high |= x;
    control |= (x - ones * 0x20) & ~x; // a byte below 0x20 sets its top bit
  }
  for (; c < q; ++c) {
    auto u = static_cast<unsigned char>(*c);
    high |= u;
    control |= u < 0x20 ? 0x80 : 0;
  }
  if (control & highs)
    return false;
  nonAscii |= (high & highs) != 0;
  out.append(p, q);
  return true;
}

/// The string literal starting at `text[open]` (a quote): its end (the
/// closing quote) and its value in `out`. std::nullopt if it is not valid
/// JSON. Each byte is searched once per kind (quote, backslash).
std::optional<size_t> parseLiteral(StringRef text, size_t open,
                                   std::string &out) {
  const char *p = text.data() + open + 1, *end = text.data() + text.size();
  auto find = [&](char c) {
    return static_cast<const char *>(std::memchr(p, c, end - p));
  };
  const char *quote = find('"'), *slash = find('\\');
  // One allocation, of at most the literal's length as written: grown by
  // doubling, a document's text (kept as it is, takeOpenedText) had up to
  // twice its size allocated. The first quote ends the literal unless it
  // is escaped (an odd run of backslashes before it).
  for (const char *q = quote; q;
       q = static_cast<const char *>(std::memchr(q + 1, '"', end - q - 1))) {
    const char *b = q;
    while (b > p && b[-1] == '\\')
      --b;
    if ((q - b) % 2 == 0) {
      out.reserve(q - p);
      break;
    }
    if (q + 1 == end)
      break;
  }
  bool nonAscii = false;
  auto done = [&]() -> std::optional<size_t> {
    if (nonAscii && !json::isUTF8(out))
      return std::nullopt;
    return static_cast<size_t>(quote - text.data());
  };
  while (true) {
    if (!quote)
      return std::nullopt;
    if (!slash || quote < slash) {
      if (!appendRun(p, quote, out, nonAscii))
        return std::nullopt;
      return done();
    }
    if (!appendRun(p, slash, out, nonAscii) || end - slash < 2)
      return std::nullopt;
    p = slash + 2;
    switch (slash[1]) {
    case '"':
      out += '"';
      break;
    case '\\':
      out += '\\';
      break;
    case '/':
      out += '/';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u': {
      if (end - slash < 6)
        return std::nullopt;
      int u = codeUnit(slash);
      if (u < 0)
        return std::nullopt;
      p = slash + 6;
      unsigned cp = static_cast<unsigned>(u);
      // A surrogate only as a pair (llvm::json has its own rule for the
      // others: left to it).
      if (u >= 0xDC00 && u <= 0xDFFF)
        return std::nullopt;
      if (u >= 0xD800 && u <= 0xDBFF) {
        int low = end - p >= 6 ? codeUnit(p) : -1;
        if (low < 0xDC00 || low > 0xDFFF)
          return std::nullopt;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        p += 6;
      }
      char buf[4];
      char *w = buf;
      if (!ConvertCodePointToUTF8(cp, w))
        return std::nullopt;
      out.append(buf, w); // valid UTF-8 by construction
      break;
    }
    default:
      return std::nullopt;
    }
    if (quote < p)
      quote = find('"');
    slash = find('\\');
  }
}

/// Which of `count` long strings `v` stands for, if it is a placeholder
/// (std::nullopt otherwise; `bad` when it reads as one but is not).
std::optional<size_t> placeholderIndex(const json::Value &v, size_t count,
                                       bool &bad) {
  std::optional<StringRef> s = v.getAsString();
  if (!s || !s->starts_with(kPlaceholderValue))
    return std::nullopt;
  size_t i = 0;
  bad =
      s->drop_front(kPlaceholderValue.size()).getAsInteger(10, i) || i >= count;
  return bad ? std::nullopt : std::optional<size_t>(i);
}

/// Puts the long strings back where their placeholders are.
bool restore(json::Value &v, std::vector<std::string> &values,
             size_t &restored) {
  if (json::Object *o = v.getAsObject()) {
    for (auto &kv : *o)
      if (!restore(kv.second, values, restored))
        return false;
    return true;
  }
  if (json::Array *a = v.getAsArray()) {
    for (json::Value &e : *a)
      if (!restore(e, values, restored))
        return false;
    return true;
  }
  bool bad = false;
  std::optional<size_t> i = placeholderIndex(v, values.size(), bad);
  if (!i)
    return !bad;
  v = json::Value(std::move(values[*i]));
  ++restored;
  return true;
}

} // namespace

std::optional<LongStrings> takeLongStrings(StringRef text, size_t minLength) {
  if (text.size() < minLength)
    return std::nullopt;
  LongStrings out;
  size_t at = 0;
  while (true) {
    size_t open = text.find('"', at);
    if (open == StringRef::npos)
      break;
    // Outside strings, a quote opens one: find its end (short ones too).
    std::string value;
    std::optional<size_t> close = parseLiteral(text, open, value);
    if (!close)
      return std::nullopt;
    if (*close - open - 1 < minLength) {
      // A string the client wrote that reads as a placeholder (however
      // escaped) would be taken for one.
      if (StringRef(value).starts_with(kPlaceholderValue))
        return std::nullopt;
      out.rest.append(text.data() + at, *close + 1 - at);
    } else {
      out.rest.append(text.data() + at, open - at);
      out.rest += "\"";
      out.rest += kPlaceholder;
      out.rest += std::to_string(out.values.size());
      out.rest += "\"";
      out.values.push_back(std::move(value));
    }
    at = *close + 1;
  }
  if (out.values.empty())
    return std::nullopt;
  out.rest.append(text.data() + at, text.size() - at);
  return out;
}

json::Value *valueAt(json::Value &root, ArrayRef<StringRef> path) {
  json::Value *at = &root;
  for (StringRef key : path) {
    json::Object *o = at->getAsObject();
    at = o ? o->get(key) : nullptr;
    if (!at)
      return nullptr;
  }
  return at;
}

Expected<json::Value> parseMessage(StringRef text, LongStrings taken,
                                   ArrayRef<StringRef> path,
                                   std::optional<std::string> &aside) {
  aside.reset();
  Expected<json::Value> v = json::parse(taken.rest);
  if (!v) {
    consumeError(v.takeError());
    return json::parse(text); // its error, or what it makes of it
  }
  // The value at `path`, if it is a placeholder: moved aside, not restored
  // (no path: nothing, not even a message that is one long string).
  json::Value *at = path.empty() ? nullptr : valueAt(*v, path);
  size_t restored = 0;
  bool bad = false;
  if (std::optional<size_t> i =
          at ? placeholderIndex(*at, taken.values.size(), bad) : std::nullopt) {
    aside = std::move(taken.values[*i]);
    *at = json::Value("");
    ++restored;
  }
  if (restore(*v, taken.values, restored) && restored == taken.values.size())
    return v;
  aside.reset();
  return json::parse(text);
}

Expected<json::Value> parseMessage(StringRef text, LongStrings taken) {
  std::optional<std::string> none; // no path: nothing is set aside
  return parseMessage(text, std::move(taken), {}, none);
}

Expected<json::Value> parseMessage(StringRef text, size_t minLength) {
  if (std::optional<LongStrings> taken = takeLongStrings(text, minLength))
    return parseMessage(text, std::move(*taken));
  return json::parse(text);
}

} // namespace tosa_lsp
