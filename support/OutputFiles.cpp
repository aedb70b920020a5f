//===- OutputFiles.cpp - writing compiled outputs safely ------------------===//

#include "OutputFiles.h"

#include "Errors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace tosa_lsp {

std::string sanitizeFileName(StringRef name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok)
      c = '_';
    if (c == '.' && out.empty())
      continue; // no hidden files, no "." or ".."
    out += c;
    if (out.size() == 100)
      break;
  }
  return out.empty() ? "module" : out;
}

static Error fail(const Twine &msg) { return makeError(msg); }

static bool isInside(StringRef p, StringRef root) {
  if (root == "/" || p == root)
    return true;
  return p.starts_with(root) && p.size() > root.size() &&
         path::is_separator(p[root.size()]);
}

Expected<std::string> resolveOutputDir(const std::string &dir,
                                       const std::string &root) {
  if (dir.empty())
    return fail("no output directory");
  SmallString<256> target, realRoot;
  if (root.empty()) {
    // The user's own setting: trusted, but a relative path would depend on
    // the server's working directory.
    if (!path::is_absolute(dir))
      return fail("compile.outputDir from the editor settings must be an "
                  "absolute path, got '" +
                  dir + "'");
    target = dir;
  } else {
    if (std::error_code ec = fs::real_path(root, realRoot))
      return fail("cannot resolve " + root + ": " + ec.message());
    if (path::is_absolute(dir)) {
      target = dir;
    } else {
      target = realRoot;
      path::append(target, dir);
    }
  }
  path::remove_dots(target, /*remove_dot_dot=*/true);

  auto outside = [&](StringRef resolved) {
    return fail("compile.outputDir '" + dir + "' in " + root +
                "/.tosa-lsp.json resolves to " + resolved +
                ", outside that project; a project's configuration may only "
                "choose a directory inside its own tree (set "
                "compile.outputDir in the editor settings instead)");
  };
  // Check the deepest existing ancestor before creating anything, so a
  // symlink in the project cannot make us create directories elsewhere.
  SmallString<256> existing = target;
  while (!fs::exists(existing) && path::has_parent_path(existing))
    existing = path::parent_path(existing);
  SmallString<256> realExisting;
  if (std::error_code ec = fs::real_path(existing, realExisting))
    return fail("cannot resolve " + existing + ": " + ec.message());
  if (!root.empty() && !isInside(realExisting, realRoot))
    return outside(realExisting);
  if (std::error_code ec = fs::create_directories(target))
    return fail("cannot create the output directory " + target + ": " +
                ec.message());
  SmallString<256> real;
  if (std::error_code ec = fs::real_path(target, real))
    return fail("cannot resolve " + target + ": " + ec.message());
  if (!root.empty() && !isInside(real, realRoot))
    return outside(real);
  if (!fs::is_directory(real))
    return fail("the output directory " + real + " is not a directory");
  return std::string(real);
}

static std::error_code writeAll(int fd, StringRef data) {
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << data;
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return ec;
  }
  return {};
}

namespace {

/// What is at an output path before anything is written.
enum class TargetKind {
  Absent, // nothing, or a dangling symlink: created as before
  File,   // a regular file or a symlink to one: taken, or renamed over
  Stream, // a character device or FIFO (maybe behind symlinks): written into
  Other,  // a directory, block device or socket: never touched
};

struct Target {
  TargetKind kind = TargetKind::Absent;
  const char *what = ""; // for messages: "a character device", ...
  bool viaProc = false;  // a /proc fd link (/dev/stdout to a file)
};

/// Whether following the symlink at `p` goes through /proc, as /dev/stdout
/// -> /proc/self/fd/1 does: the link names an open file, whatever it is.
bool linksIntoProc(StringRef p) {
  SmallString<256> cur = p;
  for (unsigned hop = 0; hop < 40; ++hop) {
    fs::file_status st;
    if (fs::status(cur, st, /*follow=*/false) ||
        st.type() != fs::file_type::symlink_file)
      return false;
    char buf[4096];
    ssize_t n = ::readlink(cur.c_str(), buf, sizeof(buf));
    if (n <= 0)
      return false;
    StringRef link(buf, n);
    SmallString<256> next;
    if (path::is_absolute(link)) {
      next = link;
    } else {
      next = path::parent_path(cur);
      path::append(next, link);
    }
    path::remove_dots(next, /*remove_dot_dot=*/true);
    if (isInside(next, "/proc"))
      return true;
    cur = next;
  }
  return false;
}

const char *describe(fs::file_type t) {
  switch (t) {
  case fs::file_type::directory_file:
    return "a directory";
  case fs::file_type::block_file:
    return "a block device";
  case fs::file_type::character_file:
    return "a character device";
  case fs::file_type::fifo_file:
    return "a FIFO";
  case fs::file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

Target classify(const std::string &p) {
  Target t;
  fs::file_status own;
  if (fs::status(p, own, /*follow=*/false))
    return t;
  fs::file_status st = own;
  if (own.type() == fs::file_type::symlink_file) {
    if (linksIntoProc(p)) {
      t.kind = TargetKind::Stream;
      t.what = "a link to an open file";
      t.viaProc = true;
      return t;
    }
    if (fs::status(p, st, /*follow=*/true))
      return t; // dangling: the link itself is what is there
  }
  fs::file_type type = st.type();
  t.what = describe(type);
  if (type == fs::file_type::regular_file)
    t.kind = TargetKind::File;
  else if (type == fs::file_type::character_file ||
           type == fs::file_type::fifo_file)
    t.kind = TargetKind::Stream;
  else
    t.kind = TargetKind::Other;
  return t;
}

/// Writes into an existing device or FIFO (`-o /dev/null`), as compilers
/// do: opened without O_CREAT, and checked after the open so that a file
/// put there meanwhile is not overwritten.
Error writeInto(const std::string &p, const Target &t, StringRef data) {
  int fd = ::open(p.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot open " + p + ": " +
                std::error_code(errno, std::generic_category()).message());
  struct stat st;
  bool stream =
      ::fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
                                (t.viaProc && S_ISREG(st.st_mode)));
  // `> out` behind /dev/stdout: the output replaces what the file held.
  if (stream && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0)
    stream = false;
  if (!stream) {
    ::close(fd);
    return fail("cannot write " + p + ": it changed while being opened");
  }
  if (std::error_code ec = writeAll(fd, data))
    return fail("cannot write " + p + ": " + ec.message());
  return Error::success();
}

} // namespace

Expected<std::vector<std::string>>
writeOutputs(const std::string &stem, ArrayRef<OutputFile> files,
             OnExisting onExisting, ArrayRef<std::string> protectedPaths) {
  // By identity, not by name: `./a.mlir`, a hard link or a symlink to the
  // source all count.
  auto protectedBy = [&](const std::string &p) -> std::optional<std::string> {
    for (const std::string &src : protectedPaths) {
      bool same = false;
      if (!fs::equivalent(p, src, same) && same)
        return src;
    }
    return std::nullopt;
  };
  auto removeAll = [](ArrayRef<std::string> paths) {
    for (const std::string &p : paths)
      fs::remove(p);
  };

  for (unsigned n = 0; n < 1000; ++n) {
    std::string s = n == 0 ? stem : stem + "-" + std::to_string(n);
    std::vector<std::string> paths;
    for (const OutputFile &f : files)
      paths.push_back(s + f.extension);

    bool taken = false;
    for (const std::string &p : paths)
      if (std::optional<std::string> src = protectedBy(p)) {
        if (onExisting != OnExisting::NewName)
          return fail("refusing to write " + p + ": it is the source file " +
                      *src);
        taken = true;
      }
    if (taken)
      continue;

    // Only regular files are ever replaced or removed. A device or FIFO as
    // the main output is written into; side outputs (a header) beside one
    // would land in /dev, so they are refused.
    std::vector<Target> targets;
    for (const std::string &p : paths)
      targets.push_back(classify(p));
    for (size_t i = 0; i < paths.size(); ++i) {
      if (targets[i].kind == TargetKind::Other)
        return fail("cannot write " + paths[i] + ": it is " + targets[i].what +
                    ", not a regular file");
      if (targets[i].kind == TargetKind::Stream && i > 0)
        return fail("cannot write " + paths[i] + ": it is " + targets[i].what +
                    "; only the main output may be a "
                    "device or FIFO");
    }
    if (targets[0].kind == TargetKind::Stream) {
      if (paths.size() > 1)
        return fail("refusing to write " + paths[1] + ": the main output " +
                    paths[0] + " is " + targets[0].what +
                    ", not a regular file, and only a regular file may have "
                    "outputs beside it; write the output to a file");
      if (Error err = writeInto(paths[0], targets[0], files[0].data))
        return std::move(err);
      return paths;
    }

    if (onExisting == OnExisting::Replace) {
      // Written beside the target, then renamed over it: rename replaces a
      // symlink itself instead of writing through it.
      std::vector<std::string> temps;
      for (size_t i = 0; i < files.size(); ++i) {
        int fd;
        SmallString<256> tmp;
        if (std::error_code ec = fs::createUniqueFile(
                paths[i] + ".tmp-%%%%%%", fd, tmp, fs::OF_None,
                files[i].executable ? 0777 : 0666)) {
          removeAll(temps);
          return fail("cannot create a file beside " + paths[i] + ": " +
                      ec.message());
        }
        temps.push_back(std::string(tmp));
        if (std::error_code ec = writeAll(fd, files[i].data)) {
          removeAll(temps);
          return fail("cannot write " + tmp + ": " + ec.message());
        }
      }
      for (size_t i = 0; i < files.size(); ++i)
        if (std::error_code ec = fs::rename(temps[i], paths[i])) {
          removeAll(ArrayRef<std::string>(temps).drop_front(i));
          return fail("cannot replace " + paths[i] + ": " + ec.message());
        }
      return paths;
    }

    std::vector<std::string> created;
    std::string takenPath;
    for (size_t i = 0; i < files.size(); ++i) {
      // O_EXCL also refuses a dangling symlink; O_NOFOLLOW says why.
      int fd = ::open(paths[i].c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      files[i].executable ? 0777 : 0666);
      if (fd < 0 && errno == EEXIST) {
        takenPath = paths[i];
        break;
      }
      if (fd < 0) {
        std::error_code ec(errno, std::generic_category());
        removeAll(created);
        return fail("cannot create " + paths[i] + ": " + ec.message());
      }
      created.push_back(paths[i]);
      if (std::error_code ec = writeAll(fd, files[i].data)) {
        removeAll(created);
        return fail("cannot write " + paths[i] + ": " + ec.message());
      }
    }
    if (takenPath.empty())
      return paths;
    removeAll(created);
    if (onExisting == OnExisting::Fail)
      return makeError(ErrorTopic::OutputExists,
                       takenPath + " already exists; not replacing it");
  }
  return fail("no free name for " + stem + " (tried " + stem + "-1 to " + stem +
              "-999)");
}

TempDir::TempDir(StringRef prefix) {
  SmallString<128> p;
  ec = fs::createUniqueDirectory(prefix, p);
  if (!ec)
    dir = std::string(p);
}

TempDir::~TempDir() {
  if (!keep && !dir.empty())
    fs::remove_directories(dir, /*IgnoreErrors=*/true);
}

} // namespace tosa_lsp
