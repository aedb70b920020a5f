#!/usr/bin/env bash
# Installs the prerequisites of the VS Code end-to-end test if missing:
# Debian chromium, ripgrep and libkrb5-dev (apt-get), then code-server and
# puppeteer-core from the npm registry into ./node_modules (per package-lock).
# Exits non-zero with a message if anything cannot be installed.
# With --check it installs nothing: it only says what is missing (what the
# test itself runs; scripts/setup.sh runs the installing form).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "vscode-e2e setup: ERROR: $*" >&2; exit 2; }
if [ "${1:-}" = "--check" ]; then
  [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing; run scripts/setup.sh"
  command -v rg >/dev/null 2>&1 || die "rg (ripgrep) missing; run scripts/setup.sh"
  [ -x "$here/node_modules/.bin/code-server" ] && [ -d "$here/node_modules/puppeteer-core" ] \
    || die "code-server / puppeteer-core missing in $here/node_modules; run scripts/setup.sh"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo; cannot apt-get install"
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive

# Debian packages: chromium (browser), ripgrep (stands in for @vscode/ripgrep's
# GitHub download), libkrb5-dev (code-server's kerberos native module).
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "vscode-e2e setup: apt-get install ${missing[*]}" >&2
  $sudo apt-get update -q >&2 || die "apt-get update failed"
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after install"
rg_bin="$(command -v rg)" || die "rg missing after install"

# npm packages.
if [ ! -x "$here/node_modules/.bin/code-server" ] || [ ! -d "$here/node_modules/puppeteer-core" ]; then
  command -v npm >/dev/null 2>&1 || die "npm not found (Node 20 is required)"
  # @vscode/ripgrep's postinstall downloads rg from GitHub, which is not
  # reachable: seed its download cache with a tarball holding Debian's rg.
  tmp="${TMPDIR:-/tmp}"
  for v in 1.15.11 1.15.10 1.15.9; do
    cache="$tmp/vscode-ripgrep-cache-$v"
    mkdir -p "$cache"
    for t in ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz \
             ripgrep-v13.0.0-4-x86_64-unknown-linux-musl.tar.gz; do
      if [ ! -s "$cache/$t" ]; then
        d="$(mktemp -d)"; cp "$rg_bin" "$d/rg"
        tar -C "$d" -czf "$cache/$t" rg || die "could not seed ripgrep cache"
        rm -rf "$d"
      fi
    done
  done
  echo "vscode-e2e setup: npm install (code-server, puppeteer-core) in $here" >&2
  cmd=install
  [ -f "$here/package-lock.json" ] && cmd=ci
  ( cd "$here" && npm_config_yes=true PUPPETEER_SKIP_DOWNLOAD=1 \
      npm "$cmd" --unsafe-perm --no-audit --no-fund >&2 ) \
    || die "npm $cmd failed in $here (see output above)"
  [ -x "$here/node_modules/.bin/code-server" ] || die "code-server not installed"
  [ -d "$here/node_modules/puppeteer-core" ] || die "puppeteer-core not installed"
fi
exit 0
