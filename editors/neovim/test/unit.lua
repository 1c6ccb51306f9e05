-- Unit test of the plugin's version dispatch, run in headless Neovim (any version, 0.7+):
-- the Neovim APIs of 0.10 (vim.lsp.start, vim.lsp.inlay_hint) and 0.11 (vim.lsp.config,
-- vim.lsp.enable) are replaced by recorders, so the branches for versions not installed
-- here still run. Prints TAP-like lines; exits non-zero on failure.
--   nvim --headless -u NONE -c 'luafile test/unit.lua'
local plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
vim.opt.runtimepath:prepend(plugin_dir)

local n, failures = 0, 0
local function check(name, fn)
  n = n + 1
  local ok, err = xpcall(fn, debug.traceback)
  io.stdout:write((ok and 'ok %d - %s\n' or 'not ok %d - %s\n  %s\n'):format(n, name, tostring(err):gsub('\n', '\n  ')))
  if not ok then
    failures = failures + 1
  end
end

local real = {
  has = vim.fn.has,
  lsp_start = vim.lsp.start,
  lsp_config = vim.lsp.config,
  lsp_enable = vim.lsp.enable,
  inlay_hint = vim.lsp.inlay_hint,
  completion = vim.lsp.completion,
  start_client = vim.lsp.start_client,
  buf_attach_client = vim.lsp.buf_attach_client,
  get_client_by_id = vim.lsp.get_client_by_id,
  executable = vim.fn.executable,
}
local function restore()
  rawset(vim.fn, 'has', real.has)
  rawset(vim.fn, 'executable', real.executable)
  vim.lsp.start = real.lsp_start
  vim.lsp.config = real.lsp_config
  vim.lsp.enable = real.lsp_enable
  vim.lsp.inlay_hint = real.inlay_hint
  vim.lsp.completion = real.completion
  vim.lsp.start_client = real.start_client
  vim.lsp.buf_attach_client = real.buf_attach_client
  vim.lsp.get_client_by_id = real.get_client_by_id
end

--- Pretends to be Neovim `version` (e.g. '0.11') for vim.fn.has('nvim-x.y').
local function pretend(version)
  local major, minor = version:match('(%d+)%.(%d+)')
  rawset(vim.fn, 'has', function(feature)
    local fmaj, fmin = feature:match('^nvim%-(%d+)%.(%d+)')
    if fmaj then
      return (tonumber(fmaj) < tonumber(major) or (tonumber(fmaj) == tonumber(major) and tonumber(fmin) <= tonumber(minor))) and 1 or 0
    end
    return real.has(feature)
  end)
end

local function fresh_module()
  package.loaded['hlo'] = nil
  return require('hlo')
end

local settings = { inlayHints = { mode = 'full' }, divSpelling = 'slash', utilizationBudget = 2, physicalLayout = true, format = { style = 'long' } }

check('0.11+: vim.lsp.config + vim.lsp.enable with the settings as init_options and settings', function()
  pretend('0.11')
  local configured, enabled = {}, {}
  vim.lsp.config = function(name, conf)
    configured[name] = conf
  end
  vim.lsp.enable = function(name)
    table.insert(enabled, name)
  end
  local hlo = fresh_module()
  hlo.setup({ cmd = { '/opt/hlo-lsp', '--flag' }, settings = settings, treesitter = false })
  local conf = configured.hlo_lsp
  assert(conf, 'vim.lsp.config was not called for hlo_lsp')
  assert(vim.deep_equal(enabled, { 'hlo_lsp' }), vim.inspect(enabled))
  assert(vim.deep_equal(conf.cmd, { '/opt/hlo-lsp', '--flag' }), vim.inspect(conf.cmd))
  assert(vim.deep_equal(conf.filetypes, { 'hlo', 'mlir' }), vim.inspect(conf.filetypes))
  assert(vim.deep_equal(conf.init_options, settings), vim.inspect(conf.init_options))
  assert(vim.deep_equal(conf.settings, settings))
  assert(vim.deep_equal(conf.root_markers, { '.git', 'Cargo.toml' }))
  assert(type(conf.on_attach) == 'function')
  restore()
end)

check('0.10: vim.lsp.start for each hlo buffer, with a root_dir; inlay hints enabled on attach', function()
  pretend('0.10')
  local started = {}
  vim.lsp.start = function(conf, opts)
    table.insert(started, { conf = conf, opts = opts })
    return 1
  end
  local hint_calls = {}
  vim.lsp.inlay_hint = {
    enable = function(enable, filter)
      table.insert(hint_calls, { enable, filter })
    end,
  }
  local hlo = fresh_module()
  local user_attached = false
  hlo.setup({
    cmd = { '/opt/hlo-lsp' },
    settings = settings,
    treesitter = false,
    lsp = { on_attach = function() user_attached = true end },
  })
  vim.cmd('edit ' .. plugin_dir .. '/test/fixtures/transpose_fusion.hlo')
  vim.bo.filetype = 'hlo' -- fires FileType
  assert(#started == 1, 'vim.lsp.start calls: ' .. #started)
  local conf = started[1].conf
  assert(conf.name == 'hlo_lsp' and vim.deep_equal(conf.cmd, { '/opt/hlo-lsp' }))
  assert(vim.deep_equal(conf.init_options, settings))
  assert(type(conf.root_dir) == 'string' and conf.root_dir ~= '', 'root_dir ' .. tostring(conf.root_dir))
  assert(started[1].opts.bufnr == vim.api.nvim_get_current_buf())
  -- on_attach: hints are enabled when the server offers them, and the user's hook runs.
  local buf = vim.api.nvim_get_current_buf()
  conf.on_attach({ server_capabilities = { inlayHintProvider = true } }, buf)
  assert(#hint_calls == 1 and hint_calls[1][1] == true and hint_calls[1][2].bufnr == buf, vim.inspect(hint_calls))
  assert(user_attached, "the user's on_attach did not run")
  conf.on_attach({ server_capabilities = {} }, buf)
  assert(#hint_calls == 1, 'hints enabled without inlayHintProvider')
  vim.cmd('bwipeout!')
  restore()
end)

check("the defaults send format.style = 'auto' (the server's own default), which a user's settings override", function()
  local hlo = fresh_module()
  assert(vim.deep_equal(hlo.defaults.settings.format, { style = 'auto' }), vim.inspect(hlo.defaults.settings))
  vim.lsp.config = function() end
  vim.lsp.enable = function() end
  hlo.setup({ cmd = { '/opt/hlo-lsp' }, treesitter = false, settings = { format = { style = 'short' } } })
  restore()
  assert(hlo.config.settings.format.style == 'short' and hlo.config.settings.divSpelling == 'floordiv', vim.inspect(hlo.config.settings))
end)

--- A client as on_attach sees it, with the completion capability or not.
local function completing_client(completes)
  return { id = 7, server_capabilities = { completionProvider = completes and { triggerCharacters = { '%' } } or nil } }
end

check('completion, 0.11+: vim.lsp.completion.enable with autotrigger; completeopt gets noselect for the buffer only', function()
  pretend('0.11')
  local calls = {}
  vim.lsp.completion = {
    enable = function(...)
      table.insert(calls, { ... })
    end,
  }
  local hlo = fresh_module()
  hlo.config = vim.deepcopy(hlo.defaults)
  local global = vim.o.completeopt
  local buf = vim.api.nvim_create_buf(true, false)
  hlo.setup_completion(completing_client(true), buf)
  -- autotrigger = false: enabled (<C-x><C-o>, completion.get()), completeopt left alone.
  local manual = vim.api.nvim_create_buf(true, false)
  hlo.config.completion = { autotrigger = false }
  hlo.setup_completion(completing_client(true), manual)
  -- completion = false, or a server without completion: nothing.
  hlo.config.completion = false
  hlo.setup_completion(completing_client(true), buf)
  hlo.config.completion = true
  hlo.setup_completion(completing_client(false), buf)
  restore()
  assert(#calls == 2, vim.inspect(calls))
  assert(calls[1][1] == true and calls[1][2] == 7 and calls[1][3] == buf and calls[1][4].autotrigger == true, vim.inspect(calls[1]))
  assert(calls[2][3] == manual and calls[2][4].autotrigger == false, vim.inspect(calls[2]))
  assert(vim.o.completeopt == global, 'the global completeopt changed: ' .. vim.o.completeopt)
  if vim.fn.has('nvim-0.11') == 1 then -- 'completeopt' is global-local from 0.11 on
    local function local_value(b) -- '' where the buffer has no value of its own
      return vim.api.nvim_get_option_value('completeopt', { buf = b })
    end
    assert(local_value(buf) == global .. ',menuone,noselect', 'completeopt ' .. local_value(buf))
    assert(local_value(manual) == '', 'completeopt ' .. local_value(manual))
    -- A user who chose noinsert (or noselect) keeps it.
    local chosen = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_set_option_value('completeopt', 'menu,noinsert', { buf = chosen })
    pretend('0.11')
    vim.lsp.completion = { enable = function() end }
    hlo.config.completion = true
    hlo.setup_completion(completing_client(true), chosen)
    restore()
    assert(local_value(chosen) == 'menu,noinsert', 'completeopt ' .. local_value(chosen))
  end
  vim.cmd('silent! %bwipeout!')
end)

check("completion, before 0.11: 'omnifunc' is vim.lsp.omnifunc unless the user set one", function()
  pretend('0.10')
  vim.lsp.completion = nil
  local hlo = fresh_module()
  hlo.config = vim.deepcopy(hlo.defaults)
  local buf = vim.api.nvim_create_buf(true, false)
  hlo.setup_completion(completing_client(true), buf)
  local mine = vim.api.nvim_create_buf(true, false)
  vim.bo[mine].omnifunc = 'syntaxcomplete#Complete'
  hlo.setup_completion(completing_client(true), mine)
  local off = vim.api.nvim_create_buf(true, false)
  hlo.config.completion = false
  hlo.setup_completion(completing_client(true), off)
  restore()
  assert(vim.bo[buf].omnifunc == 'v:lua.vim.lsp.omnifunc', vim.bo[buf].omnifunc)
  assert(vim.bo[mine].omnifunc == 'syntaxcomplete#Complete', vim.bo[mine].omnifunc)
  assert(vim.bo[off].omnifunc == '', vim.bo[off].omnifunc)
  vim.cmd('silent! %bwipeout!')
end)

check('older: one vim.lsp.start_client, attached to every hlo buffer', function()
  pretend('0.9')
  vim.lsp.start = nil
  local starts, attaches = 0, {}
  vim.lsp.start_client = function(conf)
    starts = starts + 1
    assert(conf.name == 'hlo_lsp' and conf.root_dir)
    return 42
  end
  vim.lsp.get_client_by_id = function(id)
    return id == 42 and {} or nil
  end
  vim.lsp.buf_attach_client = function(buf, id)
    table.insert(attaches, { buf, id })
  end
  local hlo = fresh_module()
  hlo.setup({ cmd = { '/opt/hlo-lsp' }, treesitter = false })
  for _, name in ipairs({ 'a.hlo', 'b.hlo' }) do
    vim.cmd('enew')
    vim.api.nvim_buf_set_name(0, '/tmp/hlo-unit/' .. name)
    vim.bo.filetype = 'hlo'
  end
  assert(starts == 1, 'start_client calls: ' .. starts)
  assert(#attaches == 2 and attaches[1][2] == 42 and attaches[2][2] == 42, vim.inspect(attaches))
  vim.cmd('silent! %bwipeout!')
  restore()
end)

check('server lookup: explicit cmd, then vim.g.hlo_lsp_path, then PATH; a message names what was tried', function()
  local hlo = fresh_module()
  rawset(vim.fn, 'executable', function(p)
    return p == '/custom/hlo-lsp' and 1 or 0
  end)
  assert(vim.deep_equal(hlo.resolve_cmd({ cmd = { 'x' } }), { 'x' }))
  vim.g.hlo_lsp_path = '/custom/hlo-lsp'
  assert(vim.deep_equal(hlo.resolve_cmd({}), { '/custom/hlo-lsp' }))
  vim.g.hlo_lsp_path = '/missing/hlo-lsp'
  local cmd, tried = hlo.resolve_cmd({})
  assert(cmd == nil and vim.deep_equal(tried, { '/missing/hlo-lsp', 'hlo-lsp' }), vim.inspect(tried))
  vim.g.hlo_lsp_path = nil
  restore()
end)

-- Each version's way to find running clients and to notify: get_active_clients + dot calls
-- (< 0.10), get_clients + dot calls (0.10), get_clients + colon calls (0.11+, which also
-- updates vim.lsp.config for clients started later).
for _, version in ipairs({ '0.9', '0.10', '0.11' }) do
  check(version .. ': update_settings sends workspace/didChangeConfiguration with the merged settings', function()
    pretend(version)
    local real_get_clients, real_get_active = vim.lsp.get_clients, vim.lsp.get_active_clients
    local configured = {}
    vim.lsp.config = function(name, conf)
      configured[name] = conf
    end
    vim.lsp.enable = function() end
    local hlo = fresh_module()
    hlo.setup({ cmd = { '/opt/hlo-lsp' }, treesitter = false })
    configured = {}
    local sent = {}
    local fake = { name = 'hlo_lsp', config = {} }
    fake.notify = function(a, b, c)
      local colon = a == fake
      if colon then
        a, b = b, c
      end
      table.insert(sent, { a, b, colon })
    end
    local other = { name = 'other', config = {}, notify = function() error('notified another server') end }
    if version == '0.9' then
      vim.lsp.get_clients = nil
      vim.lsp.get_active_clients = function() return { other, fake } end
    else
      vim.lsp.get_clients = function(filter)
        assert(filter and filter.name == 'hlo_lsp', vim.inspect(filter))
        return { fake }
      end
    end
    local ok, err = pcall(hlo.update_settings, { divSpelling = 'slash', inlayHints = { mode = 'off' } })
    vim.lsp.get_clients, vim.lsp.get_active_clients = real_get_clients, real_get_active
    restore()
    assert(ok, err)
    local want = { inlayHints = { mode = 'off' }, divSpelling = 'slash', utilizationBudget = 1, physicalLayout = false, format = { style = 'auto' } }
    assert(#sent == 1 and sent[1][1] == 'workspace/didChangeConfiguration', vim.inspect(sent))
    assert(vim.deep_equal(sent[1][2].settings, want), vim.inspect(sent[1][2]))
    assert(sent[1][3] == (version == '0.11'), 'colon call expected exactly on 0.11+: ' .. vim.inspect(sent[1]))
    assert(vim.deep_equal(fake.settings, want) and vim.deep_equal(fake.config.settings, want), vim.inspect(fake))
    if version == '0.11' then
      local conf = configured.hlo_lsp
      assert(conf and vim.deep_equal(conf.settings, want) and vim.deep_equal(conf.init_options, want), vim.inspect(configured))
    else
      assert(next(configured) == nil, 'vim.lsp.config called before 0.11')
    end
  end)
end

check(':checkhealth hlo reports the server and the parser', function()
  local hlo = fresh_module()
  hlo.setup({ cmd = { '/bin/true' }, treesitter = false })
  local lines = {}
  local function rec(kind)
    return function(msg)
      table.insert(lines, kind .. ': ' .. msg)
    end
  end
  package.loaded['hlo.health'] = nil
  require('hlo.health').check({ start = rec('start'), ok = rec('ok'), warn = rec('warn'), error = rec('error'), info = rec('info') })
  local text = table.concat(lines, '\n')
  assert(text:find('ok: /bin/true', 1, true) or text:find('warn: /bin/true', 1, true), text)
  assert(text:find('parser/hlo.so', 1, true), text)
  hlo.config.cmd = nil
  vim.g.hlo_lsp_path = '/missing/hlo-lsp'
  lines = {}
  rawset(vim.fn, 'executable', function() return 0 end)
  require('hlo.health').check({ start = rec('start'), ok = rec('ok'), warn = rec('warn'), error = rec('error'), info = rec('info') })
  restore()
  vim.g.hlo_lsp_path = nil
  assert(table.concat(lines, '\n'):find('error: hlo-lsp not found (tried: /missing/hlo-lsp, hlo-lsp)', 1, true), table.concat(lines, '\n'))
end)

check(':HloHottest items: time, share, name (computation), the count and the estimate, in the server order', function()
  local hlo = fresh_module()
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, '/tmp/hlo-unit-hottest.txt')
  -- The positions are read back from the buffer's lines (locations_to_items).
  local lines = {}
  for k = 1, 50 do
    lines[k] = ('  %%instruction.%d = f32[] add(a, b)'):format(k)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local range = function(line, a, b)
    return { start = { line = line, character = a }, ['end'] = { line = line, character = b } }
  end
  local result = {
    modules = {
      {
        module = 'jit_fori_cumulative(6)',
        instructions = {
          { name = 'while.1', computation = 'main.7', measured_us = 6.57, percent = 85.7, count = 1, estimate_us = vim.NIL, range = range(40, 2, 9) },
          { name = 'add_fusion', computation = 'region_0.5', measured_us = 0.402, percent = 5.24, count = 5, estimate_us = 0.0365, range = range(12, 2, 12) },
        },
      },
    },
  }
  local items = hlo.hottest_items(result, buf, 'utf-16')
  assert(#items == 2, vim.inspect(items))
  assert(items[1].text == '6.57 µs  86%  while.1 (main.7)', items[1].text)
  assert(items[2].text == '402 ns  5.2%  add_fusion (region_0.5)  ×5  est. 36.50 ns', items[2].text)
  assert(items[2].lnum == 13 and items[2].col == 3, vim.inspect(items[2]))
  assert(#hlo.hottest_items({ profile = vim.NIL, modules = {} }, buf) == 0)
  assert(hlo.format_measured(0.0042) == '4.20 ns' and hlo.format_measured(29300) == '29.30 ms')
  assert(hlo.format_percent(0.01) == '<0.1%' and hlo.format_percent(71.4) == '71%')
end)

io.stdout:write(('# %d checks, %d failed\n'):format(n, failures))
vim.cmd(failures > 0 and 'cquit 1' or 'qall!')
