" tosa-lsp client for Vim 9 (job_start with in_mode/out_mode 'lsp').
"
" Full-text document sync, diagnostics as signs + text properties, hover
" popup, inlay hints as virtual text (text properties with "text"), code
" actions, lowering preview and compile.  Neovim uses lua/tosa_lsp instead.

let s:job = v:null
let s:ch = v:null
let s:caps = {}
let s:versions = {}      " bufnr -> version sent
let s:ticks = {}         " bufnr -> b:changedtick last sent
let s:diags = {}         " bufnr -> list of LSP diagnostics
let s:token = 0
let g:tosa_lsp_last_hover = get(g:, 'tosa_lsp_last_hover', '')
let g:tosa_lsp_last_compile = get(g:, 'tosa_lsp_last_compile', {})
let g:tosa_lsp_progress = get(g:, 'tosa_lsp_progress', [])

function! s:timeout() abort
  return get(g:, 'tosa_lsp_timeout_ms', 10000)
endfunction

function! s:command() abort
  let l:cmd = get(g:, 'tosa_lsp_command', 'tosa-lsp')
  return type(l:cmd) == v:t_list ? l:cmd : [l:cmd]
endfunction

function! tosa_lsp#running() abort
  return s:ch isnot v:null && ch_status(s:ch) ==# 'open'
endfunction

function! s:define_highlights() abort
  highlight default link TosaLspErrorText SpellBad
  highlight default link TosaLspWarningText SpellCap
  highlight default link TosaLspInfoText SpellRare
  highlight default link TosaLspHintText SpellLocal
  highlight default link TosaLspInlay Comment
  let l:signs = [['TosaLspError', 'E>', 'ErrorMsg'], ['TosaLspWarning', 'W>', 'WarningMsg'],
        \ ['TosaLspInfo', 'I>', 'Question'], ['TosaLspHint', 'H>', 'Comment']]
  for [l:name, l:text, l:hl] in l:signs
    if empty(sign_getdefined(l:name))
      call sign_define(l:name, #{text: l:text, texthl: l:hl})
    endif
  endfor
  for l:sev in ['Error', 'Warning', 'Info', 'Hint']
    if empty(prop_type_get('TosaLsp' . l:sev))
      call prop_type_add('TosaLsp' . l:sev, #{highlight: 'TosaLsp' . l:sev . 'Text'})
    endif
  endfor
  if empty(prop_type_get('TosaLspInlay'))
    call prop_type_add('TosaLspInlay', #{highlight: 'TosaLspInlay'})
  endif
endfunction

" ---------------------------------------------------------------- transport

function! tosa_lsp#start() abort
  if tosa_lsp#running()
    return 1
  endif
  call s:define_highlights()
  let l:opts = #{in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl',
        \ out_cb: function('s:on_message'), err_cb: function('s:on_stderr'),
        \ exit_cb: function('s:on_exit'), noblock: 1}
  let s:job = job_start(s:command(), l:opts)
  if job_status(s:job) !=# 'run'
    echohl ErrorMsg | echomsg 'tosa-lsp: cannot start ' . string(s:command()) | echohl None
    let s:job = v:null
    return 0
  endif
  let s:ch = job_getchannel(s:job)
  let l:params = #{processId: getpid(), rootUri: s:uri(getcwd()),
        \ clientInfo: #{name: 'vim-tosa-lsp', version: string(v:version)},
        \ capabilities: #{textDocument: #{
        \   publishDiagnostics: #{relatedInformation: v:true},
        \   hover: #{contentFormat: ['markdown', 'plaintext']},
        \   codeAction: #{codeActionLiteralSupport: #{codeActionKind: #{valueSet: ['quickfix', 'refactor.rewrite', 'source']}}},
        \   inlayHint: {}},
        \ general: #{positionEncodings: ['utf-16']}}}
  let l:settings = get(g:, 'tosa_lsp_settings', {})
  if !empty(l:settings)
    let l:params.initializationOptions = l:settings
  endif
  try
    let l:resp = ch_evalexpr(s:ch, #{method: 'initialize', params: l:params}, #{timeout: s:timeout()})
  catch
    let l:resp = {}
  endtry
  if empty(l:resp) || !has_key(l:resp, 'result')
    echohl ErrorMsg | echomsg 'tosa-lsp: initialize failed: ' . string(l:resp) | echohl None
    call tosa_lsp#stop()
    return 0
  endif
  let s:caps = get(l:resp.result, 'capabilities', {})
  call ch_sendexpr(s:ch, #{method: 'initialized', params: {}})
  return 1
endfunction

function! tosa_lsp#stop() abort
  if tosa_lsp#running()
    silent! call ch_evalexpr(s:ch, #{method: 'shutdown'}, #{timeout: 2000})
    silent! call ch_sendexpr(s:ch, #{method: 'exit'})
  endif
  if s:job isnot v:null && job_status(s:job) ==# 'run'
    call job_stop(s:job)
  endif
  let s:job = v:null
  let s:ch = v:null
  let s:versions = {}
  let s:ticks = {}
endfunction

function! tosa_lsp#capabilities() abort
  return s:caps
endfunction

function! s:on_stderr(ch, msg) abort
  if get(g:, 'tosa_lsp_verbose', 0)
    echomsg 'tosa-lsp: ' . a:msg
  endif
endfunction

function! s:on_exit(job, status) abort
  let s:ch = v:null
  let s:job = v:null
  let s:versions = {}
  let s:ticks = {}
endfunction

function! s:reply(id, result) abort
  call ch_sendexpr(s:ch, #{id: a:id, result: a:result})
endfunction

" Notifications and server-to-client requests.
function! s:on_message(ch, msg) abort
  if type(a:msg) != v:t_dict || !has_key(a:msg, 'method')
    return
  endif
  let l:method = a:msg.method
  let l:params = get(a:msg, 'params', {})
  if l:method ==# 'textDocument/publishDiagnostics'
    call s:on_diagnostics(l:params)
  elseif l:method ==# 'window/showMessage' || l:method ==# 'window/logMessage'
    if l:method ==# 'window/showMessage' || get(g:, 'tosa_lsp_verbose', 0)
      echomsg 'tosa-lsp: ' . get(l:params, 'message', '')
    endif
  elseif l:method ==# '$/progress'
    let l:value = get(l:params, 'value', {})
    let l:text = get(l:value, 'title', get(l:value, 'message', get(l:value, 'kind', '')))
    call add(g:tosa_lsp_progress, l:value)
    if !empty(l:text)
      echo 'tosa-lsp: ' . l:text
    endif
  elseif l:method ==# 'window/showDocument'
    if has_key(a:msg, 'id')
      call s:reply(a:msg.id, #{success: v:true})
    endif
    execute 'split ' . fnameescape(s:path(l:params.uri))
  elseif l:method ==# 'workspace/applyEdit'
    call tosa_lsp#apply_workspace_edit(get(l:params, 'edit', {}))
    if has_key(a:msg, 'id')
      call s:reply(a:msg.id, #{applied: v:true})
    endif
  elseif has_key(a:msg, 'id')
    " Other requests (workDoneProgress/create, configuration, ...).
    call s:reply(a:msg.id, v:null)
  endif
endfunction

" Synchronous request; returns the result or v:null (error echoed).
function! tosa_lsp#request(method, params, ...) abort
  if !tosa_lsp#running() && !tosa_lsp#start()
    return v:null
  endif
  let l:timeout = a:0 ? a:1 : s:timeout()
  let l:resp = ch_evalexpr(s:ch, #{method: a:method, params: a:params}, #{timeout: l:timeout})
  if empty(l:resp)
    echohl ErrorMsg | echomsg 'tosa-lsp: ' . a:method . ' timed out' | echohl None
    return v:null
  endif
  if has_key(l:resp, 'error')
    echohl ErrorMsg | echomsg 'tosa-lsp: ' . a:method . ': ' . get(l:resp.error, 'message', string(l:resp.error)) | echohl None
    return v:null
  endif
  return get(l:resp, 'result', v:null)
endfunction

" ---------------------------------------------------------------- positions

function! s:uri(path) abort
  let l:p = fnamemodify(a:path, ':p')
  let l:enc = substitute(l:p, '[^A-Za-z0-9/._~-]', '\=printf("%%%02X", char2nr(submatch(0)))', 'g')
  return 'file://' . l:enc
endfunction

function! s:path(uri) abort
  let l:p = substitute(a:uri, '^file://', '', '')
  return substitute(l:p, '%\(\x\x\)', '\=nr2char(str2nr(submatch(1), 16))', 'g')
endfunction

function! tosa_lsp#uri(bufnr) abort
  return s:uri(bufname(a:bufnr))
endfunction

" UTF-16 character -> 0-based byte offset in a line.
function! s:byte_col(line, character) abort
  let l:units = 0
  let l:byte = 0
  for l:ch in split(a:line, '\zs')
    if l:units >= a:character
      break
    endif
    let l:units += char2nr(l:ch) > 0xFFFF ? 2 : 1
    let l:byte += len(l:ch)
  endfor
  return l:byte
endfunction

" 0-based byte offset -> UTF-16 character.
function! s:utf16_col(line, byte) abort
  let l:prefix = strpart(a:line, 0, a:byte)
  let l:units = 0
  for l:ch in split(l:prefix, '\zs')
    let l:units += char2nr(l:ch) > 0xFFFF ? 2 : 1
  endfor
  return l:units
endfunction

function! s:buf_line(bufnr, lnum0) abort
  let l:l = getbufline(a:bufnr, a:lnum0 + 1)
  return empty(l:l) ? '' : l:l[0]
endfunction

function! s:cursor_position() abort
  return #{line: line('.') - 1, character: s:utf16_col(getline('.'), col('.') - 1)}
endfunction

" ---------------------------------------------------------------- documents

function! s:text(bufnr) abort
  return join(getbufline(a:bufnr, 1, '$'), "\n") . "\n"
endfunction

function! tosa_lsp#attach(...) abort
  let l:bufnr = a:0 ? a:1 : bufnr('%')
  if !tosa_lsp#start()
    return 0
  endif
  if has_key(s:versions, l:bufnr)
    return tosa_lsp#sync(l:bufnr)
  endif
  let s:versions[l:bufnr] = 1
  let s:ticks[l:bufnr] = getbufvar(l:bufnr, 'changedtick')
  call ch_sendexpr(s:ch, #{method: 'textDocument/didOpen', params: #{textDocument: #{
        \ uri: tosa_lsp#uri(l:bufnr), languageId: 'mlir', version: 1, text: s:text(l:bufnr)}}})
  augroup tosa_lsp_buffer
    execute 'autocmd! * <buffer=' . l:bufnr . '>'
    execute 'autocmd TextChanged,InsertLeave,BufWritePost <buffer=' . l:bufnr . '> call tosa_lsp#sync(' . l:bufnr . ')'
    execute 'autocmd BufUnload <buffer=' . l:bufnr . '> call tosa_lsp#detach(' . l:bufnr . ')'
  augroup END
  return 1
endfunction

" Sends didChange (full text) if the buffer changed since the last sync.
function! tosa_lsp#sync(...) abort
  let l:bufnr = a:0 ? a:1 : bufnr('%')
  if !tosa_lsp#running() || !has_key(s:versions, l:bufnr)
    return 0
  endif
  let l:tick = getbufvar(l:bufnr, 'changedtick')
  if l:tick == s:ticks[l:bufnr]
    return 1
  endif
  let s:ticks[l:bufnr] = l:tick
  let s:versions[l:bufnr] += 1
  call ch_sendexpr(s:ch, #{method: 'textDocument/didChange', params: #{
        \ textDocument: #{uri: tosa_lsp#uri(l:bufnr), version: s:versions[l:bufnr]},
        \ contentChanges: [#{text: s:text(l:bufnr)}]}})
  return 1
endfunction

function! tosa_lsp#detach(bufnr) abort
  if tosa_lsp#running() && has_key(s:versions, a:bufnr)
    call ch_sendexpr(s:ch, #{method: 'textDocument/didClose', params: #{textDocument: #{uri: tosa_lsp#uri(a:bufnr)}}})
  endif
  silent! call remove(s:versions, a:bufnr)
  silent! call remove(s:ticks, a:bufnr)
endfunction

function! s:ensure() abort
  if !tosa_lsp#attach(bufnr('%'))
    return 0
  endif
  call tosa_lsp#sync(bufnr('%'))
  return 1
endfunction

" ---------------------------------------------------------------- diagnostics

let s:sev_names = ['Error', 'Error', 'Warning', 'Info', 'Hint']

function! s:on_diagnostics(params) abort
  let l:path = s:path(a:params.uri)
  let l:bufnr = bufnr(l:path)
  if l:bufnr < 0
    let l:bufnr = bufnr(fnamemodify(l:path, ':.'))
  endif
  if l:bufnr < 0 || !bufloaded(l:bufnr)
    return
  endif
  let s:diags[l:bufnr] = a:params.diagnostics
  call s:render_diagnostics(l:bufnr)
endfunction

function! tosa_lsp#diagnostics(...) abort
  return get(s:diags, a:0 ? a:1 : bufnr('%'), [])
endfunction

function! s:render_diagnostics(bufnr) abort
  call sign_unplace('tosa_lsp', #{buffer: a:bufnr})
  for l:sev in ['Error', 'Warning', 'Info', 'Hint']
    call prop_remove(#{type: 'TosaLsp' . l:sev, bufnr: a:bufnr, all: 1})
  endfor
  let l:qf = []
  let l:nlines = getbufinfo(a:bufnr)[0].linecount
  for l:d in get(s:diags, a:bufnr, [])
    let l:sev = s:sev_names[get(l:d, 'severity', 1)]
    let l:s = l:d.range.start
    let l:e = l:d.range.end
    if l:s.line >= l:nlines
      continue
    endif
    let l:lnum = l:s.line + 1
    call sign_place(0, 'tosa_lsp', 'TosaLsp' . l:sev, a:bufnr, #{lnum: l:lnum, priority: 20 - get(l:d, 'severity', 1)})
    let l:sline = s:buf_line(a:bufnr, l:s.line)
    let l:scol = s:byte_col(l:sline, l:s.character) + 1
    let l:eline = l:e.line < l:nlines ? l:e.line : l:nlines - 1
    let l:ecol = s:byte_col(s:buf_line(a:bufnr, l:eline), l:e.character) + 1
    if l:eline == l:s.line && l:ecol <= l:scol
      let l:ecol = min([l:scol + 1, len(l:sline) + 1])
    endif
    if len(l:sline) > 0 && l:scol <= len(l:sline)
      silent! call prop_add(l:lnum, l:scol, #{type: 'TosaLsp' . l:sev, bufnr: a:bufnr,
            \ end_lnum: l:eline + 1, end_col: l:ecol})
    endif
    call add(l:qf, #{bufnr: a:bufnr, lnum: l:lnum, col: l:scol, type: l:sev[0],
          \ text: printf('[%s] %s', get(l:d, 'code', get(l:d, 'source', '')), l:d.message)})
  endfor
  call setloclist(0, [], 'r', #{title: 'tosa-lsp', items: l:qf})
endfunction

" Echo the diagnostic(s) on the cursor line.
function! tosa_lsp#show_line_diagnostics() abort
  let l:msgs = []
  for l:d in tosa_lsp#diagnostics()
    if l:d.range.start.line == line('.') - 1
      call add(l:msgs, s:sev_names[get(l:d, 'severity', 1)] . ': ' . l:d.message)
    endif
  endfor
  echo empty(l:msgs) ? 'tosa-lsp: no diagnostics on this line' : join(l:msgs, "\n")
endfunction

" ---------------------------------------------------------------- hover

function! tosa_lsp#hover() abort
  if !s:ensure()
    return ''
  endif
  let l:r = tosa_lsp#request('textDocument/hover', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))},
        \ position: s:cursor_position()})
  if type(l:r) != v:t_dict || empty(l:r)
    let g:tosa_lsp_last_hover = ''
    echo 'tosa-lsp: no hover information'
    return ''
  endif
  let l:c = l:r.contents
  let l:text = type(l:c) == v:t_dict ? get(l:c, 'value', '') : type(l:c) == v:t_list
        \ ? join(map(copy(l:c), {_, v -> type(v) == v:t_dict ? v.value : v}), "\n") : l:c
  let g:tosa_lsp_last_hover = l:text
  let l:lines = split(l:text, "\n")
  let g:tosa_lsp_hover_popup = popup_atcursor(l:lines, #{border: [], padding: [0, 1, 0, 1],
        \ moved: 'any', filter: function('s:hover_filter')})
  call setbufvar(winbufnr(g:tosa_lsp_hover_popup), '&filetype', 'markdown')
  return l:text
endfunction

function! s:hover_filter(id, key) abort
  if a:key ==# "\<Esc>" || a:key ==# 'q'
    call popup_close(a:id)
    return 1
  endif
  return 0
endfunction

" ---------------------------------------------------------------- inlay hints

function! tosa_lsp#inlay_hints(...) abort
  let l:bufnr = bufnr('%')
  if !s:ensure()
    return []
  endif
  call prop_remove(#{type: 'TosaLspInlay', bufnr: l:bufnr, all: 1})
  if a:0 && a:1 ==# 'off'
    let b:tosa_lsp_inlay = 0
    return []
  endif
  let b:tosa_lsp_inlay = 1
  let l:n = line('$')
  let l:r = tosa_lsp#request('textDocument/inlayHint', #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)},
        \ range: #{start: #{line: 0, character: 0}, end: #{line: l:n, character: 0}}})
  if type(l:r) != v:t_list
    return []
  endif
  let l:placed = []
  for l:h in l:r
    let l:label = type(l:h.label) == v:t_list ? join(map(copy(l:h.label), 'v:val.value'), '') : l:h.label
    let l:lnum = l:h.position.line + 1
    if l:lnum > l:n
      continue
    endif
    let l:col = s:byte_col(getline(l:lnum), l:h.position.character) + 1
    " Virtual text (Vim 9.0.0067+); prop_list() in 9.0 does not report the
    " text, so the placed hints are kept in b:tosa_lsp_inlay_hints.
    let l:id = prop_add(l:lnum, l:col, #{type: 'TosaLspInlay', bufnr: l:bufnr, text: l:label})
    call add(l:placed, #{lnum: l:lnum, col: l:col, label: l:label, id: l:id})
  endfor
  let b:tosa_lsp_inlay_hints = l:placed
  return l:placed
endfunction

" ---------------------------------------------------------------- edits

" Applies LSP TextEdits (UTF-16 ranges) to a buffer, last edit first.
function! tosa_lsp#apply_text_edits(bufnr, edits) abort
  let l:sorted = sort(copy(a:edits), {a, b ->
        \ a.range.start.line != b.range.start.line ? b.range.start.line - a.range.start.line
        \ : b.range.start.character - a.range.start.character})
  for l:e in l:sorted
    let l:s = l:e.range.start
    let l:en = l:e.range.end
    let l:nlines = getbufinfo(a:bufnr)[0].linecount
    let l:first = s:buf_line(a:bufnr, l:s.line)
    let l:last = l:en.line < l:nlines ? s:buf_line(a:bufnr, l:en.line) : ''
    let l:prefix = strpart(l:first, 0, s:byte_col(l:first, l:s.character))
    let l:suffix = strpart(l:last, s:byte_col(l:last, l:en.character))
    let l:new = split(l:prefix . l:e.newText . l:suffix, "\n", 1)
    let l:endline = min([l:en.line, l:nlines - 1])
    if l:s.line < l:nlines
      silent call deletebufline(a:bufnr, l:s.line + 1, l:endline + 1)
    endif
    if getbufinfo(a:bufnr)[0].linecount == 1 && s:buf_line(a:bufnr, 0) ==# '' && l:s.line == 0
      call setbufline(a:bufnr, 1, l:new)
    else
      call appendbufline(a:bufnr, l:s.line, l:new)
    endif
  endfor
endfunction

function! tosa_lsp#apply_workspace_edit(edit) abort
  let l:changes = []
  for [l:uri, l:edits] in items(get(a:edit, 'changes', {}))
    call add(l:changes, [l:uri, l:edits])
  endfor
  for l:dc in get(a:edit, 'documentChanges', [])
    if has_key(l:dc, 'edits')
      call add(l:changes, [l:dc.textDocument.uri, l:dc.edits])
    endif
  endfor
  for [l:uri, l:edits] in l:changes
    let l:path = s:path(l:uri)
    let l:bufnr = bufnr(l:path)
    if l:bufnr < 0
      let l:bufnr = bufadd(l:path)
      call bufload(l:bufnr)
    endif
    call tosa_lsp#apply_text_edits(l:bufnr, l:edits)
    call tosa_lsp#sync(l:bufnr)
  endfor
endfunction

" ---------------------------------------------------------------- code actions

" Lists the actions at the cursor line; returns them.
function! tosa_lsp#code_actions() abort
  if !s:ensure()
    return []
  endif
  let l:lnum0 = line('.') - 1
  let l:diags = filter(copy(tosa_lsp#diagnostics()),
        \ {_, d -> d.range.start.line <= l:lnum0 && l:lnum0 <= d.range.end.line})
  let l:pos = s:cursor_position()
  let l:range = #{start: #{line: l:lnum0, character: 0}, end: #{line: l:lnum0, character: s:utf16_col(getline('.'), len(getline('.')))}}
  let l:r = tosa_lsp#request('textDocument/codeAction', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))},
        \ range: l:range, context: #{diagnostics: l:diags}})
  return type(l:r) == v:t_list ? l:r : []
endfunction

" :TosaCodeAction [N]: choose (inputlist) or run the N-th action.
function! tosa_lsp#code_action(...) abort
  let l:actions = tosa_lsp#code_actions()
  if empty(l:actions)
    echo 'tosa-lsp: no code actions here'
    return {}
  endif
  if a:0 && a:1 !=# ''
    let l:choice = str2nr(a:1)
  else
    let l:menu = ['tosa-lsp code actions:']
    for l:i in range(len(l:actions))
      call add(l:menu, printf('%d. %s [%s]', l:i + 1, l:actions[l:i].title, get(l:actions[l:i], 'kind', '')))
    endfor
    let l:choice = inputlist(l:menu)
  endif
  if l:choice < 1 || l:choice > len(l:actions)
    return {}
  endif
  let l:a = l:actions[l:choice - 1]
  call tosa_lsp#run_action(l:a)
  return l:a
endfunction

function! tosa_lsp#run_action(action) abort
  if has_key(a:action, 'edit')
    call tosa_lsp#apply_workspace_edit(a:action.edit)
  endif
  let l:cmd = get(a:action, 'command', {})
  if type(l:cmd) == v:t_string
    let l:cmd = a:action
  endif
  if !empty(l:cmd) && type(get(l:cmd, 'command', '')) == v:t_string && get(l:cmd, 'command', '') !=# ''
    let l:args = get(l:cmd, 'arguments', [])
    if l:cmd.command ==# 'tosa.previewLowering'
      let l:p = empty(l:args) ? {} : l:args[0]
      call s:open_preview(tosa_lsp#request('tosa/previewLowering', l:p))
    elseif l:cmd.command ==# 'tosa.compile'
      call s:compile_with(empty(l:args) ? {} : l:args[0])
    else
      call tosa_lsp#request('workspace/executeCommand', #{command: l:cmd.command, arguments: l:args})
    endif
  endif
endfunction

" ---------------------------------------------------------------- preview

" :TosaPreviewLowering [stage] [mode]
function! tosa_lsp#preview_lowering(...) abort
  if !s:ensure()
    return -1
  endif
  let l:stage = a:0 >= 1 && a:1 !=# '' ? a:1 : get(g:, 'tosa_lsp_preview_stage', 'linalg')
  let l:mode = a:0 >= 2 && a:2 !=# '' ? a:2 : get(g:, 'tosa_lsp_preview_mode', 'upstream')
  let l:r = tosa_lsp#request('tosa/previewLowering', #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))},
        \ uri: tosa_lsp#uri(bufnr('%')), position: s:cursor_position(), stage: l:stage, mode: l:mode},
        \ get(g:, 'tosa_lsp_preview_timeout_ms', 60000))
  return s:open_preview(l:r, l:stage, l:mode)
endfunction

function! s:open_preview(r, ...) abort
  if type(a:r) != v:t_dict || !has_key(a:r, 'text')
    return -1
  endif
  let l:name = 'tosa-preview://' . (a:0 >= 2 ? a:1 . '-' . a:2 : 'lowering')
  let l:existing = bufwinnr('^' . l:name . '$')
  if l:existing > 0
    execute l:existing . 'wincmd w'
    setlocal modifiable noreadonly
    silent %delete _
  else
    execute 'silent new'
    setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted
    execute 'silent file ' . fnameescape(l:name)
  endif
  call setline(1, split(a:r.text, "\n"))
  let b:tosa_lsp_pipeline = get(a:r, 'pipeline', '')
  let b:tosa_lsp_mappings = get(a:r, 'mappings', [])
  setlocal filetype=mlir
  setlocal nomodifiable readonly nomodified
  return bufnr('%')
endfunction

" ---------------------------------------------------------------- compile

" :TosaCompile [emit]
function! tosa_lsp#compile(...) abort
  if !s:ensure()
    return {}
  endif
  let l:args = #{uri: tosa_lsp#uri(bufnr('%'))}
  if a:0 && a:1 !=# ''
    let l:args.emit = a:1
  endif
  return s:compile_with(l:args)
endfunction

function! s:compile_with(args) abort
  let s:token += 1
  echo 'tosa-lsp: compiling ...'
  let l:r = tosa_lsp#request('workspace/executeCommand', #{command: 'tosa.compile', arguments: [a:args],
        \ workDoneToken: 'vim-tosa-compile-' . s:token},
        \ get(g:, 'tosa_lsp_compile_timeout_ms', 300000))
  if type(l:r) != v:t_dict
    return {}
  endif
  let g:tosa_lsp_last_compile = l:r
  echomsg 'tosa-lsp: compiled to ' . get(l:r, 'output', '?') .
        \ (get(l:r, 'header', '') !=# '' ? ' (header ' . l:r.header . ')' : '')
  return l:r
endfunction
