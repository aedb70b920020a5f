//===- MessageJSON.h - parsing a JSON-RPC message with a document in it ---===//
//
// A didOpen carries the whole document as one JSON string (20 MB at 200k
// lines), and llvm::json::parse reads strings at ~250 MB/s: ~19 ms of a
// 50k-line open, ~80 ms at 200k, before any analysis. Long string
// literals are taken out of the message first and unescaped here (a copy
// of each run between escapes), and the rest, small, goes to
// llvm::json::parse.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_MESSAGEJSON_H
#define TOSA_LSP_SERVER_MESSAGEJSON_H

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

/// `text`'s string literals of at least `minLength` bytes (as written)
/// replaced by placeholders, and their values. std::nullopt when there
/// are none, or when one is not valid JSON or not UTF-8 (the caller parses
/// the message as it is, and llvm::json reports what is wrong).
struct LongStrings {
  std::string rest; // the message with placeholders
  std::vector<std::string> values;
};
std::optional<LongStrings> takeLongStrings(llvm::StringRef text,
                                           size_t minLength);

/// Long strings are those of at least this many bytes.
constexpr size_t kLongString = 1 << 16;

/// The value of `text` as llvm::json::parse gives it, faster when it has
/// long strings: they are parsed by takeLongStrings and put back.
llvm::Expected<llvm::json::Value> parseMessage(llvm::StringRef text,
                                               size_t minLength = kLongString);
/// The same from takeLongStrings' result for `text`.
llvm::Expected<llvm::json::Value> parseMessage(llvm::StringRef text,
                                               LongStrings taken);

/// The value at `path` (object keys from `root`), or null.
llvm::json::Value *valueAt(llvm::json::Value &root,
                           llvm::ArrayRef<llvm::StringRef> path);

/// The same, with the value at `path` (object keys from the root), when it
/// is one of the long strings, moved into `aside` and left empty in the
/// result: a didOpen's text goes to its document without the copy that
/// reading it out of a json::Value makes (~10 ms and 20 MB of fresh pages
/// at 200k lines). `aside` stays empty otherwise.
llvm::Expected<llvm::json::Value>
parseMessage(llvm::StringRef text, LongStrings taken,
             llvm::ArrayRef<llvm::StringRef> path,
             std::optional<std::string> &aside);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_MESSAGEJSON_H
