#!/usr/bin/env bash
# Installs what is missing (Debian bookworm packages), configures and builds.
# Re-running it when everything is installed and built is fast: no apt call,
# an incremental ninja build.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  g++ cmake ninja-build ccache
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  zlib1g-dev libzstd-dev nlohmann-json3-dev libgtest-dev libmimalloc-dev
  python3 python3-numpy neovim tmux vim binutils clang-format-22
  libopenblas0-pthread         # numpy's BLAS for bench/kernels/compute.py (else netlib's reference BLAS)
  libomp5                      # LLVM's OpenMP runtime: compile --threads=N links it
  clang-22 libclang-rt-22-dev # scripts/fuzz.sh: clang with libFuzzer
  emacs-nox elpa-eglot         # the Emacs (eglot) client test
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node/npm for the VS Code extension (the machines here ship Node 20).
if ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing nodejs npm"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi

BUILD_DIR="${BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR"

# The VS Code extension's .vsix, rebuilt only when its sources changed.
VSIX=editors/vscode/tosa-lsp-0.1.0.vsix
if [ ! -f "$VSIX" ] || [ -n "$(find editors/vscode/src editors/vscode/syntaxes \
      editors/vscode/package.json editors/vscode/package-lock.json \
      editors/vscode/language-configuration.json editors/vscode/README.md \
      editors/vscode/images editors/vscode/.vscodeignore editors/vscode/build.sh \
      editors/graph/graph-view.js editors/graph/layered.js editors/graph/vendor \
      -newer "$VSIX" 2>/dev/null)" ]; then
  TOSA_LSP="$PWD/$BUILD_DIR/bin/tosa-lsp" bash editors/vscode/build.sh
fi
