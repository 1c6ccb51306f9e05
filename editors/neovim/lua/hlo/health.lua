-- `:checkhealth hlo`: is the server found and runnable, is the tree-sitter parser built,
-- are its queries on the runtimepath.
local M = {}

--- The reporting functions of this Neovim (names changed in 0.10; 0.7 has the `health` module).
local function reporter()
  local h = vim.health or require('health')
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

function M.check(report)
  report = report or reporter()
  local hlo = require('hlo')
  local cfg = hlo.config or hlo.defaults
  report.start('hlo-lsp server')
  local cmd, tried = hlo.resolve_cmd(cfg)
  if not cmd then
    report.error('hlo-lsp not found (tried: ' .. table.concat(tried, ', ') .. ')', {
      'cargo build --release, then put target/release/hlo-lsp on PATH',
      'or set vim.g.hlo_lsp_path, or pass cmd = { ... } to require("hlo").setup()',
    })
  elseif vim.fn.executable(cmd[1]) ~= 1 then
    report.error('not executable: ' .. cmd[1])
  else
    local version = vim.fn.system({ cmd[1], '--version' })
    if vim.v.shell_error == 0 then
      report.ok(cmd[1] .. ': ' .. vim.trim(version))
    else
      report.warn(cmd[1] .. ' --version failed: ' .. vim.trim(version))
    end
  end

  report.start('tree-sitter-hlo')
  if #vim.api.nvim_get_runtime_file('parser/hlo.so', false) > 0 then
    report.ok('parser/hlo.so found on the runtimepath')
  else
    report.warn('parser/hlo.so not on the runtimepath: highlighting falls back to none', {
      'run editors/neovim/scripts/build-parser.sh',
    })
  end
  local queries = vim.api.nvim_get_runtime_file('queries/hlo/*.scm', true)
  if #queries > 0 then
    report.ok(#queries .. ' query files in queries/hlo/')
  else
    report.warn('no queries/hlo/*.scm on the runtimepath', { 'run editors/neovim/scripts/build-parser.sh' })
  end
end

return M
