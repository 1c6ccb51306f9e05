-- End-to-end test: real headless Neovim (0.7+) + the plugin in this folder + the real
-- hlo-lsp binary. Run by test/run.sh, once per installed Neovim:
--   HLO_LSP_BIN=... timeout 180 nvim --headless -u NONE -c 'luafile test/e2e.lua'
-- Every check goes through the APIs a user's config and keymaps use (vim.lsp.buf.*,
-- vim.lsp.inlay_hint, vim.ui.select for code actions), with each Neovim's current API (no
-- deprecated calls: the last check fails on any deprecation message). Prints TAP-like lines
-- and exits non-zero (cquit) on any failure.
local plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
local fixtures = plugin_dir .. '/test/fixtures'
local data = vim.fn.fnamemodify(plugin_dir .. '/../../tests/data', ':p'):gsub('/$', '')
local bin = os.getenv('HLO_LSP_BIN')
local TIMEOUT = tonumber(os.getenv('HLO_NVIM_TIMEOUT_MS') or '') or 20000

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

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
  vim.cmd(failures > 0 and 'cquit 1' or 'qall!')
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

--- Line (0-based) and byte column of the first occurrence of `needle` in buffer `bufnr`.
local function find(bufnr, needle)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  error('not in buffer: ' .. needle)
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
end

local function read_file(path)
  return table.concat(vim.fn.readfile(path), '\n') .. '\n'
end

--- Opens a scratch copy of `path` (code actions edit it) and returns its buffer.
local scratch = vim.fn.tempname()
vim.fn.mkdir(scratch, 'p')
local function edit_copy(path)
  local copy = scratch .. '/' .. vim.fn.fnamemodify(path, ':t')
  vim.fn.writefile(vim.fn.readfile(path, 'b'), copy, 'b')
  vim.cmd('edit ' .. vim.fn.fnameescape(copy))
  return vim.api.nvim_get_current_buf()
end

local function hover_text(result)
  assert(result and result.contents, 'no hover result: ' .. vim.inspect(result))
  local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
  return table.concat(lines, '\n')
end

--- A synchronous request with this Neovim's API: methods take `self` since 0.11
--- (`client.request_sync` is deprecated there).
local function request(client, bufnr, method, params)
  local resp, err
  if has('0.11') then
    resp, err = client:request_sync(method, params, TIMEOUT, bufnr)
  else
    resp, err = client.request_sync(method, params, TIMEOUT, bufnr)
  end
  assert(resp, method .. ' failed: ' .. tostring(err))
  assert(not resp.err, method .. ' error: ' .. vim.inspect(resp.err))
  return resp.result
end

local function hover_at(client, bufnr, needle)
  local line, col = find(bufnr, needle)
  return hover_text(request(client, bufnr, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = col + 1 },
  }))
end

--- Waits for a code lens on `line` of `bufnr` whose title starts with `prefix`, asking
--- for the lenses again each round (the server computes some in the background); its
--- title, or nil.
local function wait_lens(bufnr, line, prefix)
  local title
  vim.wait(TIMEOUT, function()
    require('hlo').refresh_codelens(bufnr)
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
      local t = lens.command and lens.command.title
      if t and lens.range.start.line == line and vim.startswith(t, prefix) then
        title = t
        return true
      end
    end
    return false
  end, 200)
  return title
end

--- Waits until a client named hlo_lsp is initialized on `bufnr` (or the server exited).
local function wait_client(bufnr)
  local found
  vim.wait(TIMEOUT, function()
    for _, c in ipairs(clients_of(bufnr)) do
      if c.name == 'hlo_lsp' and c.initialized ~= false and c.server_capabilities ~= nil then
        found = c
        return true
      end
    end
    return vim.g.hlo_test_server_exit ~= nil
  end, 50)
  return found
end

local function floating_windows()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      table.insert(wins, win)
    end
  end
  return wins
end

--- Text of the float `vim.lsp.buf.hover()` opens at the cursor; closes it.
local function hover_float()
  vim.lsp.buf.hover()
  local text
  assert(vim.wait(TIMEOUT, function()
    local win = floating_windows()[1]
    if win then
      text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
    end
    return win ~= nil
  end, 50), 'no hover window')
  for _, win in ipairs(floating_windows()) do
    vim.api.nvim_win_close(win, true)
  end
  return text
end

--- Runs vim.lsp.buf.code_action() at the cursor the way a user does, answering the
--- vim.ui.select menu with the action whose title contains `want`; returns the offered titles.
--- Waits until the buffer changes.
local function apply_code_action(bufnr, want)
  local offered, chosen = {}, nil
  local ui_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(offered, title)
      if not chosen and title:find(want, 1, true) then
        chosen = title
        on_choice(item, i)
      end
    end
    if not chosen then
      on_choice(nil, nil)
    end
  end
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local ok, err = pcall(function()
    vim.lsp.buf.code_action()
    vim.wait(TIMEOUT, function()
      return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or (#offered > 0 and not chosen)
    end, 50)
  end)
  vim.ui.select = ui_select
  assert(ok, err)
  assert(#offered > 0, 'no code actions offered at the cursor')
  assert(chosen, ('no action titled "%s" among: %s'):format(want, table.concat(offered, ' | ')))
  assert(vim.api.nvim_buf_get_changedtick(bufnr) ~= tick, 'applying "' .. chosen .. '" did not change the buffer')
  return offered
end

local function wait_diagnostics(bufnr)
  return vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 50)
end

--- The text of an inlay hint label (a string or a list of label parts).
local function label_text(label)
  if type(label) == 'string' then
    return label
  end
  local parts = {}
  for _, p in ipairs(label) do
    table.insert(parts, p.value)
  end
  return table.concat(parts)
end

--- Every virtual text chunk drawn on line `line` (0-based) of `bufnr`, from any namespace.
local function virtual_text_on(bufnr, line)
  local texts = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, -1, { line, 0 }, { line, -1 }, { details = true })) do
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      table.insert(texts, chunk[1])
    end
  end
  return table.concat(texts)
end

local function messages()
  if vim.api.nvim_exec2 then
    return vim.api.nvim_exec2('messages', { output = true }).output
  end
  return vim.api.nvim_exec('messages', true)
end

--- What the popup of `user` (test/user_nvim.lua) shows, first item first: the matching
--- items' words (all of them where complete_info() knows no `matches`, as on 0.7), or nil
--- while no popup is open.
local function popup_words(user)
  local info = user:eval("complete_info(['items', 'matches', 'selected', 'pum_visible'])")
  if info.pum_visible ~= 1 then
    return nil
  end
  local words = {}
  for _, item in ipairs(info.items) do
    if item.match ~= false then
      table.insert(words, item.word)
    end
  end
  return words, info.selected
end

--- Waits until hlo-lsp is attached to the current buffer of `user`'s Neovim and initialized
--- (on_attach, which sets up completion, has run then).
local function wait_user_client(user)
  assert(user:wait(TIMEOUT, function()
    return user:lua([[
      local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = 0 }) or vim.lsp.buf_get_clients(0)
      for _, c in pairs(clients) do
        if c.name == 'hlo_lsp' and c.initialized ~= false and c.server_capabilities ~= nil then
          return true
        end
      end
      return false
    ]])
  end), 'the server did not attach in the user\'s Neovim')
end

--- Types a new instruction above the ROOT of a copy of the fixture in `user`'s Neovim, as
--- a user does: the popup must open with `broadcast` first, and accepting it must insert
--- it (on 0.11+ as the server's snippet, its fields then filled in with <Tab> between).
--- Returns what the popup showed.
local function type_new_instruction(user, dir)
  local copy = dir .. '/typing/transpose_fusion.hlo'
  vim.fn.mkdir(dir .. '/typing', 'p')
  vim.fn.writefile(vim.fn.readfile(fixtures .. '/transpose_fusion.hlo', 'b'), copy, 'b')
  user:lua([[
    vim.cmd('edit ' .. vim.fn.fnameescape(...))
    vim.fn.search('ROOT %fusion')
  ]], copy)
  wait_user_client(user)
  local row = vim.fn.rpcrequest(user.chan, 'nvim_win_get_cursor', 0)[1]
  -- 'autoindent' (on by default) gives the new line the indent of the ROOT line.
  local indent = user:line(row):match('^%s*')
  local typed = '%broadcast.1 = f32[20,30]{1,0} '
  local autotrigger = has('0.11')
  if autotrigger then
    -- vim.lsp.completion asks by itself after the space (a trigger character), then the
    -- popup narrows as the user types on.
    user:type('O' .. typed)
    assert(user:wait(TIMEOUT, function()
      return popup_words(user) ~= nil
    end), 'no popup after typing "' .. typed .. '" (line: ' .. tostring(user:line(row)) .. ')')
    user:type('b')
  else
    -- 0.7-0.10: 'omnifunc' is vim.lsp.omnifunc; the user asks with <C-x><C-o>.
    user:type('O' .. typed .. 'b<C-x><C-o>')
  end
  local words, selected
  user:wait(TIMEOUT, function()
    words, selected = popup_words(user)
    return words ~= nil and words[1] == 'broadcast' and user:line(row) == indent .. typed .. (selected == 0 and 'broadcast' or 'b')
  end)
  assert(words, 'no popup after "' .. typed .. 'b" (mode ' .. user:mode() .. ', line: ' .. tostring(user:line(row)) .. ')')
  local shown = table.concat(vim.list_slice(words, 1, 5), ', ')
  assert(words[1] == 'broadcast', 'the popup shows ' .. shown)
  -- noselect (the plugin's, for typing): <C-n> chooses the first item, <C-y> accepts it.
  user:type((selected == 0 and '' or '<C-n>') .. '<C-y>')
  local want = indent .. typed .. 'broadcast'
  if autotrigger then
    -- The server's snippet: the operand selected, then the dimensions after <Tab>.
    want = indent .. typed .. 'broadcast(operand), dimensions={}'
  end
  assert(user:wait(TIMEOUT, function()
    return user:line(row) == want
  end), 'after <C-y>: "' .. tostring(user:line(row)) .. '", expected "' .. want .. '"')
  if autotrigger then
    assert(user:mode() == 's', 'the placeholder operand is not selected (mode ' .. user:mode() .. ')')
    user:type('%a<Tab>1,0<Esc>')
    want = indent .. typed .. 'broadcast(%a), dimensions={1,0}'
    assert(user:wait(TIMEOUT, function()
      return user:mode() == 'n' and user:line(row) == want
    end), 'after filling in the snippet: "' .. tostring(user:line(row)) .. '", expected "' .. want .. '"')
  else
    user:type('<Esc>')
  end
  return shown .. ' -> ' .. want
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
  check('filetype detection: *.hlo and XLA dump names are hlo, *.mlir is mlir', function()
    vim.cmd('edit ' .. fixtures .. '/transpose_fusion.hlo')
    buf = vim.api.nvim_get_current_buf()
    assert(vim.bo.filetype == 'hlo', 'filetype is ' .. vim.bo.filetype)
    local names = { 'a.hlo.txt', 'module_0001.jit_f.before_optimizations.txt', 'x.after_optimizations.txt', 'module_7.txt', 'k.mlir' }
    for _, name in ipairs(names) do
      local ft = has('0.8') and vim.filetype.match({ filename = name }) or nil
      if not ft then -- 0.7: run the autocommands on a scratch buffer
        vim.cmd('noautocmd new')
        vim.api.nvim_buf_set_name(0, '/tmp/hlo-ft/' .. name)
        vim.cmd('doautocmd BufRead')
        ft = vim.bo.filetype
        vim.cmd('bwipeout!')
      end
      local want = name:match('%.mlir$') and 'mlir' or 'hlo'
      assert(ft == want, name .. ' -> ' .. tostring(ft) .. ', expected ' .. want)
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
      local node_text = vim.treesitter.get_node_text or vim.treesitter.query.get_node_text
      local seen = {}
      for id, node in query:iter_captures(root, buf, 0, -1) do
        seen[node_text(node, buf)] = query.captures[id]
      end
      for text, capture in pairs({ ['%neg'] = 'variable', negate = 'function.builtin', ['f32[30,20]{1,0}'] = 'type', ['%fused_transpose'] = 'function' }) do
        assert(seen[text] == capture, text .. ' captured as ' .. tostring(seen[text]) .. ', expected ' .. capture)
      end
      assert(vim.treesitter.highlighter.active[buf], 'the plugin did not start the tree-sitter highlighter')
    end)
  else
    out('# not checked: tree-sitter highlighting (parser not built: no C compiler or no tree-sitter-hlo)')
  end

  -- The server on main serves LSP: exiting at startup is a failure, never a skip.
  local attached = check('the server starts and attaches to the buffer', function()
    client = wait_client(buf)
    local exit = vim.g.hlo_test_server_exit
    assert(not exit, ('the server exited during startup (code %s, signal %s)'):format(tostring(exit and exit[1]), tostring(exit and exit[2])))
    assert(client, 'no hlo_lsp client attached within ' .. TIMEOUT .. ' ms')
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

  check_with('hoverProvider', 'hover on an instruction inside a fusion shows the composed map', function()
    local text = hover_at(client, buf, '%neg = ')
    -- The fusion's output (d0, d1) in f32[20,30] reads %neg (f32[30,20]) transposed.
    assert(text:find('(d0, d1) -> (d1, d0)', 1, true), 'no transposed map in hover:\n' .. text)
  end)

  check_with('hoverProvider', 'vim.lsp.buf.hover() opens a float with the map', function()
    local line, col = find(buf, '%t = ')
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 1 })
    local text = hover_float()
    assert(text:find('(d0, d1) -> (d1, d0)', 1, true), 'float lacks the map:\n' .. text)
  end)

  if vim.lsp.inlay_hint then
    check_with('inlayHintProvider', 'inlay hints (vim.lsp.inlay_hint): the composed map drawn after the fused instruction', function()
      assert(vim.lsp.inlay_hint.is_enabled({ bufnr = buf }), 'the plugin did not enable inlay hints on attach')
      local line = find(buf, '%neg = ')
      local label
      assert(vim.wait(TIMEOUT, function()
        for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
          if h.inlay_hint.position.line == line then
            label = label_text(h.inlay_hint.label)
            return true
          end
        end
        return false
      end, 50), 'no inlay hint on the %neg line: ' .. vim.inspect(vim.lsp.inlay_hint.get({ bufnr = buf })))
      assert(label:find('(d0, d1) -> (d1, d0)', 1, true), 'hint lacks the transposed map: ' .. label)
      -- Drawn in the buffer, not only known to the client.
      local drawn = ''
      vim.wait(TIMEOUT, function()
        vim.cmd('redraw')
        drawn = virtual_text_on(buf, line)
        return drawn:find('d1, d0', 1, true) ~= nil
      end, 50)
      assert(drawn:find('d1, d0', 1, true), 'hint not drawn on line ' .. (line + 1) .. ': "' .. drawn .. '"')
    end)
  else
    out('# not on Neovim ' .. v.major .. '.' .. v.minor .. ': inlay hints (vim.lsp.inlay_hint is 0.10+)')
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

  -- Completion while a new instruction is typed (issue 48), in a copy of the fixture.
  local typing = edit_copy(fixtures .. '/transpose_fusion.hlo')
  local typing_client = wait_client(typing)
  local new_line = '  %broadcast.1 = f32[20,30]{1,0} '

  check_with('completionProvider', "completion: the opcode of a line being typed comes first by the instruction's name", function()
    assert(typing_client, 'no client on ' .. vim.api.nvim_buf_get_name(typing))
    local line = find(typing, 'ROOT %fusion')
    vim.api.nvim_buf_set_lines(typing, line, line, false, { new_line })
    local result = request(typing_client, typing, 'textDocument/completion', {
      textDocument = { uri = vim.uri_from_bufnr(typing) },
      position = { line = line, character = #new_line },
    })
    local items = result.items or result
    assert(items[1] and items[1].label == 'broadcast', 'first item: ' .. vim.inspect(items[1]))
  end)

  check_with('signatureHelpProvider', 'signature help: the operand typed is the active parameter', function()
    local line = find(typing, '%broadcast.1 = ')
    local text = new_line .. 'select(%a, %a, '
    vim.api.nvim_buf_set_lines(typing, line, line + 1, false, { text })
    local result = request(typing_client, typing, 'textDocument/signatureHelp', {
      textDocument = { uri = vim.uri_from_bufnr(typing) },
      position = { line = line, character = #text },
    })
    assert(result.signatures[1].label == 'select(pred, on_true, on_false)', vim.inspect(result))
    assert(result.activeParameter == 2, 'active parameter ' .. tostring(result.activeParameter))
  end)

  -- The popup as a user sees it, in a second Neovim with the plugin the keys are typed
  -- into (test/user_nvim.lua: keys that stay in Insert mode would block this one).
  -- Its setup() sets format.style, as a user's config would.
  local user = dofile(plugin_dir .. '/test/user_nvim.lua').start(plugin_dir, { cmd = { bin }, settings = { format = { style = 'short' } } })
  check_with('completionProvider', 'completion popup: typing `%broadcast.1 = f32[20,30]{1,0} b` pops up broadcast first; accepting it inserts it', function()
    out('# popup: ' .. type_new_instruction(user, scratch))
  end)

  check_with('documentFormattingProvider', "format.style = 'short' in setup() reaches the server: vim.lsp.buf.format() drops the operand shapes", function()
    local copy = scratch .. '/typing/badly_spaced.hlo'
    vim.fn.writefile(vim.fn.readfile(fixtures .. '/badly_spaced.hlo', 'b'), copy, 'b')
    user:lua("vim.cmd('edit ' .. vim.fn.fnameescape(...))", copy)
    wait_user_client(user)
    user:lua([[
      if vim.fn.has('nvim-0.8') == 1 then
        vim.lsp.buf.format({ timeout_ms = ... })
      else
        vim.lsp.buf.formatting_sync(nil, ...)
      end
    ]], TIMEOUT)
    local got = table.concat(vim.fn.rpcrequest(user.chan, 'nvim_buf_get_lines', 0, 0, -1, false), '\n') .. '\n'
    local want = read_file(fixtures .. '/badly_spaced.short.hlo')
    assert(got == want, 'after formatting:\n' .. got .. '\nexpected:\n' .. want)
  end)
  user:stop()

  -- The reshape-chain sample: a fused chain with a floordiv map, and quick fixes.
  local chains = edit_copy(data .. '/refactor/chains.hlo')
  local chains_client = wait_client(chains)

  check_with('hoverProvider', "require('hlo').update_settings() reaches the running server (divSpelling)", function()
    assert(chains_client, 'no client on ' .. vim.api.nvim_buf_get_name(chains))
    local before = hover_at(chains_client, chains, '%reshape.1 = ')
    assert(before:find('floordiv', 1, true), 'expected floordiv in:\n' .. before)
    require('hlo').update_settings({ divSpelling = 'slash' })
    local after = hover_at(chains_client, chains, '%reshape.1 = ')
    assert(not after:find('floordiv', 1, true) and after:find(' / ', 1, true), 'divSpelling=slash not applied:\n' .. after)
    require('hlo').update_settings({ divSpelling = 'floordiv' })
    assert(hover_at(chains_client, chains, '%reshape.1 = '):find('floordiv', 1, true), 'divSpelling=floordiv not restored')
  end)

  check_with('codeActionProvider', 'code action: the reshape-chain quick fix removes the identity chain', function()
    assert(wait_diagnostics(chains), 'no reshape-chain diagnostics')
    local line, col = find(chains, '%r1 = ')
    vim.api.nvim_set_current_buf(chains)
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 1 })
    apply_code_action(chains, 'Remove the 2 instructions')
    local want = read_file(data .. '/refactor/chains.identity-fixed.hlo')
    assert(buffer_text(chains) == want, 'after the fix:\n' .. buffer_text(chains) .. '\nexpected:\n' .. want)
  end)

  check_with('codeActionProvider', 'code action: the tiling quick fix rewrites the invalid output tile sizes', function()
    local tiles = edit_copy(data .. '/tiling/merge_2x5_split_4.hlo')
    assert(wait_client(tiles), 'no client on the tiling sample')
    assert(wait_diagnostics(tiles), 'no tiling diagnostics')
    local original = buffer_text(tiles)
    local line, col = find(tiles, '["4"]')
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 2 })
    apply_code_action(tiles, 'nearest valid tiling')
    local want = original:gsub('%[{"sizes":%["4"%]}%]', '[{"sizes":["10"]}]', 1)
    assert(buffer_text(tiles) == want, 'after the fix:\n' .. buffer_text(tiles))
  end)

  --- vim.lsp.buf.format() on `bufnr` (the current buffer), with this Neovim's API.
  local function format_buffer(bufnr)
    if has('0.8') then
      vim.lsp.buf.format({ bufnr = bufnr, timeout_ms = TIMEOUT })
    else
      vim.lsp.buf.formatting_sync(nil, TIMEOUT)
    end
  end

  check_with('documentFormattingProvider', 'vim.lsp.buf.format() prints a hand-written module as XLA does (jaxlib 0.10.2)', function()
    local hand = edit_copy(data .. '/format/hand_written.hlo')
    assert(wait_client(hand), 'no client on the hand-written module')
    format_buffer(hand)
    local want = read_file(data .. '/format/hand_written.short.hlo')
    local got = buffer_text(hand)
    assert(got == want, 'after formatting:\n' .. got .. '\nexpected:\n' .. want)
  end)

  local spaced = edit_copy(fixtures .. '/badly_spaced.hlo')
  local spaced_client = wait_client(spaced)
  local spaced_text = vim.api.nvim_buf_get_lines(spaced, 0, -1, false)
  check_with('documentFormattingProvider', "vim.lsp.buf.format() on a badly spaced module: XLA's spacing, in the file's own form (long)", function()
    assert(spaced_client, 'no client on the badly spaced module')
    format_buffer(spaced)
    local want = read_file(fixtures .. '/badly_spaced.long.hlo')
    assert(buffer_text(spaced) == want, 'after formatting:\n' .. buffer_text(spaced) .. '\nexpected:\n' .. want)
  end)

  check_with('documentFormattingProvider', "require('hlo').update_settings({ format = { style = 'short' } }) reaches the running server", function()
    assert(spaced_client, 'no client on the badly spaced module')
    vim.api.nvim_buf_set_lines(spaced, 0, -1, false, spaced_text)
    require('hlo').update_settings({ format = { style = 'short' } })
    local ok, err = pcall(function()
      format_buffer(spaced)
      local want = read_file(fixtures .. '/badly_spaced.short.hlo')
      assert(buffer_text(spaced) == want, 'after formatting:\n' .. buffer_text(spaced) .. '\nexpected:\n' .. want)
    end)
    require('hlo').update_settings({ format = { style = 'auto' } })
    assert(ok, err)
  end)

  check('MLIR: an .mlir buffer gets the server; hover on a linalg op shows its indexing maps', function()
    vim.cmd('edit ' .. vim.fn.fnameescape(data .. '/mlir/matmul_tile_using_for.mlir'))
    local mlir = vim.api.nvim_get_current_buf()
    assert(vim.bo.filetype == 'mlir', 'filetype ' .. vim.bo.filetype)
    local c = wait_client(mlir)
    assert(c, 'no hlo_lsp client on the .mlir buffer')
    local line, col = find(mlir, 'linalg.matmul ins')
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 2 })
    local text = hover_float()
    -- linalg.matmul reads A at (i, k), B at (k, j) and writes C at (i, j).
    for _, map in ipairs({ '(d0, d1, d2) -> (d0, d2)', '(d0, d1, d2) -> (d2, d1)', '(d0, d1, d2) -> (d0, d1)' }) do
      assert(text:find(map, 1, true), 'hover lacks ' .. map .. ':\n' .. text)
    end
  end)

  check('StableHLO: hover on a JAX-lowered op is its HLO instruction with the maps from @main\'s result and its Python source', function()
    vim.cmd('edit ' .. vim.fn.fnameescape(data .. '/stablehlo/softmax_debug.mlir'))
    local shlo = vim.api.nvim_get_current_buf()
    assert(vim.bo.filetype == 'mlir', 'filetype ' .. vim.bo.filetype)
    assert(wait_client(shlo), 'no hlo_lsp client on the StableHLO buffer')
    local line, col = find(shlo, '%3 = stablehlo.subtract')
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 1 })
    local text = hover_float()
    for _, want in ipairs({ 'subtract(f32[4,8] %arg0', 'From the output of function `@main`', 'Source: softmax_debug.py:15 in norm' }) do
      assert(text:find(want, 1, true), 'hover lacks ' .. want .. ':\n' .. text)
    end
    if vim.lsp.inlay_hint then
      local hinted = find(shlo, '%1 = stablehlo.broadcast_in_dim')
      local label
      assert(vim.wait(TIMEOUT, function()
        for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = shlo })) do
          if h.inlay_hint.position.line == hinted then
            label = label_text(h.inlay_hint.label)
            return true
          end
        end
        return false
      end, 50), 'no inlay hint on the broadcast: ' .. vim.inspect(vim.lsp.inlay_hint.get({ bufnr = shlo })))
      assert(label:find('(d0, d1) -> (d0, 0)', 1, true), 'hint: ' .. label)
    end
  end)

  -- Syntax diagnostics are on main: none arriving is a failure.
  vim.cmd('edit ' .. fixtures .. '/broken.hlo')
  local broken = vim.api.nvim_get_current_buf()
  local got = wait_diagnostics(broken)
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

  -- Cost on a GPU dump: the code lens above each kernel and :HloKernels.
  local gpu_sample = data .. '/samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo'
  vim.cmd('edit ' .. vim.fn.fnameescape(gpu_sample))
  local gpu = vim.api.nvim_get_current_buf()
  local gpu_client = wait_client(gpu)

  check_with('codeLensProvider', 'code lens: a resolved lens with the cost (title starting with ≈) above a kernel', function()
    assert(gpu_client, 'no client on the GPU sample')
    local titles = {}
    -- The plugin refreshes on attach and BufEnter; vim.lsp.codelens resolves the lenses.
    local found = vim.wait(TIMEOUT, function()
      titles = {}
      for _, lens in ipairs(vim.lsp.codelens.get(gpu)) do
        if lens.command and lens.command.title then
          table.insert(titles, lens.command.title)
        end
      end
      for _, t in ipairs(titles) do
        if vim.startswith(t, '≈') then
          return true
        end
      end
      return false
    end, 50)
    assert(found, 'no resolved lens titled ≈...; lenses: ' .. vim.inspect(vim.lsp.codelens.get(gpu)))
    out('# lens: ' .. titles[1])
  end)

  -- Memory on a CPU dump with XLA's buffer assignment beside it: the lens on ENTRY.
  local memory_dump = data
    .. '/memory/transpose_at_peak/module_0095.jit_transpose_at_peak.cpu_after_optimizations.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(memory_dump))
  local mem = vim.api.nvim_get_current_buf()
  local mem_client = wait_client(mem)
  check_with('codeLensProvider', "code lens: the memory peak on ENTRY, from XLA's buffer assignment", function()
    assert(mem_client, 'no client on the memory dump')
    local entry = nil
    for i, line in ipairs(vim.api.nvim_buf_get_lines(mem, 0, -1, false)) do
      if vim.startswith(line, 'ENTRY') then
        entry = i - 1
      end
    end
    local title
    local found = vim.wait(TIMEOUT, function()
      for _, lens in ipairs(vim.lsp.codelens.get(mem)) do
        local t = lens.command and lens.command.title
        if t and lens.range.start.line == entry and vim.startswith(t, 'peak ') then
          title = t
          return true
        end
      end
      return false
    end, 50)
    assert(found, 'no memory lens on ENTRY; lenses: ' .. vim.inspect(vim.lsp.codelens.get(mem)))
    local want = "peak 26.0 MiB at %copy_bitcast_fusion · 6 buffers live (from XLA's buffer assignment)"
    assert(title == want, 'lens: ' .. title)
    out('# memory lens: ' .. title)
  end)
  vim.cmd('buffer ' .. gpu)

  check('quickfix: :HloKernels lists the kernels of hlo-lsp/kernels in order, at their names', function()
    assert(gpu_client, 'no client on the GPU sample')
    local want = request(gpu_client, gpu, 'hlo-lsp/kernels', { textDocument = { uri = vim.uri_from_bufnr(gpu) } })
    assert(want and #want.kernels > 0, 'hlo-lsp/kernels: no kernels: ' .. vim.inspect(want))
    vim.fn.setqflist({}, 'r', { title = 'before', items = {} })
    vim.cmd('HloKernels')
    local qf
    assert(vim.wait(TIMEOUT, function()
      qf = vim.fn.getqflist({ title = 1, items = 1 })
      return qf.title ~= 'before'
    end, 50), 'the quickfix list was not replaced')
    assert(qf.title:find(want.device, 1, true), 'title: ' .. qf.title)
    assert(#qf.items == #want.kernels, ('%d items for %d kernels'):format(#qf.items, #want.kernels))
    local lines = vim.api.nvim_buf_get_lines(gpu, 0, -1, false)
    for i, k in ipairs(want.kernels) do
      local item = qf.items[i]
      assert(item.bufnr == gpu, 'item ' .. i .. ' in buffer ' .. item.bufnr)
      assert(item.lnum == k.range.start.line + 1, ('item %d (%s) on line %d, kernel on %d'):format(i, k.name, item.lnum, k.range.start.line + 1))
      -- The column is the kernel's name in the line.
      assert(lines[item.lnum]:sub(item.col, item.col + #k.name - 1) == k.name, ('item %d: col %d of %q is not %s'):format(i, item.col, lines[item.lnum], k.name))
      local head = ('%s  %s (%s)  '):format(require('hlo').format_time(k.exec_time_us), k.name, k.kind)
      assert(item.text == head .. k.summary, ('item %d text %q'):format(i, item.text))
      if i > 1 then
        assert(k.exec_time_us <= want.kernels[i - 1].exec_time_us, 'not costliest first')
      end
    end
    -- The quickfix window opened.
    local open = false
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      open = open or vim.fn.getwininfo(win)[1].quickfix == 1
    end
    assert(open, 'the quickfix window is not open')
    out('# quickfix: ' .. #qf.items .. ' kernels, first: ' .. qf.items[1].text)
    vim.cmd('cclose')
  end)

  -- What the plugin says goes to a list, as with a notification plugin (headless Neovim
  -- would print it without a line break, inside this test's output).
  local notified = {}
  local notify = vim.notify
  vim.notify = function(msg)
    table.insert(notified, msg)
  end

  --- Runs :HloGraph at `needle` with a viewer that records the path it is given; returns the
  --- SVG's text, the path the viewer got and the JSON graph the server answers there.
  local function graph_at(needle, radius)
    local dir = scratch .. '/graph'
    local seen = scratch .. '/viewer-got'
    vim.fn.delete(seen)
    local hlo = require('hlo')
    hlo.config.graph.dir = dir
    hlo.config.graph.viewer = { 'sh', '-c', 'printf %s "$0" > ' .. vim.fn.shellescape(seen) }
    local line, col = find(gpu, needle)
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 1 })
    vim.cmd('HloGraph ' .. radius)
    assert(vim.wait(TIMEOUT, function()
      return vim.fn.filereadable(seen) == 1 and #read_file(seen) > 1
    end, 50), 'the viewer was not started')
    local path = vim.fn.readfile(seen)[1]
    local want = request(gpu_client, gpu, 'hlo-lsp/graph', {
      textDocument = { uri = vim.uri_from_bufnr(gpu) },
      position = { line = line, character = col + 1 },
      radius = radius,
    })
    return read_file(path), path, want
  end

  --- The SVG draws the focus node and an arrow for each of its operand edges.
  local function check_svg(svg, g, name)
    local focus
    for _, node in ipairs(g.nodes) do
      if node.id == g.focus then
        focus = node
      end
    end
    assert(focus and focus.name == name, 'focus: ' .. vim.inspect(focus))
    assert(svg:find('<g class="node" id="' .. focus.id .. '"><title>' .. name .. ' = ', 1, true), 'no node ' .. name .. ' in\n' .. svg)
    local into = 0
    for _, e in ipairs(g.edges) do
      if e.to == focus.id then
        into = into + 1
        local arrow = ('data-from="%s" data-to="%s"'):format(e.from, e.to)
        assert(svg:find(arrow, 1, true), 'no arrow ' .. arrow .. ' in\n' .. svg)
      end
    end
    return into
  end

  check(':HloGraph writes the SVG and DOT of the instruction at the cursor and opens them in the viewer', function()
    assert(gpu_client, 'no client on the GPU sample')
    local svg, path, g = graph_at('custom-call.1 = ', 1)
    assert(path:match('/custom%-call%.1%.svg$'), 'svg path ' .. path)
    assert(svg:find('^<svg '), 'not an SVG: ' .. svg:sub(1, 200))
    assert(check_svg(svg, g, 'custom-call.1') == 2, 'custom-call.1 reads fusion.2 twice')
    -- A GPU dump's kernels say their estimated time and output size: `≈ 80.25 ns · 100 B`.
    assert(svg:find('>≈ [%d.]+ [nµm]?s · 100 B<'), 'no time and size in a box:\n' .. svg)
    local dot = read_file(path:gsub('%.svg$', '.dot'))
    assert(dot:find('^digraph hlo {'), 'DOT: ' .. dot:sub(1, 200))
    out('# graph: ' .. path .. ', ' .. #g.nodes .. ' nodes, ' .. #g.edges .. ' edges')
  end)

  check(':HloGraph draws unsaved text: an instruction typed but not written', function()
    assert(gpu_client, 'no client on the GPU sample')
    local root = find(gpu, 'ROOT tuple = ')
    vim.api.nvim_buf_set_lines(gpu, root, root, false, { '  unsaved.neg = f32[5,5]{1,0} negate(custom-call.1)' })
    local ok, err = pcall(function()
      local svg, path, g = graph_at('unsaved.neg = ', 1)
      assert(path:match('/unsaved%.neg%.svg$'), 'svg path ' .. path)
      assert(check_svg(svg, g, 'unsaved.neg') == 1, 'unsaved.neg reads custom-call.1')
    end)
    vim.api.nvim_buf_set_lines(gpu, root, root + 1, false, {})
    assert(ok, err)
  end)

  check(':HloGraph without a viewer says where the files are', function()
    local hlo = require('hlo')
    local paths
    hlo.graph({ viewer = false, on_done = function(svg)
      paths = svg
    end })
    assert(vim.wait(TIMEOUT, function()
      local said = table.concat(notified, '\n')
      return paths ~= nil and said:find('graph written: ' .. paths, 1, true) ~= nil
    end, 50), 'no message with the path; said:\n' .. table.concat(notified, '\n'))
    assert(vim.fn.filereadable(paths) == 1, paths)
  end)
  vim.notify = notify

  -- Measured time: a dump with its XProf logdir beside it (tests/data/profiles/attention),
  -- no setting: the lenses say what ran, :HloHottest ranks it, :HloLoadProfile loads another.
  local profiled = data .. '/profiles/attention/module_0006.jit_attention.cpu_after_optimizations.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(profiled))
  local prof = vim.api.nvim_get_current_buf()
  local prof_client = wait_client(prof)
  local exp_line = find(prof, '%subtract_exponential_fusion = ')
  check_with('codeLensProvider', 'code lens: the measured time above an instruction of a dump with its logdir beside it, no setting', function()
    assert(prof_client, 'no client on the profiled dump')
    -- The profile is found and read in the background; the server asks for the lenses again.
    local title = wait_lens(prof, exp_line, 'measured')
    assert(title, 'no measured lens on %subtract_exponential_fusion; lenses: ' .. vim.inspect(vim.lsp.codelens.get(prof)))
    assert(title == 'measured 2.38 µs · 7.7% of step', 'lens: ' .. title)
    out('# measured lens: ' .. title)
  end)

  check_with('hoverProvider', 'hover: one **Measured** line on an instruction the profile measured', function()
    assert(prof_client, 'no client on the profiled dump')
    -- After the lens check: the profile is read by now.
    local text = hover_at(prof_client, prof, '%subtract_exponential_fusion = ')
    local _, lines = text:gsub('%*%*Measured%*%*', '')
    assert(lines == 1, 'want one Measured line:\n' .. text)
    assert(text:find('**Measured** 2.38 µs · 7.7% of step', 1, true), 'hover:\n' .. text)
    out('# measured hover: ' .. text:match('%*%*Measured%*%*[^\n]*'))
  end)

  -- A program JAX partitioned over a 2x4 mesh: the hover on a sharded parameter says
  -- what each device holds and draws the tiles' devices; the one on the all-reduce names
  -- its mesh axis, the bytes each device sends and the sharding that calls for it.
  vim.cmd('edit ' .. vim.fn.fnameescape(data .. '/jax/sharded_mlp.after.hlo'))
  local sharded = vim.api.nvim_get_current_buf()
  local sharded_client = wait_client(sharded)
  check_with('hoverProvider', 'hover: a sharded parameter and a collective of a partitioned JAX program', function()
    assert(sharded_client, 'no client on the sharded dump')
    local param = hover_at(sharded_client, sharded, '%param.1 = ')
    for _, want in ipairs({
      'Sharding: dim 1 split 4 ways, each tile on 2 devices (replicated); per device f32[64,32] of global f32[64,128]',
      '│ 0,4 │ 1,5 │ 2,6 │ 3,7 │',
    }) do
      assert(param:find(want, 1, true), 'hover lacks ' .. want .. ':\n' .. param)
    end
    local reduce = hover_at(sharded_client, sharded, '%all-reduce = f32')
    for _, want in ipairs({
      'Replica groups: 2 groups of 4 devices over axis 1 of the 2x4 mesh: {0,1,2,3} {4,5,6,7}',
      'Moves: each device sends 48 B and receives 48 B',
      'Why: %param.1 splits dim 1 4 ways over axis 1 of the 2x4 mesh',
    }) do
      assert(reduce:find(want, 1, true), 'hover lacks ' .. want .. ':\n' .. reduce)
    end
    out('# sharded hover: ' .. reduce:match('Replica groups:[^\n]*'))
  end)

  check('quickfix: :HloHottest lists the instructions by measured time, at their names', function()
    assert(prof_client, 'no client on the profiled dump')
    vim.cmd('buffer ' .. prof)
    vim.fn.setqflist({}, 'r', { title = 'before', items = {} })
    vim.cmd('HloHottest 3')
    local qf
    assert(vim.wait(TIMEOUT, function()
      qf = vim.fn.getqflist({ title = 1, items = 1 })
      return qf.title ~= 'before'
    end, 50), 'the quickfix list was not replaced')
    assert(qf.title == 'hlo-lsp: jit_attention(6) by measured time, step 30.98 µs over 5 executions', 'title: ' .. qf.title)
    assert(#qf.items == 3, 'items: ' .. vim.inspect(qf.items))
    assert(qf.items[1].text == '22.12 µs  71%  ynn_fusion.1 (main.5)', qf.items[1].text)
    local lines = vim.api.nvim_buf_get_lines(prof, 0, -1, false)
    for i, item in ipairs(qf.items) do
      -- At the instruction's name as written (`%ynn_fusion.1`).
      local name = '%' .. item.text:match('  ([%w._-]+) %(')
      assert(lines[item.lnum]:sub(item.col, item.col + #name - 1) == name, ('item %d: col %d of %q'):format(i, item.col, lines[item.lnum]))
    end
    out('# :HloHottest: ' .. qf.items[1].text .. ' | ' .. qf.items[2].text .. ' | ' .. qf.items[3].text)
    vim.cmd('cclose')
  end)

  check(':HloLoadProfile: a profile of another program is refused with the server\'s reason; the trace of the same run loads, and the logdir typed as a command', function()
    assert(prof_client, 'no client on the profiled dump')
    local done = {}
    local said = {}
    local notify = vim.notify
    vim.notify = function(msg)
      table.insert(said, msg)
    end
    require('hlo').load_profile({
      bufnr = prof,
      path = data .. '/profiles/fori_cumulative/profile',
      on_done = function(err)
        done.other = err or false
      end,
    })
    assert(vim.wait(TIMEOUT, function()
      return done.other ~= nil
    end, 50), 'no answer')
    local runs = vim.fn.glob(data .. '/profiles/attention/profile/plugins/profile/*', false, true)
    require('hlo').load_profile({
      bufnr = prof,
      path = runs[1] .. '/vm.trace.json.gz',
      on_done = function(err, result)
        done.same = err or result
      end,
    })
    -- The messages are scheduled after the answers.
    assert(vim.wait(TIMEOUT, function()
      return done.same ~= nil and #said >= 2
    end, 50), 'no answer: ' .. vim.inspect(said))
    -- As a user types it: the command on the logdir, for the current buffer.
    vim.cmd('buffer ' .. prof)
    vim.cmd('HloLoadProfile ' .. vim.fn.fnameescape(data .. '/profiles/attention/profile'))
    local typed = vim.wait(TIMEOUT, function()
      return #said >= 3
    end, 50)
    vim.notify = notify
    assert(typed, 'no answer to :HloLoadProfile: ' .. vim.inspect(said))
    assert(said[3]:find('measured 6 instructions of jit_attention, step 30.98 µs', 1, true), said[3])
    assert(done.other and done.other.message:find('no event names an instruction of jit_attention', 1, true), vim.inspect(done.other))
    assert(done.same.format == 'trace.json.gz', vim.inspect(done.same))
    local text = table.concat(said, '\n')
    assert(text:find('profile not loaded: ', 1, true), text)
    assert(text:find('vm.trace.json.gz measured 6 instructions of jit_attention, step 30.98 µs', 1, true), text)
    out('# :HloLoadProfile: ' .. said[2] .. ' | ' .. said[3])
  end)

  -- Pass history in a snapshot of a pass-by-pass dump: the lens on each instruction,
  -- running it and :HloHistory (quickfix of its passes), :HloHistory diff/changes N.
  local pass_dump = data .. '/pass_dumps/mlp_train_step/module_0030.jit_mlp_train_step.cpu_after_optimizations.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(pass_dump))
  local passes = vim.api.nvim_get_current_buf()
  local passes_client = wait_client(passes)
  local dot_line = find(passes, '%dot.1 = ')
  check_with('codeLensProvider', 'code lens: which pass made %dot.1, in a snapshot of a pass-by-pass dump', function()
    assert(passes_client, 'no client on the pass dump')
    -- The history is built in the background; the server asks for the lenses again.
    local title = wait_lens(passes, dot_line, 'introduced by')
    assert(title, 'no history lens on %dot.1; lenses: ' .. vim.inspect(vim.lsp.codelens.get(passes)))
    assert(title == 'introduced by algsimp (step 7) · changed by 2 passes', 'lens: ' .. title)
    out('# history lens: ' .. title)
  end)

  --- Waits for the quickfix list to be replaced; its items with their lines' text.
  local function history_quickfix(run)
    vim.fn.setqflist({}, 'r', { title = 'before', items = {} })
    run()
    local qf
    assert(vim.wait(TIMEOUT, function()
      qf = vim.fn.getqflist({ title = 1, items = 1 })
      return qf.title ~= 'before'
    end, 50), 'the quickfix list was not replaced')
    for _, item in ipairs(qf.items) do
      vim.fn.bufload(item.bufnr)
      item.line = vim.api.nvim_buf_get_lines(item.bufnr, item.lnum - 1, item.lnum, false)[1]
    end
    return qf
  end

  check('quickfix: running the history lens lists the passes of %dot.1', function()
    assert(passes_client, 'no client on the pass dump')
    vim.cmd('buffer ' .. passes)
    vim.api.nvim_win_set_cursor(0, { dot_line + 1, 4 })
    local qf = history_quickfix(function()
      vim.lsp.codelens.run()
    end)
    assert(#qf.items == 3, 'items: ' .. vim.inspect(qf.items))
    assert(qf.items[1].text == '1. introduced by algsimp (step 7)', qf.items[1].text)
    vim.cmd('cclose')
  end)

  check(':HloHistory: the passes of the instruction under the cursor, each at its line after the pass', function()
    assert(passes_client, 'no client on the pass dump')
    vim.cmd('buffer ' .. passes)
    vim.api.nvim_win_set_cursor(0, { dot_line + 1, 0 })
    local qf = history_quickfix(function()
      vim.cmd('HloHistory')
    end)
    assert(qf.title:find('%dot.1', 1, true), 'title: ' .. qf.title)
    assert(#qf.items == 3, 'items: ' .. vim.inspect(qf.items))
    for i, item in ipairs(qf.items) do
      local file = vim.api.nvim_buf_get_name(item.bufnr)
      assert(file:find('/pass_dumps/mlp_train_step/module_0030', 1, true), file)
      assert(vim.trim(item.line):sub(1, 9) == '%dot.1 = ', ('item %d: line %q'):format(i, item.line))
      assert(item.line:sub(item.col, item.col + 5) == 'dot.1 ', ('item %d: col %d of %q'):format(i, item.col, item.line))
    end
    assert(qf.items[2].text:find('^2%. changed by '), qf.items[2].text)
    out('# :HloHistory: ' .. qf.items[1].text .. ' | ' .. qf.items[2].text .. ' | ' .. qf.items[3].text)
    vim.cmd('cclose')
  end)

  check(':HloHistory diff 2: the snapshots before and after the pass, in diff mode at %dot.1', function()
    assert(passes_client, 'no client on the pass dump')
    local tab = vim.api.nvim_get_current_tabpage()
    vim.cmd('HloHistory diff 2')
    local wins = vim.api.nvim_tabpage_list_wins(0)
    assert(#wins == 2, #wins .. ' windows')
    local names = {}
    for _, win in ipairs(wins) do
      assert(vim.wo[win].diff, 'not in diff mode')
      local buf = vim.api.nvim_win_get_buf(win)
      local row = vim.api.nvim_win_get_cursor(win)[1]
      local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
      assert(vim.trim(line):sub(1, 9) == '%dot.1 = ', 'cursor line: ' .. line)
      table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':t'))
    end
    -- Before on the left, after on the right (XLA's step numbers order the names).
    assert(names[1] < names[2], 'before is not on the left: ' .. names[1] .. ' | ' .. names[2])
    out('# diff: ' .. names[1] .. ' | ' .. names[2])
    vim.cmd('tabclose')
    vim.api.nvim_set_current_tabpage(tab)
  end)

  check(':HloHistory changes 1: what algsimp did to the computation of %dot.1', function()
    assert(passes_client, 'no client on the pass dump')
    local lines
    require('hlo.history').changes(passes, 1, { on_done = function(l) lines = l end })
    assert(vim.wait(TIMEOUT, function()
      return lines ~= nil
    end, 50), 'no diff')
    local text = table.concat(lines, '\n')
    assert(text:find('~ computation %main.2', 1, true), text)
    assert(text:find('+ %dot.1 = ', 1, true), text)
    vim.cmd('close')
  end)

  check('no deprecation warnings from the plugin or this test on this Neovim', function()
    local m = messages()
    assert(not m:lower():find('deprecat'), 'messages:\n' .. m)
  end)
end, function(err)
  failures = failures + 1
  out('not ok - aborted: ' .. debug.traceback(tostring(err)))
end)
vim.fn.delete(scratch, 'rf')
finish()
