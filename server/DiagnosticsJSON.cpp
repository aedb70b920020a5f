//===- DiagnosticsJSON.cpp - diagnostics as LSP JSON, streamed ------------===//

#include "DiagnosticsJSON.h"

#include "TosaServer.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>

using namespace llvm;

namespace tosa_lsp {

namespace {

/// JSON string literals of the messages and codes of one publish: 10^5
/// diagnostics share a few thousand texts, and json::OStream escapes a
/// string a character at a time.
class QuotedStrings {
public:
  StringRef operator()(StringRef text) {
    // Most texts need no escape: quoted as they are, not remembered (a
    // many-function file's messages are mostly distinct).
    if (llvm::all_of(text, [](char c) {
          auto u = static_cast<unsigned char>(c);
          return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
        })) {
      plain.assign(1, '"');
      plain.append(text.data(), text.size());
      plain += '"';
      return plain;
    }
    auto [it, fresh] = quoted.try_emplace(text);
    if (fresh) {
      raw_string_ostream out(it->second);
      json::OStream(out).value(text);
    }
    return it->second;
  }

private:
  StringMap<std::string> quoted;
  std::string plain; // valid until the next call
};

/// One diagnostic, streamed (keys in the order json::Value prints them,
/// so transcripts read the same either way).
void writeDiagnostic(json::OStream &os, const Snapshot &s, const Diagnostic &d,
                     QuotedStrings *quoted = nullptr) {
  auto string = [&](const char *key, const std::string &text) {
    if (!quoted)
      return os.attribute(key, text);
    os.attributeBegin(key);
    os.rawValue((*quoted)(text));
    os.attributeEnd();
  };
  auto range = [&](const Range &r) {
    lsp::Range lr = s.lines.toLsp(r);
    auto pos = [&](const char *key, const lsp::Position &p) {
      os.attributeObject(key, [&] {
        os.attribute("character", p.character);
        os.attribute("line", p.line);
      });
    };
    os.attributeObject("range", [&] {
      pos("end", lr.end);
      pos("start", lr.start);
    });
  };
  os.object([&] {
    string("code", d.code);
    string("message", d.message);
    range(d.range);
    // Every note, as the analysis keeps them (also MLIR's "see current
    // operation": the generic form shows what a custom syntax hides).
    if (!d.notes.empty())
      os.attributeArray("relatedInformation", [&] {
        for (const DiagNote &n : d.notes) {
          os.object([&] {
            os.attributeObject("location", [&] {
              range(n.range.begin.valid() ? n.range : d.range);
              os.attribute("uri", s.uri);
            });
            os.attribute("message", n.message);
          });
        }
      });
    os.attribute("severity", int(TosaServer::severity(d)));
    os.attribute("source", "tosa-lsp");
  });
}

/// The same, compact, appended to `out` (the keys in the same order).
class CompactWriter {
public:
  CompactWriter(const Snapshot &s, std::string &out)
      : s(s), out(out), uri(quoted(s.uri).str()) {}

  void diagnostic(const Diagnostic &d) {
    out += "{\"code\":";
    out += quoted(d.code.str());
    out += ",\"message\":";
    out += quoted(d.message.str());
    out += ',';
    range(d.range);
    if (!d.notes.empty()) {
      out += ",\"relatedInformation\":[";
      for (size_t i = 0; i < d.notes.size(); ++i) {
        const DiagNote &n = d.notes[i];
        out += i ? ",{\"location\":{" : "{\"location\":{";
        range(n.range.begin.valid() ? n.range : d.range);
        out += ",\"uri\":";
        out += uri;
        out += "},\"message\":";
        out += quoted(n.message);
        out += '}';
      }
      out += ']';
    }
    out += ",\"severity\":";
    number(int(TosaServer::severity(d)));
    out += ",\"source\":\"tosa-lsp\"}";
  }

  const std::string &quotedUri() const { return uri; }

private:
  void number(int64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    (void)ec;
    out.append(buf, end);
  }
  void position(const char *key, const lsp::Position &p) {
    out += key;
    out += "{\"character\":";
    number(p.character);
    out += ",\"line\":";
    number(p.line);
    out += '}';
  }
  void range(const Range &r) {
    lsp::Range lr = s.lines.toLsp(r);
    position("\"range\":{\"end\":", lr.end);
    position(",\"start\":", lr.start);
    out += '}';
  }

  const Snapshot &s;
  std::string &out;
  QuotedStrings quoted;
  std::string uri;
};

} // namespace

json::Value diagnosticJSON(const Snapshot &s, const Diagnostic &d) {
  std::string text;
  raw_string_ostream out(text);
  {
    json::OStream os(out);
    writeDiagnostic(os, s, d);
  }
  return cantFail(json::parse(text));
}

std::string publishDiagnosticsMessage(const Snapshot &s,
                                      const std::vector<Diagnostic> &extra,
                                      bool pretty) {
  std::string text;
  if (!pretty) {
    CompactWriter w(s, text);
    // ~250 bytes a diagnostic: one allocation for a 10 MB publish, not a
    // doubling string copied and faulted in again at each step.
    size_t count = extra.size();
    for (const Diagnostic &d : s.analysis.diagnostics)
      count += TosaServer::isPublished(s.config, d);
    text.reserve(256 * count + 256);
    text += "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/"
            "publishDiagnostics\",\"params\":{\"diagnostics\":[";
    bool first = true;
    for (const std::vector<Diagnostic> *list :
         {&s.analysis.diagnostics, &extra})
      for (const Diagnostic &d : *list) {
        if (!TosaServer::isPublished(s.config, d))
          continue;
        if (!first)
          text += ',';
        first = false;
        w.diagnostic(d);
      }
    text += "],\"uri\":";
    text += w.quotedUri();
    text += ",\"version\":";
    text += std::to_string(s.version);
    text += "}}";
    return text;
  }
  raw_string_ostream out(text);
  // Buffered: json::OStream writes strings a character at a time, and an
  // unbuffered string stream appends each one to `text` on its own.
  out.SetBufferSize(1 << 16);
  json::OStream os(out, 2);
  os.object([&] {
    os.attribute("jsonrpc", "2.0");
    os.attribute("method", "textDocument/publishDiagnostics");
    os.attributeObject("params", [&] {
      os.attributeArray("diagnostics", [&] {
        QuotedStrings quoted;
        for (const std::vector<Diagnostic> *list :
             {&s.analysis.diagnostics, &extra})
          for (const Diagnostic &d : *list)
            if (TosaServer::isPublished(s.config, d))
              writeDiagnostic(os, s, d, &quoted);
      });
      os.attribute("uri", s.uri);
      os.attribute("version", s.version);
    });
  });
  out << "\n"; // As JSONTransport's pretty output ends.
  out.flush();
  return text;
}

std::string cleanDiagnosticsMessage(const std::string &uri, int64_t version,
                                    bool pretty) {
  json::Value message =
      json::Object{{"jsonrpc", "2.0"},
                   {"method", "textDocument/publishDiagnostics"},
                   {"params", json::Object{{"diagnostics", json::Array()},
                                           {"uri", uri},
                                           {"version", version}}}};
  return pretty ? llvm::formatv("{0:2}\n", message).str()
                : llvm::formatv("{0}", message).str();
}

} // namespace tosa_lsp
