# Shared by install.sh and deb.sh: check/report helpers and the installed
# tree's checks (binary, plugins, Vim and Neovim headless). Sourced.

pass=0
fail=0
check() { # check DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@" >"$work/check.out" 2>&1; then
    pass=$((pass + 1))
    [ -n "${TOSA_TEST_VERBOSE:-}" ] && echo "ok: $what"
  else
    fail=$((fail + 1))
    echo "FAIL: $what"
    sed 's/^/  /' "$work/check.out" | tail -n 20
  fi
  return 0
}
contains() { grep -q -- "$2" "$1"; }  # contains FILE PATTERN

# A PATH without the build tree and the source tree: the installed bin/
# first, then the system's directories only.
clean_path() { # clean_path BIN_DIR
  echo "$1:/usr/local/bin:/usr/bin:/bin"
}

vim9_ok() {
  command -v vim >/dev/null 2>&1 &&
    vim -N -u NONE -i NONE -es -c 'if v:version < 900 || !has("job") || !has("textprop") | cquit 1 | endif' -c 'qall!' </dev/null >/dev/null 2>&1
}

# check_tree ROOT SHARE: the binary ROOT/bin/tosa-lsp (on PATH, no RUNPATH
# into the build or source tree) and what SHARE (ROOT/share) holds.
check_tree() {
  local root="$1" share="$2" bin="$1/bin/tosa-lsp"
  check "binary installed" test -x "$bin"
  check "RUNPATH only into the system's LLVM (no build or source tree)" \
    bash -c "readelf -d '$bin' | grep -E 'RPATH|RUNPATH' > '$work/runpath';
             cat '$work/runpath';
             ! grep -q -e '$build' -e '$src' '$work/runpath' &&
             grep -q '/usr/lib/llvm-22/lib' '$work/runpath'"
  check "no build- or source-tree path inside the binary" \
    bash -c "! grep -aoE '($build|$src)/[^[:space:]]*' '$bin' | head -n 3 | grep ."
  check "every library the installed binary links is found" \
    bash -c "! ldd '$bin' | grep 'not found'"
  check "tosa-lsp on PATH is the installed one" \
    bash -c "PATH='$(clean_path "$root/bin")'; [ \"\$(command -v tosa-lsp)\" = '$bin' ]"
  check "--version: version, git revision, MLIR it was built against" \
    bash -c "PATH='$(clean_path "$root/bin")' tosa-lsp --version > '$work/version' &&
             cat '$work/version' &&
             grep -qx 'tosa-lsp [0-9][0-9.]*' '$work/version' &&
             grep -qE '^git revision: ([0-9a-f]{7,}(-dirty)?|unknown)$' '$work/version' &&
             grep -qE '^built against: MLIR 22\.[0-9.]+ \(/usr/lib/llvm-22' '$work/version'"
  check "check runs from the installed binary (one error in the example)" \
    bash -c "cd '$work' && PATH='$(clean_path "$root/bin")' tosa-lsp check '$src/test/editors/vim/example.mlir' > '$work/check.txt';
             [ \$? -eq 1 ] && grep -q 'error:' '$work/check.txt'"
  check "run loads MLIR's runtime from the installed binary (JIT)" \
    bash -c "cd '$work' && PATH='$(clean_path "$root/bin")' tosa-lsp run '$src/test/lit/lowering/Inputs/harness.mlir' --function add --inputs '[[[1,2,3]], [[10,20,30],[40,50,60]]]' | tr -d ' \n' | grep -q '\"data\":\[\[11,22,33\],\[41,52,63\]\]'"
  check "man page" bash -c "gzip -t '$share/man/man1/tosa-lsp.1.gz' && zcat '$share/man/man1/tosa-lsp.1.gz' | grep -q '^\.TH TOSA-LSP 1'"
  check "README and editor docs" test -f "$share/doc/tosa-lsp/README.md" -a -f "$share/doc/tosa-lsp/editors.md"
  local p
  for p in "$share/vim/vimfiles/pack/tosa-lsp/start/tosa-lsp" "$share/nvim/site/pack/tosa-lsp/start/tosa-lsp"; do
    check "plugin in ${p#$root/}" test -f "$p/plugin/tosa_lsp.vim" -a -f "$p/autoload/tosa_lsp.vim" \
      -a -f "$p/lua/tosa_lsp/init.lua" -a -f "$p/ftdetect/mlir.vim" -a -f "$p/syntax/mlir.vim" -a -f "$p/ftplugin/mlir.vim"
  done
  local vsix
  vsix="$(ls "$src"/editors/vscode/tosa-lsp-*.vsix 2>/dev/null | head -n 1)"
  if [ -n "$vsix" ]; then
    # (Not cmp: editors/vscode/build.sh may have rebuilt it since.)
    check "the VS Code extension ($(basename "$vsix"))" \
      bash -c "if command -v unzip >/dev/null; then unzip -l '$share/tosa-lsp/$(basename "$vsix")' | grep -q 'extension/dist/extension.js';
               else test -s '$share/tosa-lsp/$(basename "$vsix")'; fi"
  fi
}

# check_vim ROOT SHARE_ON_PACKPATH: Debian's Vim finds the plugin through
# 'packpath' (/usr/share/vim/vimfiles is on it by default: checked), here
# with that entry pointing at SHARE/vim/vimfiles; startup as a user's
# vimrc that sources defaults.vim (filetype plugin on). The server is
# `tosa-lsp` from PATH (no g:tosa_lsp_command).
check_vim() {
  local root="$1" share="$2"
  if ! vim9_ok; then
    echo "SKIP: Vim 9 (+job +textprop) not found (Debian package vim)"
    return
  fi
  check "Debian's Vim has /usr/share/vim/vimfiles on 'packpath'" \
    bash -c "vim -N -u NORC -i NONE -es -c 'call writefile([&packpath], \"/dev/stdout\")' -c 'qall!' </dev/null | cat | tr ',' '\n' | grep -qx /usr/share/vim/vimfiles"
  mkdir -p "$work/vimhome"
  # defaults.vim turns syntax on only with a colour terminal (not -es).
  printf '%s\n' 'source $VIMRUNTIME/defaults.vim' 'syntax on' > "$work/vimhome/vimrc"
  HOME="$work/vimhome" PATH="$(clean_path "$root/bin")" TOSA_INSTALL_ROOT="$root" \
    TOSA_EXAMPLE="$src/test/editors/vim/example.mlir" timeout -k 5 90 \
    vim -N -u "$work/vimhome/vimrc" -i NONE -n -es \
      --cmd "let &packpath = substitute(&packpath, '/usr/share/vim/vimfiles', '$share/vim/vimfiles', 'g')" \
      -S "$here/vim.vim" </dev/null | cat > "$work/vim.out"
  local rc=${PIPESTATUS[0]}
  cat "$work/vim.out"
  check "installed Vim plugin: headless Vim checks pass" test "$rc" -eq 0
}

# check_nvim ROOT SHARE: Neovim finds the plugin in $XDG_DATA_DIRS/nvim/site
# (/usr/local/share and /usr/share by default: checked), here SHARE only; an
# init.lua with require('tosa_lsp').setup{} as editors/vim/README.md says.
check_nvim() {
  local root="$1" share="$2"
  if ! command -v nvim >/dev/null 2>&1; then
    echo "SKIP: nvim not found (Debian package neovim)"
    return
  fi
  check "Neovim has /usr/share/nvim/site on 'packpath'" \
    bash -c "XDG_CONFIG_HOME='$work/none' XDG_DATA_HOME='$work/none' nvim --headless -u NONE -c 'lua io.stdout:write(vim.o.packpath)' -c q | tr ',' '\n' | grep -qx /usr/share/nvim/site"
  mkdir -p "$work/nvimconfig/nvim"
  echo "require('tosa_lsp').setup{}" > "$work/nvimconfig/nvim/init.lua"
  HOME="$work/nvimconfig" XDG_CONFIG_HOME="$work/nvimconfig" XDG_DATA_HOME="$work/nvimdata" \
    XDG_STATE_HOME="$work/nvimdata" XDG_CACHE_HOME="$work/nvimdata" \
    XDG_DATA_DIRS="$share" \
    PATH="$(clean_path "$root/bin")" TOSA_INSTALL_ROOT="$root" \
    TOSA_EXAMPLE="$src/test/editors/vim/example.mlir" timeout -k 5 90 \
    nvim --headless -n -i NONE -c "luafile $here/nvim.lua" </dev/null > "$work/nvim.out" 2>&1
  local rc=$?
  cat "$work/nvim.out"
  check "installed Neovim plugin: headless Neovim checks pass" test "$rc" -eq 0
}
