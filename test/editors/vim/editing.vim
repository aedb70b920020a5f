" Headless test of the editing features in the editors/vim plugin, in Vim 9
" (its own client, autoload/tosa_lsp.vim) or in Neovim (TOSA_NVIM=1: the
" Lua module on the built-in client): completion through 'omnifunc'
" (tosa_lsp#complete in Vim, vim.lsp.omnifunc in Neovim) as plain text,
" :TosaRename (and vim.lsp.buf.rename in Neovim) with a refusal that says
" why, :TosaFormat (refused on a section that does not parse), and `.mlirbc`
" files read and written as bytecode through the server (BufReadCmd /
" BufWriteCmd; mlir-opt-22 reads what was written; bad bytecode and text
" with errors never change the file).
"   TOSA_LSP=/path/to/tosa-lsp vim -N -u NONE -i NONE -es -S editing.vim
" Prints `vim-editing: N passed, M failed`; exits 0 only if nothing failed.
set nocompatible noswapfile hidden shortmess+=I
" The cursor after the last character, as in Insert mode.
set virtualedit=onemore
let s:here = expand('<sfile>:p:h')
let s:root = fnamemodify(s:here, ':h:h:h')
let s:nvim = has('nvim')
let s:name = s:nvim ? 'nvim-editing' : 'vim-editing'
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
  return a:cond
endfunction
function! s:wait(expr, ...) abort
  for l:i in range(a:0 ? a:1 / 20 : 500)
    if eval(a:expr)
      return 1
    endif
    sleep 20m
  endfor
  return eval(a:expr)
endfunction
function! s:messages() abort
  return join(split(execute('messages'), "\n"), "\n")
endfunction
function! s:count(pat) abort
  return count(join(getline(1, '$'), "\n"), a:pat)
endfunction
function! s:errors() abort
  if s:nvim
    return luaeval('#vim.diagnostic.get(0, { severity = vim.diagnostic.severity.ERROR })')
  endif
  return len(filter(copy(tosa_lsp#diagnostics()), 'get(v:val, "severity", 1) == 1'))
endfunction
function! s:finish() abort
  call s:log(printf('%s: %d passed, %d failed', s:name, s:passed, s:failed))
  if s:failed
    cquit 1
  endif
  qall!
endfunction

filetype plugin on
let &runtimepath = s:root . '/editors/vim,' . &runtimepath
runtime! ftdetect/mlir.vim
let g:tosa_lsp_command = [$TOSA_LSP]
let g:tosa_lsp_inlay_hints = 0
if s:nvim
  lua require('tosa_lsp').setup{ cmd = { os.getenv('TOSA_LSP') }, inlay_hints = false }
else
  runtime plugin/tosa_lsp.vim
endif
call s:check(exists(':TosaRename') == 2 && exists(':TosaFormat') == 2, ':TosaRename and :TosaFormat are defined')

let s:dir = tempname()
call mkdir(s:dir, 'p')
let s:file = s:dir . '/edit.mlir'
call writefile([
      \ 'func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {',
      \ '  %sum = tosa.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
      \ '      %mag = tosa.abs %sum : (tensor<2x3xf32>) -> tensor<2x3xf32>',
      \ '  %twice = tosa.add %mag, %sum : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
      \ '  return %twice : tensor<2x3xf32>',
      \ '}'], s:file)
execute 'edit ' . fnameescape(s:file)
let s:buf = bufnr('%')
call s:check(&filetype ==# 'mlir', 'filetype mlir', &filetype)
if s:nvim
  call s:check(s:wait('luaeval("#vim.lsp.buf_get_clients(0)") > 0'), 'the client is attached')
  call s:check(s:wait('luaeval("(function() local c = vim.lsp.buf_get_clients(0)[1] return c and c.initialized end)()")'), 'initialized')
else
  call s:check(s:wait('tosa_lsp#attached()'), 'the buffer is attached')
endif
" Neovim: vim.lsp.omnifunc once the server has analysed the text typed.
let s:omni = s:nvim ? "v:lua.require'tosa_lsp'.omnifunc" : 'tosa_lsp#complete'
call s:check(&l:omnifunc ==# s:omni, "'omnifunc' is " . s:omni, &l:omnifunc)

" -- completion after `tosa.` and at an operand, as plain text
call append(4, '  %c = tosa.')
call cursor(5, col([5, '$']))
if s:nvim
  " Its answer comes through complete() in Insert mode: both
  " stand-ins record what it would show.
  lua _G.tosa_test = { complete = nil }
  lua vim.fn.mode = function() return 'i' end
  lua vim.fn.complete = function(col, items) _G.tosa_test.complete = { col = col, items = items } end
  let s:start = luaeval("require'tosa_lsp'.omnifunc(1, '')")
  call s:check(s:wait('luaeval("_G.tosa_test.complete ~= nil")'), 'vim.lsp.omnifunc gets an answer')
  let s:got = luaeval('_G.tosa_test.complete or {}')
  let s:startcol = get(s:got, 'col', 0) - 1
  let s:items = get(s:got, 'items', [])
else
  let s:startcol = tosa_lsp#complete(1, '')
  let s:items = tosa_lsp#complete(0, '')
endif
call s:check(s:startcol == len('  %c = tosa.'), 'completion starts after `tosa.`', s:startcol)
let s:conv = filter(copy(s:items), 'get(v:val, "abbr", v:val.word) ==# "conv2d" || v:val.word =~# "^conv2d\\>"')
call s:check(len(s:items) > 50 && !empty(s:conv), 'the op names are offered (conv2d among them)', len(s:items))
let s:word = empty(s:conv) ? '' : s:conv[0].word
call s:check(s:word =~# '^conv2d %input, %weight, %bias, %input_zp, %weight_zp {.*} : (operand types) -> result type$' && s:word !~# '\$',
      \ 'conv2d inserts plain text: every operand, zero points, the attributes, the types (no snippet syntax)', s:word)
if !s:nvim
  let s:only = tosa_lsp#complete(0, 'conv2')
  call s:check(!empty(s:only) && empty(filter(copy(s:only), 'v:val.abbr !~# "^conv2"')), 'the base filters the items', map(copy(s:only), 'v:val.abbr'))
endif
call setline(5, '  %c = tosa.add %')
call cursor(5, col('$'))
if s:nvim
  lua _G.tosa_test.complete = nil
  call luaeval("require'tosa_lsp'.omnifunc(1, '')")
  call s:wait('luaeval("_G.tosa_test.complete ~= nil")')
  let s:items = get(luaeval('_G.tosa_test.complete or {}'), 'items', [])
  let s:startcol = get(luaeval('_G.tosa_test.complete or {}'), 'col', 0) - 1
else
  let s:startcol = tosa_lsp#complete(1, '')
  let s:items = tosa_lsp#complete(0, '%')
endif
let s:words = map(copy(s:items), 'v:val.word')
call s:check(s:startcol == len('  %c = tosa.add ') && index(s:words, '%sum') >= 0 && index(s:words, '%mag') >= 0
      \ && index(s:words, '%a') >= 0, 'at an operand: the values in scope', [s:startcol, s:words])
let s:sum = filter(copy(s:items), 'v:val.word ==# "%sum"')
call s:check(!empty(s:sum) && get(s:sum[0], 'menu', '') =~# 'tensor<2x3xf32>', 'a value comes with its type', s:sum)
if s:nvim
  lua vim.fn.mode = nil; vim.fn.complete = nil
endif
silent 5delete _

" -- rename (the buffer verifies: rename re-verifies the result)
call s:wait(s:nvim ? '1' : 'tosa_lsp#attached()')
call cursor(2, 4)
TosaRename total
call s:check(s:wait('s:count("%sum") == 0 && s:count("%total") == 3'), ':TosaRename total renames %sum (sigil kept) at its definition and both uses', getline(1, '$'))
call s:check(s:wait('s:messages() =~# "renamed %sum to %total (3 places)"'), 'it says what it did', s:messages())
let s:before = getline(1, '$')
call cursor(2, 4)
messages clear
TosaRename %a b
call s:check(s:wait('s:messages() =~# "not a valid MLIR name"'), 'an invalid name is refused with the reason', s:messages())
call s:check(getline(1, '$') ==# s:before, '... and nothing changes')
call cursor(1, 15)
messages clear
TosaRename %b
call s:check(s:wait('s:messages() =~# "rename: "'), 'a name that is taken is refused with a message', s:messages())
call s:check(getline(1, '$') ==# s:before, '... and nothing changes', getline(1, '$'))
if s:nvim
  " The built-in rename too (the server's versioned WorkspaceEdit).
  call cursor(3, 8)
  lua vim.lsp.buf.rename('%m')
  call s:check(s:wait('s:count("%mag") == 0 && s:count("%m ") + s:count("%m,") == 2'), 'vim.lsp.buf.rename renames %mag', getline(1, '$'))
endif

" -- format: the line indented by six spaces gets two
messages clear
TosaFormat
call s:check(s:wait('getline(3) =~# "^  %m\\(ag\\)\\? = tosa.abs"'), ':TosaFormat re-indents the line', getline(3))
call s:check(s:wait('s:messages() =~# "formatted: 1 line changed"'), 'it says how many lines changed', s:messages())
call s:check(getline(1) =~# '^func.func @f' && getline(6) ==# '}' && line('$') == 6, 'the other lines are kept', getline(1, '$'))
messages clear
TosaFormat
call s:check(s:wait('s:messages() =~# "already formatted"'), 'a second format changes nothing', s:messages())
" A section that does not parse: refused with the reason, nothing changed.
call append(4, '    %x = tosa.add %a,')
let s:before = getline(1, '$')
" (Once the server has analysed the text: see the report on formatting
" answering from the previous version.)
if !s:nvim
  call tosa_lsp#sync()
endif
call s:check(s:wait('s:errors() > 0'), 'the server reports the parse error')
messages clear
TosaFormat
call s:check(s:wait('s:messages() =~# "does not parse"'), 'formatting text that does not parse is refused with the reason', s:messages())
call s:check(getline(1, '$') ==# s:before, '... and nothing changes', getline(1, '$'))
silent! %bwipeout!

" -- .mlirbc: read as text, written as bytecode
let s:bc = s:dir . '/model.mlirbc'
call writefile([
      \ 'func.func @model(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {',
      \ '  %0 = tosa.add %x, %y : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>',
      \ '  %1 = tosa.abs %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>',
      \ '  return %1 : tensor<2x3xf32>',
      \ '}'], s:dir . '/model.mlir')
call system('cd ' . shellescape(s:dir) . ' && mlir-opt-22 --emit-bytecode model.mlir -o model.mlirbc')
call s:check(v:shell_error == 0 && readfile(s:bc, 'B')[0 : 3] == 0z4D4CEF52, 'mlir-opt-22 wrote model.mlirbc')
let s:orig = readfile(s:bc, 'B')
execute 'edit ' . fnameescape(s:bc)
let s:bcbuf = bufnr('%')
call s:check(s:wait('search("tosa.abs", "nw") > 0'), 'model.mlirbc opens as MLIR text', getline(1, '$'))
call s:check(&filetype ==# 'mlir' && !&modified, 'as an mlir buffer, not modified', [&filetype, &modified])
if s:nvim
  call s:check(s:wait('luaeval("#vim.lsp.buf_get_clients(0)") > 0'), 'the client attaches to it')
else
  call s:check(s:wait('tosa_lsp#attached()'), 'the client attaches to it')
endif
" Hover on tosa.add (the server has the text).
let s:hover = {'done': 0}
call cursor(search('tosa.add', 'nw'), 1)
call search('tosa.add', 'c')
if s:nvim
  let s:hover_text = luaeval('(function() local r = vim.lsp.buf_request_sync(0, "textDocument/hover", vim.lsp.util.make_position_params(), 5000) or {} for _, v in pairs(r) do if v.result then return vim.inspect(v.result.contents) end end return "" end)()')
else
  call tosa_lsp#request('textDocument/hover', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))},
        \ position: #{line: line('.') - 1, character: col('.') + 5}}, {r, e -> extend(s:hover, #{done: 1, r: r})})
  call s:wait('s:hover.done')
  let s:hover_text = string(get(s:hover, 'r', ''))
endif
call s:check(s:hover_text =~# 'tosa.add', 'hover answers in the bytecode buffer', s:hover_text[:200])
" Edit and write: bytecode that mlir-opt-22 reads, with the edit.
silent %substitute/tosa\.abs/tosa.exp/
write
let s:now = readfile(s:bc, 'B')
call s:check(s:now[0 : 3] == 0z4D4CEF52 && s:now != s:orig && !&modified, ':write writes bytecode (not the text), the buffer is not modified')
let s:back = system('mlir-opt-22 ' . shellescape(s:bc))
call s:check(v:shell_error == 0 && s:back =~# 'tosa.exp' && s:back !~# 'tosa.abs', 'mlir-opt-22 reads it back, with the edit', s:back)
" Text with an error: :write fails (an error, so :wq would not quit), the file keeps its bytecode.
silent %substitute/tosa\.exp/tosa.xyz/
let s:caught = ''
try
  write
catch
  let s:caught = v:exception
endtry
call s:check(s:caught =~# 'model.mlirbc not written (it keeps its bytecode): .*errors', ':write of text with errors fails with the reason', s:caught)
call s:check(readfile(s:bc, 'B') == s:now && &modified, '... and the file is unchanged, the buffer still modified')
silent! %bwipeout!
" Bad bytecode: a clear message, an empty buffer that is never written.
let s:bad = s:dir . '/bad.mlirbc'
call writefile(s:orig[0 : 59], s:bad)
let s:badorig = readfile(s:bad, 'B')
messages clear
execute 'edit ' . fnameescape(s:bad)
call s:check(s:wait('s:messages() =~# "cannot open bad.mlirbc as MLIR text: .*cannot read the bytecode.*The file was not changed"'),
      \ 'bad bytecode: a clear message', s:messages())
call s:check(getline(1, '$') ==# [''], 'the buffer is empty', getline(1, '$'))
let s:caught = ''
try
  write!
catch
  let s:caught = v:exception
endtry
call s:check(s:caught =~# 'bad.mlirbc not written' && readfile(s:bad, 'B') == s:badorig, 'it is never written over the file', s:caught)

call delete(s:dir, 'rf')
call s:finish()
