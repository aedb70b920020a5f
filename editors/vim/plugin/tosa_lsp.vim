" tosa-lsp for Vim 9: commands, mappings, auto-attach to *.mlir buffers.
" Neovim: use require('tosa_lsp').setup{} (lua/tosa_lsp/init.lua) instead.
if exists('g:loaded_tosa_lsp') || has('nvim') || v:version < 900
  finish
endif
let g:loaded_tosa_lsp = 1

command! -bar TosaStart call tosa_lsp#start(1) | call tosa_lsp#attach()
command! -bar TosaStop call tosa_lsp#stop()
command! -bar TosaRestart call tosa_lsp#restart()
command! -bar TosaAttach call tosa_lsp#start(1) | call tosa_lsp#attach()
command! -bar TosaHover call tosa_lsp#hover()
command! -bar TosaDefinition call tosa_lsp#definition()
command! -bar TosaReferences call tosa_lsp#references()
command! -bar TosaSymbols call tosa_lsp#symbols()
command! -bar -nargs=? TosaCodeAction call tosa_lsp#code_action(<q-args>)
command! -bar -nargs=? -complete=customlist,s:inlay_complete TosaInlayHints call tosa_lsp#inlay_hints(<q-args>)
command! -bar -nargs=* -complete=customlist,s:preview_complete TosaPreviewLowering call tosa_lsp#preview_lowering(<f-args>)
command! -bar TosaPreviewSource call tosa_lsp#preview_source()
command! -bar -nargs=? -complete=customlist,s:emit_complete TosaCompile call tosa_lsp#compile(<q-args>)
command! -bar TosaCancel call tosa_lsp#cancel()
command! -bar -nargs=? -complete=customlist,s:graph_complete TosaGraph call tosa_lsp#graph#open('', <q-args>)
command! -bar TosaLineDiagnostics call tosa_lsp#show_line_diagnostics()
command! -bar TosaMigrate call tosa_lsp#rewrite('source.migrate')
command! -bar TosaRefineAll call tosa_lsp#rewrite('source.refineShapes')
command! -bar TosaReviewApply call tosa_lsp#review_answer(1)
command! -bar TosaReviewDiscard call tosa_lsp#review_answer(0)
command! -bar -nargs=? TosaRename call tosa_lsp#rename(<q-args>)
command! -bar -range=% TosaFormat call tosa_lsp#format(<line1>, <line2>, <range>)

function! s:inlay_complete(lead, line, pos) abort
  return filter(['on', 'off'], 'v:val =~# "^" . a:lead')
endfunction
function! s:preview_complete(lead, line, pos) abort
  let l:n = len(split(a:line[: a:pos - 1], '\s\+', 1)) - 1
  let l:words = l:n <= 1 ? ['linalg', 'loops', 'llvm'] : ['fast', 'upstream', 'safe', 'versioned']
  return filter(l:words, 'v:val =~# "^" . a:lead')
endfunction
function! s:graph_complete(lead, line, pos) abort
  return filter(['html', 'svg', 'dot', 'json'], 'v:val =~# "^" . a:lead')
endfunction
function! s:emit_complete(lead, line, pos) abort
  return filter(['shared', 'obj', 'asm', 'llvm-ir', 'mlir-llvm'], 'v:val =~# "^" . a:lead')
endfunction

function! s:on_filetype() abort
  " Lowering previews are mlir too, but stay client-side.
  if !empty(get(b:, 'tosa_lsp_preview', '')) || &buftype !=# '' || bufname('%') =~# '^tosa-preview:'
    return
  endif
  " With autostart off (e.g. ALE owns the server) nothing here starts one,
  " and K etc. are left to the other client unless mappings are asked for.
  let l:auto = get(g:, 'tosa_lsp_autostart', 1)
  if l:auto
    call tosa_lsp#attach(bufnr('%'))
  endif
  " Completion (CTRL-X CTRL-O) from the server, unless another one is set.
  if &l:omnifunc ==# '' && get(g:, 'tosa_lsp_omnifunc', 1)
    setlocal omnifunc=tosa_lsp#complete
    let b:undo_ftplugin = get(b:, 'undo_ftplugin', '') . (get(b:, 'undo_ftplugin', '') ==# '' ? '' : ' | ') . 'setlocal omnifunc<'
  endif
  if get(g:, 'tosa_lsp_mappings', l:auto)
    nnoremap <buffer> <silent> K :TosaHover<CR>
    nnoremap <buffer> <silent> gd :TosaDefinition<CR>
    nnoremap <buffer> <silent> gr :TosaReferences<CR>
    nnoremap <buffer> <silent> gO :TosaSymbols<CR>
    nnoremap <buffer> <silent> <LocalLeader>a :TosaCodeAction<CR>
    nnoremap <buffer> <silent> <LocalLeader>p :TosaPreviewLowering<CR>
    nnoremap <buffer> <silent> <LocalLeader>c :TosaCompile<CR>
    nnoremap <buffer> <silent> <LocalLeader>e :TosaLineDiagnostics<CR>
  endif
endfunction

augroup tosa_lsp
  autocmd!
  autocmd FileType mlir call s:on_filetype()
  " MLIR bytecode: read and written as text through the server.
  autocmd BufReadCmd *.mlirbc call tosa_lsp#bytecode_read(str2nr(expand('<abuf>')), expand('<afile>:p'))
  autocmd BufWriteCmd *.mlirbc call tosa_lsp#bytecode_write(str2nr(expand('<abuf>')), expand('<afile>:p'))
  autocmd VimLeavePre * if exists('*tosa_lsp#running') | call tosa_lsp#stop() | endif
augroup END
