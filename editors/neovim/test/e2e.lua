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

-- HLO_EDITOR_TESTS_STRICT=1: a feature the server does not advertise is a failure, not a skip.
local STRICT = os.getenv('HLO_EDITOR_TESTS_STRICT') == '1'
local failures = 0
local n = 0
local skips = {}
--- Records that a check was not run because the server lacks the feature (fails when strict).
local function skip(name, why)
  n = n + 1
  if STRICT then
    failures = failures + 1
    out(('not ok %d - %s\n  server lacks it (strict mode): %s'):format(n, name, why))
  else
    table.insert(skips, name)
    out(('ok %d - %s # SKIP %s'):format(n, name, why))
  end
end
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
  out(('# %d checks, %d failed, %d skipped'):format(n, failures, #skips))
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
  vim.g.hlo_lsp_config = {
    cmd = { bin },
    lsp = {
      on_exit = function(code, signal)
        vim.g.hlo_test_server_exit = { code, signal }
      end,
    },
  }
  vim.cmd('filetype on')
  vim.cmd('runtime! plugin/hlo.lua')
  local v = vim.version()
  out(('# Neovim %d.%d.%d, server %s'):format(v.major, v.minor, v.patch, bin))

  local client, buf
  check('filetype detection: *.hlo and XLA dump names are hlo', function()
    vim.cmd('edit ' .. fixtures .. '/transpose_fusion.hlo')
    buf = vim.api.nvim_get_current_buf()
    assert(vim.bo.filetype == 'hlo', 'filetype is ' .. vim.bo.filetype)
    for _, name in ipairs({ 'a.hlo.txt', 'module_0001.jit_f.before_optimizations.txt', 'x.after_optimizations.txt', 'module_7.txt' }) do
      local ft = vim.fn.has('nvim-0.8') == 1 and vim.filetype.match({ filename = name }) or nil
      if not ft then -- 0.7: run the autocommands on a scratch buffer
        vim.cmd('noautocmd new')
        vim.api.nvim_buf_set_name(0, '/tmp/hlo-ft/' .. name)
        vim.cmd('doautocmd BufRead')
        ft = vim.bo.filetype
        vim.cmd('bwipeout!')
      end
      assert(ft == 'hlo', name .. ' -> ' .. tostring(ft))
    end
    vim.api.nvim_set_current_buf(buf)
  end)

  if os.getenv('HLO_NVIM_PARSER') == '1' then
    check('tree-sitter: parser/hlo.so and queries/hlo from the runtimepath highlight the buffer', function()
      local parser = vim.treesitter.get_parser(buf, 'hlo')
      local root = parser:parse()[1]:root()
      assert(not root:has_error(), 'parse errors in the fixture: ' .. root:sexpr():sub(1, 400))
      local get_query = vim.treesitter.query.get or vim.treesitter.query.get_query
      local query = get_query('hlo', 'highlights')
      assert(query, 'queries/hlo/highlights.scm not found on the runtimepath')
      local seen = {}
      for id, node in query:iter_captures(root, buf, 0, -1) do
        seen[vim.treesitter.get_node_text and vim.treesitter.get_node_text(node, buf) or vim.treesitter.query.get_node_text(node, buf)] = query.captures[id]
      end
      for text, capture in pairs({ ['%neg'] = 'variable', negate = 'function.builtin', ['f32[30,20]{1,0}'] = 'type', ['%fused_transpose'] = 'function' }) do
        assert(seen[text] == capture, text .. ' captured as ' .. tostring(seen[text]) .. ', expected ' .. capture)
      end
      assert(vim.treesitter.highlighter.active[buf], 'the plugin did not start the tree-sitter highlighter')
    end)
  else
    out('# SKIP tree-sitter check: parser not built (no C compiler or no tree-sitter-hlo)')
  end

  -- Wait for the client, or for the server process to exit.
  vim.wait(TIMEOUT, function()
    local cs = clients_of(buf)
    return (#cs > 0 and cs[1].initialized ~= false and cs[1].server_capabilities ~= nil) or vim.g.hlo_test_server_exit ~= nil
  end, 50)
  local exit = vim.g.hlo_test_server_exit
  if exit and not STRICT then
    local why = ('hlo-lsp exited at startup (code %s, signal %s): the binary does not serve LSP yet'):format(tostring(exit[1]), tostring(exit[2]))
    for _, name in ipairs({ 'the server starts and attaches to the buffer', 'hover inside a fusion', 'vim.lsp.buf.hover() float', 'go to definition', 'diagnostics for a broken file' }) do
      skip(name, why)
    end
    return
  end
  local attached = check('the server starts and attaches to the buffer', function()
    assert(not exit, ('the server exited during startup (code %s, signal %s)'):format(tostring(exit and exit[1]), tostring(exit and exit[2])))
    local cs = clients_of(buf)
    assert(#cs > 0 and cs[1].server_capabilities, 'no client attached within ' .. TIMEOUT .. ' ms')
    client = cs[1]
    assert(client.name == 'hlo_lsp', 'client name ' .. tostring(client.name))
  end)
  if not attached then
    return
  end
  local caps = client.server_capabilities

  --- Runs the check when the server advertises `capability`, else records a skip.
  local function check_with(capability, name, fn)
    if caps[capability] then
      return check(name, fn)
    end
    skip(name, 'no ' .. capability .. ' in the server capabilities')
  end

  -- A hover that shows no indexing map at all (an early server) is a missing feature: skip
  -- (strict: fail). A hover with maps must show the right one.
  local hover_has_maps = true
  if caps.hoverProvider and not STRICT then
    local line, col = find(buf, '%neg = ')
    local ok_probe, probe = pcall(request, client, buf, 'textDocument/hover', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = line, character = col + 1 },
    })
    if ok_probe and probe and probe.contents and not hover_text(probe):find('d0', 1, true) then
      hover_has_maps = false
      local why = 'the server hover shows no indexing map yet: ' .. hover_text(probe):gsub('\n', ' ')
      skip('hover on an instruction inside a fusion shows its indexing map', why)
      skip('vim.lsp.buf.hover() opens a float with the map', why)
    end
  end

  if hover_has_maps then
  check_with('hoverProvider', 'hover on an instruction inside a fusion shows its indexing map', function()
    local line, col = find(buf, '%neg = ')
    local result = request(client, buf, 'textDocument/hover', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = line, character = col + 1 },
    })
    local text = hover_text(result)
    -- The fusion's output (d0, d1) in f32[20,30] reads %neg (f32[30,20]) transposed.
    assert(text:find('(d0, d1) -> (d1, d0)', 1, true), 'no transposed map in hover:\n' .. text)
  end)

  check_with('hoverProvider', 'vim.lsp.buf.hover() opens a float with the map', function()
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

  end

  check_with('definitionProvider', 'go to definition jumps from an operand to the instruction that defines it', function()
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

  -- Diagnostics are pushed, so no capability says whether the server has them: when none
  -- arrive for a file with a syntax error, that is a skip (a failure in strict mode).
  vim.cmd('edit ' .. fixtures .. '/broken.hlo')
  local broken = vim.api.nvim_get_current_buf()
  local got = vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(broken) > 0
  end, 50)
  if not got and not STRICT then
    skip('diagnostics arrive for a file with a syntax error, on the broken line',
      'no diagnostics published within ' .. TIMEOUT .. ' ms for a file with a syntax error (server has no syntax diagnostics yet)')
    return
  end
  check('diagnostics arrive for a file with a syntax error, on the broken line', function()
    local bad_line = find(broken, 'add(%a, %a')
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
