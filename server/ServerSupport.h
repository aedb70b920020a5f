//===- ServerSupport.h - what TosaServer's files share ----------*- C++ -*-===//
//
// Private to server/: TosaServer's feature methods live in several files
// (TosaServer.cpp, CodeActionList.cpp, LongWork.cpp, EditingFeatures.cpp);
// these are the helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_SERVERSUPPORT_H
#define TOSA_LSP_SERVER_SERVERSUPPORT_H

#include "Snapshot.h"
#include "TextEdit.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LSP/Protocol.h"

#include <string_view>
#include <vector>

namespace tosa_lsp {

/// The analysis' edits in the snapshot's LSP positions; new lines written as
/// the document's first line ends (`\r\n`, `\r`), so an applied fix never
/// mixes line endings.
std::vector<llvm::lsp::TextEdit>
toLspEdits(const Snapshot &s, const std::vector<TextEditData> &edits,
           std::string_view newline);

/// An InvalidParams error.
llvm::Error invalidParams(const llvm::Twine &message);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_SERVERSUPPORT_H
