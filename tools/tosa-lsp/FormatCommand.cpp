//===- FormatCommand.cpp - `format`: indentation and spacing --------------===//

#include "FormatCommand.h"

#include "CommandSupport.h"

#include "Analysis.h"
#include "Format.h"
#include "LineIndex.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace tosa_lsp::cli {

namespace {

/// Writes `text` to `path` through a temporary file beside it, so that a
/// failure leaves the original whole.
bool writeBack(const std::string &path, const std::string &text,
               raw_ostream &err) {
  SmallString<128> tmp;
  int fd = -1;
  std::string model = (path + ".%%%%%%.tmp");
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, tmp)) {
    printError(err, "cannot write " + path + ": " + ec.message());
    return false;
  }
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      sys::fs::remove(tmp);
      printError(err, "cannot write " + path + ": " + os.error().message());
      os.clear_error();
      return false;
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    printError(err, "cannot write " + path + ": " + ec.message());
    return false;
  }
  return true;
}

} // namespace

int runFormat(const FormatOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<std::string> path = oneFile("format", opts.files, err, rc);
  if (!path)
    return rc;
  unsigned first = 0, last = 0;
  if (!opts.lines.empty()) {
    auto [a, b] = StringRef(opts.lines).split(':');
    if (a.getAsInteger(10, first) || b.getAsInteger(10, last) || !first ||
        last < first)
      return usageError(err, "--lines expects FIRST:LAST with 1 <= FIRST <= "
                             "LAST, got '" +
                                 opts.lines + "'");
  }
  if (opts.inPlace && *path == "-")
    return usageError(err, "--in-place needs a file, not standard input");
  std::optional<std::string> text = readOrReport(*path, err);
  if (!text)
    return 2;
  Analyzer analyzer;
  analyzer.setCollectIndex(false);
  FileAnalysis fa = analyzer.analyze(*text, *path, Config());
  LineIndex lines(*text);
  FormatResult r = formatText(*text, lines, fa, first, last);
  if (!r.error.empty()) {
    printError(err, *path + ": " + r.error);
    return 1;
  }
  if (opts.check) {
    for (const TextEditData &e : r.edits)
      err << *path << ":" << e.range.begin.line
          << ":1: warning: not formatted\n";
    return r.edits.empty() ? 0 : 1;
  }
  std::string formatted = applyEdits(*text, r.edits);
  if (opts.inPlace)
    return r.edits.empty() || writeBack(*path, formatted, err) ? 0 : 1;
  out << formatted;
  return 0;
}

} // namespace tosa_lsp::cli
