-- hlo-lsp for Neovim: loaded from the runtimepath (or by a plugin manager). Registers the
-- filetype on versions with vim.filetype.add (ftdetect/hlo.vim covers older ones), the
-- tree-sitter language, and starts the language server for `hlo` buffers unless
-- `vim.g.hlo_lsp_no_autosetup` is set (then call require('hlo').setup{...} yourself).
if vim.g.loaded_hlo_lsp then
  return
end
vim.g.loaded_hlo_lsp = true

if vim.filetype and vim.filetype.add then
  vim.filetype.add({
    extension = { hlo = 'hlo' },
    pattern = {
      ['.*%.hlo%.txt'] = 'hlo',
      ['.*before_optimizations%.txt'] = 'hlo',
      ['.*after_optimizations%.txt'] = 'hlo',
      ['module_.*%.txt'] = 'hlo',
    },
  })
end

if not vim.g.hlo_lsp_no_autosetup then
  require('hlo').setup(vim.g.hlo_lsp_config or {})
end
