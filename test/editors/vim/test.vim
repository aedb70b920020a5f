" Headless Vim 9 test of editors/vim against tosa-lsp.
"
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -es -S test.vim
"
" Optional: MLIR_OPT (default mlir-opt-22), TOSA_VIM_TIMEOUT_MS (per wait,
" default 15000).  Prints `vim: N passed, M failed`; exits 0 only if nothing
" failed.  run.sh adds a hard timeout around the whole run.

set nocompatible noswapfile hidden shortmess+=I
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

" What the user saw: the message history since s:mark_messages().
function! s:mark_messages() abort
  let s:msg_mark = len(split(execute('messages'), "\n"))
endfunction
function! s:messages() abort
  return split(execute('messages'), "\n")[s:msg_mark :]
endfunction
function! s:elapsed(start) abort
  return reltimefloat(reltime(a:start))
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
  call s:check(s:wait('tosa_lsp#ready()'), 'initialize answered')
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

  " -- hover (asynchronous popup; defect 6: plain aligned text, scrolling)
  call cursor(s:add, s:addcol + 2)
  let g:tosa_lsp_last_hover = ''
  silent! unlet g:tosa_lsp_hover_popup
  let s:t0 = reltime()
  TosaHover
  call s:check(s:elapsed(s:t0) < 0.5, ':TosaHover returns at once (asynchronous)', s:elapsed(s:t0))
  call s:check(s:wait('exists("g:tosa_lsp_hover_popup") && !empty(popup_getpos(g:tosa_lsp_hover_popup))'), 'hover shown in a popup')
  call s:check(stridx(g:tosa_lsp_last_hover, '**Inferred** `2x3` vs **declared** `2x3`') == 0,
        \ 'hover markdown starts with "**Inferred** `2x3` vs **declared** `2x3`"', g:tosa_lsp_last_hover)
  let s:plines = getbufline(winbufnr(g:tosa_lsp_hover_popup), 1, '$')
  call s:check(get(s:plines, 0, '') ==# 'Inferred 2x3 vs declared 2x3',
        \ 'popup shows plain text (no ** or backticks)', s:plines)
  call s:check(empty(filter(copy(s:plines), 'v:val =~# "^\\s*|"')) && !empty(filter(copy(s:plines), 'v:val =~# "^dim \\+#0 \\+#1 \\+inferred \\+declared \\+rule"')),
        \ 'popup shows the table as aligned columns, not raw Markdown', s:plines)
  call s:check(!empty(filter(copy(s:plines), 'v:val =~# " 1 | >1 -> >1 "')), 'escaped \| shown as | inside the rule column', s:plines)
  call s:check(popup_getpos(g:tosa_lsp_hover_popup).width <= 80, 'popup fits 80 columns', popup_getpos(g:tosa_lsp_hover_popup))
  silent! call popup_clear(1)
  call s:check(maparg('K', 'n') =~# 'TosaHover', 'K mapped to :TosaHover', maparg('K', 'n'))
  " Scrolling at 80x24 is checked on a real screen: test/editors/vim/screen.sh.

  " -- inlay hints: shown without :TosaInlayHints or a pause (defect 5)
  let s:max = s:find_line('tosa.maximum')
  let s:decl = '-> tensor<?x7xf32>'
  let s:want = #{lnum: s:max, col: stridx(getline(s:max), s:decl) + len(s:decl) + 1, label: ' inferred: 5x7'}
  call s:check(s:wait('!empty(filter(copy(get(b:, "tosa_lsp_inlay_hints", [])), "v:val.label ==# s:want.label"))'),
        \ 'inlay hints appear after the analysis, no CursorHold needed', get(b:, 'tosa_lsp_inlay_hints', []))
  let s:hint = filter(copy(get(b:, 'tosa_lsp_inlay_hints', [])), 'v:val.label ==# s:want.label')
  let s:vt = filter(prop_list(s:max), 'v:val.type ==# "TosaLspInlay"')
  call s:check(len(s:hint) == 1 && s:hint[0].lnum == s:want.lnum && s:hint[0].col == s:want.col,
        \ 'inlay hint " inferred: 5x7" placed after the declared result type', get(b:, 'tosa_lsp_inlay_hints', []))
  " 80 columns: the 85-column line wraps, the hint fits after its last row.
  let s:tw = getwininfo(win_getid())[0].width - getwininfo(win_getid())[0].textoff
  call s:check(s:tw <= 80 && len(s:vt) == 1 && s:vt[0].id < 0 && s:hint[0].align ==# 'after',
        \ 'virtual text after the wrapped tosa.maximum line at 80 columns', [s:tw, prop_list(s:max), s:hint])
  " Without 'wrap' there is no room after it: on a virtual line below it,
  " ending under the window's edge.
  setlocal nowrap
  doautocmd <nomodeline> WinScrolled
  let s:hint = filter(copy(get(b:, 'tosa_lsp_inlay_hints', [])), 'v:val.label ==# s:want.label')
  call s:check(len(s:hint) == 1 && s:hint[0].align ==# 'below' && len(filter(prop_list(s:max), 'v:val.type ==# "TosaLspInlay"')) == 1,
        \ 'nowrap: the hint below the line (placed again)', s:hint)
  setlocal wrap
  doautocmd <nomodeline> WinScrolled
  " After the line when it fits, and the move on a resize: test/editors/screen/.
  let s:vt = filter(prop_list(s:sub), 'v:val.type ==# "TosaLspInlay"')
  call s:check(len(s:vt) == 1 && s:vt[0].id < 0
        \ && !empty(filter(copy(b:tosa_lsp_inlay_hints), 'v:val.lnum == s:sub && v:val.label ==# " inferred: 1x3"')),
        \ 'virtual text " inferred: 1x3" on the bad tosa.sub', [prop_list(s:sub), b:tosa_lsp_inlay_hints])

  " -- edit (full sync): insert a multi-byte comment above the bad op
  call append(s:sub - 1, '  // café ✓')
  doautocmd <nomodeline> TextChanged
  let s:sub += 1
  let s:max += 1
  call s:check(s:wait('len(s:errors()) == 1 && s:errors()[0].range.start.line == s:sub - 1'),
        \ 'error moves one line down after an edit', tosa_lsp#diagnostics())
  call s:check(s:wait('!empty(filter(sign_getplaced(s:buf, #{group: "tosa_lsp"})[0].signs, "v:val.lnum == s:sub"))'),
        \ 'sign moved with the error')
  call s:check(s:wait('!empty(filter(copy(b:tosa_lsp_inlay_hints), "v:val.lnum == s:sub && v:val.label ==# '' inferred: 1x3''"))'),
        \ 'inlay hints follow the edit', b:tosa_lsp_inlay_hints)

  " -- diagnostics: location list by line, hint as a note, echo (defect 10, parity)
  " The default publish has the problems only: the refinable result of
  " tosa.maximum is an inlay hint and in its hover, not a diagnostic.
  let s:ll = getloclist(0)
  call s:check(map(copy(s:ll), 'v:val.lnum . v:val.type') ==# [s:sub . 'E'], 'location list: the error only', s:ll)
  call s:check(empty(filter(sign_getplaced(s:buf, #{group: 'tosa_lsp'})[0].signs, 'v:val.name !=# "TosaLspError"')),
        \ 'no H>/I> signs by default', sign_getplaced(s:buf, #{group: 'tosa_lsp'}))
  call cursor(s:max, stridx(getline(s:max), 'tosa.maximum') + 2)
  let g:tosa_lsp_last_hover = ''
  TosaHover
  call s:check(s:wait('g:tosa_lsp_last_hover =~# "5x7"'), 'the refinable result shows in the hover of tosa.maximum (5x7)', g:tosa_lsp_last_hover)
  silent! call popup_clear(1)
  " info.publish brings the informational findings back as diagnostics.
  let g:tosa_lsp_settings = #{info: #{publish: v:true}}
  TosaRestart
  call s:check(s:wait('len(getloclist(0)) >= 2'), 'info.publish: informational diagnostics published', getloclist(0))
  let s:ll = getloclist(0)
  call s:check(s:ll ==# sort(copy(s:ll), {a, b -> a.lnum - b.lnum}) && len(s:ll) >= 2, 'location list sorted by line', s:ll)
  let s:hints = filter(copy(s:ll), 'v:val.lnum == s:max')
  call s:check(len(s:hints) == 1 && s:hints[0].type ==# 'N', 'refinable hint listed as a note (type N), not "H"', s:hints)
  unlet g:tosa_lsp_settings
  TosaRestart
  call s:check(s:wait('len(getloclist(0)) == 1 && tosa_lsp#attached(s:buf)'), 'without the setting again: the error only', getloclist(0))
  call cursor(s:sub, 1)
  let s:echo = execute('call tosa_lsp#echo_diagnostic()')
  call s:check(s:echo =~# "tosa-lsp: Error: 'tosa.sub' op result type", 'moving onto an error line echoes its diagnostic', s:echo)

  " -- quick fix through :TosaCodeAction N
  call cursor(s:sub, s:subcol)
  let g:tosa_lsp_last_actions = v:null
  call tosa_lsp#code_actions({a -> execute('let g:tosa_lsp_last_actions = a')})
  call s:wait('g:tosa_lsp_last_actions isnot v:null')
  let s:actions = g:tosa_lsp_last_actions is v:null ? [] : g:tosa_lsp_last_actions
  let s:titles = map(copy(s:actions), 'v:val.title')
  let s:idx = -1
  for s:i in range(len(s:actions))
    if s:idx < 0 && get(s:actions[s:i], 'kind', '') ==# 'quickfix' && s:actions[s:i].title =~# '^Change result type to tensor<1x3xf32>'
      let s:idx = s:i
    endif
  endfor
  call s:check(s:idx >= 0, 'quickfix "Change result type to tensor<1x3xf32> ..." offered', s:titles)
  " Lowering a function with errors fails: no preview offered until fixed.
  call s:check(empty(filter(copy(s:actions), 'v:val.title =~# "^Preview lowering of @wrong_result_dim"')),
        \ 'no "Preview lowering of @wrong_result_dim" while it has errors', s:titles)
  if s:idx >= 0
    execute 'TosaCodeAction ' . (s:idx + 1)
    call s:wait('getline(s:sub) =~# "-> tensor<1x3xf32>$"')
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
    call s:check(s:wait('empty(filter(copy(b:tosa_lsp_inlay_hints), "v:val.lnum == s:sub"))'),
          \ 'stale " inferred: 1x3" hint gone after the fix, no pause needed', b:tosa_lsp_inlay_hints)
  endif

  " -- requests answered under load: every reply reaches its callback (defect 1)
  let s:answers = []
  let s:ret = s:find_line('return %sum')
  for s:i in range(30)
    call setline(1, '// edit ' . s:i)
    doautocmd <nomodeline> TextChanged
    call cursor(s:ret, stridx(getline(s:ret), '%sum') + 2)
    call tosa_lsp#request('textDocument/definition', #{textDocument: #{uri: tosa_lsp#uri(s:buf)},
          \ position: #{line: s:ret - 1, character: stridx(getline(s:ret), '%sum') + 1}},
          \ {r, e -> add(s:answers, e is v:null ? r : e)})
  endfor
  call s:check(s:wait('len(s:answers) == 30'), '30 definition requests interleaved with edits: all answered', len(s:answers))
  call s:check(len(filter(copy(s:answers), 'type(v:val) == v:t_list && len(v:val) == 1 && v:val[0].range.start.line == s:add - 1')) == 30,
        \ 'every answer is the definition of %sum', s:answers[:2])

  " -- navigation (parity): definition, references, symbols
  call cursor(s:ret, stridx(getline(s:ret), '%sum') + 2)
  TosaDefinition
  call s:check(s:wait('line(".") == s:add'), ':TosaDefinition jumps to the definition of %sum', line('.'))
  call s:check(maparg('gd', 'n') =~# 'TosaDefinition', 'gd mapped', maparg('gd', 'n'))
  TosaReferences
  call s:check(s:wait('getqflist(#{title: 1}).title ==# "tosa-lsp references"'), ':TosaReferences fills the quickfix list')
  call s:check(map(getqflist(), 'v:val.lnum') ==# [s:add, s:ret], 'references of %sum: definition and the return', getqflist())
  cclose
  TosaSymbols
  call s:check(s:wait('getqflist(#{title: 1}).title ==# "tosa-lsp symbols"'), ':TosaSymbols fills the quickfix list')
  call s:check(!empty(filter(getqflist(), 'v:val.text =~# "refinable"')), 'symbols list @refinable', getqflist())
  cclose

  " -- lowering preview: read-only, client-side, maps back to source (defect 7)
  call cursor(s:add, s:addcol)
  TosaPreviewLowering linalg upstream
  call s:check(s:wait('bufnr("%") != s:buf'), ':TosaPreviewLowering opens a split')
  let s:pbuf = bufnr('%')
  let s:ptext = join(getline(1, '$'), "\n")
  call s:check(s:pbuf != s:buf && stridx(s:ptext, 'linalg.generic') >= 0,
        \ ':TosaPreviewLowering opens a buffer containing linalg.generic', s:ptext[:400])
  call s:check(!&modifiable && &readonly && &buftype ==# 'nofile' && winnr('$') == 2,
        \ 'preview is a read-only scratch split', [&modifiable, &readonly, &buftype, winnr('$')])
  call s:check(!tosa_lsp#attached(s:pbuf) && empty(tosa_lsp#diagnostics(s:pbuf)), 'preview buffer not opened on the server')
  let s:gl = s:find_line('linalg.generic')
  call cursor(s:gl, 1)
  execute "normal \<CR>"
  call s:check(bufnr('%') == s:buf && line('.') == s:add && col('.') == s:addcol,
        \ '<CR> on a linalg.generic line jumps to its tosa.add', [bufnr('%'), line('.'), col('.')])
  execute bufwinnr(s:pbuf) . 'wincmd w'
  close
  call s:check(bufnr('%') == s:buf, 'back in the source buffer')

  " -- compile: asynchronous, progress, cancel (defect 2)
  if empty($TOSA_VIM_SKIP_COMPILE)
    let s:bigfile = s:tmp . '/big.mlir'
    let s:big = ['func.func @big(%a: tensor<4x?xf32>, %b: tensor<1x?xf32>) -> tensor<4x?xf32> {']
    let s:prev = '%a'
    for s:i in range(70)
      call add(s:big, printf('  %%v%d = tosa.add %s, %%b : (tensor<4x?xf32>, tensor<1x?xf32>) -> tensor<4x?xf32>', s:i, s:prev))
      let s:prev = '%v' . s:i
    endfor
    call extend(s:big, ['  return ' . s:prev . ' : tensor<4x?xf32>', '}'])
    call writefile(s:big, s:bigfile)
    execute 'edit ' . fnameescape(s:bigfile)
    call s:wait('tosa_lsp#attached()')
    call s:mark_messages()
    let g:tosa_lsp_progress = []
    let s:t0 = reltime()
    TosaCompile
    call s:check(s:elapsed(s:t0) < 0.5, ':TosaCompile returns at once', s:elapsed(s:t0))
    call s:check(s:wait('get(tosa_lsp#compiling(), "id", -1) >= 0'), 'compile running in the background', tosa_lsp#compiling())
    call s:check(s:wait('!empty(g:tosa_lsp_progress)') && tosa_lsp#status() =~# '^tosa-lsp: compiling big.mlir',
          \ 'progress shown while compiling', [g:tosa_lsp_progress, tosa_lsp#status()])
    let s:during = []
    call tosa_lsp#request('textDocument/documentSymbol', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))}}, {r, e -> add(s:during, r)})
    call s:check(s:wait('!empty(s:during)') && !empty(tosa_lsp#compiling()), 'requests are answered while the compile runs', [s:during, tosa_lsp#compiling()])
    TosaCancel
    call s:check(s:wait('empty(tosa_lsp#compiling())'), ':TosaCancel ends the compile')
    call s:check(!empty(filter(s:messages(), 'v:val ==# "tosa-lsp: compiling big.mlir: cancelled"')),
          \ 'message "compiling big.mlir: cancelled"', s:messages())
    call s:check(empty(glob(s:tmp . '/**/big*.so', 0, 1)), 'no output after cancel')
    " :qa! during a compile: VimLeavePre stops the server without waiting.
    TosaCompile
    call s:wait('get(tosa_lsp#compiling(), "id", -1) >= 0')
    let s:t0 = reltime()
    call tosa_lsp#stop()
    call s:check(s:elapsed(s:t0) < 0.2 && !tosa_lsp#running(), 'stopping during a compile does not wait for it', s:elapsed(s:t0))
    bwipeout!
  endif
  execute 'buffer ' . s:buf
  TosaStart
  call s:check(s:wait('tosa_lsp#attached(s:buf) && tosa_lsp#ready()'), ':TosaStart starts the server again')

  " -- compile with `// -----` sections: the function at the cursor (defect 3)
  if empty($TOSA_VIM_SKIP_COMPILE)
    let s:secfile = s:tmp . '/sections.mlir'
    call writefile(['func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {', '  return %x : tensor<2xf32>', '}',
          \ '// -----', 'func.func @second(%x: tensor<2xf32>, %y: tensor<1xf32>) -> tensor<2xf32> {',
          \ '  %0 = tosa.add %x, %y : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>', '  return %0 : tensor<2xf32>', '}'], s:secfile)
    execute 'edit ' . fnameescape(s:secfile)
    call s:wait('tosa_lsp#attached()')
    call cursor(6, 5)
    call s:mark_messages()
    let g:tosa_lsp_last_compile = {}
    TosaCompile
    call s:check(s:wait('!empty(g:tosa_lsp_last_compile)') && filereadable(get(g:tosa_lsp_last_compile, 'output', '')),
          \ ':TosaCompile in a file with sections compiles the function at the cursor', g:tosa_lsp_last_compile)
    call s:check(get(g:tosa_lsp_last_compile, 'output', '') =~# 'second' && index(get(g:tosa_lsp_last_compile, 'symbols', []), '_mlir_ciface_second') >= 0,
          \ 'the output is from @second', g:tosa_lsp_last_compile)
    call s:check(!empty(filter(s:messages(), 'v:val ==# "tosa-lsp: compiled to " . get(g:tosa_lsp_last_compile, "output", "?") . " (and " . fnamemodify(get(g:tosa_lsp_last_compile, "header", "?"), ":t") . ")"')),
          \ 'the message says where the output went (whole, in :messages)', s:messages())
    call cursor(4, 1)
    call s:mark_messages()
    TosaCompile
    call s:check(s:wait('!empty(s:messages())') && s:messages()[-1] =~# 'put the cursor in the function to compile',
          \ 'outside any function: says what to do', s:messages())
    bwipeout!
    execute 'buffer ' . s:buf
  endif

  " -- UTF-8 URIs: a directory named café and its .tosa-lsp.json (defect 8)
  let s:cafe = s:tmp . '/café'
  call mkdir(s:cafe, 'p')
  call writefile(['{"extraBroadcastableOps": ["mydialect.add"]}'], s:cafe . '/.tosa-lsp.json')
  call writefile(['func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {',
        \ '  %0 = "mydialect.add"(%a, %b) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>',
        \ '  %1 = tosa.sub %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>',
        \ '  return', '}'], s:cafe . '/m.mlir')
  execute 'edit ' . fnameescape(s:cafe . '/m.mlir')
  call s:check(tosa_lsp#uri(bufnr('%')) =~# '/caf%C3%A9/m\.mlir$', 'URI percent-encodes é as UTF-8 (%C3%A9)', tosa_lsp#uri(bufnr('%')))
  call s:check(s:wait('len(s:errors()) == 2'), 'the directory''s .tosa-lsp.json applies (mydialect.add is checked)', tosa_lsp#diagnostics())
  " Server order is verifier (line 3) before broadcast (line 2).
  call s:check(map(getloclist(0), 'v:val.lnum') ==# [2, 3], 'location list by line', getloclist(0))
  call s:check(tosa_lsp#path(tosa_lsp#uri(bufnr('%'))) ==# s:cafe . '/m.mlir', 'URI decodes back to the path')

  " -- multi-line messages: one line each, no ^@ (defect 10)
  call writefile(['func.func @g(%a: tensor<1x3xf32>) {', '  %0 = tosa.sub %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>',
        \ '  return', '}'], s:tmp . '/unlowerable.mlir')
  execute 'edit ' . fnameescape(s:tmp . '/unlowerable.mlir')
  call s:wait('tosa_lsp#attached()')
  sleep 500m
  call cursor(2, 3)
  call s:mark_messages()
  TosaPreviewLowering
  call s:check(s:wait('len(filter(s:messages(), "v:val =~# \"preview\""))'), 'a failing preview says why', s:messages())
  let s:msgs = s:messages()
  call s:check(len(s:msgs) >= 2 && empty(filter(copy(s:msgs), 'v:val !~# "^tosa-lsp: " || v:val =~# "\\^@\\|\\n\\|\\x00"')),
        \ 'a multi-line error is one message per line, each "tosa-lsp: ..."', s:msgs)
  bwipeout!

  " -- g:tosa_lsp_autostart = 0: nothing starts a server (defect 11)
  call tosa_lsp#stop()
  let g:tosa_lsp_autostart = 0
  call writefile(readfile(s:file), s:tmp . '/noauto.mlir')
  execute 'edit ' . fnameescape(s:tmp . '/noauto.mlir')
  call s:mark_messages()
  doautocmd <nomodeline> CursorHold
  doautocmd <nomodeline> TextChanged
  TosaHover
  sleep 300m
  call s:check(!tosa_lsp#running(), 'autostart = 0: no server on open, pause, edit or :TosaHover')
  call s:check(maparg('K', 'n') ==# '', 'autostart = 0: K left to the other client', maparg('K', 'n'))
  call s:check(!empty(filter(s:messages(), 'v:val =~# "not started (g:tosa_lsp_autostart = 0)"')), ':TosaHover says the server is not started', s:messages())
  let g:tosa_lsp_autostart = 1

  " -- missing server binary: said once, with the fix (defect 9)
  let g:tosa_lsp_command = s:tmp . '/no/such/tosa-lsp'
  call s:mark_messages()
  TosaRestart
  TosaHover
  TosaHover
  TosaInlayHints
  sleep 100m
  let s:msgs = s:messages()
  call s:check(len(filter(copy(s:msgs), 'v:val =~# "server not found"')) == 1, 'missing server: one message, not one per command', s:msgs)
  call s:check(!empty(filter(copy(s:msgs), 'v:val =~# "g:tosa_lsp_command = ''/path/to/build/bin/tosa-lsp''"')), 'the message says how to fix it', s:msgs)
  call s:check(empty(filter(copy(s:msgs), 'v:val =~# "initialize failed"')), 'no "initialize failed: {}"', s:msgs)
  let g:tosa_lsp_command = [$TOSA_LSP]
  call delete(s:tmp, 'rf')
catch
  call s:check(0, 'exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
call s:finish()
