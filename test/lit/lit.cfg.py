# lit configuration for tosa-lsp: RUN lines use %tosa-lsp, FileCheck, not,
# %mlir-opt (the reference, mlir-opt-22), %python and %corpus.
import os
import shutil

import lit.formats

config.name = "tosa-lsp"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "tools", "lit.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)

llvm_bin = os.path.dirname(config.filecheck)
config.environment["PATH"] = os.pathsep.join(
    [config.tosa_lsp_bin_dir, llvm_bin, config.environment.get("PATH", os.environ["PATH"])])

# Tests that need numpy or Debian's Python use /usr/bin/python3 (a pyenv
# python3 on PATH may lack Debian's packages).
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")

config.substitutions.append(("%tosa-lsp", os.path.join(config.tosa_lsp_bin_dir, "tosa-lsp")))
config.substitutions.append(("%mlir-opt", config.mlir_opt))
config.substitutions.append(("%python", python))
config.substitutions.append(("%corpus", config.corpus_dir))
config.substitutions.append(("%tools", os.path.join(config.test_source_root, "tools")))
config.substitutions.append(("%bench", os.path.join(config.tosa_lsp_src_dir, "bench")))
# The upstream language server the benchmark compares against (beside mlir-opt-22).
mlir_lsp_server = (shutil.which("mlir-lsp-server-22", path=os.path.dirname(config.mlir_opt))
                   or shutil.which("mlir-lsp-server-22"))
if mlir_lsp_server:
    config.available_features.add("mlir-lsp-server")
    config.substitutions.append(("%mlir-lsp-server", mlir_lsp_server))
config.substitutions.append(("%examples", os.path.join(config.tosa_lsp_src_dir, "examples")))

# Tests that make device nodes (mknod) in their temp directory.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")

# The matmul / conv2d kernels (lowering/Kernels.cpp) need FMA and AVX2 or
# AVX-512 on the host; elsewhere those ops keep MLIR's scalar loops.
try:
    flags = next((l.split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
except OSError:
    flags = []
if "fma" in flags and ("avx2" in flags or "avx512f" in flags):
    config.available_features.add("fma-vectors")
# VRANGE (AVX512DQ) for maximum / minimum trees (lowering/FloatMaxima.cpp).
if "avx512dq" in flags:
    config.available_features.add("avx512dq")

# Transparent huge pages the heap can ask for (support/Allocator.h): the
# kernel has THP, its mode is not "never", and overcommit is not strict (the
# heap's range is then left to mimalloc).
try:
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    strict = open("/proc/sys/vm/overcommit_memory").read().strip() == "2"
except OSError:
    thp, strict = "", True
if thp and "[never]" not in thp and not strict:
    config.available_features.add("thp")

# LLVM's OpenMP runtime, which `compile --threads=N` links (scripts/setup.sh
# installs Debian's libomp5; lowering/Runtime.cpp looks in the same places).
if any(os.path.exists(p) for p in ("/usr/lib/x86_64-linux-gnu/libomp.so.5",
                                   "/usr/lib/aarch64-linux-gnu/libomp.so.5",
                                   "/usr/lib/llvm-22/lib/libomp.so.5")):
    config.available_features.add("libomp")

# The corpus lives beside the repository and is never copied into it; tests
# that read it are UNSUPPORTED (skipped cleanly) when it is absent.
if os.path.isdir(config.corpus_dir):
    config.available_features.add("corpus")

# Tools that only some tests need: those tests are UNSUPPORTED (skipped
# cleanly) without them; scripts/setup.sh installs them all.
import subprocess


def _runs(cmd, timeout=20):
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


# Vim 9 with +job and +textprop (not vim-tiny), Neovim, Emacs with eglot.
if shutil.which("vim") and _runs(["vim", "-N", "-u", "NONE", "-i", "NONE", "-es", "-c",
                                  'if v:version < 900 || !has("job") || !has("textprop") | cquit 1 | endif',
                                  "-c", "qall!"]):
    config.available_features.add("vim9")
if shutil.which("nvim"):
    config.available_features.add("nvim")
# Headless Chromium and puppeteer-core (the VS Code e2e's node_modules):
# the graph page's test in a browser.
if os.path.exists("/usr/bin/chromium") and os.path.isdir(os.path.join(
        config.test_source_root, "..", "editors", "vscode-e2e", "node_modules", "puppeteer-core")):
    config.available_features.add("chromium")
if shutil.which("emacs") and _runs(["emacs", "--batch", "-q", "--eval", "(require 'eglot)"]):
    config.available_features.add("emacs-eglot")
# The binary links MLIR's and LLVM's static archives (TOSA_LSP_STATIC_LLVM).
if getattr(config, "static_llvm", "").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("static-llvm")
# The install and Debian package tests (test/lit/install/).
config.substitutions.append(("%build-dir", getattr(config, "tosa_lsp_build_dir", "")))
config.substitutions.append(("%cmake", getattr(config, "cmake", "cmake")))
config.substitutions.append(("%cpack", getattr(config, "cpack", "cpack")))
if all(shutil.which(t) for t in ("dpkg-deb", "dpkg-query", "ldd", "readelf")):
    config.available_features.add("debian-packaging")
