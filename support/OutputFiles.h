//===- OutputFiles.h - writing compiled outputs safely ----------*- C++ -*-===//
//
// Compiled outputs are named after untrusted text (function names, document
// names) and may go to a directory a repository chose. These helpers keep
// them in that directory, never write through symlinks, never replace a file
// unless asked, and never replace the source file.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SUPPORT_OUTPUTFILES_H
#define TOSA_LSP_SUPPORT_OUTPUTFILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tosa_lsp {

/// A file name (not a path) made from untrusted text: bytes outside
/// [A-Za-z0-9_.-] become '_', leading dots are dropped, at most 100 bytes;
/// "module" when nothing is left.
std::string sanitizeFileName(llvm::StringRef name);

/// The directory compiled outputs go to, created if missing, as a real path
/// (no symlinks). `root` empty: `dir` comes from the editor settings and
/// must be absolute. Otherwise `dir` comes from the `.tosa-lsp.json` in
/// `root`: a relative `dir` resolves against `root`, and the result must be
/// inside `root`'s tree, `..` and symlinks resolved.
llvm::Expected<std::string> resolveOutputDir(const std::string &dir,
                                             const std::string &root);

/// What to do when an output's name is taken.
enum class OnExisting {
  Fail,    // error naming the file
  NewName, // OUT-1.so (+ OUT-1.h), OUT-2.so, ...: all files get one stem
  Replace, // atomic rename over it (never written through a symlink)
};

struct OutputFile {
  std::string extension; // ".so", ".h", or "" for the stem itself
  llvm::StringRef data;
  bool executable = false;
};

/// Writes each file as `stem + extension`, created with O_CREAT | O_EXCL |
/// O_NOFOLLOW (or, with Replace, written beside and renamed over). A target
/// that is the same file as one of `protectedPaths` (by device and inode,
/// so hard links and symlinks count) is refused. Only regular files (or
/// symlinks, not their targets) are ever replaced: a character device or
/// FIFO as the first file (`/dev/null`, `/dev/stdout`) is written into,
/// whatever `onExisting`, and then no other file may be written beside it;
/// directories, block devices and sockets are refused. Returns the paths
/// written; on error nothing is left behind. A taken name with
/// OnExisting::Fail is an ErrorTopic::OutputExists error (Errors.h).
llvm::Expected<std::vector<std::string>>
writeOutputs(const std::string &stem, llvm::ArrayRef<OutputFile> files,
             OnExisting onExisting, llvm::ArrayRef<std::string> protectedPaths);

/// Removes a directory and everything in it when it goes out of scope,
/// unless released.
class TempDir {
public:
  /// Creates `$TMPDIR/<prefix>-XXXXXX`; check error() after.
  explicit TempDir(llvm::StringRef prefix);
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return dir; }
  std::error_code error() const { return ec; }
  /// Keep the directory (it holds results the user wants).
  void release() { keep = true; }

private:
  std::string dir;
  std::error_code ec;
  bool keep = false;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SUPPORT_OUTPUTFILES_H
