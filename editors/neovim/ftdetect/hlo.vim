" HLO text: *.hlo, *.hlo.txt and XLA dump names. `set filetype` (not `setf`) because the
" dump names end in .txt, which the runtime files already claim for `text`.
autocmd BufRead,BufNewFile *.hlo,*.hlo.txt,*before_optimizations.txt,*after_optimizations.txt,module_*.txt set filetype=hlo
