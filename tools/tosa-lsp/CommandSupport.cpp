//===- CommandSupport.cpp - what every command shares ---------------------===//

#include "CommandSupport.h"

#include "Allocator.h"
#include "Choices.h"
#include "Errors.h"
#include "Input.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>

using namespace llvm;

namespace tosa_lsp::cli {

std::string errorLine(const std::string &message) {
  return "tosa-lsp: error: " + message;
}

void printError(raw_ostream &err, const std::string &message) {
  err << errorLine(message) << "\n";
}

/// The option a library error is about (Errors.h), as a hint to add.
static std::string optionHint(const ErrorInfoBase &e) {
  std::optional<ErrorTopic> topic = topicOf(e);
  if (!topic)
    return "";
  switch (*topic) {
  case ErrorTopic::Function:
    return " (--function)";
  case ErrorTopic::Inputs:
    return " (--inputs)";
  case ErrorTopic::Shapes:
    return " (--shape)";
  case ErrorTopic::Output:
    return " (-o)";
  case ErrorTopic::OutputExists:
    return " (--force replaces it)";
  }
  return "";
}

std::vector<std::string> errorLines(Error e) {
  std::vector<std::string> lines;
  handleAllErrors(
      std::move(e),
      [&](const SourceErrors &s) {
        for (const SourceDiagnostic &d : s.diagnostics())
          lines.push_back(d.str());
      },
      [&](const ErrorInfoBase &other) {
        lines.push_back(errorLine(other.message() + optionHint(other)));
      });
  return lines;
}

void printError(raw_ostream &err, Error e) {
  for (const std::string &line : errorLines(std::move(e)))
    err << line << "\n";
}

int usageError(raw_ostream &err, const std::string &message) {
  printError(err, message);
  err << "run 'tosa-lsp --help' for usage\n";
  return 2;
}

std::optional<std::string>
formatOrReport(const std::string &format,
               const std::vector<std::string> &allowed, raw_ostream &err,
               int &rc) {
  if (format.empty())
    return allowed.front();
  if (llvm::is_contained(allowed, format))
    return format;
  rc = usageError(err, unknownChoiceMessage("format", format, allowed));
  return std::nullopt;
}

std::optional<std::string>
functionOrReport(const std::optional<std::string> &function, raw_ostream &err,
                 int &rc) {
  if (!function)
    return std::string();
  StringRef name = *function;
  name.consume_front("@");
  if (name.empty()) {
    rc = usageError(err, "--function needs a function name");
    return std::nullopt;
  }
  return name.str();
}

std::optional<std::string> oneFile(const char *command,
                                   const std::vector<std::string> &files,
                                   raw_ostream &err, int &rc) {
  if (files.size() == 1)
    return files[0];
  rc = usageError(err, std::string(command) +
                           (files.empty() ? ": expected a FILE"
                                          : ": expected one FILE, got " +
                                                std::to_string(files.size())));
  return std::nullopt;
}

std::optional<std::string> readOrReport(const std::string &path,
                                        raw_ostream &err) {
  Expected<std::string> text = readInput(path);
  if (!text) {
    printError(err, text.takeError());
    return std::nullopt;
  }
  // `check` on 200k lines: 0.75 s and 4.9k faults with huge pages, 1.45 s
  // and 60k without (support/Allocator.h).
  if (text->size() >= kHugePagesFromBytes && hugePagesPay())
    useHugePages();
  return std::move(*text);
}

std::optional<std::pair<std::string, Config>>
readWithConfig(const std::string &path, const std::string &configPath,
               raw_ostream &err) {
  std::optional<std::string> text = readOrReport(path, err);
  if (!text)
    return std::nullopt;
  Expected<Config> config = loadConfig(configPath, path);
  if (!config) {
    printError(err, config.takeError());
    return std::nullopt;
  }
  return std::make_pair(std::move(*text), std::move(*config));
}

std::optional<FunctionAndFormat>
functionAndFormatOrReport(const std::optional<std::string> &function,
                          const std::string &format, raw_ostream &err,
                          int &rc) {
  std::optional<std::string> f = functionOrReport(function, err, rc);
  if (!f)
    return std::nullopt;
  std::optional<std::string> fmt =
      formatOrReport(format, {"text", "json"}, err, rc);
  if (!fmt)
    return std::nullopt;
  return FunctionAndFormat{std::move(*f), std::move(*fmt)};
}

/// Splits "file.mlir:12:8" into path and position, preferring an existing
/// file of the full name (paths may contain ':').
void splitPosition(const std::string &arg, std::string &path, Position &pos) {
  path = arg;
  pos = {};
  auto isNum = [](const std::string &s) {
    return !s.empty() && s.size() < 10 &&
           s.find_first_not_of("0123456789") == std::string::npos;
  };
  size_t c1 = arg.rfind(':');
  if (c1 == std::string::npos || !isNum(arg.substr(c1 + 1)))
    return;
  std::string rest = arg.substr(0, c1);
  unsigned last = std::stoul(arg.substr(c1 + 1));
  size_t c2 = rest.rfind(':');
  if (c2 != std::string::npos && isNum(rest.substr(c2 + 1))) {
    path = rest.substr(0, c2);
    pos.line = std::stoul(rest.substr(c2 + 1));
    pos.column = last;
  } else {
    path = rest;
    pos.line = last;
  }
}

} // namespace tosa_lsp::cli
