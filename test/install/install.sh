#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP`, then the installed tree is used as a
# user would: the binary from PATH without the build tree, the Vim and
# Neovim plugins found where those editors look (headless). Never installs
# packages; parts whose editor is missing say SKIP.
#   usage: install.sh BUILD_DIR WORK_DIR [all|core|vim|nvim]
# Prints `install: N passed, M failed`; exits 0 only if nothing failed.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?usage: install.sh BUILD_DIR WORK_DIR}" && pwd)"
work="${2:?usage: install.sh BUILD_DIR WORK_DIR}"
what="${3:-all}"
rm -rf "$work" && mkdir -p "$work" && work="$(cd "$work" && pwd)"
. "$here/lib.sh"

prefix="$work/prefix"
if ! cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1; then
  cat "$work/install.log"
  echo "install: cmake --install failed"
  exit 1
fi
check "nothing installed outside the prefix" \
  bash -c "! grep -v -e '^-- Up-to-date: $prefix/' -e '^-- Installing: $prefix/' \
              -e '^-- Install configuration' -e '^-- Set runtime path of \"$prefix/' '$work/install.log'"

case "$what" in
  all|core) check_tree "$prefix" "$prefix/share" ;;
esac
case "$what" in
  all|vim) check_vim "$prefix" "$prefix/share" ;;
esac
case "$what" in
  all|nvim) check_nvim "$prefix" "$prefix/share" ;;
esac
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
