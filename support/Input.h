//===- Input.h - reading and validating input files -------------*- C++ -*-===//

#ifndef TOSA_LSP_SUPPORT_INPUT_H
#define TOSA_LSP_SUPPORT_INPUT_H

#include "Config.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace tosa_lsp {

/// Inputs larger than this are refused with a message (a 200k-line model is
/// ~15 MiB); configuration files are small.
constexpr uint64_t kMaxInputBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxConfigBytes = uint64_t(1) << 20;

/// Reads `path` ("-" for stdin) and checks it is MLIR text: exists, is a
/// regular file (no devices or FIFOs) of at most kMaxInputBytes, not empty,
/// no NUL bytes, valid UTF-8. On failure, an error with a one-line reason
/// (no CLI prefix).
llvm::Expected<std::string> readInput(const std::string &path);

/// The offset of the first byte of `data` that does not start a valid
/// UTF-8 sequence (as llvm::isLegalUTF8String judges), or data.size().
size_t firstInvalidUTF8(llvm::StringRef data);

/// The name diagnostics use for `path` (mlir-opt says "<stdin>" for "-").
std::string displayName(const std::string &path);

/// Loads `.tosa-lsp.json` from `explicitPath`, or searched upward from the
/// directory of `forFile`; defaults when none is found. An error (one line,
/// naming the file) when a file exists but is invalid.
llvm::Expected<Config> loadConfig(const std::string &explicitPath,
                                  const std::string &forFile);

/// The `.tosa-lsp.json` that applies to `file` (searched upward), if any.
std::optional<std::string> findConfigFile(const std::string &file);

/// Project configurations for a server: each lookup finds the
/// `.tosa-lsp.json` that applies (a stat per directory level, so a file
/// created or removed is noticed at once) and reads and parses it only when
/// it is new or its modification time, size or inode changed.
class ConfigCache {
public:
  struct Result {
    Config config;     // defaults when there is no file or it is invalid
    std::string error; // set when the file is invalid
    bool loaded;       // this lookup read the file (report errors once)
  };
  Result get(const std::string &forFile);
  /// Forgets every parsed file (didChangeWatchedFiles, didSave of one).
  void invalidate();
  /// Number of files read so far.
  unsigned loads() const;

private:
  struct Entry {
    int64_t mtimeNs = 0;
    uint64_t size = 0, inode = 0;
    Config config;
    std::string error;
  };
  mutable std::mutex mu;
  std::map<std::string, Entry> files;
  unsigned loadCount = 0;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SUPPORT_INPUT_H
