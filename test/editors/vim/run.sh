#!/usr/bin/env bash
# Headless Vim 9 test of the editors/vim plugin against tosa-lsp.
#   usage: run.sh /path/to/tosa-lsp [script.vim]
# Runs test.vim (or another script of this directory, e.g. perf.vim) if
# `vim` is Vim 9.0+ with +job and +textprop; exits with vim's code (0 only
# if all checks pass).
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tosa_lsp="${1:?usage: run.sh /path/to/tosa-lsp [script.vim]}"
script="${2:-test.vim}"
case "$tosa_lsp" in /*) ;; *) tosa_lsp="$PWD/$tosa_lsp" ;; esac

vim_ok() {
  command -v vim >/dev/null 2>&1 &&
    vim -N -u NONE -i NONE -es -c 'if v:version < 900 || !has("job") || !has("textprop") | cquit 1 | endif' -c 'qall!' </dev/null >/dev/null 2>&1
}

if ! vim_ok; then
  echo "vim: Vim 9.0 with +job and +textprop not found (vim-tiny?); run scripts/setup.sh" >&2
  exit 2
fi

# The scripts bound every wait; this is the backstop for the whole run.
# They write their lines to /dev/stdout (-es prints nothing itself); the
# pipe through cat keeps them in order when stdout is a regular file.
TOSA_LSP="$tosa_lsp" TOSA_GEN="$here/../../../bench/gen.py" timeout -k 5 180 \
  vim -N -u NONE -i NONE -n -es -S "$here/$script" </dev/null | cat
rc=${PIPESTATUS[0]}
if [ $rc -eq 124 ]; then echo "run.sh: vim timed out" >&2; fi
exit $rc
