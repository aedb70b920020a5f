//===- LowerFuzzer.cpp - bytes -> lower -----------------------------------===//
//
// `tosa-lsp lower` on fuzzed input: the last byte picks the stage, the mode
// (upstream / safe / versioned, the latter two run our own rewrites before
// MLIR's passes), annotation and --function; the input's length, odd or
// even, --threads=2 or 1 (ParallelLoops.cpp on the kernels); the rest is
// the file.
//
// Crash recovery stays on by default: MLIR 22's TOSA-to-linalg passes crash
// on some valid input (see RELIABILITY.md), which is not our bug, and lower()
// guards the whole call, passes included. What this target still finds:
// ASan/UBSan reports (they end the process with _exit, which the crash guard
// cannot intercept), leaks, timeouts, OOM and anything wrong with the
// result. Contained crashes are counted and, with TOSA_LSP_FUZZ_CONTAINED=dir,
// their inputs saved for triage: re-run them with TOSA_LSP_FUZZ_RECOVERY=0
// to see the stack.
//
//===----------------------------------------------------------------------===//

#include "CrashGuard.h"
#include "Lowering.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

using namespace tosa_lsp;

namespace {

unsigned contained = 0;
const char *containedDir = nullptr;

void saveContained(const std::string &input) {
  ++contained;
  if (!containedDir || contained > 1000)
    return;
  std::string name = std::string(containedDir) + "/contained-" +
                     std::to_string(std::hash<std::string>()(input));
  if (FILE *f = std::fopen(name.c_str(), "wb")) {
    std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
  }
}

/// The function name after the first `func.func @` (or any `@`), if any.
std::string firstFunction(const std::string &text) {
  size_t at = text.find("func.func @");
  at = at == std::string::npos ? text.find('@') : at + 10;
  if (at == std::string::npos)
    return "";
  size_t end = at + 1;
  while (end < text.size() && (isalnum(static_cast<unsigned char>(text[end])) ||
                               text[end] == '_' || text[end] == '.'))
    ++end;
  return text.substr(at + 1, end - at - 1);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *recovery = std::getenv("TOSA_LSP_FUZZ_RECOVERY");
  if (recovery && std::strcmp(recovery, "0") == 0)
    setCrashRecovery(false);
  containedDir = std::getenv("TOSA_LSP_FUZZ_CONTAINED");
  std::atexit([] {
    if (contained)
      std::fprintf(stderr, "lower-fuzzer: %u crash(es) inside MLIR contained\n",
                   contained);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return -1;
  uint8_t knobs = data[size - 1];
  std::string text(reinterpret_cast<const char *>(data), size - 1);
  LowerOptions options;
  // The LLVM stage is rare: it runs the longest pipeline.
  options.stage = (knobs & 7) == 7 ? LowerStage::LLVM
                  : (knobs & 1)    ? LowerStage::Loops
                                   : LowerStage::Linalg;
  options.mode = static_cast<LowerMode>((knobs >> 3) % 3);
  options.annotate = knobs & 0x20;
  options.cInterface = knobs & 0x40;
  if (knobs & 0x80)
    options.function = firstFunction(text);
  options.threads = (size & 1) ? 2 : 1;

  llvm::Expected<LowerResult> result = lower(text, "fuzz.mlir", options);
  if (!result) {
    if (llvm::toString(result.takeError())
            .find("MLIR crashed while lowering") != std::string::npos)
      saveContained(text + static_cast<char>(knobs));
    return 0;
  }

  // What the preview relies on: every mapping of a preview points into its
  // text.
  unsigned lines = 1;
  for (char c : result->text)
    lines += c == '\n';
  for (const PreviewMapping &m : result->mappings)
    if (m.previewLine == 0 || m.previewLine > lines)
      __builtin_trap();
  return 0;
}
