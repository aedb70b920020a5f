#!/usr/bin/env bash
# The Debian package: cpack -G DEB on BUILD (an already built tree: seconds),
# its control fields and file list (dpkg-deb -I/-c), every shared library
# the binary links or opens (ldd, plus MLIR's runtime library that `run`
# loads) owned by a package in Depends (dpkg -S); then the package unpacked
# (dpkg-deb -x) into a temporary root and used from there: the binary, and
# the Vim / Neovim plugins headless. Never installs anything.
#   usage: deb.sh BUILD_DIR WORK_DIR
# Prints `deb: N passed, M failed`; exits 0 only if nothing failed.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?usage: deb.sh BUILD_DIR WORK_DIR}" && pwd)"
work="${2:?usage: deb.sh BUILD_DIR WORK_DIR}"
rm -rf "$work" && mkdir -p "$work" && work="$(cd "$work" && pwd)"
. "$here/lib.sh"

if ! ${CPACK:-cpack} --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "deb: cpack failed"
  exit 1
fi
deb="$(ls "$work"/pkg/tosa-lsp_*.deb 2>/dev/null | head -n 1)"
if [ -z "$deb" ]; then
  cat "$work/cpack.log"
  echo "deb: no tosa-lsp_*.deb made"
  exit 1
fi
echo "package: $(basename "$deb")"
dpkg-deb -I "$deb" > "$work/info"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$work/files"
sed -n 's/^ Depends: //p' "$work/info" > "$work/depends"
sed -n 's/^ Recommends: //p' "$work/info" > "$work/recommends"
echo "Depends: $(cat "$work/depends")"
echo "Recommends: $(cat "$work/recommends")"
# The package names in Depends (alternatives included, versions dropped).
tr ',|' '\n\n' < "$work/depends" | sed 's/(.*)//; s/ //g; /^$/d' | sort -u > "$work/depends.names"

check "Package: tosa-lsp" contains "$work/info" '^ Package: tosa-lsp$'
check "Version" grep -qE '^ Version: [0-9]+\.[0-9]+\.[0-9]+' "$work/info"
check "Architecture: $(dpkg --print-architecture)" contains "$work/info" "^ Architecture: $(dpkg --print-architecture)\$"
check "Depends: libmlir-22 (MLIR, and the runtime library of run/compile)" grep -qx libmlir-22 "$work/depends.names"
check "Depends: libllvm22" grep -qx libllvm22 "$work/depends.names"
check "Depends: libc6, libstdc++6" bash -c "grep -qx libc6 '$work/depends.names' && grep -qx libstdc++6 '$work/depends.names'"
check "Depends: no -dev package" bash -c "! grep -- '-dev\$' '$work/depends.names'"
check "Recommends: gcc and libc6-dev (compile --emit=shared calls cc)" \
  bash -c "grep -q 'gcc' '$work/recommends' && grep -q 'libc6-dev' '$work/recommends'"
check "Recommends: libomp5 (--threads code calls libomp)" grep -q 'libomp5' "$work/recommends"
for f in /usr/bin/tosa-lsp \
         /usr/share/vim/vimfiles/pack/tosa-lsp/start/tosa-lsp/plugin/tosa_lsp.vim \
         /usr/share/vim/vimfiles/pack/tosa-lsp/start/tosa-lsp/ftdetect/mlir.vim \
         /usr/share/nvim/site/pack/tosa-lsp/start/tosa-lsp/lua/tosa_lsp/init.lua \
         /usr/share/man/man1/tosa-lsp.1.gz /usr/share/doc/tosa-lsp/README.md \
         /usr/share/doc/tosa-lsp/editors.md; do
  check "file list has $f" grep -qx "$f" "$work/files"
done
vsix="$(ls "$src"/editors/vscode/tosa-lsp-*.vsix 2>/dev/null | head -n 1)"
if [ -n "$vsix" ]; then
  check "file list has /usr/share/tosa-lsp/$(basename "$vsix")" grep -qx "/usr/share/tosa-lsp/$(basename "$vsix")" "$work/files"
fi
check "every file is under /usr" bash -c "! grep -v '^/usr\(/\|\$\)' '$work/files' | grep -v '^/\$'"
check "no test or build files in the package" bash -c "! grep -E '/test/|CMakeFiles|\\.o\$|\\.a\$|\\.cmake\$' '$work/files'"

# What `apt install ./tosa-lsp_*.deb` would do here (simulated: nothing is
# installed): the Depends resolve, and on a machine that builds tosa-lsp
# nothing else is needed.
if command -v apt-get >/dev/null 2>&1; then
  check "apt-get -s install of the .deb: installable, nothing else needed" \
    bash -c "apt-get -s -q install '$deb' > '$work/apt.out' 2>&1; rc=\$?; cat '$work/apt.out';
             [ \$rc -eq 0 ] && grep -q '^Inst tosa-lsp ' '$work/apt.out' &&
             [ \"\$(grep -c '^Inst ' '$work/apt.out')\" -eq 1 ]"
fi

root="$work/root"
dpkg-deb -x "$deb" "$root"
bin="$root/usr/bin/tosa-lsp"

# MLIR's runtime library, as the binary reports it (run loads it by path).
PATH="$(clean_path "$root/usr/bin")" tosa-lsp --version > "$work/version"
runtime="$(sed -n 's/^MLIR runtime: \([^ ]*\).*/\1/p' "$work/version")"
check "the binary uses MLIR's runtime library from the runtime package (versioned file)" \
  bash -c "echo '$runtime'; echo '$runtime' | grep -qE 'libmlir_c_runner_utils\\.so\\.[0-9]' && test -f '$runtime'"
check "ldd resolves every library of the binary" bash -c "! ldd '$bin' | grep 'not found'"
# Every library loaded: those the binary needs and the runtime library owned
# by a package in Depends; what they load, by Depends or its dependencies.
/usr/bin/python3 "$here/owners.py" "$work/depends.names" "$bin" ${runtime:+"$runtime"} > "$work/owners"
check "owners of the loaded libraries listed" test -s "$work/owners"
while IFS=$'\t' read -r status lib detail; do
  check "$lib: $detail" test "$status" = ok
done < "$work/owners"

check_tree "$root/usr" "$root/usr/share"
check_vim "$root/usr" "$root/usr/share"
check_nvim "$root/usr" "$root/usr/share"
echo "deb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
