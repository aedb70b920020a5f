//===- Input.cpp - reading and validating input files ---------------------===//

#include "Input.h"

#include "Errors.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace tosa_lsp {

std::string displayName(const std::string &path) {
  return path == "-" ? "<stdin>" : path;
}

static llvm::Error fail(const std::string &message) {
  return makeError(message);
}

/// Reads a regular file (or stdin for "-") of at most `cap` bytes. Devices
/// (/dev/zero), FIFOs and directories are refused before any read: they
/// never end or have no size to check.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(const std::string &path, uint64_t cap, llvm::StringRef what) {
  if (path == "-") {
    // A pipe has no size: read in chunks and stop at the cap.
    std::string data;
    char chunk[1 << 16];
    for (;;) {
      size_t n = std::fread(chunk, 1, sizeof(chunk), stdin);
      data.append(chunk, n);
      if (data.size() > cap)
        return fail("<stdin>: input larger than " + std::to_string(cap >> 20) +
                    " MiB; refused");
      if (n < sizeof(chunk))
        break;
    }
    return llvm::MemoryBuffer::getMemBufferCopy(data, "<stdin>");
  }
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return fail(path + ": cannot open file: " + ec.message());
  if (llvm::sys::fs::is_directory(status))
    return fail(path + ": is a directory, expected " + what.str());
  if (!llvm::sys::fs::is_regular_file(status))
    return fail(path + ": not a regular file (devices, FIFOs and sockets are " +
                "not read), expected " + what.str());
  if (status.getSize() > cap)
    return fail(path + ": " + what.str() + " of " +
                std::to_string(status.getSize() >> 20) +
                " MiB is larger than " + "the limit of " +
                std::to_string(cap >> 20) + " MiB; refused");
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return fail(path + ": cannot read " + what.str() + ": " +
                buf.getError().message());
  // The file may have grown between the check and the read.
  if ((*buf)->getBufferSize() > cap)
    return fail(path + ": " + what.str() + " larger than " +
                std::to_string(cap >> 20) + " MiB; refused");
  return std::move(*buf);
}

llvm::Expected<std::string> readInput(const std::string &path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buf =
      readRegularFile(path, kMaxInputBytes, "an .mlir file");
  if (!buf)
    return buf.takeError();
  llvm::StringRef data = (*buf)->getBuffer();
  if (data.empty())
    return fail(displayName(path) + ": file is empty, expected MLIR text");
  size_t nul = data.find('\0');
  if (nul != llvm::StringRef::npos)
    return fail(displayName(path) + ": binary data (NUL byte at offset " +
                std::to_string(nul) + "), expected MLIR text");
  size_t bad = firstInvalidUTF8(data);
  if (bad != data.size())
    return fail(displayName(path) +
                ": not valid UTF-8 (invalid byte at offset " +
                std::to_string(bad) + ")");
  return data.str();
}

size_t firstInvalidUTF8(llvm::StringRef data) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(data.data());
  const llvm::UTF8 *p = begin, *end = begin + data.size();
  while (p != end) {
    // MLIR files are ASCII but for comments and strings: skip 8 bytes at a
    // time while no high bit is set (llvm::isLegalUTF8String goes byte by
    // byte: 18 of the 22 ms spent reading a 4.7 MB file).
    uint64_t word;
    while (end - p >= 8 &&
           (std::memcpy(&word, p, 8), !(word & 0x8080808080808080ULL)))
      p += 8;
    while (p != end && *p < 0x80)
      ++p;
    if (p == end)
      break;
    unsigned n = llvm::getNumBytesForUTF8(*p);
    if (n > size_t(end - p) || !llvm::isLegalUTF8Sequence(p, p + n))
      return p - begin;
    p += n;
  }
  return data.size();
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

llvm::Expected<Config> loadConfig(const std::string &explicitPath,
                                  const std::string &forFile) {
  std::optional<std::string> path =
      explicitPath.empty() ? findConfigFile(forFile)
                           : std::optional<std::string>(explicitPath);
  if (!path)
    return Config();
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buf =
      readRegularFile(*path, kMaxConfigBytes, "a configuration file");
  if (!buf)
    return buf.takeError();
  llvm::Expected<Config> config = parseConfig((*buf)->getBuffer().str());
  if (!config)
    return fail(*path + ": " + llvm::toString(config.takeError()));
  // A repository must not be able to make the server replace files: only
  // the editor settings (the user's own) may allow it.
  if (config->compile.overwrite)
    return fail(*path + ": compile.overwrite can only be set in the editor "
                        "settings, not in a project's .tosa-lsp.json");
  config->source = *path;
  if (!config->compile.outputDir.empty()) {
    llvm::SmallString<256> root(*path);
    llvm::sys::fs::make_absolute(root);
    llvm::sys::path::remove_filename(root);
    config->compile.outputDirRoot = std::string(root);
  }
  return std::move(*config);
}

ConfigCache::Result ConfigCache::get(const std::string &forFile) {
  std::optional<std::string> path = findConfigFile(forFile);
  if (!path)
    return {Config(), "", false};
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(*path, st)) {
    llvm::Expected<Config> c = loadConfig(*path, forFile);
    if (!c) // reports the reason
      return {Config(), llvm::toString(c.takeError()), true};
    return {*c, "", true};
  }
  int64_t mtime = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      st.getLastModificationTime().time_since_epoch())
                      .count();
  uint64_t inode = st.getUniqueID().getFile();
  std::lock_guard<std::mutex> lock(mu);
  auto it = files.find(*path);
  if (it != files.end() && it->second.mtimeNs == mtime &&
      it->second.size == st.getSize() && it->second.inode == inode)
    return {it->second.config, it->second.error, false};
  Entry e;
  e.mtimeNs = mtime;
  e.size = st.getSize();
  e.inode = inode;
  llvm::Expected<Config> c = loadConfig(*path, forFile);
  if (c)
    e.config = std::move(*c);
  else
    e.error = llvm::toString(c.takeError());
  ++loadCount;
  files[*path] = e;
  return {e.config, e.error, true};
}

void ConfigCache::invalidate() {
  std::lock_guard<std::mutex> lock(mu);
  files.clear();
}

unsigned ConfigCache::loads() const {
  std::lock_guard<std::mutex> lock(mu);
  return loadCount;
}

} // namespace tosa_lsp
