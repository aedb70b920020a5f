" tosa-lsp for Vim 9: commands, K mapping, auto-attach to *.mlir buffers.
" Neovim: use require('tosa_lsp').setup{} (lua/tosa_lsp/init.lua) instead.
if exists('g:loaded_tosa_lsp') || has('nvim') || v:version < 900
  finish
endif
let g:loaded_tosa_lsp = 1

command! -bar TosaStart call tosa_lsp#start()
command! -bar TosaStop call tosa_lsp#stop()
command! -bar TosaAttach call tosa_lsp#attach()
command! -bar TosaHover call tosa_lsp#hover()
command! -bar -nargs=? TosaCodeAction call tosa_lsp#code_action(<q-args>)
command! -bar -nargs=? -complete=customlist,s:inlay_complete TosaInlayHints call tosa_lsp#inlay_hints(<q-args>)
command! -bar -nargs=* -complete=customlist,s:preview_complete TosaPreviewLowering call tosa_lsp#preview_lowering(<f-args>)
command! -bar -nargs=? -complete=customlist,s:emit_complete TosaCompile call tosa_lsp#compile(<q-args>)
command! -bar TosaLineDiagnostics call tosa_lsp#show_line_diagnostics()

function! s:inlay_complete(lead, line, pos) abort
  return filter(['on', 'off'], 'v:val =~# "^" . a:lead')
endfunction
function! s:preview_complete(lead, line, pos) abort
  let l:n = len(split(a:line[: a:pos - 1], '\s\+', 1)) - 1
  let l:words = l:n <= 1 ? ['linalg', 'loops', 'llvm'] : ['upstream', 'safe', 'versioned']
  return filter(l:words, 'v:val =~# "^" . a:lead')
endfunction
function! s:emit_complete(lead, line, pos) abort
  return filter(['shared', 'obj', 'asm', 'llvm-ir', 'mlir-llvm'], 'v:val =~# "^" . a:lead')
endfunction

function! s:on_filetype() abort
  if get(g:, 'tosa_lsp_autostart', 1)
    call tosa_lsp#attach(bufnr('%'))
  endif
  if get(g:, 'tosa_lsp_mappings', 1)
    nnoremap <buffer> <silent> K :TosaHover<CR>
    nnoremap <buffer> <silent> <LocalLeader>a :TosaCodeAction<CR>
    nnoremap <buffer> <silent> <LocalLeader>p :TosaPreviewLowering<CR>
  endif
  if get(g:, 'tosa_lsp_inlay_hints', 1)
    augroup tosa_lsp_inlay
      autocmd! * <buffer>
      autocmd CursorHold,InsertLeave,BufWritePost <buffer> if get(b:, 'tosa_lsp_inlay', 1) | silent! call tosa_lsp#inlay_hints() | endif
    augroup END
  endif
endfunction

augroup tosa_lsp
  autocmd!
  autocmd FileType mlir call s:on_filetype()
  autocmd VimLeavePre * if exists('*tosa_lsp#running') | call tosa_lsp#stop() | endif
augroup END
