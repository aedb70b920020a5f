#!/usr/bin/env bash
# Batch Emacs test: Debian's eglot (elpa-eglot 1.9 on emacs-nox 28.2)
# against tosa-lsp (first on PATH), configured by the init.el snippet of
# editors/README.md.
#   usage: run.sh /path/to/tosa-lsp
# Prints `emacs: N passed, M failed`; exits 0 only if every check passed.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tosa_lsp="${1:?usage: run.sh /path/to/tosa-lsp}"
case "$tosa_lsp" in /*) ;; *) tosa_lsp="$PWD/$tosa_lsp" ;; esac

bash "$here/../require-command.sh" emacs emacs-nox || exit 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/../vim/example.mlir" "$work/example.mlir"
# The init.el snippet of editors/README.md, exactly as documented.
awk '/<!-- snippet: emacs/ {f = 1; next} f && /^```elisp/ {p = 1; next} p && /^```/ {exit} p' \
  "$here/../../../editors/README.md" > "$work/init.el"
if [ ! -s "$work/init.el" ]; then
  echo "run.sh: no emacs snippet in editors/README.md" >&2
  exit 1
fi

# -q: no init file of the user; Debian's site-start (which puts elpa-eglot
# on the load path) still runs. HOME: nothing of the user's is read or written.
# The checks bound every wait; this is the backstop.
HOME="$work" PATH="$(dirname "$tosa_lsp"):$PATH" TOSA_EMACS_INIT="$work/init.el" \
  TOSA_EXAMPLE="$work/example.mlir" \
  timeout -k 5 120 emacs --batch -q -l "$here/test.el" 2>"$work/stderr" </dev/null
rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 124 ] && echo "run.sh: emacs timed out" >&2
  tail -n 30 "$work/stderr" >&2
fi
exit $rc
