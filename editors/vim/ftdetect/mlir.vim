" MLIR files (TOSA and friends).
autocmd BufNewFile,BufRead *.mlir setfiletype mlir
