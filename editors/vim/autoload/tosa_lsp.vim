" tosa-lsp client for Vim 9 (job_start with in_mode/out_mode 'lsp').
"
" Every request is asynchronous (ch_sendexpr with a callback), so the editor
" never waits for the server; a compile shows its progress and :TosaCancel
" sends $/cancelRequest.  Full-text document sync, diagnostics as signs +
" text properties, hover popup, inlay hints as virtual text, code actions,
" navigation, lowering preview (mapped back to the source) and compile.
" Neovim uses lua/tosa_lsp instead.

let s:job = v:null
let s:ch = v:null
let s:ready = 0          " initialize answered
let s:on_ready = []      " funcrefs waiting for initialize
let s:failed = ''        " why the server could not start (said once)
let s:caps = {}
let s:pending = {}       " request id -> #{method, cb, timer}
let s:versions = {}      " bufnr -> version sent
let s:ticks = {}         " bufnr -> b:changedtick last sent
let s:uris = {}          " bufnr -> URI it was opened under
let s:diags = {}         " bufnr -> list of LSP diagnostics
let s:diag_lines = {}    " bufnr -> {0-based line: [diagnostics on it]}
let s:prop_kinds = {}    " bufnr -> severities with text properties placed
let s:sent = {}          " bufnr -> the lines the server has (incremental sync)
let s:published = {}     " bufnr -> version of the last publishDiagnostics
let s:token = 0
let s:compile = {}       " the running compile: #{id, token, what}
let s:stderr = []
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

function! tosa_lsp#ready() abort
  return tosa_lsp#running() && s:ready
endfunction

" Messages: one :echomsg per line (a "\n" inside one shows as ^@).
function! s:msg(text, ...) abort
  let l:hl = a:0 ? a:1 : ''
  if l:hl !=# ''
    execute 'echohl ' . l:hl
  endif
  for l:line in split(a:text, "\n")
    echomsg 'tosa-lsp: ' . l:line
  endfor
  if l:hl !=# ''
    echohl None
  endif
endfunction

" The columns an :echo can use on the command line without Vim cutting it
" in the middle (shortmess T) or asking "Press ENTER".
function! s:echo_room() abort
  let l:room = &columns - 1
  if &showcmd
    let l:room -= 11
  endif
  if &ruler && (&laststatus == 0 || (&laststatus == 1 && winnr('$') == 1))
    let l:room -= 18
  endif
  return max([20, l:room])
endfunction

" A message naming a path, shown whole when it fits the command line; else
" the whole text goes to :messages and the echo shows the path whole if it
" fits, else its end: 'tosa-lsp: compiled to …/out/f.so (:messages)'.
function! s:msg_path(prefix, path, suffix) abort
  let l:full = 'tosa-lsp: ' . a:prefix . a:path . a:suffix
  let l:room = s:echo_room()
  if strdisplaywidth(l:full) <= l:room
    echomsg l:full
    return l:full
  endif
  echomsg l:full
  " The path whole without the suffix, else its end.
  let l:short = 'tosa-lsp: ' . a:prefix . a:path
  let l:parts = split(a:path, '/', 1)
  for l:i in range(1, len(l:parts) - 1)
    if strdisplaywidth(l:short) <= l:room
      break
    endif
    let l:short = 'tosa-lsp: ' . a:prefix . '…/' . join(l:parts[l:i :], '/') . ' (:messages)'
  endfor
  if strdisplaywidth(l:short) > l:room
    let l:short = strcharpart(l:short, 0, l:room)
  endif
  " The echo replaces the (cut) echomsg on the command line.
  redraw
  echo l:short
  return l:short
endfunction

" An error of a command that ran in the background (compile, preview): all
" its lines in :messages, and on the command line its first line, cut to
" fit, so that it never asks "Press ENTER" in the middle of editing.
function! s:error_fit(text) abort
  let l:lines = split(a:text, "\n")
  let l:room = s:echo_room()
  if len(l:lines) <= 1 && strdisplaywidth('tosa-lsp: ' . a:text) <= l:room
    call s:error(a:text)
    return
  endif
  call s:error(a:text)
  let l:first = 'tosa-lsp: ' . get(l:lines, 0, '')
  let l:more = ' (:messages)'
  if strdisplaywidth(l:first . l:more) > l:room
    let l:first = strcharpart(l:first, 0, l:room - strdisplaywidth(l:more) - 1) . '…'
  endif
  redraw
  echohl ErrorMsg
  echo l:first . l:more
  echohl None
  let g:tosa_lsp_last_echo = l:first . l:more
endfunction

function! s:error(text) abort
  call s:msg(a:text, 'ErrorMsg')
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

let s:install_hint = 'install it: sudo apt install ./tosa-lsp_0.1.0_amd64.deb (cpack -G DEB in the build directory), '
      \ . 'or cmake --install build, then it is on PATH'

" The Debian package of a library the loader did not find (a:lines: the
" server's stderr): 'cannot start: libMLIR.so.22.1 is missing (install
" ...)', or '' when the lines hold no loader error.
function! tosa_lsp#missing_library(lines) abort
  let l:text = join(a:lines, "\n")
  let l:lib = matchstr(l:text, 'error while loading shared libraries: \zs\S\+\ze: cannot open shared object file')
  let l:old = matchstr(l:text, "GLIBCXX_[0-9.]\\+\\ze' not found")
  if l:lib ==# '' && l:old ==# ''
    return ''
  endif
  if l:lib ==# '' || l:lib =~# '^libstdc++\.so\.6'
    let l:what = l:lib ==# '' ? 'libstdc++.so.6 is too old (' . l:old . ' not found)' : l:lib . ' is missing'
    return 'cannot start: ' . l:what . ' (install a newer libstdc++6: sudo apt-get install libstdc++6)'
  endif
  for [l:re, l:pkg] in [['^libMLIR\.so\.22', 'libmlir-22'], ['^libmlir_.*\.so\.22', 'libmlir-22'],
        \ ['^libLLVM\(\.so\.22\|-22\.so\)', 'libllvm22'], ['^libmimalloc\.so\.2', 'libmimalloc2.0']]
    if l:lib =~# l:re
      return 'cannot start: ' . l:lib . " is missing (install Debian's " . l:pkg . ': sudo apt-get install ' . l:pkg . ')'
    endif
  endfor
  return 'cannot start: ' . l:lib . ' is missing (find its Debian package: apt-file search ' . l:lib . ')'
endfunction

" Starts the server (once); a:1 = 1 forces a retry after a failure.
" Returns 1 when a server is running or starting.
function! tosa_lsp#start(...) abort
  if tosa_lsp#running()
    return 1
  endif
  if s:failed !=# '' && !(a:0 && a:1)
    return 0
  endif
  let s:failed = ''
  call s:define_highlights()
  let l:cmd = s:command()
  if !executable(l:cmd[0])
    " Said once; commands stay quiet until :TosaStart or :TosaRestart.
    let s:failed = 'server not found: ' . string(l:cmd[0]) . ' is not executable or not on $PATH'
    call s:error(s:failed . "\n" . s:install_hint
          \ . "\nor set g:tosa_lsp_command = '/path/to/build/bin/tosa-lsp'; then :TosaStart")
    return 0
  endif
  let s:stderr = []
  let l:opts = #{in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl',
        \ out_cb: function('s:on_message'), err_cb: function('s:on_stderr'),
        \ exit_cb: function('s:on_exit'), noblock: 1}
  let s:job = job_start(l:cmd, l:opts)
  if job_status(s:job) !=# 'run'
    let s:failed = 'cannot start ' . string(l:cmd)
    call s:error(s:failed)
    let s:job = v:null
    return 0
  endif
  let s:ch = job_getchannel(s:job)
  let s:ready = 0
  let l:params = #{processId: getpid(), rootUri: s:uri(getcwd()),
        \ clientInfo: #{name: 'vim-tosa-lsp', version: string(v:version)},
        \ capabilities: #{textDocument: #{
        \   publishDiagnostics: #{relatedInformation: v:true},
        \   hover: #{contentFormat: ['markdown', 'plaintext']},
        \   codeAction: #{codeActionLiteralSupport: #{codeActionKind: #{valueSet: ['quickfix', 'refactor.rewrite', 'source']}}},
        \   completion: #{completionItem: #{snippetSupport: v:false, documentationFormat: ['plaintext', 'markdown']}},
        \   rename: #{prepareSupport: v:true},
        \   formatting: {}, rangeFormatting: {},
        \   inlayHint: {}},
        \ workspace: #{workspaceEdit: #{documentChanges: v:true}},
        \ window: #{workDoneProgress: v:true},
        \ general: #{positionEncodings: ['utf-16']}}}
  let l:settings = get(g:, 'tosa_lsp_settings', {})
  if !empty(l:settings)
    let l:params.initializationOptions = l:settings
  endif
  call s:send_request('initialize', l:params, function('s:on_initialized'), s:timeout())
  return 1
endfunction

function! s:on_initialized(result, error) abort
  if a:error isnot v:null || type(a:result) != v:t_dict
    let s:failed = 'initialize failed: ' . (a:error is v:null ? 'no answer' : get(a:error, 'message', string(a:error)))
          \ . (empty(s:stderr) ? '' : "\n" . join(s:stderr[max([0, len(s:stderr) - 3]) :], "\n"))
    call s:error(s:failed)
    let s:on_ready = []
    call s:kill()
    return
  endif
  let s:caps = get(a:result, 'capabilities', {})
  call ch_sendexpr(s:ch, #{method: 'initialized', params: {}})
  let s:ready = 1
  let l:waiting = s:on_ready
  let s:on_ready = []
  for l:F in l:waiting
    call l:F()
  endfor
endfunction

" Runs a:fn once the server has answered initialize (starting it if
" needed and allowed); returns 0 when it cannot start.
function! s:when_ready(fn) abort
  if tosa_lsp#ready()
    call a:fn()
    return 1
  endif
  if !tosa_lsp#running() && !tosa_lsp#start()
    return 0
  endif
  call add(s:on_ready, a:fn)
  return 1
endfunction

function! s:kill() abort
  if s:job isnot v:null && job_status(s:job) ==# 'run'
    call job_stop(s:job)
  endif
  call s:reset()
endfunction

function! s:reset() abort
  for l:p in values(s:pending)
    call timer_stop(l:p.timer)
  endfor
  let s:pending = {}
  let s:job = v:null
  let s:ch = v:null
  let s:ready = 0
  let s:versions = {}
  let s:ticks = {}
  let s:uris = {}
  let s:sent = {}
  let s:published = {}
  let s:compile = {}
endfunction

" Removes what the server showed (signs, highlights, the location list,
" inlay hints) from every buffer: it is gone and cannot update them.
function! s:clear_all() abort
  for l:b in uniq(sort(map(keys(s:diags) + keys(s:versions), 'str2nr(v:val)'), 'n'))
    if !bufexists(l:b)
      continue
    endif
    silent! call sign_unplace('tosa_lsp', #{buffer: l:b})
    if bufloaded(l:b)
      for l:t in ['TosaLspError', 'TosaLspWarning', 'TosaLspInfo', 'TosaLspHint', 'TosaLspInlay']
        silent! call prop_remove(#{type: l:t, bufnr: l:b, all: 1})
      endfor
    endif
    call setbufvar(l:b, 'tosa_lsp_inlay_hints', [])
    call setbufvar(l:b, 'tosa_lsp_inlay_last', [])
    call setbufvar(l:b, 'tosa_lsp_inlay_range', [])
    for l:w in win_findbuf(l:b)
      if getloclist(l:w, #{title: 1}).title ==# 'tosa-lsp'
        call setloclist(l:w, [], 'r', #{title: 'tosa-lsp', items: []})
      endif
    endfor
  endfor
  let s:diags = {}
  let s:diag_lines = {}
  let s:prop_kinds = {}
endfunction

" Never waits: shutdown, exit, and the job is stopped shortly after (the
" server kills running compiles on shutdown/exit).
function! tosa_lsp#stop() abort
  let l:job = s:job
  let l:was = tosa_lsp#running()
  if l:was
    silent! call ch_sendexpr(s:ch, #{method: 'shutdown'}, #{callback: {ch, msg -> 0}})
    silent! call ch_sendexpr(s:ch, #{method: 'exit'})
  endif
  call s:clear_all()
  call s:reset()
  if l:was && v:dying == 0 && !v:exiting
    echo 'tosa-lsp: stopped (:TosaStart starts it again)'
  endif
  if l:job isnot v:null && job_status(l:job) ==# 'run'
    call timer_start(500, {-> job_status(l:job) ==# 'run' ? job_stop(l:job, 'kill') : 0})
  endif
endfunction

function! tosa_lsp#restart() abort
  let l:bufs = filter(range(1, bufnr('$')), 'bufloaded(v:val) && getbufvar(v:val, "&filetype") ==# "mlir" && !s:is_preview(v:val)')
  call tosa_lsp#stop()
  let s:failed = ''
  for l:b in l:bufs
    call tosa_lsp#attach(l:b)
  endfor
endfunction

function! tosa_lsp#capabilities() abort
  return s:caps
endfunction

function! s:on_stderr(ch, msg) abort
  call add(s:stderr, a:msg)
  if len(s:stderr) > 20
    call remove(s:stderr, 0)
  endif
  if get(g:, 'tosa_lsp_verbose', 0)
    echomsg 'tosa-lsp: ' . a:msg
  endif
endfunction

" The server ended on its own (crash, kill, bad command line): said once,
" with its exit code or signal and the last lines it wrote to stderr; what
" it showed is cleared, and it stays down until :TosaStart / :TosaRestart.
function! s:on_exit(job, status) abort
  if s:job isnot a:job
    return
  endif
  let l:sig = get(job_info(a:job), 'termsig', '')
  let l:why = l:sig !=# '' ? 'killed by signal ' . l:sig : 'exited with code ' . a:status
  let l:starting = !s:ready
  call s:clear_all()
  call s:reset()
  let s:failed = 'the server ' . l:why . (l:starting ? ' while starting' : '')
  let l:failed = s:failed
  " Its last stderr lines may still be on the way.
  call timer_start(100, {-> s:report_exit(l:failed)})
endfunction

function! s:report_exit(failed) abort
  if s:failed !=# a:failed || tosa_lsp#running()
    return
  endif
  let l:err = filter(copy(s:stderr[max([0, len(s:stderr) - 5]) :]), 'v:val !~# "^\\s*$"')
  " The loader failed before main: which package to install, first.
  let l:lib = a:failed =~# 'while starting$' ? tosa_lsp#missing_library(s:stderr) : ''
  call s:error((l:lib ==# '' ? '' : l:lib . "\n") . a:failed . (empty(l:err) ? '' : ":\n" . join(l:err, "\n"))
        \ . "\n:TosaRestart starts it again")
endfunction

" Asynchronous request: a:cb(result, error) is called once, with error
" #{message: 'timed out'} when no answer comes in a:timeout ms.
function! s:send_request(method, params, cb, ...) abort
  let l:timeout = a:0 ? a:1 : s:timeout()
  try
    let l:r = ch_sendexpr(s:ch, #{method: a:method, params: a:params}, #{callback: function('s:on_response')})
  catch /^Vim\%((\a\+)\)\=:E63[01]:/
    " The server ended before the request was written (one that cannot
    " start exits at once): its exit callback says why.
    return -1
  endtry
  let l:id = get(l:r, 'id', -1)
  let s:pending[l:id] = #{method: a:method, cb: a:cb,
        \ timer: timer_start(l:timeout, {-> s:on_timeout(l:id)})}
  return l:id
endfunction

" Public: tosa_lsp#request(method, params, {result, error -> ...}).
function! tosa_lsp#request(method, params, cb, ...) abort
  let l:Send = {-> s:send_request(a:method, a:params, a:cb, a:0 ? a:1 : s:timeout())}
  return s:when_ready(l:Send)
endfunction

function! s:on_timeout(id) abort
  if has_key(s:pending, a:id)
    let l:p = remove(s:pending, a:id)
    call l:p.cb(v:null, #{message: l:p.method . ' timed out'})
  endif
endfunction

function! tosa_lsp#cancel_request(id) abort
  if tosa_lsp#running()
    call ch_sendexpr(s:ch, #{method: '$/cancelRequest', params: #{id: a:id}})
  endif
endfunction

" Both the one-time callbacks and the channel callback land here: a
" response is matched to its request by id wherever Vim delivered it (Vim
" 9.0 sometimes hands replies to the channel callback).
function! s:on_response(ch, msg) abort
  call s:dispatch(a:msg)
endfunction

function! s:on_message(ch, msg) abort
  call s:dispatch(a:msg)
endfunction

function! tosa_lsp#dispatch(msg) abort
  call s:dispatch(a:msg)
endfunction

function! s:dispatch(msg) abort
  if type(a:msg) != v:t_dict
    return
  endif
  if has_key(a:msg, 'method')
    call s:on_server_message(a:msg)
    return
  endif
  let l:id = get(a:msg, 'id', v:null)
  if l:id is v:null || !has_key(s:pending, l:id)
    return
  endif
  let l:p = remove(s:pending, l:id)
  call timer_stop(l:p.timer)
  let l:err = get(a:msg, 'error', v:null)
  call l:p.cb(l:err is v:null ? get(a:msg, 'result', v:null) : v:null, l:err)
endfunction

function! s:reply(id, result) abort
  call ch_sendexpr(s:ch, #{id: a:id, result: a:result})
endfunction

" Notifications and server-to-client requests.
function! s:on_server_message(msg) abort
  let l:method = a:msg.method
  let l:params = get(a:msg, 'params', {})
  if l:method ==# 'textDocument/publishDiagnostics'
    call s:on_diagnostics(l:params)
  elseif l:method ==# 'window/showMessage' || l:method ==# 'window/logMessage'
    if l:method ==# 'window/showMessage' || get(g:, 'tosa_lsp_verbose', 0)
      call s:msg(get(l:params, 'message', ''), get(l:params, 'type', 4) == 1 ? 'ErrorMsg' : '')
    endif
  elseif l:method ==# '$/progress'
    call s:on_progress(l:params)
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

function! s:on_progress(params) abort
  let l:value = get(a:params, 'value', {})
  call add(g:tosa_lsp_progress, l:value)
  let l:text = get(l:value, 'title', get(l:value, 'message', ''))
  if empty(l:text) || get(l:value, 'kind', '') ==# 'end'
    return
  endif
  if !empty(s:compile) && get(a:params, 'token', '') ==# s:compile.token
    let s:compile.step = l:text
    " :echo, not :echomsg: steps are transient (:TosaCancel stops it).
    echo 'tosa-lsp: ' . s:compile.what . ': ' . l:text . '  (:TosaCancel to stop)'
  else
    echo 'tosa-lsp: ' . l:text
  endif
endfunction

" ---------------------------------------------------------------- positions

" file URI with UTF-8 percent-encoding (é -> %C3%A9), byte by byte.
function! s:uri(path) abort
  let l:p = fnamemodify(a:path, ':p')
  let l:enc = substitute(l:p, '[^A-Za-z0-9/._~-]', '\=s:pct(submatch(0))', 'g')
  return 'file://' . l:enc
endfunction

function! s:pct(ch) abort
  let l:out = ''
  for l:i in range(len(a:ch))
    let l:out .= printf('%%%02X', char2nr(a:ch[l:i]))
  endfor
  return l:out
endfunction

" Decodes %XX as bytes, so multi-byte UTF-8 sequences come back whole.
function! s:path(uri) abort
  let l:p = substitute(a:uri, '^file://', '', '')
  return substitute(l:p, '%\(\x\x\)', '\=eval(''"\x'' . submatch(1) . ''"'')', 'g')
endfunction

function! tosa_lsp#uri(bufnr) abort
  return s:uri(bufname(a:bufnr))
endfunction

function! tosa_lsp#path(uri) abort
  return s:path(a:uri)
endfunction

" UTF-16 character -> 0-based byte offset in a line.  ASCII lines (nearly
" all of them) and lines without characters above U+FFFF take no loop: this
" runs for every diagnostic and inlay hint of a publish.
function! s:byte_col(line, character) abort
  if a:line !~# '[^\x01-\x7f]'
    return a:character < len(a:line) ? a:character : len(a:line)
  endif
  if a:line !~# '[^\x01-\uffff]'
    " One UTF-16 unit per character (composing characters counted apart).
    let l:b = byteidxcomp(a:line, a:character)
    return l:b < 0 ? len(a:line) : l:b
  endif
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
  if l:prefix !~# '[^\x01-\x7f]'
    return len(l:prefix)
  endif
  if l:prefix !~# '[^\x01-\uffff]'
    return strchars(l:prefix, 1)
  endif
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

" Preview buffers stay client-side: never opened on the server.
function! s:is_preview(bufnr) abort
  return !empty(getbufvar(a:bufnr, 'tosa_lsp_preview', ''))
        \ || bufname(a:bufnr) =~# '^tosa-preview:'
        \ || getbufvar(a:bufnr, '&buftype') !=# ''
endfunction

function! tosa_lsp#attached(...) abort
  return tosa_lsp#running() && has_key(s:versions, a:0 ? a:1 : bufnr('%'))
endfunction

function! tosa_lsp#attach(...) abort
  let l:bufnr = a:0 ? a:1 : bufnr('%')
  " An unnamed buffer has no URI (the cwd would be sent as one).
  if s:is_preview(l:bufnr) || bufname(l:bufnr) ==# ''
    return 0
  endif
  if !has_key(s:versions, l:bufnr) && !empty(getbufline(l:bufnr, s:ahead_min_lines))
    " A big buffer is read (and its didOpen encoded) while the server
    " starts; the read opens it when done.
    let l:ahead = get(s:ahead, l:bufnr, {})
    if empty(l:ahead)
      call s:read_ahead(l:bufnr)
    elseif l:ahead.done
      return s:when_ready({-> s:open(l:bufnr)})
    endif
    return s:when_ready({-> 0})
  endif
  return s:when_ready({-> s:open(l:bufnr)})
endfunction

" Reading a big buffer ahead of its didOpen: Vim's getbufline(), join()
" and the channel's encoding of the whole buffer in one step stalled the
" editor (~510 ms at 200k lines). Here s:ahead_step lines per timer step,
" each slice joined and JSON-escaped, then the didOpen framed in a step of
" its own; s:open sends it if the buffer did not change meanwhile.
let s:ahead = {}
let s:ahead_step = 10000
let s:ahead_min_lines = 2000

" (Tests: the lines per step; with `hold`, the read waits after its first
" slice until called again without it.)
let s:ahead_hold = 0
function! tosa_lsp#set_ahead_step(n, ...) abort
  let s:ahead_step = a:n
  let s:ahead_hold = a:0 ? a:1 : 0
endfunction

function! tosa_lsp#ahead(bufnr) abort
  return get(s:ahead, a:bufnr, {})
endfunction

" How many didOpens were sent as read ahead, and slices read (tests).
let s:opened_ahead = 0
let s:ahead_slices = 0
function! tosa_lsp#opened_ahead() abort
  return s:opened_ahead
endfunction
function! tosa_lsp#ahead_slices() abort
  return s:ahead_slices
endfunction

function! s:read_ahead(bufnr) abort
  " (The tick from the first step: it moves once more after FileType.)
  let s:ahead[a:bufnr] = #{tick: -1, lines: [], escaped: [], at: 1, done: 0}
  call timer_start(0, {-> s:ahead_step_on(a:bufnr)})
endfunction

function! s:ahead_step_on(bufnr) abort
  let l:a = get(s:ahead, a:bufnr, {})
  if empty(l:a) || l:a.done
    return
  endif
  if l:a.tick < 0
    let l:a.tick = getbufvar(a:bufnr, 'changedtick')
  endif
  if !bufloaded(a:bufnr) || getbufvar(a:bufnr, 'changedtick') != l:a.tick
    " Changed (or gone): the open reads the buffer itself.
    call remove(s:ahead, a:bufnr)
    call s:when_ready({-> s:open(a:bufnr)})
    return
  endif
  if l:a.at > 1 && s:ahead_hold
    call timer_start(5, {-> s:ahead_step_on(a:bufnr)})
    return
  endif
  let l:slice = getbufline(a:bufnr, l:a.at, l:a.at + s:ahead_step - 1)
  if !empty(l:slice)
    call extend(l:a.lines, l:slice)
    call add(l:a.escaped, json_encode(join(l:slice, "\n"))[1:-2])
    let l:a.at += len(l:slice)
    let s:ahead_slices += 1
    call timer_start(0, {-> s:ahead_step_on(a:bufnr)})
    return
  endif
  " The didOpen as s:open would send it (version 1, the text ending in a
  " newline), in pieces sent one after the other (no join of the whole:
  " 118 ms and a copy at 200k lines); its length from the pieces.
  let l:a.uri = tosa_lsp#uri(a:bufnr)
  let l:parts = ['{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":'
        \ . json_encode(l:a.uri) . ',"languageId":"mlir","version":1,"text":"']
  for l:i in range(len(l:a.escaped))
    if l:i > 0
      call add(l:parts, '\n')
    endif
    call add(l:parts, l:a.escaped[l:i])
  endfor
  call add(l:parts, '\n"}}}')
  let l:a.parts = l:parts
  let l:a.size = 0
  for l:p in l:parts
    let l:a.size += len(l:p)
  endfor
  let l:a.escaped = []
  let l:a.done = 1
  call s:when_ready({-> s:open(a:bufnr)})
endfunction

function! s:open(bufnr) abort
  if !bufloaded(a:bufnr) || bufname(a:bufnr) ==# ''
    return
  endif
  if has_key(s:versions, a:bufnr)
    call tosa_lsp#sync(a:bufnr)
    return
  endif
  let l:ahead = has_key(s:ahead, a:bufnr) ? remove(s:ahead, a:bufnr) : {}
  let s:versions[a:bufnr] = 1
  let s:ticks[a:bufnr] = getbufvar(a:bufnr, 'changedtick')
  let s:uris[a:bufnr] = tosa_lsp#uri(a:bufnr)
  if get(l:ahead, 'done', 0) && l:ahead.tick == s:ticks[a:bufnr] && l:ahead.uri ==# s:uris[a:bufnr]
    let l:lines = l:ahead.lines
    " (One step: nothing else is sent between the pieces.)
    call ch_sendraw(s:ch, 'Content-Length: ' . l:ahead.size . "\r\n\r\n")
    for l:p in l:ahead.parts
      call ch_sendraw(s:ch, l:p)
    endfor
    let s:opened_ahead += 1
  else
    let l:lines = getbufline(a:bufnr, 1, '$')
    call ch_sendexpr(s:ch, #{method: 'textDocument/didOpen', params: #{textDocument: #{
          \ uri: s:uris[a:bufnr], languageId: 'mlir', version: 1, text: join(l:lines, "\n") . "\n"}}})
  endif
  " Incremental sync (the server says so): the lines it has, to send only
  " what changed.
  if s:incremental()
    let s:sent[a:bufnr] = l:lines
  endif
  augroup tosa_lsp_buffer
    execute 'autocmd! * <buffer=' . a:bufnr . '>'
    execute 'autocmd TextChanged,InsertLeave,BufWritePost <buffer=' . a:bufnr . '> call tosa_lsp#changed(' . a:bufnr . ')'
    execute 'autocmd BufUnload <buffer=' . a:bufnr . '> call tosa_lsp#detach(' . a:bufnr . ')'
    execute 'autocmd BufFilePost <buffer=' . a:bufnr . '> call tosa_lsp#renamed(' . a:bufnr . ')'
    execute 'autocmd CursorMoved <buffer=' . a:bufnr . '> call tosa_lsp#echo_diagnostic()'
    execute 'autocmd BufWinEnter <buffer=' . a:bufnr . '> call tosa_lsp#view_changed(' . a:bufnr . ')'
  augroup END
  " WinScrolled matches window IDs, not buffers: one global autocmd.
  augroup tosa_lsp_view
    autocmd!
    if exists('##WinScrolled')
      autocmd WinScrolled * call tosa_lsp#scrolled()
    endif
    autocmd VimResized * call tosa_lsp#scrolled()
  augroup END
endfunction

" Sends didChange (full text) if the buffer changed since the last sync.
function! tosa_lsp#sync(...) abort
  let l:bufnr = a:0 ? a:1 : bufnr('%')
  if !tosa_lsp#attached(l:bufnr)
    return 0
  endif
  let l:tick = getbufvar(l:bufnr, 'changedtick')
  if l:tick == s:ticks[l:bufnr]
    return 1
  endif
  let s:ticks[l:bufnr] = l:tick
  if has_key(s:sent, l:bufnr)
    " The lines between the first and the last that differ from those the
    " server has: a 50k-line file is not sent (4.6 MB of JSON) for a key.
    let l:new = getbufline(l:bufnr, 1, '$')
    let [l:p, l:q] = s:LineDiff(s:sent[l:bufnr], l:new)
    let l:n = len(s:sent[l:bufnr])
    let l:m = len(l:new)
    let s:sent[l:bufnr] = l:new
    if l:p == l:n && l:p == l:m
      return 1   " the same text (a :write changes the tick only)
    endif
    let l:change = #{range: #{start: #{line: l:p, character: 0}, end: #{line: l:n - l:q, character: 0}},
          \ text: l:m - l:q > l:p ? join(l:new[l:p : l:m - l:q - 1], "\n") . "\n" : ''}
  else
    let l:change = #{text: s:text(l:bufnr)}
  endif
  let s:versions[l:bufnr] += 1
  call ch_sendexpr(s:ch, #{method: 'textDocument/didChange', params: #{
        \ textDocument: #{uri: tosa_lsp#uri(l:bufnr), version: s:versions[l:bufnr]},
        \ contentChanges: [l:change]}})
  return 1
endfunction

" The server takes incremental changes (textDocumentSync.change 2).
function! s:incremental() abort
  let l:sync = get(s:caps, 'textDocumentSync', 0)
  return get(g:, 'tosa_lsp_incremental', 1) && (type(l:sync) == v:t_dict ? get(l:sync, 'change', 0) : l:sync) == 2
endfunction

" [lines equal at the start, lines equal at the end (not overlapping)].
def s:LineDiff(old: list<string>, new: list<string>): list<number>
  var n = len(old)
  var m = len(new)
  var p = 0
  while p < n && p < m && old[p] ==# new[p]
    p += 1
  endwhile
  var q = 0
  while q < n - p && q < m - p && old[n - 1 - q] ==# new[m - 1 - q]
    q += 1
  endwhile
  return [p, q]
enddef

" TextChanged / InsertLeave / write: sync now, and refresh the inlay hints
" after a short pause (they are also refreshed when diagnostics arrive).
function! tosa_lsp#changed(bufnr) abort
  call tosa_lsp#sync(a:bufnr)
  if get(g:, 'tosa_lsp_inlay_hints', 1) && getbufvar(a:bufnr, 'tosa_lsp_inlay', 1)
    let l:t = getbufvar(a:bufnr, 'tosa_lsp_inlay_timer', -1)
    if l:t >= 0
      call timer_stop(l:t)
    endif
    call setbufvar(a:bufnr, 'tosa_lsp_inlay_timer',
          \ timer_start(get(g:, 'tosa_lsp_inlay_delay_ms', 150), {-> s:refresh_hints(a:bufnr)}))
  endif
endfunction

function! tosa_lsp#detach(bufnr) abort
  if tosa_lsp#attached(a:bufnr)
    call ch_sendexpr(s:ch, #{method: 'textDocument/didClose', params: #{textDocument: #{
          \ uri: get(s:uris, a:bufnr, tosa_lsp#uri(a:bufnr))}}})
  endif
  silent! call remove(s:versions, a:bufnr)
  silent! call remove(s:ticks, a:bufnr)
  silent! call remove(s:uris, a:bufnr)
  silent! call remove(s:sent, a:bufnr)
  silent! call remove(s:published, a:bufnr)
endfunction

" :saveas, :file: the document closed under its old name, opened under
" the new one (diagnostics then come for the new URI).
function! tosa_lsp#renamed(bufnr) abort
  if !tosa_lsp#attached(a:bufnr) || get(s:uris, a:bufnr, '') ==# tosa_lsp#uri(a:bufnr)
    return
  endif
  call tosa_lsp#detach(a:bufnr)
  if bufname(a:bufnr) !=# '' && !s:is_preview(a:bufnr)
    call s:open(a:bufnr)
  endif
endfunction

" Runs a:fn for the current buffer once it is open on the server and in
" sync. Commands never start a server when autostart is off (ALE set-up).
function! s:with_buffer(fn) abort
  let l:bufnr = bufnr('%')
  if s:is_preview(l:bufnr)
    call s:msg('not a source buffer')
    return 0
  endif
  if bufname(l:bufnr) ==# ''
    call s:msg('this buffer has no file name: :write it to a file first')
    return 0
  endif
  if !tosa_lsp#attached(l:bufnr) && !get(g:, 'tosa_lsp_autostart', 1) && !tosa_lsp#running()
    call s:msg('not started (g:tosa_lsp_autostart = 0): :TosaStart or :TosaAttach starts it')
    return 0
  endif
  if tosa_lsp#attached(l:bufnr)
    call tosa_lsp#sync(l:bufnr)
    call a:fn()
    return 1
  endif
  if s:failed !=# ''
    return 0
  endif
  return s:when_ready({-> s:open(l:bufnr) + a:fn()})
endfunction

" ---------------------------------------------------------------- diagnostics

let s:sev_names = ['Error', 'Error', 'Warning', 'Info', 'Hint']
" Location-list types Vim knows: error, warning, info, note (for hints).
let s:qf_types = ['E', 'E', 'W', 'I', 'N']

function! s:bufnr_of(uri) abort
  let l:path = s:path(a:uri)
  let l:bufnr = bufnr('^' . escape(l:path, '\[]*?{}~.^$') . '$')
  if l:bufnr < 0
    let l:bufnr = bufnr(fnamemodify(l:path, ':.'))
  endif
  if l:bufnr < 0
    for l:b in keys(s:versions)
      if get(s:uris, l:b, '') ==# a:uri
        return str2nr(l:b)
      endif
    endfor
  endif
  return l:bufnr
endfunction

function! s:on_diagnostics(params) abort
  let l:bufnr = s:bufnr_of(a:params.uri)
  if l:bufnr < 0 || !bufloaded(l:bufnr)
    return
  endif
  let s:diags[l:bufnr] = a:params.diagnostics
  let s:published[l:bufnr] = get(a:params, 'version', v:null) is v:null ? get(s:versions, l:bufnr, 0) : a:params.version
  call s:render_diagnostics(l:bufnr)
  " A finished analysis: the inlay hints of that text are ready too.
  if get(g:, 'tosa_lsp_inlay_hints', 1) && getbufvar(l:bufnr, 'tosa_lsp_inlay', 1)
    call s:refresh_hints(l:bufnr)
  endif
endfunction

function! tosa_lsp#diagnostics(...) abort
  return get(s:diags, a:0 ? a:1 : bufnr('%'), [])
endfunction

" Compiled (:def): a 50k-line file's publish has ~10000 diagnostics, and a
" loop of legacy script over them takes about a second.
def s:ByteCol(line: string, character: number): number
  if line !~ '[^\x01-\x7f]'
    return character < len(line) ? character : len(line)
  endif
  return s:byte_col(line, character)
enddef

" Signs, text properties (per severity), location-list items and the
" by-line index of a publish's diagnostics.
def s:DiagItems(bufnr: number, nlines: number, dlist: list<any>): dict<any>
  var names = ['Error', 'Error', 'Warning', 'Info', 'Hint']
  var qtypes = ['E', 'E', 'W', 'I', 'N']
  # Only the lines the diagnostics are on (a clean 50k-line file's publish
  # read all of them: 65 ms).
  var lo = nlines
  var hi = -1
  for d in dlist
    var a: number = d.range.start.line
    var b: number = d.range.end.line
    lo = a < lo ? a : lo
    hi = b > hi ? b : hi
  endfor
  hi = hi < nlines ? hi : nlines - 1
  var lines: list<string> = lo <= hi ? getbufline(bufnr, lo + 1, hi + 1) : []
  var signs: list<dict<any>> = []
  var props: dict<list<list<number>>> = {Error: [], Warning: [], Info: [], Hint: []}
  var qf: list<dict<any>> = []
  var by_line: dict<list<any>> = {}
  var long: list<any> = []
  for d in dlist
    var sevn: number = get(d, 'severity', 1)
    if sevn < 1 || sevn > 4
      sevn = 1
    endif
    var sev = names[sevn]
    var sl: number = d.range.start.line
    var el: number = d.range.end.line
    # By line, for the echo on every cursor move; ranges over more than
    # 50 lines on their first 50 (and in `long`).
    if el - sl > 50
      add(long, d)
    endif
    for l in range(sl, el > sl + 50 ? sl + 50 : (el > sl ? el : sl))
      var k = string(l)
      if has_key(by_line, k)
        add(by_line[k], d)
      else
        by_line[k] = [d]
      endif
    endfor
    if sl >= nlines
      continue
    endif
    var lnum = sl + 1
    # Explicit ids: with id 0 Vim looks for a free one among all signs.
    add(signs, {id: len(signs) + 1, group: 'tosa_lsp', name: 'TosaLsp' .. sev, buffer: bufnr, lnum: lnum, priority: 20 - sevn})
    var sline = lines[sl - lo]
    var scol = s:ByteCol(sline, d.range.start.character) + 1
    var eline = el < nlines ? el : nlines - 1
    var ecol = s:ByteCol(lines[eline - lo], d.range.end.character) + 1
    if ecol > len(lines[eline - lo]) + 1
      ecol = len(lines[eline - lo]) + 1
    endif
    if eline == sl && ecol <= scol
      ecol = scol + 1 < len(sline) + 1 ? scol + 1 : len(sline) + 1
    endif
    if len(sline) > 0 && scol <= len(sline) && (eline > sl || ecol > scol)
      add(props[sev], [lnum, scol, eline + 1, ecol])
    endif
    # One line per entry: notes and long messages are joined, never ^@.
    var code = get(d, 'code', get(d, 'source', ''))
    add(qf, {bufnr: bufnr, lnum: lnum, col: scol, type: qtypes[sevn],
      text: printf('[%s] %s', code, substitute(d.message, '\n', ' | ', 'g'))})
  endfor
  # Vim keeps a buffer's signs sorted by line: placed from the last line
  # up, each goes to the head of the list (from the top: quadratic).
  sort(signs, (a, b) => b.lnum - a.lnum)
  # Server order is per section and kind; users read the list by line.
  sort(qf, (a, b) => a.lnum != b.lnum ? a.lnum - b.lnum : a.col - b.col)
  return {signs: signs, props: props, qf: qf, lines: by_line, long: long}
enddef

function! s:render_diagnostics(bufnr) abort
  call sign_unplace('tosa_lsp', #{buffer: a:bufnr})
  " Each removal scans the whole buffer: only the kinds placed last time.
  let l:placed = get(s:prop_kinds, a:bufnr, ['Error', 'Warning', 'Info', 'Hint'])
  for l:sev in l:placed
    call prop_remove(#{type: 'TosaLsp' . l:sev, bufnr: a:bufnr, all: 1})
  endfor
  " (without signs now, getbufinfo() is cheap)
  let l:it = s:DiagItems(a:bufnr, getbufinfo(a:bufnr)[0].linecount, get(s:diags, a:bufnr, []))
  let s:prop_kinds[a:bufnr] = filter(keys(l:it.props), '!empty(l:it.props[v:val])')
  let s:diag_lines[a:bufnr] = #{lines: l:it.lines, long: l:it.long}
  call sign_placelist(l:it.signs)
  for [l:sev, l:list] in items(l:it.props)
    if !empty(l:list)
      silent! call prop_add_list(#{type: 'TosaLsp' . l:sev, bufnr: a:bufnr}, l:list)
    endif
  endfor
  for l:w in win_findbuf(a:bufnr)
    call setloclist(l:w, [], 'r', #{title: 'tosa-lsp', items: l:it.qf})
  endfor
endfunction

function! s:line_diagnostics() abort
  let l:lnum0 = line('.') - 1
  let l:index = get(s:diag_lines, bufnr('%'), #{lines: {}, long: []})
  let l:ds = copy(get(l:index.lines, l:lnum0, []))
  " Ranges over more than 50 lines are indexed on their first 50 only.
  for l:d in l:index.long
    if l:d.range.start.line + 50 < l:lnum0 && l:lnum0 <= l:d.range.end.line
      call add(l:ds, l:d)
    endif
  endfor
  return l:ds
endfunction

" Echo the diagnostic(s) on the cursor line.
function! tosa_lsp#show_line_diagnostics() abort
  let l:msgs = map(s:line_diagnostics(), {_, d -> s:sev_names[get(d, 'severity', 1)] . ': ' . d.message})
  if empty(l:msgs)
    echo 'tosa-lsp: no diagnostics on this line'
  else
    call s:msg(join(l:msgs, "\n"))
  endif
endfunction

" CursorMoved: the first diagnostic of the line, cut to fit (no hit-enter).
function! tosa_lsp#echo_diagnostic() abort
  if !get(g:, 'tosa_lsp_echo_diagnostic', 1) || line('.') == get(b:, 'tosa_lsp_echoed_line', -1)
    return
  endif
  let b:tosa_lsp_echoed_line = line('.')
  let l:ds = s:line_diagnostics()
  if empty(l:ds)
    let b:tosa_lsp_echoed = ''
    echo ''
    return
  endif
  let l:text = s:sev_names[get(l:ds[0], 'severity', 1)] . ': ' . substitute(l:ds[0].message, '\n.*', '', '')
  let l:text = strcharpart(l:text, 0, max([20, &columns - 15]))
  let b:tosa_lsp_echoed = l:text
  echo 'tosa-lsp: ' . l:text
endfunction

" ---------------------------------------------------------------- hover

" Markdown as plain lines for a popup at most a:1 (default 78) columns
" wide: tables aligned in columns (cells may hold `\|`) and fitted to the
" width by wrapping their widest column between words, `---` rules drawn as
" a line across, long lines wrapped between words (never inside one: the
" popup's own wrapping cuts words), emphasis and code marks dropped.
function! tosa_lsp#plain_markdown(text, ...) abort
  let l:maxw = max([12, a:0 ? a:1 : 78])
  let l:blocks = []
  let l:table = []
  for l:line in split(a:text, "\n", 1) + ['']
    if l:line =~# '^\s*|'
      let l:cells = split(substitute(trim(l:line), '\\|', "\x01", 'g'), '|', 1)[1:-2]
      call map(l:cells, {_, c -> trim(substitute(s:plain_inline(c), "\x01", '|', 'g'))})
      if join(l:cells, '') !~# '^[-: ]*$'
        call add(l:table, l:cells)
      endif
      continue
    endif
    if !empty(l:table)
      call add(l:blocks, ['table', l:table])
      let l:table = []
    endif
    if l:line =~# '^\s*\%(-\s*\)\{3,}$\|^\s*\%(\*\s*\)\{3,}$\|^\s*\%(_\s*\)\{3,}$'
      " A rule: the blank lines around it are dropped (it separates).
      while !empty(l:blocks) && l:blocks[-1] ==# ['text', '']
        call remove(l:blocks, -1)
      endwhile
      call add(l:blocks, ['rule'])
    elseif l:line =~# '^```'
      continue
    elseif !(l:line ==# '' && !empty(l:blocks) && l:blocks[-1] ==# ['rule'])
      call add(l:blocks, ['text', s:plain_inline(substitute(l:line, '^#\+\s*', '', ''))])
    endif
  endfor
  while !empty(l:blocks) && (l:blocks[-1] ==# ['text', ''] || l:blocks[-1] ==# ['rule'])
    call remove(l:blocks, -1)
  endwhile
  " The width: the widest line or table, at most maxw.
  let l:width = 1
  for l:b in l:blocks
    if l:b[0] ==# 'text'
      let l:width = max([l:width, strdisplaywidth(l:b[1])])
    elseif l:b[0] ==# 'table'
      let l:width = max([l:width, s:table_width(s:col_widths(l:b[1]), 2)])
    endif
  endfor
  let l:width = min([l:width, l:maxw])
  let l:out = []
  for l:b in l:blocks
    if l:b[0] ==# 'text'
      call extend(l:out, s:wrap(l:b[1], l:width))
    elseif l:b[0] ==# 'table'
      call extend(l:out, s:fit_table(l:b[1], l:width))
    else
      call add(l:out, repeat(&encoding ==# 'utf-8' ? '─' : '-', l:width))
    endif
  endfor
  return l:out
endfunction

" A line broken between words into lines of at most a:width columns; list
" items and indented lines continue under their text.
function! s:wrap(line, width) abort
  if strdisplaywidth(a:line) <= a:width
    return [a:line]
  endif
  let l:lead = matchstr(a:line, '^\s*\%([-*+]\s\+\|\d\+[.)]\s\+\)\=')
  let l:indent = repeat(' ', strdisplaywidth(l:lead))
  if len(l:indent) > a:width / 2
    let l:indent = ''
  endif
  let l:out = []
  let l:cur = l:lead
  let l:empty = 1
  for l:word in split(strpart(a:line, len(l:lead)), ' \+')
    let l:sep = l:empty ? '' : ' '
    if !l:empty && strdisplaywidth(l:cur . l:sep . l:word) > a:width
      call add(l:out, l:cur)
      let l:cur = l:indent
      let l:sep = ''
    endif
    " A word longer than a line: cut (nothing else fits).
    while strdisplaywidth(l:cur . l:sep . l:word) > a:width && strchars(l:word) > 1
      let l:room = max([1, a:width - strdisplaywidth(l:cur . l:sep)])
      call add(l:out, l:cur . l:sep . strcharpart(l:word, 0, l:room))
      let l:word = strcharpart(l:word, l:room)
      let l:cur = l:indent
      let l:sep = ''
    endwhile
    let l:cur .= l:sep . l:word
    let l:empty = 0
  endfor
  call add(l:out, l:cur)
  return l:out
endfunction

function! s:col_widths(rows) abort
  let l:widths = []
  for l:r in a:rows
    for l:i in range(len(l:r))
      if l:i >= len(l:widths)
        call add(l:widths, 0)
      endif
      let l:widths[l:i] = max([l:widths[l:i], strdisplaywidth(l:r[l:i])])
    endfor
  endfor
  return l:widths
endfunction

function! s:table_width(widths, gap) abort
  return empty(a:widths) ? 0 : eval(join(a:widths, '+')) + a:gap * (len(a:widths) - 1)
endfunction

" Rows aligned in columns within a:width: the gap shrinks to one space, then
" the widest column wraps its cells between words (a row then takes more
" lines, every cell in its column); a table that cannot fit is shown as one
" `header: cell` line per cell.
function! s:fit_table(rows, width) abort
  let l:widths = s:col_widths(a:rows)
  let l:gap = 2
  if s:table_width(l:widths, l:gap) > a:width
    let l:gap = 1
  endif
  while s:table_width(l:widths, l:gap) > a:width
    let l:i = index(l:widths, max(l:widths))
    if l:widths[l:i] <= 6
      break
    endif
    let l:widths[l:i] -= 1
  endwhile
  let l:lines = []
  if s:table_width(l:widths, l:gap) > a:width
    let l:head = a:rows[0]
    for l:r in a:rows[1:]
      for l:i in range(len(l:r))
        call extend(l:lines, s:wrap(get(l:head, l:i, '') . ': ' . l:r[l:i], a:width))
      endfor
    endfor
    return l:lines
  endif
  for l:r in a:rows
    let l:cells = []
    for l:i in range(len(l:r))
      call add(l:cells, s:wrap(l:r[l:i], l:widths[l:i]))
    endfor
    for l:k in range(max(map(copy(l:cells), 'len(v:val)')))
      let l:parts = []
      for l:i in range(len(l:cells))
        let l:c = get(l:cells[l:i], l:k, '')
        call add(l:parts, l:c . repeat(' ', l:widths[l:i] - strdisplaywidth(l:c)))
      endfor
      call add(l:lines, substitute(join(l:parts, repeat(' ', l:gap)), '\s\+$', '', ''))
    endfor
  endfor
  return l:lines
endfunction

function! s:plain_inline(s) abort
  let l:s = substitute(substitute(a:s, '\*\*', '', 'g'), '`', '', 'g')
  let l:s = substitute(l:s, '\%(^\|\s\)\zs\*\([^* ][^*]*\)\*', '\1', 'g')
  " _emphasis_ too, but not the underscores inside names (a_b_c).
  let l:s = substitute(l:s, '\%(^\|[[:space:](]\)\zs_\([^_ ][^_]*\)_\ze\%($\|[[:space:][:punct:]]\)', '\1', 'g')
  return substitute(l:s, '\s\+$', '', '')
endfunction

function! tosa_lsp#hover() abort
  let l:pos = s:cursor_position()
  let l:where = [bufnr('%'), line('.'), col('.')]
  return s:with_buffer({-> tosa_lsp#request('textDocument/hover',
        \ #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))}, position: l:pos},
        \ {r, e -> s:on_hover(l:where, r, e)})})
endfunction

function! s:on_hover(where, r, err) abort
  if a:err isnot v:null
    call s:error('hover: ' . get(a:err, 'message', string(a:err)))
    return
  endif
  if type(a:r) != v:t_dict || empty(a:r)
    let g:tosa_lsp_last_hover = ''
    echo 'tosa-lsp: no hover information'
    return
  endif
  let l:c = a:r.contents
  let l:text = type(l:c) == v:t_dict ? get(l:c, 'value', '') : type(l:c) == v:t_list
        \ ? join(map(copy(l:c), {_, v -> type(v) == v:t_dict ? v.value : v}), "\n") : l:c
  let g:tosa_lsp_last_hover = l:text
  " The cursor moved on while the server answered: do not pop up elsewhere.
  if [bufnr('%'), line('.'), col('.')] != a:where
    return
  endif
  " At most 80 columns wide with its border and padding; the lines are
  " made to fit, so the width stays the same while it scrolls.
  let l:lines = tosa_lsp#plain_markdown(l:text, max([20, min([80, &columns]) - 4]))
  let l:width = max([20] + map(copy(l:lines), 'strdisplaywidth(v:val)'))
  " Above or below the cursor, whichever has more room, never taller than
  " that room (the rest scrolls).
  let l:row = screenpos(win_getid(), line('.'), col('.')).row
  let l:above = l:row - 1
  let l:below = &lines - &cmdheight - l:row
  let l:opts = #{border: [], padding: [0, 1, 0, 1],
        \ maxwidth: l:width, minwidth: l:width,
        \ maxheight: max([1, max([l:above, l:below]) - 2]),
        \ wrap: 1, scrollbar: 1, moved: 'any', mapping: 0,
        \ filter: function('s:hover_filter')}
  if l:below > l:above
    call extend(l:opts, #{line: 'cursor+1', col: 'cursor', pos: 'topleft'})
  else
    call extend(l:opts, #{line: 'cursor-1', col: 'cursor', pos: 'botleft'})
  endif
  let g:tosa_lsp_hover_popup = popup_create(l:lines, l:opts)
endfunction

" q/Esc close; j/k, Ctrl-E/Y, Ctrl-D/U, Ctrl-F/B and arrows scroll; any
" other key closes the popup and does its usual work.
function! s:hover_filter(id, key) abort
  if a:key ==# "\<Esc>" || a:key ==# 'q'
    call popup_close(a:id)
    return 1
  endif
  let l:page = max([1, popup_getpos(a:id).core_height - 1])
  let l:steps = {'j': 1, "\<Down>": 1, "\<C-E>": 1, 'k': -1, "\<Up>": -1, "\<C-Y>": -1,
        \ "\<C-D>": l:page, "\<C-F>": l:page, "\<PageDown>": l:page,
        \ "\<C-U>": -l:page, "\<C-B>": -l:page, "\<PageUp>": -l:page}
  if has_key(l:steps, a:key)
    call tosa_lsp#scroll_popup(a:id, l:steps[a:key])
    return 1
  endif
  return 0
endfunction

function! tosa_lsp#scroll_popup(id, delta) abort
  let l:pos = popup_getpos(a:id)
  let l:lines = getbufline(winbufnr(a:id), 1, '$')
  let l:total = len(l:lines)
  " The last first line that still fills the popup, counting wrapped rows.
  let l:last = l:total
  let l:rows = 0
  while l:last >= 1
    let l:rows += max([1, (strdisplaywidth(l:lines[l:last - 1]) + l:pos.core_width - 1) / max([1, l:pos.core_width])])
    if l:rows > l:pos.core_height
      break
    endif
    let l:last -= 1
  endwhile
  let l:last = max([1, l:last + 1])
  let l:first = min([l:last, max([1, l:pos.firstline + a:delta])])
  call popup_setoptions(a:id, #{firstline: l:first})
  redraw
endfunction

" ---------------------------------------------------------------- inlay hints

function! tosa_lsp#inlay_hints(...) abort
  let l:bufnr = bufnr('%')
  if a:0 && a:1 ==# 'off'
    let b:tosa_lsp_inlay = 0
    call prop_remove(#{type: 'TosaLspInlay', bufnr: l:bufnr, all: 1})
    let b:tosa_lsp_inlay_hints = []
    let b:tosa_lsp_inlay_last = []
    return 0
  endif
  let b:tosa_lsp_inlay = 1
  return s:with_buffer({-> s:refresh_hints(l:bufnr)})
endfunction

" The lines to ask hints for: those shown in the buffer's windows plus a
" margin, never the whole file (a 50k-line file would take seconds to place).
function! s:hint_range(bufnr) abort
  let l:margin = get(g:, 'tosa_lsp_inlay_margin', 100)
  let l:n = getbufinfo(a:bufnr)[0].linecount
  let l:first = -1
  let l:last = -1
  for l:w in getwininfo()
    if l:w.bufnr == a:bufnr
      " line('w$', id) updates botline (getwininfo() may hold a stale one).
      let l:top = line('w0', l:w.winid)
      let l:first = l:first < 0 ? l:top : min([l:first, l:top])
      let l:last = max([l:last, line('w$', l:w.winid)])
    endif
  endfor
  if l:first < 0
    return []
  endif
  return [max([1, l:first - l:margin]), min([l:n, l:last + l:margin])]
endfunction

function! s:refresh_hints(bufnr) abort
  if !tosa_lsp#attached(a:bufnr) || !bufloaded(a:bufnr)
    return
  endif
  call tosa_lsp#sync(a:bufnr)
  let l:range = s:hint_range(a:bufnr)
  if empty(l:range)
    " Not shown: asked for when a window shows it (BufWinEnter).
    call setbufvar(a:bufnr, 'tosa_lsp_inlay_tick', -1)
    return
  endif
  let l:tick = getbufvar(a:bufnr, 'changedtick')
  call tosa_lsp#request('textDocument/inlayHint', #{textDocument: #{uri: tosa_lsp#uri(a:bufnr)},
        \ range: #{start: #{line: l:range[0] - 1, character: 0}, end: #{line: l:range[1], character: 0}}},
        \ {r, e -> s:on_hints(a:bufnr, l:tick, l:range, r, e)})
endfunction

" WinScrolled / BufWinEnter / window resize: new hints once the view rests,
" unless the lines now shown were covered by the last answer.
function! tosa_lsp#view_changed(bufnr) abort
  if !get(g:, 'tosa_lsp_inlay_hints', 1) || !getbufvar(a:bufnr, 'tosa_lsp_inlay', 1) || !tosa_lsp#attached(a:bufnr)
    return
  endif
  " A resized window: the hints that no longer fit after their line go
  " below it (and back), from the last answer.
  let l:last = getbufvar(a:bufnr, 'tosa_lsp_inlay_last', [])
  if !empty(l:last) && s:text_width(a:bufnr) != getbufvar(a:bufnr, 'tosa_lsp_inlay_width', -1)
        \ && getbufvar(a:bufnr, 'tosa_lsp_inlay_tick', -1) == getbufvar(a:bufnr, 'changedtick')
    call setbufvar(a:bufnr, 'tosa_lsp_inlay_hints',
          \ s:place_hints(a:bufnr, l:last, getbufvar(a:bufnr, 'tosa_lsp_inlay_range', [1, 1])))
  endif
  let l:have = getbufvar(a:bufnr, 'tosa_lsp_inlay_range', [])
  let l:margin = get(g:, 'tosa_lsp_inlay_margin', 100)
  let l:want = s:hint_range(a:bufnr)
  if empty(l:want) || (!empty(l:have) && getbufvar(a:bufnr, 'tosa_lsp_inlay_tick', -1) == getbufvar(a:bufnr, 'changedtick')
        \ && l:have[0] <= min([l:want[0] + l:margin, l:want[1]]) && max([l:want[1] - l:margin, l:want[0]]) <= l:have[1])
    return
  endif
  let l:t = getbufvar(a:bufnr, 'tosa_lsp_inlay_timer', -1)
  if l:t >= 0
    call timer_stop(l:t)
  endif
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_timer',
        \ timer_start(get(g:, 'tosa_lsp_inlay_scroll_delay_ms', 100), {-> s:refresh_hints(a:bufnr)}))
endfunction

function! tosa_lsp#scrolled() abort
  for l:b in uniq(sort(map(getwininfo(), 'v:val.bufnr')))
    if has_key(s:versions, l:b)
      call tosa_lsp#view_changed(l:b)
    endif
  endfor
endfunction

function! s:on_hints(bufnr, tick, range, r, err) abort
  if a:err isnot v:null || type(a:r) != v:t_list || !bufloaded(a:bufnr)
        \ || !getbufvar(a:bufnr, 'tosa_lsp_inlay', 1)
    return
  endif
  " Hints for an older text would land in the wrong place: the change
  " already scheduled a newer request.
  if getbufvar(a:bufnr, 'changedtick') != a:tick
    return
  endif
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_last', a:r)
  let l:placed = s:place_hints(a:bufnr, a:r, a:range)
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_hints', l:placed)
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_tick', a:tick)
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_range', a:range)
endfunction

" The text columns of the narrowest window showing the buffer (signs and
" numbers excluded), 0 when none does; negative when it does not wrap.
function! s:text_width(bufnr) abort
  let l:w = 0
  for l:win in getwininfo()
    if l:win.bufnr == a:bufnr
      let l:tw = l:win.width - l:win.textoff
      if l:w == 0 || l:tw < abs(l:w)
        let l:w = getwinvar(l:win.winid, '&wrap') ? l:tw : -l:tw
      endif
    endif
  endfor
  return l:w
endfunction


" Hints are never placed inside the code (" runtime-check" between `%0`
" and `=` read like code): after the line when they fit after it (a wrapped
" line: after its last screen row), else on a virtual line below it, ending
" under the line's end (the type they refine) as far as the window allows.
" One text property per line; the placed hints are kept in
" b:tosa_lsp_inlay_hints.
function! s:place_hints(bufnr, hints, range) abort
  let l:tw = s:text_width(a:bufnr)
  let l:wins = win_findbuf(a:bufnr)
  " (getbufinfo() would list every sign of the buffer)
  let l:n = empty(l:wins) ? len(getbufline(a:bufnr, 1, '$')) : line('$', l:wins[0])
  let l:placed = s:PlaceHints(a:bufnr, a:hints, a:range, l:tw, l:n)
  call setbufvar(a:bufnr, 'tosa_lsp_inlay_width', l:tw)
  return l:placed
endfunction

" Compiled: it runs after every publish and scroll (a 50k-line file's screen
" of hints took 66 ms as legacy script on a loaded machine).
def s:PlaceHints(bufnr: number, hints: list<any>, range: list<number>, tw: number, n: number): list<dict<any>>
  prop_remove({type: 'TosaLspInlay', bufnr: bufnr, all: true})
  var wcols = tw < 0 ? -tw : tw
  var blines = getbufline(bufnr, range[0], range[1])
  var by_line: dict<list<dict<any>>> = {}
  var lnums: list<number> = []
  for h in hints
    # Only what a hint must have (a malformed entry once raised E716 here).
    if type(h) != v:t_dict || !has_key(h, 'label') || !has_key(h, 'position')
      continue
    endif
    var lab: string = type(h.label) == v:t_list ? join(mapnew(h.label, (_, v) => get(v, 'value', '')), '') : h.label
    var lnum: number = h.position.line + 1
    if lnum > n
      continue
    endif
    var ltext: string = range[0] <= lnum && lnum <= range[1] ? blines[lnum - range[0]] : get(getbufline(bufnr, lnum), 0, '')
    var k = string(lnum)
    if !has_key(by_line, k)
      by_line[k] = []
      add(lnums, lnum)
    endif
    add(by_line[k], {lnum: lnum, col: s:ByteCol(ltext, h.position.character) + 1, label: lab, line: ltext})
  endfor
  var done: list<dict<any>> = []
  for lnum in lnums
    var hs = by_line[string(lnum)]
    if len(hs) > 1
      sort(hs, (a, b) => a.col - b.col)
    endif
    var htext = ''
    for h in hs
      htext ..= h.label
    endfor
    var fullw = strdisplaywidth(hs[0].line)
    # A wrapped line: what its last screen row leaves.
    var lastw = tw > 0 && fullw > wcols ? fullw - wcols * ((fullw - 1) / wcols) : fullw
    var pid: number
    var where: string
    if wcols <= 0 || lastw + strdisplaywidth(htext) <= wcols
      where = 'after'
      pid = prop_add(lnum, 0, {type: 'TosaLspInlay', bufnr: bufnr, text: htext, text_align: 'after'})
    else
      where = 'below'
      htext = trim(htext)
      var pad = (lastw < wcols ? lastw : wcols) - strdisplaywidth(htext)
      pid = prop_add(lnum, 0, {type: 'TosaLspInlay', bufnr: bufnr, text: htext,
        text_align: 'below', text_padding_left: pad > 0 ? pad : 0})
    endif
    for h in hs
      add(done, {lnum: lnum, col: h.col, label: h.label, id: pid, align: where})
    endfor
  endfor
  return done
enddef

" ---------------------------------------------------------------- edits

let s:edited_count = 0

" The lines after LSP TextEdits (UTF-16 ranges, not overlapping): one pass
" from the top, so a whole-file rewrite of thousands of edits is fast.
def s:EditedLines(lines: list<string>, edits: list<any>): list<string>
  # Servers send them in order: sorted only when they are not (a sort with
  # a comparison function costs more than the edits themselves).
  var sorted = edits
  for i in range(1, len(edits) > 0 ? len(edits) - 1 : 0)
    var a = edits[i - 1].range.start
    var b = edits[i].range.start
    if a.line > b.line || (a.line == b.line && a.character > b.character)
      sorted = sort(copy(edits), (x, y) => x.range.start.line != y.range.start.line
        ? x.range.start.line - y.range.start.line : x.range.start.character - y.range.start.character)
      break
    endif
  endfor
  var n = len(lines)
  # The lines of the result an edit wrote, each counted once.
  var touched = 0
  var last = -1
  var out: list<string> = []
  var acc = ''
  var cl = 0
  var cc = 0
  for e in sorted
    var sl: number = e.range.start.line
    var el: number = e.range.end.line
    if sl > n
      sl = n
    endif
    if el > n
      el = n
    endif
    var sc = s:ByteCol(get(lines, sl, ''), e.range.start.character)
    var ec = s:ByteCol(get(lines, el, ''), e.range.end.character)
    if sl < cl || (sl == cl && sc < cc)
      continue   # overlaps the previous edit
    endif
    if sl == cl
      acc ..= strpart(get(lines, cl, ''), cc, sc - cc)
    else
      add(out, acc .. strpart(get(lines, cl, ''), cc))
      if sl - 1 >= cl + 1
        extend(out, lines[cl + 1 : sl - 1])
      endif
      acc = strpart(get(lines, sl, ''), 0, sc)
    endif
    var parts = split(e.newText, "\n", true)
    var first = len(out) > last ? len(out) : last + 1
    var final = len(out) + len(parts) - 1
    if final >= first
      touched += final - first + 1
      last = final
    endif
    acc ..= parts[0]
    for p in parts[1 :]
      add(out, acc)
      acc = p
    endfor
    cl = el
    cc = ec
  endfor
  if cl < n
    add(out, acc .. strpart(lines[cl], cc))
    if cl + 1 < n
      extend(out, lines[cl + 1 :])
    endif
  elseif acc !=# ''
    add(out, acc)
  endif
  # The empty text after a final newline is no line.
  if last >= len(out)
    touched -= last - len(out) + 1
  endif
  s:edited_count = touched
  return out
enddef

" Applies LSP TextEdits (UTF-16 ranges) to a buffer: the new text is made in
" memory, and only the lines between the first and the last changed one are
" replaced (the others keep their signs and highlights).
function! tosa_lsp#apply_text_edits(bufnr, edits) abort
  if empty(a:edits)
    return
  endif
  let l:old = getbufline(a:bufnr, 1, '$')
  call s:set_lines(a:bufnr, l:old, s:EditedLines(l:old, a:edits))
endfunction

" Replaces a buffer's lines a:old (its text now) with a:new, setting only
" the lines between the first and the last that differ.
function! s:set_lines(bufnr, old, new) abort
  let l:old = a:old
  let l:new = a:new
  if empty(l:new)
    let l:new = ['']
  endif
  let l:n = len(l:old)
  let l:m = len(l:new)
  let l:p = 0
  while l:p < l:n && l:p < l:m && l:old[l:p] ==# l:new[l:p]
    let l:p += 1
  endwhile
  let l:q = 0
  while l:q < l:n - l:p && l:q < l:m - l:p && l:old[l:n - 1 - l:q] ==# l:new[l:m - 1 - l:q]
    let l:q += 1
  endwhile
  let l:oldmid = l:n - l:p - l:q
  let l:newmid = l:new[l:p : l:m - l:q - 1]
  let l:k = min([l:oldmid, len(l:newmid)])
  if l:k > 0
    call setbufline(a:bufnr, l:p + 1, l:newmid[: l:k - 1])
  endif
  if len(l:newmid) > l:k
    call appendbufline(a:bufnr, l:p + l:k, l:newmid[l:k :])
  elseif l:oldmid > l:k
    silent call deletebufline(a:bufnr, l:p + l:k + 1, l:p + l:oldmid)
  endif
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
    let l:bufnr = s:bufnr_of(l:uri)
    if l:bufnr < 0
      let l:bufnr = bufadd(s:path(l:uri))
      call bufload(l:bufnr)
    endif
    call s:apply_document(l:bufnr, l:edits)
  endfor
endfunction

" The edits of one document; a:1: the lines they make, when known (a
" reviewed rewrite), a:2 the buffer's lines they apply to.
function! s:apply_document(bufnr, edits, ...) abort
    let l:bufnr = a:bufnr
    let l:edits = a:edits
    " The cursor stays on its text: moved by the lines added or removed
    " above it, never to where the edit was made.
    let l:view = l:bufnr == bufnr('%') ? winsaveview() : {}
    let l:above = 0
    if !empty(l:view)
      for l:e in l:edits
        if l:e.range.end.line < l:view.lnum - 1
          let l:above += len(split(l:e.newText, "\n", 1)) - 1 - (l:e.range.end.line - l:e.range.start.line)
        endif
      endfor
    endif
    if a:0
      call s:set_lines(l:bufnr, a:2, a:1)
    else
      call tosa_lsp#apply_text_edits(l:bufnr, l:edits)
    endif
    if !empty(l:view)
      let l:view.lnum = max([1, min([line('$'), l:view.lnum + l:above])])
      let l:view.topline = max([1, l:view.topline + l:above])
      call winrestview(l:view)
    endif
    call tosa_lsp#changed(l:bufnr)
endfunction

" ---------------------------------------------------------------- code actions

" Asks for the actions on the cursor line; a:cb(actions).
function! tosa_lsp#code_actions(cb, ...) abort
  let l:lnum0 = line('.') - 1
  let l:range = #{start: #{line: l:lnum0, character: 0}, end: #{line: l:lnum0, character: s:utf16_col(getline('.'), len(getline('.')))}}
  let l:context = #{diagnostics: s:line_diagnostics()}
  if a:0
    let l:context.only = a:1
  endif
  let l:bufnr = bufnr('%')
  return s:with_buffer({-> tosa_lsp#request('textDocument/codeAction', #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)},
        \ range: l:range, context: l:context}, {r, e -> a:cb(type(r) == v:t_list ? r : [])})})
endfunction

" :TosaCodeAction [N]: choose (inputlist) or run the N-th action.
function! tosa_lsp#code_action(...) abort
  let l:choice = a:0 && a:1 !=# '' ? str2nr(a:1) : 0
  " The menu is shown from a timer, not from the channel callback: inside
  " it, Vim 9.0's inputlist() drops the Enter typed after the number.
  return tosa_lsp#code_actions({actions -> l:choice > 0 ? s:choose_action(actions, l:choice)
        \ : timer_start(0, {-> s:choose_action(actions, 0)})})
endfunction

function! s:choose_action(actions, choice) abort
  let g:tosa_lsp_last_actions = a:actions
  if empty(a:actions)
    echo 'tosa-lsp: no code actions here'
    return
  endif
  let l:choice = a:choice
  if l:choice == 0
    let l:menu = ['tosa-lsp code actions:']
    for l:i in range(len(a:actions))
      call add(l:menu, printf('%d. %s [%s]', l:i + 1, a:actions[l:i].title, get(a:actions[l:i], 'kind', '')))
    endfor
    let l:choice = inputlist(l:menu)
    " The menu scrolled the screen: without a redraw the next message goes
    " on the prompt's line and asks "Press ENTER" for the Enter just typed.
    redraw
  endif
  if l:choice < 1 || l:choice > len(a:actions)
    return
  endif
  call tosa_lsp#run_action(a:actions[l:choice - 1])
endfunction

function! tosa_lsp#run_action(action) abort
  if s:is_review(a:action)
    " A whole-file rewrite: shown as a diff, applied only on `y`.
    call tosa_lsp#review(a:action)
    return
  endif
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
      call s:preview_request(l:p, get(l:p, 'stage', 'linalg'), get(l:p, 'mode', 'fast'))
    elseif l:cmd.command ==# 'tosa.compile'
      call s:compile_with(empty(l:args) ? {} : l:args[0])
    else
      call tosa_lsp#request('workspace/executeCommand', #{command: l:cmd.command, arguments: l:args},
            \ {r, e -> e is v:null ? 0 : s:error(l:cmd.command . ': ' . get(e, 'message', ''))})
    endif
  endif
endfunction

" ---------------------------------------------------------------- review

" Whole-file rewrites (migrate, refine all shapes) carry data.review; older
" servers marked their edits' annotations needsConfirmation instead.
function! s:is_review(action) abort
  let l:data = get(a:action, 'data', {})
  if type(l:data) == v:t_dict && get(l:data, 'review', v:false) is v:true
    return 1
  endif
  let l:ann = get(get(a:action, 'edit', {}), 'changeAnnotations', {})
  return type(l:ann) == v:t_dict && !empty(filter(values(l:ann), 'type(v:val) == v:t_dict && get(v:val, "needsConfirmation", v:false) is v:true'))
endfunction

" The one document a review edit changes: [bufnr, version or -1, edits].
function! s:review_target(edit) abort
  for l:dc in get(a:edit, 'documentChanges', [])
    if has_key(l:dc, 'edits')
      let l:v = get(l:dc.textDocument, 'version', v:null)
      return [s:bufnr_of(l:dc.textDocument.uri), type(l:v) == v:t_number ? l:v : -1, l:dc.edits]
    endif
  endfor
  for [l:uri, l:edits] in items(get(a:edit, 'changes', {}))
    return [s:bufnr_of(l:uri), -1, l:edits]
  endfor
  return [-1, -1, []]
endfunction

" The edit is for the text the server has now (the version last sent, the
" buffer not changed since): else it would land in the wrong places.
function! s:review_current(bufnr, version) abort
  return bufloaded(a:bufnr) && has_key(s:versions, a:bufnr)
        \ && getbufvar(a:bufnr, 'changedtick') == get(s:ticks, a:bufnr, -1)
        \ && (a:version < 0 || a:version == s:versions[a:bufnr])
endfunction

" A review buffer: read-only scratch, mlir syntax, never opened on the server.
function! s:review_buffer(name, lines) abort
  let b:tosa_lsp_preview = 1
  setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted
  execute 'silent file ' . fnameescape(a:name)
  call setline(1, a:lines)
  setlocal filetype=mlir
  setlocal nomodifiable readonly nomodified
  diffthis
  nnoremap <buffer> <silent> <nowait> y :call tosa_lsp#review_answer(1)<CR>
  nnoremap <buffer> <silent> <nowait> n :call tosa_lsp#review_answer(0)<CR>
  nnoremap <buffer> <silent> <nowait> q :call tosa_lsp#review_answer(0)<CR>
  " Closed without an answer (:q, :tabclose): nothing applied.
  autocmd BufWipeout <buffer> call s:review_closed(str2nr(expand('<abuf>')))
endfunction

function! s:review_closed(bufnr) abort
  if !empty(s:review) && index(s:review.bufs, a:bufnr) >= 0
    let l:title = s:review.title
    let s:review = {}
    let g:tosa_lsp_last_echo = 'tosa-lsp: review closed, not applied: ' . l:title
    echo g:tosa_lsp_last_echo
  endif
endfunction

let s:review = {}

" Shows a whole-file rewrite as a diff (current | proposed) in a new tab
" page and asks: `y` applies it (if the buffer did not change meanwhile),
" `n` / `q` discard it.
function! tosa_lsp#review(action) abort
  let [l:bufnr, l:version, l:edits] = s:review_target(get(a:action, 'edit', {}))
  if l:bufnr < 0 || !bufloaded(l:bufnr)
    call s:error('review: the rewrite is for a file that is not loaded')
    return 0
  endif
  if !s:review_current(l:bufnr, l:version)
    call s:error(fnamemodify(bufname(l:bufnr), ':t') . ' changed since the server proposed "' . a:action.title
          \ . '": not applied; ask again')
    return 0
  endif
  if !empty(s:review)
    call tosa_lsp#review_answer(0, 1)
  endif
  let l:old = getbufline(l:bufnr, 1, '$')
  let l:new = s:EditedLines(l:old, l:edits)
  let l:from = win_getid()
  let l:name = fnamemodify(bufname(l:bufnr), ':t')
  tabnew
  call s:review_buffer('tosa-review://' . l:name . ' (current)', l:old)
  let l:left = win_getid()
  rightbelow vnew
  call s:review_buffer('tosa-review://' . l:name . ' (proposed)', l:new)
  let l:changed = s:edited_count
  " How to answer first: a half-width status line cuts its end.
  let l:title = substitute(a:action.title, '%', '%%', 'g')
  call setwinvar(l:left, '&statusline', ' y apply  n discard │ current: ' . substitute(l:name, '%', '%%', 'g') . '%<')
  call setwinvar(win_getid(), '&statusline', ' y apply  n discard │ proposed: ' . l:title . '%<')
  let s:review = #{bufnr: l:bufnr, old: l:old, new: l:new, doc_edits: l:edits,
        \ edit: a:action.edit, title: a:action.title, from: l:from, tab: tabpagenr(),
        \ bufs: [winbufnr(l:left), bufnr('%')], edits: len(l:edits), lines: l:changed}
  normal! gg]c
  redraw
  let g:tosa_lsp_last_echo = strcharpart(printf('tosa-lsp: apply? y: yes, n: no (%d line%s: %s)',
        \ l:changed, l:changed == 1 ? '' : 's', a:action.title), 0, s:echo_room())
  echo g:tosa_lsp_last_echo
  return 1
endfunction

function! tosa_lsp#reviewing() abort
  return copy(s:review)
endfunction

" `y` (a:yes = 1) / `n`, `q`: closes the review, applies on yes.
function! tosa_lsp#review_answer(yes, ...) abort
  if empty(s:review)
    return 0
  endif
  let l:r = s:review
  let s:review = {}
  " Its tab page closed (the buffers are wiped with their windows).
  let l:wins = win_findbuf(l:r.bufs[0])
  if !empty(l:wins) && tabpagenr('$') > 1
    call win_gotoid(l:wins[0])
    tabclose
  endif
  for l:b in l:r.bufs
    if bufexists(l:b)
      execute 'silent! bwipeout! ' . l:b
    endif
  endfor
  if win_gotoid(l:r.from) == 0 && bufwinid(l:r.bufnr) > 0
    call win_gotoid(bufwinid(l:r.bufnr))
  endif
  let l:name = fnamemodify(bufname(l:r.bufnr), ':t')
  if !a:yes
    if !a:0
      echo 'tosa-lsp: not applied: ' . l:r.title
    endif
    return 0
  endif
  " Its text as reviewed (a :write in between is no change).
  if !bufloaded(l:r.bufnr) || getbufline(l:r.bufnr, 1, '$') !=# l:r.old
    call s:error(l:name . ' changed during the review: "' . l:r.title . '" not applied; ask again')
    return 0
  endif
  call s:apply_document(l:r.bufnr, l:r.doc_edits, l:r.new, l:r.old)
  call s:msg(printf('applied "%s" to %s (%d line%s)', l:r.title, l:name, l:r.lines, l:r.lines == 1 ? '' : 's'))
  return 1
endfunction

" :TosaMigrate / :TosaRefineAll: the whole-file action of that kind, reviewed.
function! tosa_lsp#rewrite(kind) abort
  return tosa_lsp#code_actions({actions -> s:rewrite_with(a:kind, actions)}, [a:kind])
endfunction

function! s:rewrite_with(kind, actions) abort
  let l:found = filter(copy(a:actions), 'get(v:val, "kind", "") =~# "^" . a:kind && has_key(v:val, "edit")')
  if empty(l:found) && a:kind ==# 'source.migrate'
    " Servers before source.migrate: the migration's kind was `source`.
    let l:found = filter(copy(a:actions), 'v:val.title =~# "^Migrate" && has_key(v:val, "edit")')
  endif
  if empty(l:found)
    let g:tosa_lsp_last_echo = a:kind ==# 'source.migrate' ? 'tosa-lsp: nothing to migrate in this file'
          \ : 'tosa-lsp: no shape to refine in the function at the cursor'
    echo g:tosa_lsp_last_echo
    return
  endif
  if s:is_review(l:found[0])
    call tosa_lsp#review(l:found[0])
  else
    call tosa_lsp#review(extend(copy(l:found[0]), #{data: #{review: v:true}}))
  endif
endfunction

" ---------------------------------------------------------------- navigation

function! s:locations(r) abort
  let l:list = a:r is v:null ? [] : type(a:r) == v:t_list ? a:r : [a:r]
  let l:items = []
  for l:l in l:list
    let l:uri = get(l:l, 'uri', get(l:l, 'targetUri', ''))
    let l:range = get(l:l, 'range', get(l:l, 'targetSelectionRange', {}))
    let l:bufnr = s:bufnr_of(l:uri)
    let l:path = s:path(l:uri)
    let l:line = l:bufnr > 0 ? s:buf_line(l:bufnr, l:range.start.line) : get(readfile(l:path, '', l:range.start.line + 1), l:range.start.line, '')
    call add(l:items, #{filename: l:path, lnum: l:range.start.line + 1,
          \ col: s:byte_col(l:line, l:range.start.character) + 1, text: trim(l:line)})
  endfor
  return l:items
endfunction

" :TosaDefinition (gd): jumps to the definition (tag stack kept).
function! tosa_lsp#definition() abort
  let l:pos = s:cursor_position()
  return s:with_buffer({-> tosa_lsp#request('textDocument/definition',
        \ #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))}, position: l:pos}, function('s:on_definition'))})
endfunction

function! s:on_definition(r, err) abort
  let l:items = a:err is v:null ? s:locations(a:r) : []
  if empty(l:items)
    echo 'tosa-lsp: no definition found'
    return
  endif
  let l:from = [bufnr('%'), line('.'), col('.'), 0]
  let l:tag = expand('<cword>')
  call settagstack(win_getid(), #{items: [#{bufnr: l:from[0], from: l:from, tagname: l:tag}]}, 't')
  let l:it = l:items[0]
  if fnamemodify(l:it.filename, ':p') !=# expand('%:p')
    execute 'edit ' . fnameescape(l:it.filename)
  endif
  call cursor(l:it.lnum, l:it.col)
  normal! zv
endfunction

" :TosaReferences (gr) and :TosaSymbols (gO): the quickfix list.
function! tosa_lsp#references() abort
  let l:pos = s:cursor_position()
  return s:with_buffer({-> tosa_lsp#request('textDocument/references',
        \ #{textDocument: #{uri: tosa_lsp#uri(bufnr('%'))}, position: l:pos, context: #{includeDeclaration: v:true}},
        \ {r, e -> s:show_locations('references', s:locations(r))})})
endfunction

function! s:show_locations(title, items) abort
  if empty(a:items)
    echo 'tosa-lsp: no ' . a:title
    return
  endif
  " The quickfix list: the location list holds the diagnostics.
  call setqflist([], ' ', #{title: 'tosa-lsp ' . a:title, items: a:items})
  copen
  wincmd p
  echo 'tosa-lsp: ' . len(a:items) . ' ' . a:title
endfunction

function! tosa_lsp#symbols() abort
  let l:bufnr = bufnr('%')
  return s:with_buffer({-> tosa_lsp#request('textDocument/documentSymbol',
        \ #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)}}, {r, e -> s:on_symbols(l:bufnr, r)})})
endfunction

function! s:on_symbols(bufnr, r) abort
  let l:items = []
  call s:flatten_symbols(a:bufnr, type(a:r) == v:t_list ? a:r : [], 0, l:items)
  call s:show_locations('symbols', l:items)
endfunction

function! s:flatten_symbols(bufnr, syms, depth, items) abort
  for l:s in a:syms
    let l:range = get(l:s, 'selectionRange', get(get(l:s, 'location', {}), 'range', {}))
    if !empty(l:range)
      let l:line = s:buf_line(a:bufnr, l:range.start.line)
      call add(a:items, #{bufnr: a:bufnr, lnum: l:range.start.line + 1,
            \ col: s:byte_col(l:line, l:range.start.character) + 1,
            \ text: repeat('  ', a:depth) . l:s.name})
    endif
    call s:flatten_symbols(a:bufnr, get(l:s, 'children', []), a:depth + 1, a:items)
  endfor
endfunction

" ---------------------------------------------------------------- preview

" :TosaPreviewLowering [stage] [mode]
function! tosa_lsp#preview_lowering(...) abort
  let l:stage = a:0 >= 1 && a:1 !=# '' ? a:1 : get(g:, 'tosa_lsp_preview_stage', 'linalg')
  let l:mode = a:0 >= 2 && a:2 !=# '' ? a:2 : get(g:, 'tosa_lsp_preview_mode', 'fast')
  let l:uri = tosa_lsp#uri(bufnr('%'))
  let l:params = #{textDocument: #{uri: l:uri}, uri: l:uri, position: s:cursor_position(), stage: l:stage, mode: l:mode}
  return s:with_buffer({-> s:preview_request(l:params, l:stage, l:mode)})
endfunction

function! s:preview_request(params, stage, mode) abort
  let l:src = bufnr('%')
  echo 'tosa-lsp: lowering to ' . a:stage . ' ...'
  call tosa_lsp#request('tosa/previewLowering', a:params,
        \ {r, e -> e isnot v:null ? s:error_fit('preview: ' . get(e, 'message', string(e)))
        \        : s:open_preview(r, l:src, a:stage, a:mode)},
        \ get(g:, 'tosa_lsp_preview_timeout_ms', 60000))
endfunction

function! s:open_preview(r, src, stage, mode) abort
  if type(a:r) != v:t_dict || !has_key(a:r, 'text')
    return -1
  endif
  let l:name = 'tosa-preview://' . a:stage . '-' . a:mode
  let l:existing = bufwinnr('^' . l:name . '$')
  if l:existing > 0
    execute l:existing . 'wincmd w'
    setlocal modifiable noreadonly
    silent %delete _
  else
    execute 'silent new'
    " Marked before the filetype is set: the FileType autocmd must not
    " open this buffer on the server.
    let b:tosa_lsp_preview = 1
    setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted
    execute 'silent file ' . fnameescape(l:name)
  endif
  let b:tosa_lsp_preview = 1
  call setline(1, split(a:r.text, "\n"))
  let b:tosa_lsp_pipeline = get(a:r, 'pipeline', '')
  let b:tosa_lsp_mappings = get(a:r, 'mappings', [])
  let b:tosa_lsp_source = a:src
  setlocal filetype=mlir
  setlocal nomodifiable readonly nomodified
  nnoremap <buffer> <silent> <CR> :TosaPreviewSource<CR>
  nnoremap <buffer> <silent> gd :TosaPreviewSource<CR>
  echo 'tosa-lsp: ' . a:stage . ' preview; <CR> on a line jumps to its source op'
  return bufnr('%')
endfunction

" <CR> / gd / :TosaPreviewSource in a preview: the source op of the line
" (the nearest mapped line above when the line itself has none).
function! tosa_lsp#preview_source() abort
  if !exists('b:tosa_lsp_mappings')
    call s:msg('not a lowering preview')
    return {}
  endif
  let l:line0 = line('.') - 1
  let l:best = {}
  for l:m in b:tosa_lsp_mappings
    let l:pl = l:m.previewPosition.line
    if l:pl <= l:line0 && (empty(l:best) || l:pl > l:best.previewPosition.line)
      let l:best = l:m
    endif
  endfor
  if empty(l:best)
    call s:msg('no source op for this line')
    return {}
  endif
  let l:src = b:tosa_lsp_source
  if !bufexists(l:src)
    call s:error('the source buffer is gone')
    return {}
  endif
  let l:win = bufwinid(l:src)
  if l:win > 0
    call win_gotoid(l:win)
  else
    execute 'wincmd p'
    execute 'buffer ' . l:src
  endif
  let l:sp = l:best.sourcePosition
  call cursor(l:sp.line + 1, s:byte_col(getline(l:sp.line + 1), l:sp.character) + 1)
  echo 'tosa-lsp: ' . l:best.sourceOp . ' at line ' . (l:sp.line + 1)
  return l:best
endfunction

" ---------------------------------------------------------------- compile

" :TosaCompile [emit]: the function at the cursor when the file has
" `// -----` sections (a compile takes one module), else every public one.
function! tosa_lsp#compile(...) abort
  let l:emit = a:0 ? a:1 : ''
  let l:bufnr = bufnr('%')
  let l:sections = search('^// -----', 'nw') > 0
  return tosa_lsp#code_actions({actions -> s:compile_at(l:bufnr, l:emit, l:sections, actions)}, ['source'])
endfunction

function! s:compile_at(bufnr, emit, sections, actions) abort
  let l:args = #{uri: tosa_lsp#uri(a:bufnr)}
  for l:a in a:actions
    let l:c = get(l:a, 'command', {})
    if type(l:c) == v:t_dict && get(l:c, 'command', '') ==# 'tosa.compile' && !empty(get(l:c, 'arguments', []))
      let l:args = copy(l:c.arguments[0])
      break
    endif
  endfor
  if a:sections && !has_key(l:args, 'function')
    call s:error('this file has `// -----` sections: put the cursor in the function to compile')
    return
  endif
  if !a:sections
    " One module: all public functions, as `tosa-lsp compile` does.
    silent! call remove(l:args, 'function')
  endif
  if a:emit !=# ''
    let l:args.emit = a:emit
  endif
  call s:compile_with(l:args)
endfunction

function! s:compile_with(args) abort
  if !empty(s:compile)
    call s:error('a compile is running (' . s:compile.what . '); :TosaCancel stops it')
    return
  endif
  let s:token += 1
  let l:token = 'vim-tosa-compile-' . s:token
  let l:what = has_key(a:args, 'function') ? '@' . a:args.function : fnamemodify(s:path(get(a:args, 'uri', '')), ':t')
  let s:compile = #{token: l:token, what: 'compiling ' . l:what, id: -1, step: ''}
  echo 'tosa-lsp: compiling ' . l:what . ' ...  (:TosaCancel to stop)'
  let l:Send = {-> s:send_compile(a:args, l:token)}
  if !s:when_ready(l:Send)
    let s:compile = {}
  endif
endfunction

function! s:send_compile(args, token) abort
  if empty(s:compile) || s:compile.token !=# a:token
    return
  endif
  let s:compile.id = s:send_request('workspace/executeCommand',
        \ #{command: 'tosa.compile', arguments: [a:args], workDoneToken: a:token},
        \ {r, e -> s:on_compiled(a:token, r, e)}, get(g:, 'tosa_lsp_compile_timeout_ms', 300000))
endfunction

function! s:on_compiled(token, r, err) abort
  let l:what = get(s:compile, 'what', 'compile')
  if !empty(s:compile) && s:compile.token ==# a:token
    let s:compile = {}
  endif
  if a:err isnot v:null
    let g:tosa_lsp_last_compile = #{error: get(a:err, 'message', string(a:err))}
    if get(a:err, 'code', 0) == -32800
      call s:msg(l:what . ': cancelled')
    else
      call s:error_fit(l:what . ' failed: ' . g:tosa_lsp_last_compile.error)
    endif
    return
  endif
  if type(a:r) != v:t_dict
    return
  endif
  let g:tosa_lsp_last_compile = a:r
  let l:out = get(a:r, 'output', '?')
  let l:header = get(a:r, 'header', '')
  " The header is named by its file name when it is beside the output.
  let l:suffix = l:header ==# '' ? '' : fnamemodify(l:header, ':h') ==# fnamemodify(l:out, ':h')
        \ ? ' (and ' . fnamemodify(l:header, ':t') . ')' : ' (header ' . l:header . ')'
  let g:tosa_lsp_last_message = s:msg_path('compiled to ', l:out, l:suffix)
endfunction

" :TosaCancel: $/cancelRequest for the running compile.
function! tosa_lsp#cancel() abort
  if empty(s:compile)
    echo 'tosa-lsp: nothing to cancel'
    return 0
  endif
  if s:compile.id >= 0
    call tosa_lsp#cancel_request(s:compile.id)
    echo 'tosa-lsp: cancelling ' . s:compile.what . ' ...'
  else
    let s:compile = {}
    call s:msg('compile cancelled')
  endif
  return 1
endfunction

function! tosa_lsp#compiling() abort
  return copy(s:compile)
endfunction

" For a statusline: 'tosa-lsp: compiling @f: step' / '' when idle.
function! tosa_lsp#status() abort
  if s:failed !=# ''
    return 'tosa-lsp: not running'
  endif
  if !empty(s:compile)
    return 'tosa-lsp: ' . s:compile.what . (s:compile.step !=# '' ? ': ' . s:compile.step : '')
  endif
  return tosa_lsp#ready() ? 'tosa-lsp' : (tosa_lsp#running() ? 'tosa-lsp: starting' : '')
endfunction

" The lines of the result the last edits wrote (the review's count).
function! tosa_lsp#edited_count() abort
  return s:edited_count
endfunction

" Whether didChange sends only the changed lines.
function! tosa_lsp#incremental() abort
  return s:incremental()
endfunction

" ---------------------------------------------------------------- editing

" Waits (processing channel messages) until a:state.done, at most a:ms;
" for what the user is waiting for anyway: completion, a write.
function! s:wait_done(state, ms) abort
  let l:end = reltime()
  while !a:state.done && reltimefloat(reltime(l:end)) * 1000 < a:ms
    sleep 5m
  endwhile
  return a:state.done
endfunction

" Syncs a:bufnr and waits (at most a:ms) until the server has published the
" diagnostics of the version it now has: completion and formatting answered
" from the previous text would not fit the one in the buffer.
function! s:sync_analysed(bufnr, ms) abort
  call tosa_lsp#sync(a:bufnr)
  let l:want = get(s:versions, a:bufnr, 0)
  let l:state = #{done: get(s:published, a:bufnr, 0) >= l:want}
  let l:end = reltime()
  while !l:state.done && reltimefloat(reltime(l:end)) * 1000 < a:ms
    sleep 5m
    let l:state.done = get(s:published, a:bufnr, 0) >= l:want
  endwhile
  return l:state.done
endfunction

" Sends a request once the server is ready and waits for its answer:
" [result, error] (error #{message: ...} when none came in a:ms).
function! s:request_wait(method, params, ms) abort
  let l:state = #{done: 0, result: v:null, error: v:null}
  if !tosa_lsp#request(a:method, a:params, {r, e -> extend(l:state, #{done: 1, result: r, error: e})}, a:ms)
    return [v:null, #{message: 'tosa-lsp is not running' . (s:failed ==# '' ? '' : ': ' . s:failed)}]
  endif
  if !s:wait_done(l:state, a:ms + 200)
    return [v:null, #{message: a:method . ': no answer in ' . a:ms . ' ms'}]
  endif
  return [l:state.result, l:state.error]
endfunction

" A snippet's text as plain text: ${1:x} -> x, $1 / $0 -> nothing.
function! tosa_lsp#snippet_text(text) abort
  let l:t = a:text
  let l:prev = ''
  while l:prev !=# l:t
    let l:prev = l:t
    let l:t = substitute(l:t, '\${\d\+:\([^${}]*\)}', '\1', 'g')
  endwhile
  let l:t = substitute(l:t, '\${\d\+}\|\$\d\+', '', 'g')
  return substitute(l:t, '\\\([$}\\]\)', '\1', 'g')
endfunction

let s:kinds = {1: 't', 2: 'm', 3: 'f', 5: 'm', 6: 'v', 7: 't', 9: 'm', 10: 'm', 12: 'v', 13: 't', 14: 'k', 21: 'c', 22: 't', 25: 't'}

" 'omnifunc' (set for mlir buffers): textDocument/completion at the cursor,
" as plain text (Vim has no snippets: the placeholders are the text of the
" operands and types to overwrite). Waits for the answer, at most
" g:tosa_lsp_complete_timeout_ms (3000).
function! tosa_lsp#complete(findstart, base) abort
  if !a:findstart
    let l:c = get(s:, 'completion', {})
    return filter(copy(get(l:c, 'items', [])), {_, v -> stridx(v.word, a:base) == 0 || stridx(v.abbr, a:base) == 0})
  endif
  let s:completion = {}
  let l:bufnr = bufnr('%')
  if s:is_preview(l:bufnr) || bufname(l:bufnr) ==# ''
    return -3
  endif
  if !tosa_lsp#attached(l:bufnr)
    if !tosa_lsp#running() || !tosa_lsp#ready()
      return -3
    endif
    call s:open(l:bufnr)
  endif
  call s:sync_analysed(l:bufnr, get(g:, 'tosa_lsp_complete_wait_ms', 1000))
  let l:line = getline('.')
  let l:col = col('.') - 1
  let l:pos = #{line: line('.') - 1, character: s:utf16_col(l:line, l:col)}
  let [l:r, l:err] = s:request_wait('textDocument/completion',
        \ #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)}, position: l:pos}, get(g:, 'tosa_lsp_complete_timeout_ms', 3000))
  if l:err isnot v:null
    call s:msg('completion: ' . get(l:err, 'message', string(l:err)), 'ErrorMsg')
    return -3
  endif
  let l:list = type(l:r) == v:t_list ? l:r : type(l:r) == v:t_dict ? get(l:r, 'items', []) : []
  if empty(l:list)
    return -3
  endif
  " Where the words start: the server's edit range, else the keyword before the cursor.
  let l:start = match(strpart(l:line, 0, l:col), '[A-Za-z0-9_$]*$')
  for l:it in l:list
    let l:te = get(l:it, 'textEdit', {})
    if type(l:te) == v:t_dict && has_key(l:te, 'range') && l:te.range.start.line == l:pos.line
      let l:start = s:byte_col(l:line, l:te.range.start.character)
      break
    endif
  endfor
  let l:items = []
  for l:it in l:list
    let l:te = get(l:it, 'textEdit', {})
    let l:text = type(l:te) == v:t_dict && has_key(l:te, 'newText') ? l:te.newText : get(l:it, 'insertText', l:it.label)
    if get(l:it, 'insertTextFormat', 1) == 2
      let l:text = tosa_lsp#snippet_text(l:text)
    endif
    if type(l:te) == v:t_dict && has_key(l:te, 'range')
      let l:from = s:byte_col(l:line, l:te.range.start.character)
      if l:from > l:start
        let l:text = strpart(l:line, l:start, l:from - l:start) . l:text
      endif
    endif
    let l:doc = get(l:it, 'documentation', '')
    let l:doc = type(l:doc) == v:t_dict ? get(l:doc, 'value', '') : l:doc
    call add(l:items, #{word: l:text, abbr: l:it.label, menu: get(l:it, 'detail', ''),
          \ info: type(l:doc) == v:t_string ? l:doc : '', kind: get(s:kinds, get(l:it, 'kind', 0), ''),
          \ icase: 0, dup: 1, empty: 0})
  endfor
  let s:completion = #{start: l:start, items: l:items}
  return l:start
endfunction

" The version a WorkspaceEdit was made for, when it says (documentChanges).
function! s:edit_current(edit, bufnr) abort
  for l:dc in get(a:edit, 'documentChanges', [])
    let l:v = get(get(l:dc, 'textDocument', {}), 'version', v:null)
    if l:v isnot v:null && s:bufnr_of(l:dc.textDocument.uri) == a:bufnr && l:v != get(s:versions, a:bufnr, -1)
      return 0
    endif
  endfor
  return 1
endfunction

function! s:edit_count(edit) abort
  let l:n = 0
  for l:e in values(get(a:edit, 'changes', {}))
    let l:n += len(l:e)
  endfor
  for l:dc in get(a:edit, 'documentChanges', [])
    let l:n += len(get(l:dc, 'edits', []))
  endfor
  return l:n
endfunction

" :TosaRename [NEWNAME]: renames the value, block, @symbol or alias at the
" cursor (the server's prepareRename gives the name; without NEWNAME it is
" asked for). The sigil may be left out (`:TosaRename total` on %sum).
function! tosa_lsp#rename(...) abort
  let l:new = a:0 ? trim(a:1) : ''
  let l:bufnr = bufnr('%')
  let l:pos = s:cursor_position()
  let l:tick = b:changedtick
  return s:with_buffer({-> s:sync_analysed(l:bufnr, get(g:, 'tosa_lsp_format_wait_ms', 2000)) + tosa_lsp#request('textDocument/prepareRename',
        \ #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)}, position: l:pos},
        \ {r, e -> s:on_prepare_rename(l:bufnr, l:pos, l:new, r, e)})})
endfunction

function! s:on_prepare_rename(bufnr, pos, new, r, err) abort
  if a:err isnot v:null
    call s:error('rename: ' . get(a:err, 'message', string(a:err)))
    return
  endif
  if type(a:r) != v:t_dict
    call s:msg('rename: nothing to rename here (put the cursor on a %value, ^block, @symbol or alias)', 'ErrorMsg')
    return
  endif
  let l:old = get(a:r, 'placeholder', '')
  if l:old ==# '' && has_key(a:r, 'start')
    let l:old = strpart(s:buf_line(a:bufnr, a:r.start.line), s:byte_col(s:buf_line(a:bufnr, a:r.start.line), a:r.start.character),
          \ s:byte_col(s:buf_line(a:bufnr, a:r.end.line), a:r.end.character) - s:byte_col(s:buf_line(a:bufnr, a:r.start.line), a:r.start.character))
  endif
  let l:new = a:new
  if l:new ==# ''
    " From a timer: input() inside a channel callback loses keys in Vim 9.0.
    call timer_start(0, {-> s:ask_rename(a:bufnr, a:pos, l:old)})
    return
  endif
  call s:do_rename(a:bufnr, a:pos, l:old, l:new)
endfunction

function! s:ask_rename(bufnr, pos, old) abort
  let l:new = input('Rename ' . a:old . ' to: ', a:old)
  redraw
  if l:new !=# '' && l:new !=# a:old
    call s:do_rename(a:bufnr, a:pos, a:old, l:new)
  endif
endfunction

function! s:do_rename(bufnr, pos, old, new) abort
  let l:new = a:new
  let l:sigil = matchstr(a:old, '^[%^@#!]')
  if l:sigil !=# '' && l:new[0] !=# l:sigil
    let l:new = l:sigil . l:new
  endif
  call tosa_lsp#sync(a:bufnr)
  call tosa_lsp#request('textDocument/rename', #{textDocument: #{uri: tosa_lsp#uri(a:bufnr)}, position: a:pos, newName: l:new},
        \ {r, e -> s:on_rename(a:bufnr, a:old, l:new, r, e)})
endfunction

function! s:on_rename(bufnr, old, new, r, err) abort
  if a:err isnot v:null
    call s:error('rename: ' . get(a:err, 'message', string(a:err)))
    return
  endif
  if type(a:r) != v:t_dict || s:edit_count(a:r) == 0
    call s:msg('rename: nothing to change')
    return
  endif
  call tosa_lsp#sync(a:bufnr)
  if !s:edit_current(a:r, a:bufnr)
    call s:error('rename: the buffer changed meanwhile; nothing renamed (run it again)')
    return
  endif
  let l:n = s:edit_count(a:r)
  call tosa_lsp#apply_workspace_edit(a:r)
  let g:tosa_lsp_last_rename = #{old: a:old, new: a:new, edits: l:n}
  call s:msg(printf('renamed %s to %s (%d %s)', a:old, a:new, l:n, l:n == 1 ? 'place' : 'places'))
endfunction

" :[range]TosaFormat: textDocument/formatting (or rangeFormatting for a
" range), applied if the buffer did not change meanwhile. A section that
" does not parse is refused by the server, with its reason.
function! tosa_lsp#format(line1, line2, range) abort
  let l:bufnr = bufnr('%')
  let l:opts = #{tabSize: shiftwidth(), insertSpaces: &expandtab ? v:true : v:false}
  let l:params = #{textDocument: #{uri: tosa_lsp#uri(l:bufnr)}, options: l:opts}
  let l:method = 'textDocument/formatting'
  if a:range > 0
    let l:method = 'textDocument/rangeFormatting'
    let l:last = getline(a:line2)
    let l:params.range = #{start: #{line: a:line1 - 1, character: 0},
          \ end: #{line: a:line2 - 1, character: s:utf16_col(l:last, len(l:last))}}
  endif
  return s:with_buffer({-> s:sync_analysed(l:bufnr, get(g:, 'tosa_lsp_format_wait_ms', 2000)) + tosa_lsp#request(l:method, l:params,
        \ {r, e -> s:on_format(l:bufnr, getbufvar(l:bufnr, 'changedtick'), r, e)})})
endfunction

function! s:on_format(bufnr, tick, r, err) abort
  if a:err isnot v:null
    call s:error('format: ' . get(a:err, 'message', string(a:err)))
    return
  endif
  if getbufvar(a:bufnr, 'changedtick') != a:tick
    call s:error('format: the buffer changed meanwhile; nothing changed (run it again)')
    return
  endif
  let l:edits = type(a:r) == v:t_list ? a:r : []
  let l:before = getbufline(a:bufnr, 1, '$')
  if !empty(l:edits)
    call s:apply_document(a:bufnr, l:edits)
  endif
  let l:after = getbufline(a:bufnr, 1, '$')
  let l:n = 0
  for l:i in range(max([len(l:before), len(l:after)]))
    let l:n += get(l:before, l:i, v:null) !=# get(l:after, l:i, v:null)
  endfor
  let g:tosa_lsp_last_format = l:n
  call s:msg(l:n == 0 ? 'format: already formatted' : printf('formatted: %d %s changed', l:n, l:n == 1 ? 'line' : 'lines'))
endfunction

" ---------------------------------------------------------------- bytecode

" Base64 -> Blob (Vim 9.0 has no base64_decode()).
let s:b64 = {}
for s:i in range(64)
  let s:b64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[s:i]] = s:i
endfor
unlet s:i

def s:Base64Decode(encoded: string): blob
  var out = 0z
  var acc = 0
  var bits = 0
  for ch in split(encoded, '\zs')
    if !has_key(s:b64, ch)
      continue
    endif
    acc = and(acc * 64 + s:b64[ch], 0xFFFFFF)
    bits += 6
    if bits >= 8
      bits -= 8
      add(out, and(acc >> bits, 0xFF))
    endif
  endfor
  return out
enddef

function! tosa_lsp#base64_decode(text) abort
  return s:Base64Decode(a:text)
endfunction

" BufReadCmd *.mlirbc: the bytecode file's text from the server
" (mlir/convertFromBytecode), then filetype mlir (the client attaches
" as for any .mlir buffer). A file that cannot be read leaves an empty
" buffer that refuses to be written.
function! tosa_lsp#bytecode_read(bufnr, path) abort
  let l:name = fnamemodify(a:path, ':t')
  call setbufvar(a:bufnr, '&modifiable', 1)
  if !filereadable(a:path)
    call setbufvar(a:bufnr, 'tosa_lsp_bytecode', 'new')
    call setbufvar(a:bufnr, '&filetype', 'mlir')
    return
  endif
  call setbufvar(a:bufnr, 'tosa_lsp_bytecode', 'reading')
  let [l:r, l:err] = s:request_wait('mlir/convertFromBytecode', #{uri: s:uri(a:path)}, get(g:, 'tosa_lsp_bytecode_timeout_ms', 20000))
  let l:text = type(l:r) == v:t_dict ? get(l:r, 'output', v:null) : v:null
  if l:err isnot v:null || type(l:text) != v:t_string
    call setbufvar(a:bufnr, 'tosa_lsp_bytecode', 'failed')
    call setbufvar(a:bufnr, '&modifiable', 0)
    call setbufvar(a:bufnr, '&modified', 0)
    let l:why = l:err isnot v:null ? get(l:err, 'message', string(l:err)) : 'the server answered no text'
    let s:bytecode_error = 'cannot open ' . l:name . ' as MLIR text: ' . l:why . '. The file was not changed.'
    call s:error(s:bytecode_error)
    return
  endif
  let l:lines = split(l:text, "\n", 1)
  if len(l:lines) > 1 && l:lines[-1] ==# ''
    call remove(l:lines, -1)
  endif
  silent call deletebufline(a:bufnr, 1, '$')
  call setbufline(a:bufnr, 1, l:lines)
  call setbufvar(a:bufnr, '&modified', 0)
  call setbufvar(a:bufnr, 'tosa_lsp_bytecode', 'text')
  call setbufvar(a:bufnr, '&filetype', 'mlir')
  call s:msg(printf('"%s" bytecode, %d lines of MLIR text', l:name, len(l:lines)))
endfunction

" BufWriteCmd *.mlirbc: the buffer's text as bytecode (mlir/convertToBytecode
" on the document the server has, synced first), written only when the
" server answered bytecode. A failure is an error (`:wq` does not quit) and
" the file keeps what it had.
function! tosa_lsp#bytecode_write(bufnr, path) abort
  let l:name = fnamemodify(a:path, ':t')
  let l:state = getbufvar(a:bufnr, 'tosa_lsp_bytecode', '')
  if l:state ==# 'failed' || l:state ==# 'reading'
    echoerr 'tosa-lsp: ' . l:name . ' not written: its bytecode was never read as text (the file keeps its bytecode)'
    return
  endif
  if !tosa_lsp#attached(a:bufnr)
    let l:state = #{done: 0}
    if !s:when_ready({-> s:open_marking(a:bufnr, l:state)}) || !s:wait_done(l:state, 10000)
      echoerr 'tosa-lsp: ' . l:name . ' not written (it keeps its bytecode): the server is not running'
      return
    endif
  endif
  call s:reopen(a:bufnr)
  let [l:r, l:err] = s:request_wait('mlir/convertToBytecode', #{uri: get(s:uris, a:bufnr, tosa_lsp#uri(a:bufnr))},
        \ get(g:, 'tosa_lsp_bytecode_timeout_ms', 20000))
  let l:out = type(l:r) == v:t_dict ? get(l:r, 'output', v:null) : v:null
  let l:blob = type(l:out) == v:t_string ? s:Base64Decode(l:out) : 0z
  if l:err isnot v:null || len(l:blob) < 4 || l:blob[0 : 3] != 0z4D4CEF52
    let l:why = l:err isnot v:null ? get(l:err, 'message', string(l:err)) : 'the server answered no bytecode'
    let s:bytecode_error = l:name . ' not written (it keeps its bytecode): ' . l:why
    echoerr 'tosa-lsp: ' . s:bytecode_error
    return
  endif
  if writefile(l:blob, a:path) != 0
    echoerr 'tosa-lsp: cannot write ' . a:path
    return
  endif
  if fnamemodify(a:path, ':p') ==# fnamemodify(bufname(a:bufnr), ':p')
    call setbufvar(a:bufnr, '&modified', 0)
  endif
  call s:msg(printf('"%s" %d bytes of bytecode written', l:name, len(l:blob)))
endfunction

" The document opened afresh with the buffer's text: a request right after
" it is answered for exactly this text (the server waits for the first
" analysis of a document it has just opened).
function! s:reopen(bufnr) abort
  let l:uri = get(s:uris, a:bufnr, tosa_lsp#uri(a:bufnr))
  call ch_sendexpr(s:ch, #{method: 'textDocument/didClose', params: #{textDocument: #{uri: l:uri}}})
  let s:versions[a:bufnr] += 1
  let s:ticks[a:bufnr] = getbufvar(a:bufnr, 'changedtick')
  let l:lines = getbufline(a:bufnr, 1, '$')
  call ch_sendexpr(s:ch, #{method: 'textDocument/didOpen', params: #{textDocument: #{
        \ uri: l:uri, languageId: 'mlir', version: s:versions[a:bufnr], text: join(l:lines, "\n") . "\n"}}})
  if has_key(s:sent, a:bufnr)
    let s:sent[a:bufnr] = l:lines
  endif
endfunction

function! s:open_marking(bufnr, state) abort
  call s:open(a:bufnr)
  let a:state.done = 1
endfunction

function! tosa_lsp#bytecode_error() abort
  return get(s:, 'bytecode_error', '')
endfunction
