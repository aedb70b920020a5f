#!/usr/bin/env bash
# The Debian package of an already built tree (scripts/setup.sh first):
# cpack -G DEB into $BUILD_DIR (default build), then, with --install,
# `apt-get install` of it (as root or with sudo): tosa-lsp on PATH, the
# Vim / Neovim plugins where those find them, the .vsix, docs and man page
# under /usr/share. See editors/README.md ("Installing").
#   bash scripts/package.sh [--install]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/CPackConfig.cmake" ]; then
  echo "package: $BUILD_DIR is not configured; run bash scripts/setup.sh first" >&2
  exit 1
fi
cmake --build "$BUILD_DIR" --target tosa-lsp tosa-lsp-man >/dev/null
out="$(cd "$BUILD_DIR" && cpack -G DEB)"
deb="$(printf '%s\n' "$out" | sed -n 's/^CPack: - package: \(.*\.deb\) generated\.$/\1/p' | tail -n 1)"
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
  printf '%s\n' "$out" >&2
  echo "package: cpack made no .deb" >&2
  exit 1
fi
echo "package: $deb"
if [ "${1:-}" = "--install" ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$deb" >/dev/null
  echo "package: installed; $(command -v tosa-lsp): $(tosa-lsp --version | head -n 1)"
fi
