-- End-to-end test: real headless Neovim (0.7+) + the plugin in this folder + the real
-- hlo-lsp binary. Run by test/run.sh:
--   HLO_LSP_BIN=... timeout 120 nvim --headless -u NONE -c 'luafile test/e2e.lua'
-- Prints TAP-like lines and exits non-zero (cquit) on the first failure.
local plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
local fixtures = plugin_dir .. '/test/fixtures'
local bin = os.getenv('HLO_LSP_BIN')
local TIMEOUT = tonumber(os.getenv('HLO_NVIM_TIMEOUT_MS') or '') or 20000

local function out(s)
  io.stdout:write(s .. '\n')
end

local failures = 0
local n = 0
local function check(name, fn)
  n = n + 1
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    out(('ok %d - %s'):format(n, name))
  else
    failures = failures + 1
    out(('not ok %d - %s\n  %s'):format(n, name, tostring(err):gsub('\n', '\n  ')))
  end
  return ok
end

local function finish()
  out(('# %d checks, %d failed'):format(n, failures))
  if failures > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

local function clients_of(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  local list = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    table.insert(list, c)
  end
  return list
end

--- Line (0-based) and column of the first occurrence of `needle` in buffer `bufnr`.
local function find(bufnr, needle)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  error('not in buffer: ' .. needle)
end

local function hover_text(result)
  assert(result and result.contents, 'no hover result: ' .. vim.inspect(result))
  local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
  return table.concat(lines, '\n')
end

local function request(client, bufnr, method, params)
  local resp, err = client.request_sync(method, params, TIMEOUT, bufnr)
  assert(resp, method .. ' failed: ' .. tostring(err))
  assert(not resp.err, method .. ' error: ' .. vim.inspect(resp.err))
  return resp.result
end

local ok = xpcall(function()
  assert(bin and bin ~= '', 'HLO_LSP_BIN is not set')
  assert(vim.fn.executable(bin) == 1, 'not executable: ' .. bin)

  -- What a user's config does: the plugin on the runtimepath, filetype detection on.
  vim.opt.runtimepath:prepend(plugin_dir)
  vim.g.hlo_lsp_config = { cmd = { bin } }
  vim.cmd('filetype on')
  vim.cmd('runtime! plugin/hlo.lua')
  out('# ' .. vim.split(vim.fn.execute('version'), '\n')[2] .. ', server ' .. bin)

  local client, buf
  check('filetype detection: *.hlo and XLA dump names are hlo', function()
    vim.cmd('edit ' .. fixtures .. '/transpose_fusion.hlo')
    buf = vim.api.nvim_get_current_buf()
    assert(vim.bo.filetype == 'hlo', 'filetype is ' .. vim.bo.filetype)
    for _, name in ipairs({ 'a.hlo.txt', 'module_0001.jit_f.before_optimizations.txt', 'x.after_optimizations.txt', 'module_7.txt' }) do
      local ft = vim.fn.has('nvim-0.8') == 1 and vim.filetype.match({ filename = name }) or nil
      if not ft then -- 0.7: run the autocommands on a scratch buffer
        vim.cmd('noautocmd new')
        vim.api.nvim_buf_set_name(0, '/tmp/hlo-ft-' .. name)
        vim.cmd('doautocmd BufRead')
        ft = vim.bo.filetype
        vim.cmd('bwipeout!')
      end
      assert(ft == 'hlo', name .. ' -> ' .. tostring(ft))
    end
    vim.api.nvim_set_current_buf(buf)
  end)

  assert(check('the server starts and attaches to the buffer', function()
    local attached = vim.wait(TIMEOUT, function()
      local cs = clients_of(buf)
      return #cs > 0 and cs[1].initialized ~= false and cs[1].server_capabilities ~= nil
    end, 50)
    assert(attached, 'no client attached within ' .. TIMEOUT .. ' ms')
    client = clients_of(buf)[1]
    assert(client.name == 'hlo_lsp', 'client name ' .. tostring(client.name))
  end), 'cannot continue without a client')

  check('hover on an instruction inside a fusion shows its indexing map', function()
    local line, col = find(buf, '%neg = ')
    local result = request(client, buf, 'textDocument/hover', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = line, character = col + 1 },
    })
    local text = hover_text(result)
    -- The fusion's output (d0, d1) in f32[20,30] reads %neg (f32[30,20]) transposed.
    assert(text:find('(d0, d1) -> (d1, d0)', 1, true), 'no transposed map in hover:\n' .. text)
  end)

  check('vim.lsp.buf.hover() opens a float with the map', function()
    local line, col = find(buf, '%t = ')
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 1 })
    vim.lsp.buf.hover()
    local float_text
    local shown = vim.wait(TIMEOUT, function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= '' then
          float_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
          return true
        end
      end
      return false
    end, 50)
    assert(shown, 'no hover window')
    assert(float_text:find('(d0, d1) -> (d1, d0)', 1, true), 'float lacks the map:\n' .. float_text)
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        vim.api.nvim_win_close(win, true)
      end
    end
  end)

  check('go to definition jumps from an operand to the instruction that defines it', function()
    local def_line = find(buf, '%neg = ')
    local use_line, use_col = find(buf, 'transpose(%neg)')
    use_col = use_col + #'transpose(' + 1
    local result = request(client, buf, 'textDocument/definition', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = use_line, character = use_col },
    })
    local loc = result[1] or result
    local range = loc.targetSelectionRange or loc.range
    assert(range and range.start.line == def_line, 'definition at ' .. vim.inspect(result))
    -- And through the UI: the cursor moves there.
    vim.api.nvim_win_set_cursor(0, { use_line + 1, use_col })
    vim.lsp.buf.definition()
    assert(vim.wait(TIMEOUT, function()
      return vim.api.nvim_win_get_cursor(0)[1] == def_line + 1
    end, 50), 'cursor did not move to line ' .. (def_line + 1))
  end)

  check('diagnostics arrive for a file with a syntax error, on the broken line', function()
    vim.cmd('edit ' .. fixtures .. '/broken.hlo')
    local broken = vim.api.nvim_get_current_buf()
    local bad_line = find(broken, 'add(%a, %a')
    local got = vim.wait(TIMEOUT, function()
      return #vim.diagnostic.get(broken) > 0
    end, 50)
    assert(got, 'no diagnostics within ' .. TIMEOUT .. ' ms')
    local near = {}
    for _, d in ipairs(vim.diagnostic.get(broken)) do
      if d.lnum >= bad_line and d.lnum <= bad_line + 1 and d.severity == vim.diagnostic.severity.ERROR then
        table.insert(near, d)
      end
    end
    assert(#near > 0, 'no error on line ' .. (bad_line + 1) .. ': ' .. vim.inspect(vim.diagnostic.get(broken)))
    -- The good file has no syntax errors.
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      assert(d.severity ~= vim.diagnostic.severity.ERROR, 'unexpected error in the good file: ' .. vim.inspect(d))
    end
  end)
end, function(err)
  failures = failures + 1
  out('not ok - aborted: ' .. debug.traceback(tostring(err)))
end)
finish()
