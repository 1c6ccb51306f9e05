-- A second Neovim, run as a user runs it, for what has to be typed (the completion popup):
-- test/e2e.lua starts it with `--embed --headless` and drives it over RPC. Keys go in with
-- nvim_input, which returns at once, so keys that leave it in Insert mode waiting for the
-- next one do not block the test (feeding them to the test's own Neovim would); the test
-- then reads pumvisible(), complete_info() and the buffer as any other state.
--   local user = dofile('test/user_nvim.lua').start(plugin_dir, { cmd = { bin } })
--   user:type('O  %broadcast.1 = ')   -- <> notation: <C-n>, <C-y>, <Esc>
local M = {}
M.__index = M

--- Starts the Neovim the test runs in (v:progpath), with no user config, the plugin on its
--- runtimepath and `config` as vim.g.hlo_lsp_config (plain data: it crosses RPC).
function M.start(plugin_dir, config)
  local chan = vim.fn.jobstart({ vim.v.progpath, '--embed', '--headless', '-u', 'NONE', '-i', 'NONE', '-n' }, { rpc = true })
  assert(chan > 0, 'could not start ' .. vim.v.progpath .. ' --embed')
  local self = setmetatable({ chan = chan }, M)
  self:lua(
    [[
    local dir, config = ...
    vim.opt.runtimepath:prepend(dir)
    vim.g.hlo_lsp_config = config
    vim.cmd('filetype on')
    vim.cmd('runtime! plugin/hlo.lua')
  ]],
    plugin_dir,
    config
  )
  return self
end

--- Runs Lua in the user's Neovim (`...` are `args`); its result.
function M:lua(code, ...)
  return vim.fn.rpcrequest(self.chan, 'nvim_exec_lua', code, { ... })
end

--- The value of a Vimscript expression in the user's Neovim.
function M:eval(expr)
  return vim.fn.rpcrequest(self.chan, 'nvim_eval', expr)
end

--- Types `keys` (<> notation) as if at the keyboard; returns without waiting for them.
function M:type(keys)
  vim.fn.rpcrequest(self.chan, 'nvim_input', keys)
end

--- The current mode (`i`, `ic`, `s`, `n`...) of the user's Neovim.
function M:mode()
  return vim.fn.rpcrequest(self.chan, 'nvim_get_mode').mode
end

--- The text of line `lnum` (1-based) of its current buffer.
function M:line(lnum)
  return vim.fn.rpcrequest(self.chan, 'nvim_buf_get_lines', 0, lnum - 1, lnum, false)[1]
end

--- Waits (up to `timeout` ms) until `fn()` is true, the user's Neovim running meanwhile.
function M:wait(timeout, fn)
  return vim.wait(timeout, fn, 20)
end

function M:stop()
  pcall(vim.fn.rpcnotify, self.chan, 'nvim_command', 'qall!')
  vim.wait(1000, function()
    return vim.fn.jobwait({ self.chan }, 0)[1] ~= -1
  end, 20)
  vim.fn.jobstop(self.chan)
end

return M
