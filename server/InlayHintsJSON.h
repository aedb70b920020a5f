//===- InlayHintsJSON.h - an inlay hint reply as text -----------*- C++ -*-===//
//
// An inlay hint request is answered for every screen an editor shows: the
// reply is written as text, not built as a json::Value tree (a json::Object
// allocates 64 buckets on its first key: ~8 KB a hint, ~170 page faults
// for a screen of a 200k-line file, most of such a request's time).
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_INLAYHINTSJSON_H
#define TOSA_LSP_SERVER_INLAYHINTSJSON_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Protocol.h"

#include <string>
#include <vector>

namespace tosa_lsp {

/// The JSON-RPC reply to request `id` with `hints`, as JSONTransport would
/// print it (keys sorted; `pretty`: indented, with a final newline, as the
/// lit transcripts read it).
std::string
inlayHintsReplyMessage(const llvm::json::Value &id,
                       const std::vector<llvm::lsp::InlayHint> &hints,
                       bool pretty);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_INLAYHINTSJSON_H
