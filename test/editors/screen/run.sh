#!/usr/bin/env bash
# What the user sees on a real terminal (tmux): Neovim 0.7 at 120x30 shows
# the inlay hints beside the diagnostics' virtual text; Vim 9 at 80x24 shows
# the hover of an error in a popup that fits, keeps its width and scrolls to
# its last line; messages without "Press ENTER"; at 80 columns the hints of
# long lines below them; the review of a whole-file rewrite.
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
cp "$root/test/editors/vim/example.mlir" "$root/test/editors/vim/old.mlir" "$here/narrow.mlir" "$here/lenient.mlir" "$tmp/"
passed=0 failed=0
check() { # check NAME CONDITION-RESULT SCREEN
  if [ "$2" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; echo "$3" | sed 's/^/  | /'; fi
}
screen_until() { # screen_until SESSION REGEX [TENTHS]: the pane once it matches (10 s)
  local s
  for _ in $(seq "${3:-100}"); do
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
  s="$(screen_until "$1" "$2" "${4:-100}")"
  echo "$s" | grep -qE "$2"; check "$3" $? "$s"
}
# absent SESSION REGEX NAME: no line of the pane matches REGEX now.
absent() {
  local s
  s="$(tmux -S "$sock" capture-pane -p -t "$1")"
  ! echo "$s" | grep -qE "$2"; check "$3" $? "$s"
}
vim_session() { # vim_session NAME COLUMNS FILE
  tmux -S "$sock" new-session -d -s "$1" -x "$2" -y 24 "cd $tmp && vim -N -u NONE -i NONE -n --cmd 'set rtp^=$root/editors/vim' --cmd 'filetype plugin on' --cmd 'runtime plugin/tosa_lsp.vim' --cmd 'let g:tosa_lsp_command = \"$tosa_lsp\"' $3"
}
nvim_session() { # nvim_session NAME COLUMNS FILE
  tmux -S "$sock" new-session -d -s "$1" -x "$2" -y 24 "cd $tmp && nvim -n -i NONE -u $tmp/init.lua $3"
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
# Markdown rules are drawn as a line, never a literal ---.
expect vim '[║|] ─{20,} *[║|]' 'vim: hover: a rule drawn as a line across the popup'
absent vim '[║|] *--- *[║|]' 'vim: hover: no literal ---'
# Table cells wrap between words (a wrapped row continues in its column).
absent vim '[a-z]-$|[║|] +[a-z]{1,3} +[║|]$' 'vim: hover: no cell cut inside a word'
width0="$(tmux -S "$sock" capture-pane -p -t vim | grep -oE '[╔╚]═+[╗╝]' | head -1)"
tmux -S "$sock" send-keys -t vim j j j j
expect vim '1 \| 1 -> 1 ' 'vim: j scrolls; the rule column shows "1 | 1 -> 1"'
width1="$(tmux -S "$sock" capture-pane -p -t vim | grep -oE '[╔╚]═+[╗╝]' | head -1)"
[ -n "$width0" ] && [ "${#width0}" = "${#width1}" ]; check 'vim: the popup keeps its width while scrolling' $? "before: $width0
after:  $width1"
tmux -S "$sock" send-keys -t vim C-d C-d C-d
expect vim 'Fix: declare result dimension 0 as 1' 'vim: scrolling the popup shows the Fix line at 80x24'


# Vim: the code-action menu takes the number and Enter; no "Press ENTER"
# after it (the quick fix of tosa.sub is the first action).
tmux -S "$sock" send-keys -t vim Escape
sleep 0.3
tmux -S "$sock" send-keys -t vim '12G' '\a'
expect vim 'Type number and <Enter>' 'vim: :TosaCodeAction shows its menu'
tmux -S "$sock" send-keys -t vim '1' Enter
expect vim 'tosa\.sub .*-> tensor<1x3xf3' 'vim: 1 Enter applies the first action (the quick fix)'
absent vim 'Press ENTER' 'vim: no "Press ENTER" after the menu'

# Vim: the compiled file's path shown whole (not cut in the middle), no prompt.
tmux -S "$sock" send-keys -t vim ':TosaCompile' Enter
expect vim 'tosa-lsp: compiled to /tmp/[^ ]*/example\.so' 'vim: the compile message shows the output path whole' 600
absent vim 'compiled to .*\.\.\.|Press ENTER' 'vim: the compile message is not cut and asks no "Press ENTER"'

# Vim at 80 columns: hints of ~80-column lines go on a line of their own
# below (never between `%0` and `=`), and after the line once it fits.
vim_session vim80 80 narrow.mlir
expect vim80 '^ +runtime-check *$' 'vim 80: " runtime-check" below the tosa.add line'
expect vim80 '^ +inferred: 5x7 *$' 'vim 80: " inferred: 5x7" below the 80-column tosa.add line'
expect vim80 '^[^ ].*-> tensor<\?x7xf32> +inferred: 5x7$' 'vim 80: after the last row of a wrapped line, where it fits'
absent vim80 '%0 runtime-check|%0 +inferred' 'vim 80: no hint between %0 and ='
tmux -S "$sock" resize-window -t vim80 -x 120
expect vim80 'tosa\.add .*-> tensor<\?x3xf32> runtime-check' 'vim 120: after the line once it fits (placed again on resize)'

# Neovim 0.7 at 80 columns: the hints that do not fit after their line are
# a virtual line below it, visible.
nvim_session nvim80 80 narrow.mlir
expect nvim80 '^ +runtime-check *$' 'nvim 80: " runtime-check" below the tosa.add line'
expect nvim80 '^ +inferred: 5x7 *$' 'nvim 80: " inferred: 5x7" below the 80-column tosa.add line'
expect nvim80 '^[^ ].*-> tensor<\?x7xf32> +inferred: 5x7$' 'nvim 80: after the last row of a wrapped line, where it fits'

# Neovim: the code-action menu of the line (the cursor at its start).
nvim_session nvimca 80 example.mlir
screen_until nvimca 'E ' >/dev/null
tmux -S "$sock" send-keys -t nvimca '12G' '\a'
expect nvimca 'Change result type to tensor<1x3xf32>' 'nvim: the menu offers the fix of the line, the cursor at its start'
tmux -S "$sock" send-keys -t nvimca '1' Enter
expect nvimca 'tosa\.sub .*-> tensor<1x3xf3' 'nvim: 1 Enter applies it'
absent nvimca 'Press ENTER' 'nvim: no "Press ENTER" after the menu'

# Neovim: the compile message (the path) without a "Press ENTER" prompt.
tmux -S "$sock" send-keys -t nvim80 ':TosaCompile' Enter
expect nvim80 'tosa-lsp: compiled to (/tmp/|…/)[^ ]*narrow\.so' 'nvim: the compile message shows the output path' 600
absent nvim80 'Press ENTER' 'nvim: no "Press ENTER" after the compile'

# Neovim: leniently parsed IREE ops carry no hint by default; the error does.
nvim_session nvimlen 120 lenient.mlir
expect nvimlen 'tosa\.add .*■' 'nvim: the error of tosa.add shown'
absent nvimlen 'leniently' 'nvim: no "parsed leniently" hint on the util./check. lines'
# A compile that fails with a multi-line error: its first line, no prompt.
tmux -S "$sock" send-keys -t nvimlen ':TosaCompile' Enter
expect nvimlen 'tosa-lsp: compiling lenient\.mlir failed: .*\(:messages\)' 'nvim: a failed compile says so on one line' 600
absent nvimlen 'Press ENTER' 'nvim: no "Press ENTER" after a failed compile'
vim_session vimlen 80 lenient.mlir
screen_until vimlen 'E>' >/dev/null
tmux -S "$sock" send-keys -t vimlen ':TosaCompile' Enter
expect vimlen 'tosa-lsp: compiling lenient\.mlir failed: .*\(:messages\)' 'vim: a failed compile says so on one line' 600
absent vimlen 'Press ENTER' 'vim: no "Press ENTER" after a failed compile'

# Review of whole-file rewrites, as drawn: a diff tab with how to answer.
vim_session vimrev 80 old.mlir
screen_until vimrev 'E>' >/dev/null
tmux -S "$sock" send-keys -t vimrev ':TosaMigrate' Enter
expect vimrev 'y apply  n discard │ current: old\.mlir .*y apply  n discard │ proposed: Migrate' 'vim: :TosaMigrate shows the review (current | proposed) with how to answer'
expect vimrev 'tosa-lsp: apply\? y: yes, n: no \(3 lines: Migrate this file' 'vim: the review asks'
tmux -S "$sock" send-keys -t vimrev y
expect vimrev 'applied "Migrate this file' 'vim: y applies'
expect vimrev 'tosa\.clamp %x \{max_val' 'vim: the migrated text shown in the file'
nvim_session nvimrev 80 old.mlir
screen_until nvimrev 'E ' >/dev/null
sleep 0.5
tmux -S "$sock" send-keys -t nvimrev ':TosaMigrate' Enter
expect nvimrev 'y apply  n discard │ current: old\.mlir .*y apply  n discard │ proposed: Migrate' 'nvim: :TosaMigrate shows the review (current | proposed) with how to answer'
expect nvimrev 'tosa-lsp: apply\? y: yes, n: no \(3 lines' 'nvim: the review asks'
tmux -S "$sock" send-keys -t nvimrev n
expect nvimrev 'not applied: Migrate this file' 'nvim: n discards'
absent nvimrev 'max_val' 'nvim: nothing applied'

echo "screen: $passed passed, $failed failed"
[ $failed -eq 0 ]
