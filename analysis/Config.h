//===- Config.h - .tosa-lsp.json project configuration ----------*- C++ -*-===//
//
// The options a project can set in `.tosa-lsp.json`. Parsing is pure (text
// in, Config or llvm::Error out); finding and reading the file is the
// caller's job.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_CONFIG_H
#define TOSA_LSP_ANALYSIS_CONFIG_H

#include "ValidateTarget.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tosa_lsp {

struct Config {
  /// Unregistered op names treated as Broadcastable (generic form).
  std::vector<std::string> broadcastableOps = defaultBroadcastableOps();

  struct Hints {
    bool inferredShapes = true; // inferred shape after the declared type
    bool runtimeChecks = true;  // marker on results needing runtime checks
  } hints;

  /// Informational broadcast findings (never errors). Runtime checks are
  /// off by default: nearly every op of a dynamic model needs one (10^5
  /// diagnostics in a 200k-line file); hover and inlay hints show them.
  struct Info {
    bool refinable = true;
    bool runtimeChecks = false;
    bool dynamicToStatic = true;
    /// Whether the server publishes them (and lenient-parse notes) as
    /// diagnostics. Off: one per op of a model would make every publish
    /// grow with the file, not with its problems; inlay hints, hover and
    /// code actions show them where the user looks.
    bool publish = false;
  } info;

  /// Rename also in the FileCheck lines that can mean the entity (Rename.h).
  struct Rename {
    bool checkLines = false;
  } rename;

  /// Declared static sizes that MLIR's shape inference (tosa-infer-shapes)
  /// contradicts (errors where MLIR's verifier rejects the refined op, else
  /// warnings). The server finds them in the background after
  /// each analysis, a function at a time; `check --infer-shapes` too.
  bool shapeChecks = true;

  /// Custom syntax of ops of dialects MLIR 22 lacks (`util.*`, `check.*` in
  /// IREE's tests) parsed leniently as unregistered ops (Lenient.h):
  /// `"lenientDialects": true` (every namespace that is not registered,
  /// the default), `false`, or a list of namespaces. `check` turns it off
  /// unless given `--lenient`.
  struct Lenient {
    bool enabled = true;
    std::vector<std::string> namespaces; // empty: any
    bool allows(std::string_view ns) const;
  } lenient;

  /// MLIR 22's TOSA validation (tosa-validate) on each section that
  /// verifies: `"validate": false` (the default), `true` (the module's
  /// tosa.target_env, else MLIR's default target) or items as `check
  /// --validate=ITEMS` takes them ("pro_int,pro_fp,level=8k,strict").
  ValidateTarget validate;

  /// Native compilation from the editor (the server's tosa.compile).
  struct Compile {
    std::string outputDir; // empty: a fresh temp directory per compile
    /// The directory of the .tosa-lsp.json that set outputDir, empty when
    /// the editor settings did. A repository's file may only choose a
    /// directory inside its own tree; the loader fills this in.
    std::string outputDirRoot;
    /// Replace existing outputs. Only the editor settings may set it.
    bool overwrite = false;
    unsigned timeoutSeconds = 120;
    unsigned memoryLimitMB = 4096;
    /// Threads of matmul and convolution kernels (`compile --threads`; 0:
    /// the machine's).
    unsigned threads = 1;
    static constexpr unsigned minTimeoutSeconds = 1, maxTimeoutSeconds = 3600;
    static constexpr unsigned minThreads = 0, maxThreads = 256; // 0: all
    static constexpr unsigned minMemoryLimitMB = 64, maxMemoryLimitMB = 65536;
  } compile;

  /// Path of the file this came from, empty for defaults.
  std::string source;

  static std::vector<std::string> defaultBroadcastableOps();
  /// Everything that changes analysis results, as one comparable string.
  std::string fingerprint() const;
  bool isBroadcastableName(std::string_view name) const;
};

/// Offset where `text` (JSON) first nests deeper than `limit` arrays and
/// objects, if it does (strings skipped). Checked before any recursive JSON
/// code (parser, dump, destructor) sees untrusted text.
std::optional<size_t> findDeepJsonNesting(std::string_view text,
                                          unsigned limit);

/// Parses `.tosa-lsp.json` text on top of the defaults. On failure, an
/// error whose message is one line naming the problem (bad JSON with its
/// position, unknown key, wrong type, a compile limit out of range), not
/// the file: the caller knows which file it read.
llvm::Expected<Config> parseConfig(const std::string &text);
/// The same, on top of `base` instead of the defaults (project file, then
/// editor settings).
llvm::Expected<Config> parseConfig(const std::string &text, const Config &base);

/// The same on a JSON value already parsed (editor settings arrive as
/// data: merged as such, never printed and parsed again).
llvm::Expected<Config> applyConfig(const nlohmann::json &value,
                                   const Config &base);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_CONFIG_H
