//===- Convert.h - analysis positions <-> LSP positions ---------*- C++ -*-===//
//
// The analysis speaks 1-based lines and byte columns (like MLIR); LSP speaks
// 0-based lines and UTF-16 code units. All conversion happens here.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_CONVERT_H
#define TOSA_LSP_SERVER_CONVERT_H

#include "Analysis.h"
#include "LineIndex.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/LSP/Protocol.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tosa_lsp {

/// Line starts of one text version, for position conversion.
class LineTable {
public:
  explicit LineTable(const std::string &text);
  /// With `text`'s line starts already computed (FileAnalysis::lineIndex):
  /// shared, not built again; built when null or of another text.
  LineTable(const std::string &text, std::shared_ptr<const LineIndex> lines);

  llvm::lsp::Position toLsp(Position p) const;
  llvm::lsp::Range toLsp(Range r) const;
  /// std::nullopt when the line does not exist; a character past the end of
  /// the line is clamped to it.
  std::optional<Position> fromLsp(llvm::lsp::Position p) const;
  /// A range whose end lies past the last line ends at the end of the text.
  std::optional<Range> fromLsp(const llvm::lsp::Range &r) const;
  /// Byte offset of an LSP position (a character past the end of the line
  /// is the end of the line); std::nullopt when the line does not exist.
  std::optional<size_t> offset(llvm::lsp::Position p) const;
  /// Byte offsets (our 1-based positions).
  const LineIndex &index() const { return *lines; }

private:
  const std::string &text;
  std::shared_ptr<const LineIndex> lines; // byte offsets; + UTF-16 columns
  std::string_view line(unsigned index0) const;
};

/// `text` after `changes` (in order), in `out`: one copy of the text for
/// the first ranged change, the others in place. Returns an error message
/// for a range outside the text (then `out` is unspecified). `lines`, when
/// given, are `text`'s line starts (a snapshot's; ignored when they are of
/// a text of another size). With `loneCR`, a `\r` not followed by `\n`
/// ends a line, as for LSP clients (`lines` must then count it so too).
std::optional<std::string>
applyChanges(const std::string &text,
             llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent> changes,
             std::string &out, const LineIndex *lines = nullptr,
             bool loneCR = false);

/// Whether `text` has a `\r` not followed by `\n`. LSP counts it as a line
/// break (classic Mac files); MLIR counts lines by `\n` only.
bool hasLoneCR(std::string_view text);
/// `text` with each lone `\r` made `\n`: the same length, so byte offsets
/// hold, and MLIR's line numbers become the client's.
std::string loneCRsAsLF(std::string_view text);
/// How `text`'s first line ends: "\n" (also when it has one line),
/// "\r\n" or "\r".
std::string_view firstLineBreak(std::string_view text);

/// Number of UTF-16 code units in UTF-8 `s`.
size_t utf16Length(std::string_view s);
/// Whether every byte of `s` is ASCII (then a byte column is a UTF-16 one).
bool isAscii(std::string_view s);

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_CONVERT_H
