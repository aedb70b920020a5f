" Headless test of :TosaGraph (editors/vim/autoload/tosa_lsp/graph.vim) in
" Vim 9, or in Neovim through the Lua plugin's command (TOSA_NVIM=1):
" the function at the cursor written by `tosa-lsp graph` and handed to the
" opener; the buffer as edited, not as saved; the path printed without an
" opener; a clear message where there is no function.
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -es -S graph.vim
" Prints `vim-graph: N passed, M failed`; exits 0 only if nothing failed.
set nocompatible noswapfile hidden shortmess+=I
let s:here = expand('<sfile>:p:h')
let s:root = fnamemodify(s:here, ':h:h:h')
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
    call s:log('FAIL: ' . a:msg . (a:0 ? ' -- got: ' . string(a:1) : ''))
  endif
endfunction
function! s:wait(expr) abort
  for l:i in range(500)
    if eval(a:expr)
      return 1
    endif
    sleep 20m
  endfor
  return eval(a:expr)
endfunction
function! s:last_message() abort
  return get(split(execute('messages'), "\n"), -1, '')
endfunction

let &runtimepath = s:root . '/editors/vim,' . &runtimepath
let g:tosa_lsp_autostart = 0
let g:tosa_lsp_command = $TOSA_LSP
if has('nvim')
  lua require('tosa_lsp').setup{ cmd = { os.getenv('TOSA_LSP') }, autostart = false }
else
  runtime plugin/tosa_lsp.vim
endif
call s:check(exists(':TosaGraph') == 2, ':TosaGraph is defined')

" A fake opener: records what it was asked to open.
let s:dir = tempname()
call mkdir(s:dir, 'p')
let s:opened = s:dir . '/opened'
call writefile(['#!/bin/sh', 'printf "%s" "$1" > ' . s:opened], s:dir . '/opener')
call setfperm(s:dir . '/opener', 'rwx------')
let g:tosa_lsp_graph_opener = s:dir . '/opener'

let s:file = s:dir . '/model.mlir'
call writefile([
      \ 'func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {',
      \ '  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>',
      \ '  return %0 : tensor<2xf32>',
      \ '}',
      \ 'func.func @g(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {',
      \ '  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>',
      \ '  return %0 : tensor<2xf32>',
      \ '}'], s:file)
execute 'edit ' . fnameescape(s:file)
call cursor(6, 5)
call s:check(tosa_lsp#graph#function_at(6) ==# 'g', 'the function at line 6 is @g', tosa_lsp#graph#function_at(6))
TosaGraph
let s:page = get(g:, 'tosa_lsp_graph_last', '')
call s:check(s:page =~# '\.html$' && filereadable(s:page), ':TosaGraph writes an HTML file', s:page)
let s:html = filereadable(s:page) ? join(readfile(s:page), "\n") : ''
call s:check(s:html =~# '^<!DOCTYPE html>' && stridx(s:html, '"function":"g"') >= 0, 'the page draws @g', s:html[:200])
call s:check(stridx(s:html, "'tosa.add' op operands don") >= 0, "the page carries @g's error")
call s:check(s:wait('filereadable(s:opened)') && readfile(s:opened) ==# [s:page], 'the opener gets the page', filereadable(s:opened) ? readfile(s:opened) : 'nothing')
call s:check(s:last_message() =~# 'graph of @g: .*(opened with ', 'says what it opened', s:last_message())

" Unsaved edits are drawn: a new op in @f, json to read it.
call cursor(2, 1)
call append(2, '  %1 = tosa.negate %0 : (tensor<2xf32>) -> tensor<2xf32>')
TosaGraph json
let s:json = get(g:, 'tosa_lsp_graph_last', '')
let s:model = filereadable(s:json) ? json_decode(join(readfile(s:json), "\n")) : {}
call s:check(get(s:model, 'function', '') ==# 'f', 'json of @f (the cursor moved)', get(s:model, 'function', ''))
call s:check(len(filter(copy(get(s:model, 'nodes', [])), 'v:val.label ==# "tosa.negate"')) == 1, 'the unsaved op is in the graph')

" No opener: the path is printed.
let g:tosa_lsp_graph_opener = ''
TosaGraph dot
call s:check(s:last_message() =~# 'graph of @f: .*\.dot$' && s:last_message() !~# 'opened', 'no opener: the path is printed', s:last_message())
call s:check(join(readfile(g:tosa_lsp_graph_last), "\n") =~# '^digraph "f"', 'dot written')

" No function: a message, nothing written.
enew!
call setline(1, ['// nothing here'])
let g:tosa_lsp_graph_last = ''
TosaGraph
call s:check(g:tosa_lsp_graph_last ==# '' && s:last_message() =~# 'no function', 'no function: a message', s:last_message())
TosaGraph png
call s:check(s:last_message() =~# 'takes html, svg, dot or json', 'a bad format: a message', s:last_message())

call delete(s:dir, 'rf')
call s:log(printf('vim-graph: %d passed, %d failed', s:passed, s:failed))
if s:failed
  cquit 1
endif
qall!
