#!/usr/bin/env bash
# What the user sees on a real terminal (tmux): Neovim 0.7 at 120x30 shows
# the inlay hints beside the diagnostics' virtual text; Vim 9 at 80x24 shows
# the hover of an error in a popup that fits and scrolls to its last line.
#   usage: run.sh /path/to/tosa-lsp
set -u
export LC_ALL=C.UTF-8 LANG=C.UTF-8  # box drawing and ■ as a user sees them
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
tosa_lsp="${1:?usage: run.sh /path/to/tosa-lsp}"
case "$tosa_lsp" in /*) ;; *) tosa_lsp="$PWD/$tosa_lsp" ;; esac
bash "$here/../require-command.sh" tmux tmux || exit 2
bash "$here/../require-command.sh" nvim neovim || exit 2

tmp="$(mktemp -d)"
sock="$tmp/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
cp "$root/test/editors/vim/example.mlir" "$tmp/example.mlir"
passed=0 failed=0
check() { # check NAME CONDITION-RESULT SCREEN
  if [ "$2" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; echo "$3" | sed 's/^/  | /'; fi
}
screen_until() { # screen_until SESSION REGEX: the pane once it matches (10 s)
  local s
  for _ in $(seq 100); do
    s="$(tmux -S "$sock" capture-pane -p -t "$1")"
    if echo "$s" | grep -qE "$2"; then break; fi
    sleep 0.1
  done
  echo "$s"
}
# expect SESSION REGEX NAME: waits for exactly what it checks, a whole line
# matching REGEX (a capture can catch a half-drawn screen: the text of
# Vim's popup before its border).
expect() {
  local s
  s="$(screen_until "$1" "$2")"
  echo "$s" | grep -qE "$2"; check "$3" $? "$s"
}

# Neovim: hints at the end of lines that also carry diagnostic text.
cat > "$tmp/init.lua" <<LUA
vim.opt.runtimepath:prepend('$root/editors/vim')
vim.cmd('filetype plugin on')
require('tosa_lsp').setup{ cmd = { '$tosa_lsp' } }
LUA
tmux -S "$sock" new-session -d -s nvim -x 120 -y 30 "cd $tmp && nvim -n -i NONE -u $tmp/init.lua example.mlir"
expect nvim 'tosa\.maximum.*inferred: 5x7' 'nvim: " inferred: 5x7" visible on the tosa.maximum line (which has a hint diagnostic)'
expect nvim 'tosa\.sub.*inferred: 1x3.*■' 'nvim: " inferred: 1x3" visible before the error text on the tosa.sub line'

# Vim: K on the tosa.sub error at 80x24, then scroll to the end of the popup.
tmux -S "$sock" new-session -d -s vim -x 80 -y 24 "cd $tmp && vim -N -u NONE -i NONE -n --cmd 'set rtp^=$root/editors/vim' --cmd 'filetype plugin on' --cmd 'runtime plugin/tosa_lsp.vim' --cmd 'let g:tosa_lsp_command = \"$tosa_lsp\"' example.mlir"
screen_until vim 'E>' >/dev/null
tmux -S "$sock" send-keys -t vim '12G' 'K'
expect vim '[║|] *dim +#0 +#1 +inferred +declared +rule' 'vim: hover table as aligned columns in the popup'
tmux -S "$sock" send-keys -t vim j j j j
expect vim '1 \| 1 -> 1 ' 'vim: j scrolls; the rule column shows "1 | 1 -> 1"'
tmux -S "$sock" send-keys -t vim C-d C-d C-d
expect vim 'Fix: declare result dimension 0 as 1' 'vim: scrolling the popup shows the Fix line at 80x24'

echo "screen: $passed passed, $failed failed"
[ $failed -eq 0 ]
