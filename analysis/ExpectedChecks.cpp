//===- ExpectedChecks.cpp - `// expected-error @below {{...}}` ------------===//

#include "ExpectedChecks.h"

#include "LineIndex.h"

namespace tosa_lsp {

namespace {

void addCheck(const char *severity, std::string_view message, Position at,
              std::string_view text, const LineIndex &lines,
              std::vector<TextEditData> &edits) {
  if (!at.valid() || at.line > lines.lineCount())
    return;
  // A note that prints the op is MLIR's context, not a diagnostic to check.
  if (message.rfind("see current operation: ", 0) == 0)
    return;
  message = message.substr(0, message.find('\n'));
  size_t start = lines.lineStart(at.line - 1);
  size_t indent = 0;
  while (start + indent < text.size() && text[start + indent] == ' ')
    ++indent;
  std::string line(indent, ' ');
  line += "// expected-";
  line += severity;
  line += " @below {{";
  line += message;
  line += "}}\n";
  edits.push_back({{{at.line, 1}, {at.line, 1}}, std::move(line)});
}

} // namespace

std::vector<TextEditData> expectedChecks(const Diagnostic &d,
                                         std::string_view text,
                                         const LineIndex &lines) {
  std::vector<TextEditData> edits;
  const char *severity = d.severity == Severity::Error     ? "error"
                         : d.severity == Severity::Warning ? "warning"
                                                           : nullptr;
  if (!severity)
    return edits;
  addCheck(severity, d.message.str(), d.range.begin, text, lines, edits);
  for (const DiagNote &n : d.notes)
    addCheck("note", n.message, n.range.begin, text, lines, edits);
  return edits;
}

} // namespace tosa_lsp
