" Headless Vim 9 test of editors/vim: the server's life cycle and editing
" details.
"
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -n -es -S lifecycle.vim
"
" The server killed (kill -9): one message with the signal, status "not
" running", signs / highlights / location list cleared, :TosaRestart brings
" them back; :TosaStop clears them too; a server that exits at start (a bad
" flag) shows its exit code and stderr, one whose loader misses a library
" names the Debian package, a missing one says how to install it; :saveas
" reopens the document under the new name; unnamed buffers are not opened;
" the cursor stays put when a quick fix is applied; `_emphasis_` in hovers
" is shown without underscores.
" Prints `vim-lifecycle: N passed, M failed`.

set nocompatible noswapfile hidden shortmess+=I
let s:here = expand('<sfile>:p:h')
let s:root = fnamemodify(s:here, ':h:h:h')
let s:started = reltime()
let s:passed = 0
let s:failed = 0

function! s:log(msg) abort
  call writefile([a:msg], '/dev/stdout', 'a')
endfunction

function! s:finish() abort
  call s:log(printf('vim-lifecycle: %d passed, %d failed (%.1f s)', s:passed, s:failed, reltimefloat(reltime(s:started))))
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
  return filter(copy(tosa_lsp#diagnostics()), 'get(v:val, "severity", 1) == 1')
endfunction
function! s:signs() abort
  return sign_getplaced(bufnr('%'), #{group: 'tosa_lsp'})[0].signs
endfunction
function! s:error_props() abort
  let l:r = []
  for l:l in range(1, line('$'))
    call extend(l:r, filter(prop_list(l:l), 'v:val.type =~# "^TosaLsp" && v:val.type !=# "TosaLspInlay"'))
  endfor
  return l:r
endfunction
function! s:server_pid() abort
  for l:j in job_info()
    if job_status(l:j) ==# 'run' && get(job_info(l:j).cmd, 0, '') ==# $TOSA_LSP
      return job_info(l:j).process
    endif
  endfor
  return 0
endfunction

try
  let &runtimepath = s:root . '/editors/vim,' . &runtimepath
  filetype plugin on
  runtime! ftdetect/mlir.vim
  runtime plugin/tosa_lsp.vim
  let g:tosa_lsp_command = [$TOSA_LSP]
  let g:tosa_lsp_echo_diagnostic = 0

  let s:tmp = tempname()
  call mkdir(s:tmp, 'p')
  let s:file = s:tmp . '/example.mlir'
  call writefile(readfile(s:here . '/example.mlir', 'b'), s:file, 'b')
  execute 'edit ' . fnameescape(s:file)
  normal! gg
  let s:buf = bufnr('%')
  call s:check(s:wait('tosa_lsp#ready() && len(s:errors()) == 1'), 'server started, one error')
  call s:check(s:wait('!empty(s:signs()) && !empty(s:error_props()) && !empty(getloclist(0))'), 'signs, highlights and location list shown')

  " -- the server killed: one message, status, everything cleared
  call s:mark_messages()
  let s:pid = s:server_pid()
  call s:check(s:pid > 0, 'server process found')
  call system('kill -9 ' . s:pid)
  call s:check(s:wait('!tosa_lsp#running()', 5000), 'killed server noticed')
  call s:check(s:wait('!empty(s:messages())', 3000) && len(filter(s:messages(), 'v:val =~# "signal"')) == 1
        \ && !empty(filter(s:messages(), 'v:val =~# ":TosaRestart"')),
        \ 'one message: killed by a signal, :TosaRestart starts it again', s:messages())
  call s:check(tosa_lsp#status() ==# 'tosa-lsp: not running', 'status: not running', tosa_lsp#status())
  call s:check(empty(s:signs()) && empty(s:error_props()) && empty(getloclist(0)) && empty(tosa_lsp#diagnostics()),
        \ 'signs, highlights, location list and diagnostics cleared', [s:signs(), s:error_props(), getloclist(0)])
  " Edits and commands stay quiet: no message per command.
  call setline(1, getline(1) . ' ')
  doautocmd <nomodeline> TextChanged
  TosaHover
  sleep 300m
  call s:check(len(filter(s:messages(), 'v:val =~# "signal"')) == 1 && !tosa_lsp#running(),
        \ 'no restart and no second message on edits and commands', s:messages())
  TosaRestart
  call s:check(s:wait('tosa_lsp#ready() && len(s:errors()) == 1 && !empty(s:signs())'), ':TosaRestart: diagnostics and signs again')

  " -- :TosaStop clears them too
  TosaStop
  call s:check(empty(s:signs()) && empty(s:error_props()) && empty(getloclist(0)), ':TosaStop clears signs, highlights, location list',
        \ [s:signs(), s:error_props(), getloclist(0)])
  TosaStart
  call s:check(s:wait('tosa_lsp#ready() && len(s:errors()) == 1 && !empty(s:signs())'), ':TosaStart: diagnostics again')

  " -- the cursor stays where it was when a quick fix is applied
  let s:sub = search('tosa.sub', 'nw')
  call cursor(s:sub, 11)
  let g:tosa_lsp_last_actions = v:null
  TosaCodeAction 1
  call s:check(s:wait('g:tosa_lsp_last_actions isnot v:null && getline(s:sub) =~# "-> tensor<1x3xf32>$"'), 'quick fix applied', getline(s:sub))
  call s:check(getpos('.')[1:2] == [s:sub, 11], 'cursor kept at the quick fix', getpos('.'))
  call s:check(s:wait('empty(s:errors())'), 'no errors after the fix')

  " -- :saveas: the document reopened under the new name
  let s:renamed = s:tmp . '/renamed.mlir'
  execute 'saveas ' . fnameescape(s:renamed)
  call s:check(s:wait('tosa_lsp#attached()') && tosa_lsp#uri(bufnr('%')) =~# 'renamed\.mlir$', ':saveas: attached under the new name')
  call setline(s:sub, substitute(getline(s:sub), '-> tensor<1x3xf32>$', '-> tensor<4x3xf32>', ''))
  doautocmd <nomodeline> TextChanged
  call s:check(s:wait('len(s:errors()) == 1 && !empty(s:signs())'), ':saveas: an edit is analysed under the new name', tosa_lsp#diagnostics())

  " -- an unnamed buffer is not opened (it has no URI)
  enew
  set filetype=mlir
  call setline(1, readfile(s:file))
  doautocmd <nomodeline> TextChanged
  sleep 500m
  call s:check(!tosa_lsp#attached(), 'unnamed buffer not opened on the server')
  bwipeout!

  " -- incremental sync: only the changed lines are sent; after random edits
  " (lines inserted, deleted, joined, changed, undone, at the start and the
  " end, all of them) the server's text is the buffer's: its error is on
  " the tosa.sub line and its functions where the buffer has them
  call s:check(tosa_lsp#incremental(), 'the server takes incremental changes: the plugin sends them')
  execute 'edit ' . fnameescape(s:file)
  call s:wait('tosa_lsp#attached()')
  let s:changes = []
  let s:orig_send = 0
  call srand(11)
  for s:i in range(150)
    let s:r = rand() % 8
    let s:n = line('$')
    let s:l = rand() % s:n + 1
    if s:r == 0
      call append(s:l - 1, ['// inserted ' . s:i, ''][: rand() % 2])
    elseif s:r == 1 && getline(s:l) =~# '^\s*\(//.*\)\=$'
      execute s:l . 'delete _'
    elseif s:r == 2 && getline(s:l) =~# '^\s*//' && getline(s:l + 1) =~# '^\s*//'
      execute s:l . 'join'
    elseif s:r == 3 && getline(s:l) =~# '^\s*//'
      call setline(s:l, getline(s:l) . ' more')
    elseif s:r == 4
      silent! undo
    elseif s:r == 5
      call append(line('$'), '// end ' . s:i)
    elseif s:r == 6
      call append(0, '// top ' . s:i)
    else
      let s:sl = search('tosa\.sub', 'nw')
      call setline(s:sl, substitute(getline(s:sl), 'tensor<\d\+x3xf32>$', 'tensor<' . (rand() % 2 ? 4 : 1) . 'x3xf32>', ''))
    endif
    call tosa_lsp#sync()
  endfor
  let s:sl = search('tosa\.sub', 'nw')
  call setline(s:sl, substitute(getline(s:sl), 'tensor<\d\+x3xf32>$', 'tensor<4x3xf32>', ''))
  call tosa_lsp#sync()
  call s:check(s:wait('len(s:errors()) == 1 && s:errors()[0].range.start.line == s:sl - 1'),
        \ 'after 150 random edits the error is on the tosa.sub line', [s:sl, tosa_lsp#diagnostics()])
  let s:syms = []
  call tosa_lsp#request('textDocument/documentSymbol', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))}}, {r, e -> extend(s:syms, r)})
  call s:wait('!empty(s:syms)')
  let s:want = map(filter(range(1, line('$')), 'getline(v:val) =~# "^func.func"'), 'v:val - 1')
  call s:check(map(copy(s:syms), 'v:val.range.start.line') ==# s:want, 'and the functions where the buffer has them', [s:syms, s:want])
  %delete _
  call tosa_lsp#sync()
  call setline(1, readfile(s:file))
  call tosa_lsp#sync()
  call s:check(s:wait('len(s:errors()) == 1 && s:errors()[0].range.start.line == search("tosa\\.sub", "nw") - 1'),
        \ 'all lines deleted and written again: the same', tosa_lsp#diagnostics())
  set nomodified

  " -- hover markdown: _emphasis_ shown plain (as *emphasis*), snake_case kept
  let s:plain = tosa_lsp#plain_markdown("_Stale: the text changed since_ and *also* this\nkeep tosa.logical_and and a_b_c")
  call s:check(s:plain ==# ['Stale: the text changed since and also this', 'keep tosa.logical_and and a_b_c'],
        \ 'hover: _emphasis_ without underscores, identifiers kept', s:plain)

  " -- a server that exits at start: its exit code and stderr shown
  call tosa_lsp#stop()
  let g:tosa_lsp_command = [$TOSA_LSP, '--bogus-flag']
  call s:mark_messages()
  TosaStart
  call s:check(s:wait('!empty(filter(s:messages(), "v:val =~# \"code 2\""))', 5000), 'exit at start: the exit code is shown', s:messages())
  call s:check(!empty(filter(s:messages(), 'v:val =~# "unknown command line argument"')), 'exit at start: its stderr is shown', s:messages())
  call s:check(tosa_lsp#status() ==# 'tosa-lsp: not running', 'exit at start: status not running', tosa_lsp#status())

  " -- the loader fails before main (a missing library): the Debian package
  " to install, then the server's stderr
  call tosa_lsp#stop()
  let s:fake = s:tmp . '/fake-tosa-lsp'
  call writefile(['#!/bin/sh', 'echo "$0: error while loading shared libraries: libMLIR.so.22.1: '
        \ . 'cannot open shared object file: No such file or directory" >&2', 'exit 127'], s:fake)
  call setfperm(s:fake, 'rwxr-xr-x')
  let g:tosa_lsp_command = [s:fake]
  call s:mark_messages()
  TosaStart
  call s:check(s:wait('!empty(filter(s:messages(), "v:val =~# \"code 127\""))', 5000)
        \ && get(s:messages(), 0, '') ==# "tosa-lsp: cannot start: libMLIR.so.22.1 is missing (install Debian's libmlir-22: sudo apt-get install libmlir-22)",
        \ 'loader error: the Debian package named first', s:messages())
  call s:check(!empty(filter(s:messages(), 'v:val =~# "error while loading shared libraries: libMLIR.so.22.1"')),
        \ 'loader error: its stderr line shown', s:messages())
  let s:libs = map(['libLLVM-22.so', 'libLLVM.so.22.1', 'libmlir_c_runner_utils.so.22.1', 'libmimalloc.so.2', 'libfoo.so.1'],
        \ 'tosa_lsp#missing_library(["x: error while loading shared libraries: " . v:val . ": cannot open shared object file: No such file or directory"])')
  call add(s:libs, tosa_lsp#missing_library(["x: /lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by x)"]))
  call add(s:libs, tosa_lsp#missing_library(['tosa-lsp: Unknown command line argument']))
  call s:check(s:libs[0] =~# 'install libllvm22)$' && s:libs[1] =~# 'install libllvm22)$' && s:libs[2] =~# 'install libmlir-22)$'
        \ && s:libs[3] =~# 'install libmimalloc2.0)$' && s:libs[4] =~# 'apt-file search libfoo.so.1)$'
        \ && s:libs[5] =~# 'GLIBCXX_3.4.32 not found.*install libstdc++6)$' && s:libs[6] ==# '',
        \ 'loader error: the package of each library', s:libs)

  " -- the server not found: how to install it, or g:tosa_lsp_command
  call tosa_lsp#stop()
  let g:tosa_lsp_command = [s:tmp . '/no-such-tosa-lsp']
  call s:mark_messages()
  TosaStart
  call s:check(!empty(filter(s:messages(), 'v:val =~# "server not found"'))
        \ && !empty(filter(s:messages(), 'v:val =~# "install it: sudo apt install ./tosa-lsp_0.1.0_amd64.deb .*cmake --install build"'))
        \ && !empty(filter(s:messages(), 'v:val =~# "g:tosa_lsp_command"')),
        \ 'not found: how to install it, or g:tosa_lsp_command', s:messages())
catch
  call s:check(0, 'exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
call s:finish()
