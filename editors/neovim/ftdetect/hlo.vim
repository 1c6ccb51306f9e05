" HLO text: *.hlo, *.hlo.txt and XLA dump names. `set filetype` (not `setf`) because the
" dump names end in .txt, which the runtime files already claim for `text`.
autocmd BufRead,BufNewFile *.hlo,*.hlo.txt,*before_optimizations.txt,*after_optimizations.txt,module_*.txt set filetype=hlo
" MLIR (older Neovim runtimes do not know *.mlir): hlo-lsp serves it too.
autocmd BufRead,BufNewFile *.mlir setfiletype mlir
