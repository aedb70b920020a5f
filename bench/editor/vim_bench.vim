" One measured Vim 9 session for bench/editor/run.py: the project's plugin
" (editors/vim) at its defaults, with g:tosa_lsp_command set to the server
" under test (tosa-lsp, or mlir-lsp-server-22: the plugin speaks plain LSP).
"
"   BENCH_CMD='["tosa-lsp","serve"]' BENCH_FILE=F.mlir BENCH_EDIT='{...}' \
"   BENCH_OUT=out.json vim -N -u NONE -i NONE -n -es -S vim_bench.vim
"
" Measures (wall clock, reltimestr(): Vim's reltime() is gettimeofday):
"   open:  `:edit F` -> the plugin's render of the first publish (it
"          renders synchronously in the channel callback that stores the
"          list tosa_lsp#diagnostics() returns, so a 2 ms timer seeing a
"          new list sees the render done);
"   edit:  one typed character (setline + TextChanged, the plugin's own
"          sync) -> a rendered publish with an Error in the edited function;
"   stall: lateness of a 20 ms repeating timer (gap - 20 ms) after `:edit`
"          returned until `settle` after the first render, and from the
"          edit until `settle` after its error.
" Vim reads its channels when it wakes (timers, at most every 20 ms while
" sleeping in -es mode): times have that granularity.
set nocompatible noswapfile hidden shortmess+=I lines=40 columns=120

let s:root = $BENCH_ROOT
let s:file = $BENCH_FILE
let s:edit = json_decode($BENCH_EDIT)
let s:settle = empty($BENCH_SETTLE_MS) ? 1500 : str2nr($BENCH_SETTLE_MS)
let s:timeout = empty($BENCH_TIMEOUT_MS) ? 120000 : str2nr($BENCH_TIMEOUT_MS)
" Times: integer microseconds since s:base (whole wall-clock seconds at
" start): json_encode() would round a float of 1.8e9 seconds.
let s:base = str2nr(trim(reltimestr(reltime())))
let s:result = #{mode: 'vim-plugin', events: [], base: s:base}

function! s:now() abort
  let [l:s, l:us] = split(trim(reltimestr(reltime())), '\.')
  return (str2nr(l:s) - s:base) * 1000000 + str2nr(l:us)
endfunction

function! s:finish(err) abort
  if a:err !=# ''
    let s:result.error = a:err
  endif
  let s:result.messages = split(execute('messages'), "\n")
  call writefile([json_encode(s:result)], $BENCH_OUT)
  " shutdown/exit, so the tap logs the server's CPU time
  silent! call tosa_lsp#stop()
  let l:deadline = s:now() + 3000000
  " (the plugin forgets its job at once: wait for every job of this Vim)
  while !empty(filter(job_info(), 'job_status(v:val) ==# "run"')) && s:now() < l:deadline
    sleep 20m
  endwhile
  qall!
endfunction

" The main thread's CPU time (ns) from /proc/self/schedstat: with each
" lateness, how much of it Vim was running (on a loaded machine a late
" timer may only have waited for a core).
function! s:schedstat() abort
  try
    return str2nr(split(readfile('/proc/self/schedstat')[0])[0])
  catch
    return 0
  endtry
endfunction

" The UI timer: every lateness > 2 ms with its time.
let s:late = []
let s:overhead = 0.0
let s:last = reltime()
let s:last_run = s:schedstat()
function! s:tick(t) abort
  let l:g = reltimefloat(reltime(s:last))
  let s:last = reltime()
  let l:run = s:schedstat()
  let l:lateness = (l:g - s:overhead) * 1000 - 20
  let l:busy = min([float2nr(l:lateness * 1000), (l:run - s:last_run) / 1000 - float2nr(s:overhead * 1000000.0)]) / 1000.0
  let s:last_run = l:run
  let s:overhead = 0.0
  if l:lateness > 2
    call add(s:late, [s:now(), l:lateness, l:busy])
  endif
endfunction

" A new diagnostics list of the buffer = a rendered publish.
let s:buf = -1
let s:seen = v:null
let s:changes = []
let s:want_error = 0
function! s:poll(t) abort
  if s:buf < 0
    return
  endif
  " The first inlay hints placed (the plugin keeps them in a buffer
  " variable once placed).
  if !has_key(s:result, 't_hints_shown') && !empty(getbufvar(s:buf, 'tosa_lsp_inlay_hints', []))
    let s:result.t_hints_shown = s:now()
  endif
  let l:d = tosa_lsp#diagnostics(s:buf)
  " Before the first publish it returns a new empty list on every call.
  if l:d is s:seen || l:d isnot tosa_lsp#diagnostics(s:buf)
    return
  endif
  let l:t = s:now()
  let l:t0 = reltime()
  let s:seen = l:d
  let l:errs = 0
  if s:want_error
    let [l:a, l:b] = [s:edit.first, s:edit.last]
    let l:errs = len(filter(copy(l:d), {_, v -> get(v, 'severity', 1) == 1
          \ && v.range.start.line >= l:a && v.range.start.line <= l:b}))
  endif
  call add(s:changes, #{t: l:t, n: len(l:d), errors: l:errs})
  let s:overhead += reltimefloat(reltime(l:t0))
endfunction

" The longest lateness in [t0, t1] (a:1 = 1), or the longest part of one
" that Vim was running (a:1 = 2).
function! s:max_late(t0, t1, ...) abort
  let l:k = a:0 ? a:1 : 1
  let l:m = 0.0
  for l:e in s:late
    if l:e[0] >= a:t0 && l:e[0] <= a:t1 && l:e[l:k] > l:m
      let l:m = l:e[l:k]
    endif
  endfor
  return l:m
endfunction

" 1 when a:expr holds, 0 on timeout, -1 when the server is gone.
function! s:wait(expr, ms) abort
  let l:deadline = s:now() + a:ms * 1000
  while !eval(a:expr)
    if s:now() > l:deadline
      return 0
    endif
    if !tosa_lsp#running()
      return -1
    endif
    sleep 2m
  endwhile
  return 1
endfunction

function! s:first_error(before) abort
  for l:c in s:changes[a:before :]
    if l:c.errors > 0
      let s:result.t_error_shown = l:c.t
      let s:result.edit_diagnostics = l:c.n
      return 1
    endif
  endfor
  return 0
endfunction

try
  let &runtimepath = s:root . '/editors/vim,' . &runtimepath
  filetype plugin on
  syntax on
  runtime! ftdetect/mlir.vim
  runtime plugin/tosa_lsp.vim
  let g:tosa_lsp_command = json_decode($BENCH_CMD)
  " A variant's plugin options (run.py --variant): each key as g:KEY.
  for [s:k, s:v] in items(empty($BENCH_PLUGIN_OPTS) ? {} : json_decode($BENCH_PLUGIN_OPTS))
    let g:{s:k} = s:v
  endfor
  if !empty($BENCH_SETTINGS)
    let g:tosa_lsp_settings = json_decode($BENCH_SETTINGS)
  endif

  let s:ticker = timer_start(20, function('s:tick'), #{repeat: -1})
  let s:poller = timer_start(2, function('s:poll'), #{repeat: -1})
  sleep 200m
  let s:run0 = s:schedstat()
  let s:result.t_edit_cmd = s:now()
  execute 'edit ' . fnameescape(s:file)
  let s:result.t_edit_cmd_done = s:now()
  let s:buf = bufnr('%')
  let s:result.filetype = &filetype
  " Ex mode (-es) leaves the cursor on the last line.
  normal! gg
  let s:ok = s:wait('!empty(s:changes)', s:timeout)
  if s:ok != 1
    call s:finish(s:ok < 0 ? 'the server exited before its first publish' : 'no rendered publish after the open')
  endif
  let s:result.t_open_shown = s:changes[0].t
  let s:result.open_diagnostics = s:changes[0].n
  execute 'sleep ' . s:settle . 'm'
  let s:result.stall_open_ms = s:max_late(s:result.t_edit_cmd_done, s:now())
  let s:result.stall_open_busy_ms = s:max_late(s:result.t_edit_cmd_done, s:now(), 2)
  let s:result.editor_cpu_open_ms = (s:schedstat() - s:run0) / 1000000.0
  let s:result.open_changes = len(s:changes)

  " The typed character, with the view on its line.
  call cursor(s:edit.line + 1, s:edit.col + 1)
  normal! zz
  sleep 300m
  let s:want_error = 1
  let s:before = len(s:changes)
  let s:run1 = s:schedstat()
  let s:result.t_type = s:now()
  let s:line = getline(s:edit.line + 1)
  call setline(s:edit.line + 1, strpart(s:line, 0, s:edit.col) . s:edit.text . strpart(s:line, s:edit.col))
  doautocmd <nomodeline> TextChanged
  let s:result.t_type_done = s:now()
  let s:ok = s:wait('s:first_error(s:before)', s:timeout)
  if s:ok != 1
    call s:finish(s:ok < 0 ? 'the server exited after the edit' : "the edit's error was never shown")
  endif
  execute 'sleep ' . s:settle . 'm'
  let s:result.stall_edit_ms = s:max_late(s:result.t_type, s:now())
  let s:result.stall_edit_busy_ms = s:max_late(s:result.t_type, s:now(), 2)
  let s:result.editor_cpu_edit_ms = (s:schedstat() - s:run1) / 1000000.0
  let s:result.changes = s:changes
  let s:result.lateness = s:late
  call timer_stop(s:ticker)
  call timer_stop(s:poller)
  call s:finish('')
catch
  call s:finish('exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
