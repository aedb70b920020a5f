//===- Bytecode.h - MLIR bytecode <-> text ----------------------*- C++ -*-===//
//
// What `mlir/convertToBytecode` and `mlir/convertFromBytecode` answer
// (vscode-mlir's `.mlirbc` editor), and the Vim/Neovim plugins' read and
// write of `.mlirbc` files: text printed with locations so that a round trip
// keeps them, dialect resources carried both ways. Bad input (not bytecode,
// truncated, a version this MLIR cannot read) is an error with MLIR's reason.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_BYTECODE_H
#define TOSA_LSP_ANALYSIS_BYTECODE_H

#include <string>
#include <string_view>

namespace tosa_lsp {

struct BytecodeConversion {
  std::string output; // text, or bytecode (raw bytes, not base64)
  std::string error;  // set on failure
};

/// Whether `bytes` starts with MLIR bytecode's magic number.
bool isBytecode(std::string_view bytes);

/// The text of a bytecode file.
BytecodeConversion textFromBytecode(std::string_view bytes);

/// The bytecode of a text: its one top-level op, or its top-level ops in a
/// `builtin.module` (which must then read back). A file split with
/// `// -----`, or one with errors, is refused.
BytecodeConversion bytecodeFromText(std::string_view text,
                                    std::string_view name);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_BYTECODE_H
