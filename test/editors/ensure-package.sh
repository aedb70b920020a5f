#!/usr/bin/env bash
# usage: ensure-package.sh [--force] COMMAND DEBIAN_PACKAGE
# Installs DEBIAN_PACKAGE with apt-get (sudo when not root) unless COMMAND
# is already on PATH (--force: install anyway, e.g. vim over vim-tiny);
# exits 2 with a clear message when it cannot.
set -u
force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
cmd="${1:?command}" pkg="${2:?package}"
[ $force -eq 0 ] && command -v "$cmd" >/dev/null 2>&1 && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "$(basename "$0"): $cmd not found, installing $pkg with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q "$pkg" >&2; then
  $sudo apt-get update -q >&2 && $sudo apt-get install -y -q "$pkg" >&2 || {
    echo "$(basename "$0"): could not install $pkg" >&2
    exit 2
  }
fi
command -v "$cmd" >/dev/null 2>&1 || { echo "$(basename "$0"): $pkg gave no $cmd" >&2; exit 2; }
