#!/usr/bin/env bash
# The Neovim init.lua snippet of editors/README.md, exactly as documented,
# in headless Neovim 0.7 with tosa-lsp first on PATH: without nvim-lspconfig
# (the built-in client: diagnostics, hover, a quick fix applied), and with a
# stand-in for nvim-lspconfig (what it registers and sets up).
#   usage: run.sh /path/to/tosa-lsp
# Prints `nvim-snippet: N passed, M failed`; exits 0 only if all passed.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tosa_lsp="${1:?usage: run.sh /path/to/tosa-lsp}"
case "$tosa_lsp" in /*) ;; *) tosa_lsp="$PWD/$tosa_lsp" ;; esac
bash "$here/../require-command.sh" nvim neovim || exit 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/../vim/example.mlir" "$work/example.mlir"
awk '/<!-- snippet: nvim/ {f = 1; next} f && /^```lua/ {p = 1; next} p && /^```/ {exit} p' \
  "$here/../../../editors/README.md" > "$work/snippet.lua"
if [ ! -s "$work/snippet.lua" ]; then
  echo "run.sh: no nvim snippet in editors/README.md" >&2
  exit 1
fi
rc=0
for mode in builtin lspconfig; do
  HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
    PATH="$(dirname "$tosa_lsp"):$PATH" TOSA_SNIPPET="$work/snippet.lua" \
    TOSA_EXAMPLE="$work/example.mlir" TOSA_MODE="$mode" timeout -k 5 90 \
    nvim --headless -n -i NONE -u NONE -c "luafile $here/test.lua" </dev/null
  r=$?
  [ $r -eq 124 ] && echo "run.sh: nvim timed out ($mode)" >&2
  [ $r -ne 0 ] && rc=$r
done
exit $rc
