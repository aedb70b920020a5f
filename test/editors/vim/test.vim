" Headless Vim 9 test of editors/vim against tosa-lsp.
"
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -es -S test.vim
"
" Optional: MLIR_OPT (default mlir-opt-22), TOSA_VIM_TIMEOUT_MS (per wait,
" default 15000).  Prints `vim: N passed, M failed`; exits 0 only if nothing
" failed.  run.sh adds a hard timeout around the whole run.

set nocompatible noswapfile shortmess+=I
let s:here = expand('<sfile>:p:h')
let s:root = fnamemodify(s:here, ':h:h:h')
let s:started = reltime()
let s:passed = 0
let s:failed = 0
let s:out = []
let s:wait_ms = str2nr(empty($TOSA_VIM_TIMEOUT_MS) ? '15000' : $TOSA_VIM_TIMEOUT_MS)
let s:mlir_opt = empty($MLIR_OPT) ? 'mlir-opt-22' : $MLIR_OPT

function! s:log(msg) abort
  " stdout: -es prints :verbose echo output there only via writefile.
  call writefile([a:msg], '/dev/stdout', 'a')
endfunction

function! s:finish() abort
  call s:log(printf('vim: %d passed, %d failed (%.1f s)', s:passed, s:failed, reltimefloat(reltime(s:started))))
  if exists('*tosa_lsp#stop')
    silent! call tosa_lsp#stop()
  endif
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

function! s:wait(expr) abort
  let l:deadline = reltimefloat(reltime()) + s:wait_ms / 1000.0
  while reltimefloat(reltime()) < l:deadline
    if eval(a:expr)
      return 1
    endif
    sleep 20m
  endwhile
  return eval(a:expr)
endfunction

function! s:find_line(pat) abort
  for l:i in range(1, line('$'))
    if stridx(getline(l:i), a:pat) >= 0
      return l:i
    endif
  endfor
  return 0
endfunction

function! s:errors() abort
  return filter(copy(tosa_lsp#diagnostics()), 'get(v:val, "severity", 1) == 1')
endfunction

try
  if empty($TOSA_LSP) || !executable($TOSA_LSP)
    call s:check(0, 'TOSA_LSP is set and executable', $TOSA_LSP)
    call s:finish()
  endif
  call s:check(v:version >= 900 && has('textprop') && has('job') && has('channel'),
        \ 'Vim 9 with +job +channel +textprop')

  let &runtimepath = s:root . '/editors/vim,' . &runtimepath
  filetype plugin on
  syntax on
  runtime! ftdetect/mlir.vim
  runtime plugin/tosa_lsp.vim
  let g:tosa_lsp_command = [$TOSA_LSP]
  let g:tosa_lsp_inlay_hints = 0

  let s:tmp = tempname()
  call mkdir(s:tmp, 'p')
  let s:file = s:tmp . '/example.mlir'
  call writefile(readfile(s:here . '/example.mlir', 'b'), s:file, 'b')
  execute 'edit ' . fnameescape(s:file)
  let s:buf = bufnr('%')

  " -- filetype, ftplugin, syntax
  call s:check(&filetype ==# 'mlir', 'filetype detected as mlir', &filetype)
  call s:check(&l:commentstring ==# '// %s' && &l:shiftwidth == 2 && &l:expandtab,
        \ 'ftplugin: commentstring, shiftwidth=2, expandtab', [&l:commentstring, &l:shiftwidth, &l:expandtab])
  call s:check(exists('b:undo_ftplugin'), 'ftplugin sets b:undo_ftplugin')
  let s:add = s:find_line('tosa.add')
  let s:addcol = stridx(getline(s:add), 'tosa.add') + 1
  let s:syn = {}
  for [s:what, s:pat] in [['mlirOp', 'tosa.add'], ['mlirValue', '%sum'], ['mlirType', 'tensor<1x3xf32>'], ['mlirComment', '']]
    let s:l = s:what ==# 'mlirComment' ? 1 : s:add
    let s:c = s:what ==# 'mlirComment' ? 1 : stridx(getline(s:l), s:pat) + 1
    let s:syn[s:what] = synIDattr(synID(s:l, s:c, 1), 'name')
  endfor
  call s:check(s:syn ==# #{mlirOp: 'mlirOp', mlirValue: 'mlirValue', mlirType: 'mlirType', mlirComment: 'mlirComment'},
        \ 'syntax groups for op, SSA value, type, comment', s:syn)

  " -- started by the FileType autocmd
  call s:check(tosa_lsp#running(), 'server started on FileType mlir')
  let s:caps = tosa_lsp#capabilities()
  call s:check(has_key(s:caps, 'hoverProvider') && has_key(s:caps, 'inlayHintProvider'),
        \ 'initialize returned capabilities', s:caps)

  " -- diagnostics: signs + text properties
  let s:sub = s:find_line('tosa.sub')
  let s:subcol = stridx(getline(s:sub), 'tosa.sub') + 1
  call s:check(s:wait('len(s:errors()) == 1'), 'one error diagnostic after didOpen', tosa_lsp#diagnostics())
  let s:signs = sign_getplaced(s:buf, #{group: 'tosa_lsp'})[0].signs
  call s:check(len(filter(copy(s:signs), 'v:val.lnum == s:sub && v:val.name ==# "TosaLspError"')) == 1,
        \ 'error sign on the tosa.sub line', s:signs)
  let s:props = filter(prop_list(s:sub), 'v:val.type ==# "TosaLspError"')
  call s:check(len(s:props) == 1 && s:props[0].col == s:subcol && s:props[0].length == len('tosa.sub'),
        \ 'error text property on "tosa.sub"', prop_list(s:sub))
  call s:check(!empty(getloclist(0)), 'location list filled')

  " -- hover (popup)
  call cursor(s:add, s:addcol + 2)
  TosaHover
  call s:check(stridx(g:tosa_lsp_last_hover, '**Inferred** `2x3` vs **declared** `2x3`') == 0,
        \ ':TosaHover text starts with "**Inferred** `2x3` vs **declared** `2x3`"', g:tosa_lsp_last_hover)
  call s:check(exists('g:tosa_lsp_hover_popup') && !empty(popup_getpos(g:tosa_lsp_hover_popup)),
        \ 'hover shown in a popup')
  silent! call popup_clear(1)
  call s:check(maparg('K', 'n') =~# 'TosaHover', 'K mapped to :TosaHover', maparg('K', 'n'))

  " -- inlay hints as virtual text
  TosaInlayHints
  let s:max = s:find_line('tosa.maximum')
  let s:decl = '-> tensor<?x7xf32>'
  " prop_list() of Vim 9.0 does not return the virtual text itself: check
  " the prop (negative id = virtual text) and the label the plugin placed.
  let s:decl = '-> tensor<?x7xf32>'
  let s:want = #{lnum: s:max, col: stridx(getline(s:max), s:decl) + len(s:decl) + 1, label: ' inferred: 5x7'}
  let s:hint = filter(copy(get(b:, 'tosa_lsp_inlay_hints', [])), 'v:val.label ==# s:want.label')
  let s:vt = filter(prop_list(s:max), 'v:val.type ==# "TosaLspInlay"')
  call s:check(len(s:hint) == 1 && s:hint[0].lnum == s:want.lnum && s:hint[0].col == s:want.col,
        \ 'inlay hint " inferred: 5x7" placed after the declared result type', get(b:, 'tosa_lsp_inlay_hints', []))
  call s:check(len(s:vt) == 1 && s:vt[0].id < 0 && s:vt[0].col == s:want.col,
        \ 'virtual-text property on the tosa.maximum line', prop_list(s:max))
  let s:vt = filter(prop_list(s:sub), 'v:val.type ==# "TosaLspInlay"')
  call s:check(len(s:vt) == 1 && s:vt[0].id < 0
        \ && !empty(filter(copy(b:tosa_lsp_inlay_hints), 'v:val.lnum == s:sub && v:val.label ==# " inferred: 1x3"')),
        \ 'virtual text " inferred: 1x3" on the bad tosa.sub', [prop_list(s:sub), b:tosa_lsp_inlay_hints])

  " -- edit (full sync): insert a multi-byte comment above the bad op
  call append(s:sub - 1, '  // café ✓')
  doautocmd <nomodeline> TextChanged
  let s:sub += 1
  call s:check(s:wait('len(s:errors()) == 1 && s:errors()[0].range.start.line == s:sub - 1'),
        \ 'error moves one line down after an edit', tosa_lsp#diagnostics())
  call s:check(s:wait('!empty(filter(sign_getplaced(s:buf, #{group: "tosa_lsp"})[0].signs, "v:val.lnum == s:sub"))'),
        \ 'sign moved with the error')

  " -- quick fix through :TosaCodeAction N
  call cursor(s:sub, s:subcol)
  let s:actions = tosa_lsp#code_actions()
  let s:titles = map(copy(s:actions), 'v:val.title')
  let s:idx = -1
  for s:i in range(len(s:actions))
    if s:idx < 0 && get(s:actions[s:i], 'kind', '') ==# 'quickfix' && s:actions[s:i].title =~# '^Change result type to tensor<1x3xf32>'
      let s:idx = s:i
    endif
  endfor
  call s:check(s:idx >= 0, 'quickfix "Change result type to tensor<1x3xf32> ..." offered', s:titles)
  call s:check(!empty(filter(copy(s:actions), 'v:val.title =~# "^Preview lowering of @wrong_result_dim" && get(v:val, "kind", "") ==# "refactor.rewrite"')),
        \ 'refactor.rewrite "Preview lowering of @wrong_result_dim" listed', s:titles)
  if s:idx >= 0
    execute 'TosaCodeAction ' . (s:idx + 1)
    call s:check(getline(s:sub) ==# '  %diff = tosa.sub %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>',
          \ 'buffer line after applying the quickfix', getline(s:sub))
    let s:fixed = tempname() . '.mlir'
    call writefile(getline(1, '$'), s:fixed)
    let s:opt_out = system(s:mlir_opt . ' ' . shellescape(s:fixed) . ' 2>&1')
    call s:check(v:shell_error == 0, s:mlir_opt . ' verifies the fixed buffer', s:opt_out[:400])
    call delete(s:fixed)
    call s:check(s:wait('empty(s:errors())'), 'no error diagnostics after the quickfix', tosa_lsp#diagnostics())
    call s:check(s:wait('empty(filter(prop_list(s:sub), "v:val.type ==# \"TosaLspError\""))'),
          \ 'error text property cleared')
  endif

  " -- lowering preview in a read-only scratch split (needs a verifying module)
  call cursor(s:add, s:addcol)
  TosaPreviewLowering linalg upstream
  let s:pbuf = bufnr('%')
  let s:ptext = join(getline(1, '$'), "\n")
  call s:check(s:pbuf != s:buf && stridx(s:ptext, 'linalg.generic') >= 0,
        \ ':TosaPreviewLowering opens a buffer containing linalg.generic', s:ptext[:400])
  call s:check(!&modifiable && &readonly && &buftype ==# 'nofile' && winnr('$') == 2,
        \ 'preview is a read-only scratch split', [&modifiable, &readonly, &buftype, winnr('$')])
  close
  call s:check(bufnr('%') == s:buf, 'back in the source buffer')

  " -- compile (executeCommand tosa.compile)
  if empty($TOSA_VIM_SKIP_COMPILE)
    let g:tosa_lsp_settings = {}
    let s:r = tosa_lsp#compile()
    call s:check(type(s:r) == v:t_dict && filereadable(get(s:r, 'output', '')),
          \ ':TosaCompile produces the output file', s:r)
  endif
  call delete(s:tmp, 'rf')
catch
  call s:check(0, 'exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
call s:finish()
