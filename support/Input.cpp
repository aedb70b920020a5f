//===- Input.cpp - reading and validating input files ---------------------===//

#include "Input.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace tosa_lsp {

std::string displayName(const std::string &path) {
  return path == "-" ? "<stdin>" : path;
}

std::optional<std::string> readInput(const std::string &path,
                                     std::string &error) {
  if (path != "-") {
    llvm::sys::fs::file_status status;
    if (std::error_code ec = llvm::sys::fs::status(path, status)) {
      error = path + ": cannot open file: " + ec.message();
      return std::nullopt;
    }
    if (llvm::sys::fs::is_directory(status)) {
      error = path + ": is a directory, expected an .mlir file";
      return std::nullopt;
    }
    if (!llvm::sys::fs::is_regular_file(status) &&
        status.type() != llvm::sys::fs::file_type::fifo_file &&
        status.type() != llvm::sys::fs::file_type::character_file) {
      error = path + ": not a regular file";
      return std::nullopt;
    }
  }
  auto buf = path == "-" ? llvm::MemoryBuffer::getSTDIN()
                         : llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                       /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = displayName(path) + ": cannot read file: " + buf.getError().message();
    return std::nullopt;
  }
  llvm::StringRef data = (*buf)->getBuffer();
  if (data.empty()) {
    error = displayName(path) + ": file is empty, expected MLIR text";
    return std::nullopt;
  }
  size_t nul = data.find('\0');
  if (nul != llvm::StringRef::npos) {
    error = displayName(path) + ": binary data (NUL byte at offset " +
            std::to_string(nul) + "), expected MLIR text";
    return std::nullopt;
  }
  const llvm::UTF8 *begin = reinterpret_cast<const llvm::UTF8 *>(data.data());
  const llvm::UTF8 *bad = begin;
  if (!llvm::isLegalUTF8String(&bad, begin + data.size())) {
    error = displayName(path) + ": not valid UTF-8 (invalid byte at offset " +
            std::to_string(bad - begin) + ")";
    return std::nullopt;
  }
  return data.str();
}

std::optional<std::string> findConfigFile(const std::string &file) {
  llvm::SmallString<256> dir;
  if (file == "-") {
    llvm::sys::fs::current_path(dir);
  } else {
    dir = file;
    llvm::sys::fs::make_absolute(dir);
    llvm::sys::path::remove_filename(dir);
  }
  while (!dir.empty()) {
    llvm::SmallString<256> candidate = dir;
    llvm::sys::path::append(candidate, ".tosa-lsp.json");
    if (llvm::sys::fs::exists(candidate))
      return std::string(candidate);
    llvm::StringRef parent = llvm::sys::path::parent_path(dir);
    if (parent == dir)
      break;
    dir = parent;
  }
  return std::nullopt;
}

std::optional<Config> loadConfig(const std::string &explicitPath,
                                 const std::string &forFile,
                                 std::string &error) {
  std::optional<std::string> path =
      explicitPath.empty() ? findConfigFile(forFile)
                           : std::optional<std::string>(explicitPath);
  if (!path)
    return Config();
  auto buf = llvm::MemoryBuffer::getFile(*path);
  if (!buf) {
    error = *path + ": cannot read configuration: " + buf.getError().message();
    return std::nullopt;
  }
  std::string why;
  std::optional<Config> config = parseConfig((*buf)->getBuffer().str(), why);
  if (!config) {
    error = *path + ": " + why;
    return std::nullopt;
  }
  // A repository must not be able to make the server replace files: only
  // the editor settings (the user's own) may allow it.
  if (config->compile.overwrite) {
    error = *path + ": compile.overwrite can only be set in the editor "
                    "settings, not in a project's .tosa-lsp.json";
    return std::nullopt;
  }
  config->source = *path;
  if (!config->compile.outputDir.empty()) {
    llvm::SmallString<256> root(*path);
    llvm::sys::fs::make_absolute(root);
    llvm::sys::path::remove_filename(root);
    config->compile.outputDirRoot = std::string(root);
  }
  return config;
}

} // namespace tosa_lsp
