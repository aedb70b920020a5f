" Headless Vim 9 with the *installed* plugin (test/install/lib.sh check_vim):
" found through 'packpath', server `tosa-lsp` from PATH, nothing from the
" source tree but the example file. Prints `vim-installed: N passed, M failed`.
let s:passed = 0
let s:failed = 0
function! s:log(msg) abort
  call writefile([a:msg], '/dev/stdout', 'a')
endfunction
function! s:check(cond, msg, ...) abort
  if a:cond
    let s:passed += 1
  else
    let s:failed += 1
    call s:log('FAIL: ' . a:msg . (a:0 ? ': ' . string(a:1) : ''))
  endif
endfunction
function! s:wait(expr) abort
  let l:deadline = reltimefloat(reltime()) + 20
  while reltimefloat(reltime()) < l:deadline && !eval(a:expr)
    sleep 20m
  endwhile
  return eval(a:expr)
endfunction

let s:root = $TOSA_INSTALL_ROOT
let s:plugin = globpath(&runtimepath, 'autoload/tosa_lsp.vim', 0, 1)
call s:check(len(s:plugin) == 1 && stridx(s:plugin[0], s:root . '/') == 0,
      \ 'the plugin on the runtimepath is the installed one', s:plugin)
call s:check(exists(':TosaStart') == 2, ':TosaStart defined (plugin/ loaded at startup)')
call s:check(!exists('g:tosa_lsp_command'), 'no g:tosa_lsp_command: the server comes from PATH')
call s:check(exepath('tosa-lsp') ==# s:root . '/bin/tosa-lsp', 'tosa-lsp on PATH is the installed one', exepath('tosa-lsp'))

execute 'edit ' . fnameescape($TOSA_EXAMPLE)
call s:check(&filetype ==# 'mlir', 'filetype mlir (ftdetect)', &filetype)
call s:check(get(b:, 'current_syntax', '') ==# 'mlir', 'syntax mlir', get(b:, 'current_syntax', ''))
call s:check(s:wait('tosa_lsp#ready()'), 'server started and initialized')
call s:check(s:wait('!empty(filter(copy(tosa_lsp#diagnostics()), "get(v:val, \"severity\", 1) == 1"))'),
      \ 'an error diagnostic arrives', tosa_lsp#diagnostics())
call cursor(search('tosa.add'), 1)
normal! ftl
let g:tosa_lsp_last_hover = ''
TosaHover
call s:check(s:wait('g:tosa_lsp_last_hover =~# "Inferred"'), 'hover answered', g:tosa_lsp_last_hover)
call tosa_lsp#stop()
call s:log(printf('vim-installed: %d passed, %d failed', s:passed, s:failed))
if s:failed
  cquit 1
endif
qall!
