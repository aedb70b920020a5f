" :TosaGraph [FORMAT] for Vim 9 and Neovim: the function at the cursor as a
" picture, written by `tosa-lsp graph` (html by default: one page that
" reads offline; svg needs node) and opened with the system's opener
" (xdg-open), or its path printed when there is none. Runs the CLI, not the
" server, so it works with any client and with the server stopped.
"
" g:tosa_lsp_graph_opener: the program that opens the file ('' never opens;
" default: xdg-open when executable).

" The function whose `func.func` line is the nearest at or above `lnum`,
" as `@name`, or '' when there is none.
function! tosa_lsp#graph#function_at(lnum) abort
  let l:save = getcurpos()
  call cursor(a:lnum, col([a:lnum, '$']))
  let l:at = search('^\s*func\.func\>', 'bcnW')
  call setpos('.', l:save)
  if l:at == 0
    return ''
  endif
  let l:line = getline(l:at)
  let l:name = matchstr(l:line, '@"\zs[^"]*\ze"')
  return l:name !=# '' ? l:name : matchstr(l:line, '@\zs[A-Za-z0-9_$.-]\+')
endfunction

" Writes the picture of the function at the cursor with `cmd` (the
" tosa-lsp binary; '': g:tosa_lsp_command's) and opens it. Returns the file
" written ('' on failure).
function! tosa_lsp#graph#open(cmd, ...) abort
  let l:cmd = a:cmd !=# '' ? a:cmd : get(g:, 'tosa_lsp_command', 'tosa-lsp')
  let l:cmd = type(l:cmd) == v:t_list ? l:cmd[0] : l:cmd
  let l:format = a:0 && a:1 !=# '' ? a:1 : 'html'
  if index(['html', 'svg', 'dot', 'json'], l:format) < 0
    echohl ErrorMsg | echomsg 'tosa-lsp: :TosaGraph takes html, svg, dot or json' | echohl None
    return ''
  endif
  if !executable(l:cmd)
    echohl ErrorMsg | echomsg 'tosa-lsp: ' . l:cmd . ' is not executable (g:tosa_lsp_command)' | echohl None
    return ''
  endif
  " The buffer as it is (saved or not): a copy when it differs from disk.
  let l:file = expand('%:p')
  let l:args = []
  if &modified || l:file ==# '' || !filereadable(l:file)
    let l:copy = tempname() . '.mlir'
    call writefile(getline(1, '$'), l:copy)
    let l:config = l:file ==# '' ? '' : findfile('.tosa-lsp.json', fnamemodify(l:file, ':h') . ';')
    if l:config !=# ''
      let l:args += ['--config=' . fnamemodify(l:config, ':p')]
    endif
    let l:file = l:copy
  endif
  let l:name = tosa_lsp#graph#function_at(line('.'))
  let l:target = l:name !=# '' ? [l:file, '--function=' . l:name] : [l:file . ':' . line('.')]
  let l:out = tempname() . '-' . (l:name !=# '' ? substitute(l:name, '[^A-Za-z0-9_.-]', '_', 'g') : 'graph') . '.' . l:format
  let l:argv = [l:cmd, 'graph'] + l:target + l:args + ['--format=' . l:format, '-o', l:out]
  let l:output = system(join(map(copy(l:argv), 'shellescape(v:val)')))
  if v:shell_error != 0
    echohl ErrorMsg | echomsg 'tosa-lsp: ' . substitute(trim(l:output), '^tosa-lsp: error: ', '', '') | echohl None
    return ''
  endif
  let g:tosa_lsp_graph_last = l:out
  let l:opener = get(g:, 'tosa_lsp_graph_opener', executable('xdg-open') ? 'xdg-open' : '')
  let l:what = (l:name !=# '' ? '@' . l:name : 'the function') . ': ' . l:out
  if l:opener !=# '' && executable(l:opener)
    if has('nvim')
      call jobstart([l:opener, l:out], #{detach: v:true})
    else
      call job_start([l:opener, l:out], #{stoponexit: ''})
    endif
    echomsg 'tosa-lsp: graph of ' . l:what . ' (opened with ' . l:opener . ')'
  else
    echomsg 'tosa-lsp: graph of ' . l:what
  endif
  return l:out
endfunction
