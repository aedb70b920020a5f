" Headless Vim 9 test of editors/vim: whole-file rewrites are reviewed.
"
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -n -es -S review.vim
"
" :TosaMigrate and :TosaRefineAll (textDocument/codeAction with
" context.only source.migrate / source.refineShapes) and the same actions
" chosen in :TosaCodeAction open a diff of the current and the proposed
" text in a new tab page; `n` discards it (the buffer is unchanged), `y`
" applies it (the result verifies with mlir-opt-22); a buffer changed
" during the review, or since the server proposed the rewrite, is refused.
" Prints `vim-review: N passed, M failed`.

set encoding=utf-8
set nocompatible noswapfile hidden shortmess+=I
let s:here = expand('<sfile>:p:h')
let s:root = fnamemodify(s:here, ':h:h:h')
let s:started = reltime()
let s:passed = 0
let s:failed = 0
let s:mlir_opt = empty($MLIR_OPT) ? 'mlir-opt-22' : $MLIR_OPT

function! s:log(msg) abort
  call writefile([a:msg], '/dev/stdout', 'a')
endfunction

function! s:finish() abort
  call s:log(printf('vim-review: %d passed, %d failed (%.1f s)', s:passed, s:failed, reltimefloat(reltime(s:started))))
  silent! call tosa_lsp#stop()
  if s:failed > 0
    cquit 1
  endif
  qall!
endfunction

function! s:check(cond, msg, ...) abort
  if a:cond
    let s:passed += 1
    if !empty($TOSA_VIM_VERBOSE)
      call s:log('ok: ' . a:msg)
    endif
  else
    let s:failed += 1
    call s:log('FAIL: ' . a:msg)
    if a:0
      call s:log('  got: ' . (type(a:1) == v:t_string ? a:1 : string(a:1)))
    endif
  endif
  return a:cond
endfunction

function! s:wait(expr, ...) abort
  let l:deadline = reltimefloat(reltime()) + (a:0 ? a:1 : 15000) / 1000.0
  while reltimefloat(reltime()) < l:deadline
    if eval(a:expr)
      return 1
    endif
    sleep 20m
  endwhile
  return eval(a:expr)
endfunction

function! s:mark_messages() abort
  let s:msg_mark = len(split(execute('messages'), "\n"))
endfunction
function! s:messages() abort
  return split(execute('messages'), "\n")[s:msg_mark :]
endfunction

function! s:errors() abort
  return filter(copy(tosa_lsp#diagnostics(s:buf)), 'get(v:val, "severity", 1) == 1')
endfunction

function! s:verifies(lines) abort
  let l:f = tempname() . '.mlir'
  call writefile(a:lines, l:f)
  let l:out = system(s:mlir_opt . ' ' . shellescape(l:f) . ' 2>&1')
  call delete(l:f)
  return v:shell_error == 0 ? '' : l:out[:300]
endfunction

" The review's windows: [current, proposed] buffers' lines.
function! s:review_lines() abort
  let l:r = tosa_lsp#reviewing()
  return empty(l:r) ? [[], []] : map(copy(l:r.bufs), 'getbufline(v:val, 1, "$")')
endfunction

" Answers in the review's window, as a user types y or n there.
function! s:answer(key) abort
  let l:r = tosa_lsp#reviewing()
  if empty(l:r)
    return
  endif
  call win_gotoid(bufwinid(l:r.bufs[1]))
  execute 'normal ' . a:key
endfunction

try
  let &runtimepath = s:root . '/editors/vim,' . &runtimepath
  filetype plugin on
  runtime! ftdetect/mlir.vim
  runtime plugin/tosa_lsp.vim
  let g:tosa_lsp_command = [$TOSA_LSP]
  let s:tmp = tempname()
  call mkdir(s:tmp, 'p')
  let s:file = s:tmp . '/old.mlir'
  call writefile(readfile(s:here . '/old.mlir'), s:file)
  execute 'edit ' . fnameescape(s:file)
  let s:buf = bufnr('%')
  let s:orig = getline(1, '$')
  call s:check(s:wait('len(s:errors()) >= 2'), 'old-form ops are errors', tosa_lsp#diagnostics(s:buf))

  " -- :TosaMigrate: a review, nothing applied yet
  call cursor(6, 3)
  TosaMigrate
  call s:check(s:wait('!empty(tosa_lsp#reviewing())'), ':TosaMigrate opens a review')
  let s:r = tosa_lsp#reviewing()
  let [s:cur, s:new] = s:review_lines()
  call s:check(tabpagenr('$') == 2 && tabpagenr() == 2 && winnr('$') == 2, 'the review is a new tab page with two windows',
        \ [tabpagenr('$'), tabpagenr(), winnr('$')])
  call s:check(getwinvar(1, '&diff') && getwinvar(2, '&diff'), 'both windows in diff mode')
  call s:check(get(s:r, 'title', '') =~# '^Migrate this file to MLIR 22 TOSA (2 ops)', 'the review is of "Migrate this file ... (2 ops)"', s:r)
  call s:check(s:cur ==# s:orig, 'left: the current text', s:cur)
  call s:check(s:new !=# s:orig && empty(filter(copy(s:new), 'v:val =~# "shift = 1 : i8\\|min_fp"')),
        \ 'right: the proposed text without the old attributes', s:new)
  call s:check(&statusline =~# '^ y apply  n discard │ proposed: Migrate this file', 'the status line says how to answer', &statusline)
  call s:check(getbufline(s:buf, 1, '$') ==# s:orig && !getbufvar(s:buf, '&modified'), 'the file is unchanged while reviewed')
  call s:check(get(s:r, 'lines', 0) >= 2, 'changed lines counted', s:r)

  " -- n: discarded
  call s:mark_messages()
  call s:answer('n')
  call s:check(empty(tosa_lsp#reviewing()) && tabpagenr('$') == 1 && bufnr('%') == s:buf, 'n closes the review, back in the file',
        \ [tabpagenr('$'), bufnr('%')])
  call s:check(getbufline(s:buf, 1, '$') ==# s:orig, 'n: nothing applied')
  call s:check(empty(filter(range(1, bufnr('$')), 'bufexists(v:val) && bufname(v:val) =~# "^tosa-review:"')), 'n: the review buffers are wiped')

  " -- the buffer changed during the review: refused
  TosaMigrate
  call s:wait('!empty(tosa_lsp#reviewing())')
  call setbufline(s:buf, 1, '// edited during the review')
  call s:mark_messages()
  call s:answer('y')
  call s:check(empty(tosa_lsp#reviewing()) && getbufline(s:buf, 2, '$') ==# s:orig[1:], 'changed during the review: not applied')
  call s:check(!empty(filter(s:messages(), 'v:val =~# "changed during the review: \"Migrate this file.*\" not applied; ask again"')),
        \ 'changed during the review: says so', s:messages())
  call setbufline(s:buf, 1, s:orig[0])
  call tosa_lsp#sync(s:buf)

  " -- a proposal for another version of the text: refused before any review
  let s:old_action = #{title: 'Migrate (stale)', kind: 'source.migrate', data: #{review: v:true},
        \ edit: #{documentChanges: [#{textDocument: #{uri: tosa_lsp#uri(s:buf), version: 999999}, edits: []}]}}
  call s:mark_messages()
  call s:check(tosa_lsp#review(s:old_action) == 0 && empty(tosa_lsp#reviewing()), 'a rewrite of an older version is not reviewed')
  call s:check(!empty(filter(s:messages(), 'v:val =~# "changed since the server proposed"')), 'and says why', s:messages())

  " -- y: applied, verifies
  TosaMigrate
  call s:wait('!empty(tosa_lsp#reviewing())')
  let [s:cur, s:new] = s:review_lines()
  call s:mark_messages()
  call s:answer('y')
  call s:check(empty(tosa_lsp#reviewing()) && tabpagenr('$') == 1 && bufnr('%') == s:buf, 'y closes the review')
  call s:check(getbufline(s:buf, 1, '$') ==# s:new, 'y: the file is the proposed text', getbufline(s:buf, 1, '$'))
  call s:check(s:verifies(getbufline(s:buf, 1, '$')) ==# '', s:mlir_opt . ' verifies the migrated file', s:verifies(getbufline(s:buf, 1, '$')))
  call s:check(!empty(filter(s:messages(), 'v:val =~# "^tosa-lsp: applied \"Migrate this file.*\" to old.mlir"')), 'y: says what was applied', s:messages())
  call s:check(s:wait('empty(s:errors())'), 'no errors after the migration', tosa_lsp#diagnostics(s:buf))
  let g:tosa_lsp_last_echo = ''
  TosaMigrate
  call s:check(s:wait('g:tosa_lsp_last_echo ==# "tosa-lsp: nothing to migrate in this file"', 5000),
        \ 'a migrated file: nothing to migrate', g:tosa_lsp_last_echo)

  " -- :TosaRefineAll in @refinable, chosen through the review
  let s:lnum = search('tosa.exp', 'n')
  call cursor(s:lnum, 3)
  TosaRefineAll
  call s:check(s:wait('!empty(tosa_lsp#reviewing())'), ':TosaRefineAll opens a review')
  call s:check(get(tosa_lsp#reviewing(), 'title', '') =~# '^Refine all shapes in @refinable', 'of "Refine all shapes in @refinable"', tosa_lsp#reviewing())
  call s:answer('y')
  call s:check(getbufline(s:buf, s:lnum)[0] =~# '-> tensor<5x7xf32>$', 'refined: tosa.exp returns tensor<5x7xf32>', getbufline(s:buf, s:lnum))
  call s:check(s:verifies(getbufline(s:buf, 1, '$')) ==# '', s:mlir_opt . ' verifies the refined file', s:verifies(getbufline(s:buf, 1, '$')))

  " -- the same actions from :TosaCodeAction go through the review
  %delete _
  call setline(1, s:orig)
  call tosa_lsp#sync(s:buf)
  call s:wait('len(s:errors()) >= 2')
  call cursor(11, 3)
  let g:tosa_lsp_last_actions = v:null
  call tosa_lsp#code_actions({a -> execute('let g:tosa_lsp_last_actions = a')})
  call s:wait('g:tosa_lsp_last_actions isnot v:null')
  let s:acts = g:tosa_lsp_last_actions is v:null ? [] : g:tosa_lsp_last_actions
  let s:idx = -1
  for s:i in range(len(s:acts))
    if s:idx < 0 && s:acts[s:i].title =~# '^Migrate this file'
      let s:idx = s:i
    endif
  endfor
  call s:check(s:idx >= 0 && get(get(s:acts[s:idx], 'data', {}), 'review', v:false) is v:true,
        \ '"Migrate this file" offered on the tosa.mul line, with data.review', map(copy(s:acts), 'v:val.title'))
  if s:idx >= 0
    execute 'TosaCodeAction ' . (s:idx + 1)
    call s:check(s:wait('!empty(tosa_lsp#reviewing())'), ':TosaCodeAction N on "Migrate this file" opens the review')
    call s:check(getbufline(s:buf, 1, '$') ==# s:orig, 'and applies nothing by itself')
    call s:answer('q')
    call s:check(empty(tosa_lsp#reviewing()) && getbufline(s:buf, 1, '$') ==# s:orig, 'q discards it')
  endif

  " -- the review's tab page closed without an answer: nothing applied
  TosaMigrate
  call s:wait('!empty(tosa_lsp#reviewing())')
  tabclose
  call s:check(empty(tosa_lsp#reviewing()) && getbufline(s:buf, 1, '$') ==# s:orig
        \ && get(g:, 'tosa_lsp_last_echo', '') =~# 'review closed, not applied', ':tabclose ends the review, nothing applied', get(g:, 'tosa_lsp_last_echo', ''))
  " -- edits made in memory in one pass: multi-line, at the end, UTF-16
  new
  call setline(1, ['a café b', 'line two', 'line three', 'last'])
  let s:eb = bufnr('%')
  call tosa_lsp#apply_text_edits(s:eb, [
        \ #{range: #{start: #{line: 3, character: 4}, end: #{line: 4, character: 0}}, newText: "!\nappended\n"},
        \ #{range: #{start: #{line: 0, character: 2}, end: #{line: 0, character: 6}}, newText: 'CAFÉ'},
        \ #{range: #{start: #{line: 0, character: 7}, end: #{line: 2, character: 5}}, newText: "B\nX "},
        \ ])
  call s:check(getline(1, '$') ==# ['a CAFÉ B', 'X three', 'last!', 'appended'],
        \ 'edits out of order, across lines, after a multi-byte character and at the end of the file', getline(1, '$'))
  call s:check(tosa_lsp#edited_count() == 4, 'the lines they wrote: 4', tosa_lsp#edited_count())
  bwipeout!

  " -- a rewrite of thousands of ops: reviewed and applied in seconds
  let s:big = []
  for s:i in range(1000)
    call extend(s:big, map(copy(s:orig[4:12]), 'substitute(v:val, "@\\(relu6\\|mul_shift\\)", "@\\1_" . s:i, "")'))
  endfor
  call writefile(s:big, s:tmp . '/big.mlir')
  execute 'edit ' . fnameescape(s:tmp . '/big.mlir')
  let s:bbuf = bufnr('%')
  call s:wait('len(tosa_lsp#diagnostics(s:bbuf)) >= 2000', 60000)
  let s:t0 = reltime()
  TosaMigrate
  call s:check(s:wait('!empty(tosa_lsp#reviewing())', 60000), 'a 9000-line file: :TosaMigrate opens the review', len(tosa_lsp#diagnostics(s:bbuf)))
  let s:treview = reltimefloat(reltime(s:t0))
  let s:want = s:review_lines()[1]
  let s:t0 = reltime()
  call s:answer('y')
  let s:tapply = reltimefloat(reltime(s:t0))
  " Measured (load average 12): review 1 s, apply 0.15 s; one edit at a
  " time, the apply took 20 s.
  call s:check(getbufline(s:bbuf, 1, '$') ==# s:want && s:tapply < 3.0,
        \ printf('2000 migrated ops applied in < 3 s (review %.2f s, apply %.2f s)', s:treview, s:tapply), [s:treview, s:tapply])
  call delete(s:tmp, 'rf')
catch
  call s:check(0, 'exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
call s:finish()
