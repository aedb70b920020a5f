#!/usr/bin/env bash
# Headless Neovim test of the editors/vim plugin (lua/tosa_lsp) against tosa-lsp.
#   usage: run.sh /path/to/tosa-lsp [script.lua]
# Installs Debian's neovim (0.7.2 on bookworm) if `nvim` is missing, then
# runs test_plugin.lua (or another script of this directory, e.g.
# test_review.lua); exits with nvim's code (0 only if all checks pass).
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tosa_lsp="${1:?usage: run.sh /path/to/tosa-lsp [script.lua]}"
script="${2:-test_plugin.lua}"
case "$tosa_lsp" in /*) ;; *) tosa_lsp="$PWD/$tosa_lsp" ;; esac

bash "$here/../require-command.sh" nvim neovim || exit 2

# The scripts have their own global timeouts; this is the backstop.
TOSA_LSP="$tosa_lsp" timeout -k 5 180 \
  nvim --headless -n -i NONE -u NONE -c "luafile $here/$script" </dev/null
rc=$?
if [ $rc -eq 124 ]; then echo "run.sh: nvim timed out" >&2; fi
exit $rc
