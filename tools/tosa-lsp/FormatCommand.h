//===- FormatCommand.h - `format`: indentation and spacing ------*- C++ -*-===//
//
// The server's document formatting from the command line (analysis/
// Format.h): FILE formatted on stdout, or written back with --in-place, or
// only checked (--check, exit 1 when it would change). Refuses, changing
// nothing, when a section of FILE does not parse. See CommandSupport.h for
// the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_TOOLS_FORMATCOMMAND_H
#define TOSA_LSP_TOOLS_FORMATCOMMAND_H

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tosa_lsp::cli {

struct FormatOptions {
  std::vector<std::string> files; // exactly one FILE
  std::string lines;              // "FIRST:LAST" (1-based), "" for all
  bool inPlace = false;
  bool check = false;
};

int runFormat(const FormatOptions &opts, llvm::raw_ostream &out,
              llvm::raw_ostream &err);

} // namespace tosa_lsp::cli

#endif // TOSA_LSP_TOOLS_FORMATCOMMAND_H
