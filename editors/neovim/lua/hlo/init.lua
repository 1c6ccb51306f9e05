-- Starts hlo-lsp for `hlo` buffers with whichever LSP API this Neovim has:
--   0.11+: vim.lsp.config + vim.lsp.enable
--   0.10 : vim.lsp.start from a FileType autocommand
--   older: vim.lsp.start_client once, then vim.lsp.buf_attach_client per buffer
-- The server's settings (see editors/README.md) go in `settings`; they are sent both as
-- initializationOptions and in workspace/didChangeConfiguration.
local M = {}

M.defaults = {
  -- The server command; nil means: vim.g.hlo_lsp_path, then `hlo-lsp` on PATH.
  cmd = nil,
  -- Same shape as the server's initializationOptions.
  settings = {
    inlayHints = { mode = 'short' },
    divSpelling = 'floordiv',
    utilizationBudget = 1,
    physicalLayout = false,
    -- The form vim.lsp.buf.format writes: 'auto' (each file's own), 'long' (operand shapes
    -- before operand names, as XLA's parser tests) or 'short' (names only, as
    -- HloModule::ToString() and the dumps).
    format = { style = 'auto' },
  },
  -- Completion as you type. Neovim 0.11+: vim.lsp.completion for hlo buffers, asked for
  -- after the server's trigger characters (`%`, `=`, space, `(`, `,`...) when `autotrigger`;
  -- <C-n>/<C-p> choose, <C-y> accepts and expands the snippet (`broadcast(operand),
  -- dimensions={}`, <Tab> to the next field). Where 'completeopt' has neither `noselect`
  -- nor `noinsert`, `menuone,noselect` is added to it for the buffer (`completeopt =
  -- false`: left alone), so that typing on is never replaced by the first item.
  -- Older Neovim: 'omnifunc' is set to vim.lsp.omnifunc (<C-x><C-o>) when it is empty.
  -- `completion = false`: neither.
  completion = { autotrigger = true, completeopt = true },
  -- Show inlay hints (the map after each fused instruction) where Neovim supports them (0.10+).
  inlay_hints = true,
  -- Show the cost code lens above each kernel (vim.lsp.codelens), refreshed on attach,
  -- BufEnter, InsertLeave and TextChanged.
  codelens = true,
  -- Files whose presence marks the project root.
  root_markers = { '.git', 'Cargo.toml' },
  -- Register tree-sitter-hlo for highlighting when its parser is on the runtimepath.
  treesitter = true,
  -- :HloGraph: hops around the instruction, where the SVG and DOT are written (nil: a
  -- `hlo-lsp` folder in stdpath('cache')), and the viewer: nil finds xdg-open (or open on
  -- macOS), false writes only, a list is a command the SVG's path is appended to.
  graph = { radius = 2, dir = nil, viewer = nil },
  -- Extra fields merged into the LSP client configuration (on_attach, capabilities, ...).
  lsp = {},
}

M.config = nil
M.client_id = nil -- only used on Neovim < 0.10

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

local function notify(msg, level)
  vim.schedule(function()
    vim.notify('hlo-lsp: ' .. msg, level or vim.log.levels.WARN)
  end)
end
M.notify = notify

--- The command that starts the server, or nil with the list of places tried.
function M.resolve_cmd(cfg)
  if cfg.cmd then
    return cfg.cmd
  end
  local tried = {}
  local candidates = {}
  if vim.g.hlo_lsp_path and vim.g.hlo_lsp_path ~= '' then
    table.insert(candidates, vim.fn.expand(vim.g.hlo_lsp_path))
  end
  table.insert(candidates, 'hlo-lsp')
  for _, c in ipairs(candidates) do
    if vim.fn.executable(c) == 1 then
      return { c }
    end
    table.insert(tried, c)
  end
  return nil, tried
end

local function root_dir(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(markers, { path = start, upward = true })[1]
    if found then
      return vim.fn.fnamemodify(found, ':h')
    end
  end
  return start
end

--- Asks the servers of `bufnr` for its code lenses (resolved and drawn by vim.lsp.codelens).
function M.refresh_codelens(bufnr)
  if not (vim.lsp.codelens and vim.api.nvim_buf_is_loaded(bufnr)) then
    return
  end
  if has('0.10') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  else
    -- 0.7-0.9: refresh() takes no arguments and works on the current buffer.
    vim.api.nvim_buf_call(bufnr, function()
      vim.lsp.codelens.refresh()
    end)
  end
end

local function setup_codelens(bufnr)
  local group = vim.api.nvim_create_augroup('hlo_codelens_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'TextChanged' }, {
    group = group,
    buffer = bufnr,
    callback = function(args)
      M.refresh_codelens(args.buf)
    end,
  })
  M.refresh_codelens(bufnr)
end

--- 'completeopt' for `bufnr` when the popup opens by itself: the user's, plus
--- `menuone,noselect` when it would select (and so insert) the first item while typing.
local function completeopt_for_typing(bufnr)
  -- A global-local option: the buffer's own value, '' when it has none.
  local ok, current = pcall(vim.api.nvim_get_option_value, 'completeopt', { buf = bufnr })
  if not ok then
    return
  end
  if current == '' then
    current = vim.go.completeopt
  end
  local values = vim.split(current, ',', { plain = true })
  if vim.tbl_contains(values, 'noselect') or vim.tbl_contains(values, 'noinsert') then
    return
  end
  if not vim.tbl_contains(values, 'menuone') then
    table.insert(values, 'menuone')
  end
  table.insert(values, 'noselect')
  -- Global-local since 0.11: this buffer only.
  pcall(vim.api.nvim_set_option_value, 'completeopt', table.concat(values, ','), { buf = bufnr })
end

--- Completion in `bufnr`: vim.lsp.completion (0.11+), else vim.lsp.omnifunc as 'omnifunc'.
function M.setup_completion(client, bufnr)
  local opts = M.config.completion
  if not opts or not client.server_capabilities.completionProvider then
    return
  end
  opts = type(opts) == 'table' and opts or {}
  if has('0.11') and vim.lsp.completion and vim.lsp.completion.enable then
    local autotrigger = opts.autotrigger ~= false
    vim.lsp.completion.enable(true, client.id, bufnr, { autotrigger = autotrigger })
    if autotrigger and opts.completeopt ~= false then
      completeopt_for_typing(bufnr)
    end
  elseif vim.bo[bufnr].omnifunc == '' then
    vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  end
end

local function on_attach(client, bufnr)
  local cfg = M.config
  M.setup_completion(client, bufnr)
  if cfg.inlay_hints and vim.lsp.inlay_hint and client.server_capabilities.inlayHintProvider then
    -- 0.10+ signature: enable(enable, filter)
    pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr })
  end
  if cfg.codelens and client.server_capabilities.codeLensProvider then
    setup_codelens(bufnr)
  end
  if cfg.lsp.on_attach then
    cfg.lsp.on_attach(client, bufnr)
  end
end

--- The server asks for the lenses again when answers that came later are ready (the
--- memory peak once the whole module is estimated, a pass history once built): redraw
--- those of every buffer of that client (Neovim before 0.10 has no handler for it).
local function on_codelens_refresh(_, _, ctx)
  for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(ctx.client_id)) do
    M.refresh_codelens(bufnr)
  end
  return vim.NIL
end

--- The LSP client configuration shared by every API version.
function M.client_config(cfg, cmd)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.codeLens = { refreshSupport = true }
  return vim.tbl_extend('force', {
    name = 'hlo_lsp',
    cmd = cmd,
    -- The server also reads MLIR (affine maps, linalg ops, transform tiling).
    filetypes = { 'hlo', 'mlir' },
    init_options = cfg.settings,
    settings = cfg.settings,
    capabilities = capabilities,
    handlers = { ['workspace/codeLens/refresh'] = on_codelens_refresh },
  }, cfg.lsp, { on_attach = on_attach })
end

local function setup_treesitter()
  if not (vim.treesitter and vim.treesitter.language) then
    return
  end
  -- The parser is found as parser/hlo.so on the runtimepath (scripts/build-parser.sh puts it
  -- there); queries as queries/hlo/*.scm. `register` is only needed where the filetype and
  -- the language name could differ (0.9+); here both are `hlo`.
  if vim.treesitter.language.register then
    pcall(vim.treesitter.language.register, 'hlo', 'hlo')
  end
  if #vim.api.nvim_get_runtime_file('parser/hlo.so', false) == 0 then
    return
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = vim.api.nvim_create_augroup('hlo_treesitter', { clear = true }),
    pattern = 'hlo',
    callback = function(args)
      if vim.treesitter.start then
        pcall(vim.treesitter.start, args.buf, 'hlo')
      else
        -- 0.7/0.8: start the highlighter by hand.
        pcall(function()
          local parser = vim.treesitter.get_parser(args.buf, 'hlo')
          vim.treesitter.highlighter.new(parser)
        end)
      end
    end,
  })
end

--- Attaches hlo-lsp to `bufnr` on Neovim < 0.11 (0.11+ uses vim.lsp.enable instead).
function M.attach(bufnr)
  local cfg = M.config
  local cmd, tried = M.resolve_cmd(cfg)
  if not cmd then
    notify(
      'server not found (tried: '
        .. table.concat(tried, ', ')
        .. '). Build it with `cargo build --release` and set vim.g.hlo_lsp_path or put hlo-lsp on PATH.'
    )
    return
  end
  local conf = M.client_config(cfg, cmd)
  conf.root_dir = root_dir(bufnr, cfg.root_markers)
  if vim.lsp.start then
    vim.lsp.start(conf, { bufnr = bufnr })
    return
  end
  -- Neovim 0.7-0.9: one client for the session, attached to each hlo buffer.
  if not (M.client_id and vim.lsp.get_client_by_id(M.client_id)) then
    M.client_id = vim.lsp.start_client(conf)
  end
  if M.client_id then
    vim.lsp.buf_attach_client(bufnr, M.client_id)
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local cfg = M.config
  vim.api.nvim_create_user_command('HloKernels', function(cmd)
    M.kernels({ limit = tonumber(cmd.args) })
  end, { nargs = '?', desc = 'hlo-lsp: the kernels of this buffer, costliest first, in the quickfix list' })
  vim.api.nvim_create_user_command('HloGraph', function(cmd)
    M.graph({ radius = tonumber(cmd.args) })
  end, { nargs = '?', desc = 'hlo-lsp: the dataflow graph at the cursor as SVG (and DOT), opened in a viewer' })
  vim.api.nvim_create_user_command('HloHottest', function(cmd)
    M.hottest({ limit = tonumber(cmd.args) })
  end, { nargs = '?', desc = 'hlo-lsp: the instructions of this buffer by measured time (XProf profile), in the quickfix list' })
  vim.api.nvim_create_user_command('HloLoadProfile', function(cmd)
    M.load_profile({ path = cmd.args })
  end, {
    nargs = 1,
    complete = 'file',
    desc = 'hlo-lsp: show an XProf profile (logdir, run folder, .xplane.pb, .trace.json.gz) beside the dumps it measured',
  })
  require('hlo.history').setup()
  if cfg.treesitter then
    setup_treesitter()
  end

  if has('0.11') and vim.lsp.config and vim.lsp.enable then
    local cmd, tried = M.resolve_cmd(cfg)
    if not cmd then
      notify('server not found (tried: ' .. table.concat(tried, ', ') .. ')')
      return
    end
    local conf = M.client_config(cfg, cmd)
    conf.name = nil
    conf.root_markers = cfg.root_markers
    vim.lsp.config('hlo_lsp', conf)
    vim.lsp.enable('hlo_lsp')
    return
  end

  local group = vim.api.nvim_create_augroup('hlo_lsp', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = { 'hlo', 'mlir' },
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers already open when setup() runs late (e.g. lazy loading).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local filetype = vim.bo[buf].filetype
    if vim.api.nvim_buf_is_loaded(buf) and (filetype == 'hlo' or filetype == 'mlir') then
      M.attach(buf)
    end
  end
end

--- The running hlo-lsp clients, with this Neovim's API (get_active_clients is deprecated in 0.10+).
local function running_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = 'hlo_lsp' })
  end
  local clients = {}
  for _, client in ipairs(vim.lsp.get_active_clients()) do
    if client.name == 'hlo_lsp' then
      table.insert(clients, client)
    end
  end
  return clients
end

--- The buffer `opts.bufnr` names (0 or nil: the current one).
local function buffer_of(opts)
  local bufnr = opts.bufnr or 0
  return bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
end

--- The hlo-lsp client attached to `bufnr`, or nil (and a message saying so).
local function attached_client(bufnr)
  for _, c in ipairs(running_clients()) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      return c
    end
  end
  notify('no hlo-lsp server attached to this buffer')
  return nil
end

--- An asynchronous request with this Neovim's API (methods take self since 0.11).
local function send(client, method, params, handler, bufnr)
  if has('0.11') then
    client:request(method, params, handler, bufnr)
  else
    client.request(method, params, handler, bufnr)
  end
end
M.attached_client = attached_client
M.request = send

--- An estimated time as the code lenses print it: ns below a microsecond, then µs, ms, s.
function M.format_time(us)
  if type(us) ~= 'number' or us ~= us then
    return '? µs'
  elseif us < 1 then
    return ('%.2f ns'):format(us * 1000)
  elseif us < 1000 then
    return ('%.2f µs'):format(us)
  elseif us < 1e6 then
    return ('%.2f ms'):format(us / 1000)
  end
  return ('%.2f s'):format(us / 1e6)
end

--- Quickfix items for an `hlo-lsp/kernels` result, in its order (costliest first): the
--- position of each kernel's name, text `time  name (kind)  summary`.
function M.kernel_items(result, bufnr, offset_encoding)
  local uri = vim.uri_from_bufnr(bufnr)
  local items = {}
  for _, k in ipairs((result or {}).kernels or {}) do
    -- One location at a time: locations_to_items sorts, the ranking must stay.
    local item = vim.lsp.util.locations_to_items({ { uri = uri, range = k.range } }, offset_encoding or 'utf-16')[1]
    table.insert(items, {
      bufnr = bufnr,
      lnum = item and item.lnum or k.range.start.line + 1,
      col = item and item.col or k.range.start.character + 1,
      text = ('%s  %s (%s)  %s'):format(M.format_time(k.exec_time_us), k.name, k.kind, k.summary or ''),
    })
  end
  return items
end

--- `:HloKernels`: the kernels of the current buffer, costliest first (`hlo-lsp/kernels`), in
--- the quickfix list, which opens. opts: bufnr, limit, open (default true), on_done(items).
function M.kernels(opts)
  opts = opts or {}
  local bufnr = buffer_of(opts)
  local client = attached_client(bufnr)
  if not client then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, limit = opts.limit }
  local function handler(err, result)
    if err then
      notify('hlo-lsp/kernels failed: ' .. (err.message or vim.inspect(err)))
      return
    end
    local items = M.kernel_items(result, bufnr, client.offset_encoding)
    local title = ('hlo-lsp kernels, costliest first (%s)'):format(result and result.device or '?')
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if #items == 0 then
      notify('no kernels to rank in this buffer (a CPU dump is ranked only when coalescing.device names a GPU)', vim.log.levels.INFO)
    elseif opts.open ~= false then
      vim.cmd('copen')
    end
    if opts.on_done then
      opts.on_done(items)
    end
  end
  send(client, 'hlo-lsp/kernels', params, handler, bufnr)
end

--- A measured time as the server writes it: `402 ns`, `2.38 µs`, `29.30 ms`.
function M.format_measured(us)
  if type(us) ~= 'number' or us ~= us then
    return '? µs'
  elseif us < 0.01 then
    return ('%.2f ns'):format(us * 1000)
  elseif us < 1 then
    return ('%.0f ns'):format(us * 1000)
  elseif us < 1000 then
    return ('%.2f µs'):format(us)
  elseif us < 1e6 then
    return ('%.2f ms'):format(us / 1000)
  end
  return ('%.2f s'):format(us / 1e6)
end

--- A share of the step as the server writes it: `12%`, `7.7%`, `<0.1%`.
function M.format_percent(p)
  if p >= 10 then
    return ('%.0f%%'):format(p)
  elseif p >= 0.1 then
    return ('%.1f%%'):format(p)
  end
  return p > 0 and '<0.1%' or '0%'
end

--- Quickfix items for an `hlo-lsp/hottest` result, in its order (the most measured time
--- first, every module's): text `time  share  name (computation)`, then `×N` when it ran
--- more than once an execution and `est. T` where the GPU cost model applies.
function M.hottest_items(result, bufnr, offset_encoding)
  local uri = vim.uri_from_bufnr(bufnr)
  local items = {}
  for _, m in ipairs((result or {}).modules or {}) do
    for _, i in ipairs(m.instructions or {}) do
      local item = vim.lsp.util.locations_to_items({ { uri = uri, range = i.range } }, offset_encoding or 'utf-16')[1]
      local text = ('%s  %s  %s (%s)'):format(M.format_measured(i.measured_us), M.format_percent(i.percent), i.name, i.computation)
      if math.abs(i.count - 1) > 1e-9 then
        text = text .. ('  ×%s'):format(i.count == math.floor(i.count) and ('%d'):format(i.count) or ('%.2f'):format(i.count))
      end
      if type(i.estimate_us) == 'number' then
        text = text .. '  est. ' .. M.format_time(i.estimate_us)
      end
      table.insert(items, {
        bufnr = bufnr,
        lnum = item and item.lnum or i.range.start.line + 1,
        col = item and item.col or i.range.start.character + 1,
        text = text,
      })
    end
  end
  return items
end

--- `:HloHottest`: the instructions of the current buffer ranked by the time the XProf
--- profile beside the dump measured (`hlo-lsp/hottest`), in the quickfix list, which opens.
--- opts: bufnr, limit, open (default true), on_done(items, result).
function M.hottest(opts)
  opts = opts or {}
  local bufnr = buffer_of(opts)
  local client = attached_client(bufnr)
  if not client then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, limit = opts.limit }
  send(client, 'hlo-lsp/hottest', params, function(err, result)
    if err then
      notify('hlo-lsp/hottest failed: ' .. (err.message or vim.inspect(err)))
      return
    end
    local items = M.hottest_items(result, bufnr, client.offset_encoding)
    local module = result and result.modules and result.modules[1]
    local title = module
        and ('hlo-lsp: %s by measured time, step %s over %d executions'):format(
          module.module,
          M.format_measured(module.step_us),
          module.executions
        )
      or 'hlo-lsp: no measured time'
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if #items == 0 then
      local why = result and result.message ~= vim.NIL and result.message or 'no profile'
      notify('no measured time for this buffer (' .. tostring(why) .. '); :HloLoadProfile {path} reads one', vim.log.levels.INFO)
    elseif opts.open ~= false then
      vim.cmd('copen')
    end
    if opts.on_done then
      opts.on_done(items, result)
    end
  end, bufnr)
end

--- `:HloLoadProfile {path}`: the server reads an XProf profile the server did not find by
--- itself (a logdir, a run folder, a `.xplane.pb` or `.trace.json.gz`) and shows it beside
--- the open dumps it measured (`hlo-lsp.loadProfile`); says what it measured, or why not.
--- opts: path, bufnr, on_done(err, result).
function M.load_profile(opts)
  opts = opts or {}
  local bufnr = buffer_of(opts)
  local client = attached_client(bufnr)
  if not client then
    return
  end
  local path = vim.fn.fnamemodify(vim.fn.expand(opts.path or ''), ':p')
  -- The buffer's document: the server answers its reason when the profile did not measure it.
  local params = { command = 'hlo-lsp.loadProfile', arguments = { { path = path, uri = vim.uri_from_bufnr(bufnr) } } }
  send(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      notify('profile not loaded: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      local parts = {}
      for _, d in ipairs(result.documents or {}) do
        for _, m in ipairs(d.modules or {}) do
          table.insert(parts, ('%d instructions of %s, step %s'):format(m.instructions, m.module, M.format_measured(m.step_us)))
        end
      end
      -- The server asks for the lenses again (workspace/codeLens/refresh).
      notify(('%s measured %s'):format(vim.fn.fnamemodify(result.file, ':t'), table.concat(parts, '; ')), vim.log.levels.INFO)
    end
    if opts.on_done then
      opts.on_done(err, result)
    end
  end, bufnr)
end

--- A file name from an instruction's name: `fusion.3` stays, `/` and the like become `_`.
function M.file_stem(name)
  return (tostring(name or 'graph'):gsub('[^%w%._-]', '_'))
end

--- The viewer command for `path` with this configuration, or nil when there is none.
function M.viewer_cmd(viewer, path)
  if viewer == false then
    return nil
  end
  if type(viewer) == 'table' then
    local cmd = vim.deepcopy(viewer)
    table.insert(cmd, path)
    return cmd
  end
  for _, v in ipairs({ 'xdg-open', 'open' }) do
    if vim.fn.executable(v) == 1 then
      return { v, path }
    end
  end
  return nil
end

--- Writes `text` to `path`; false and the reason on failure.
local function write_file(path, text)
  local ok, err = pcall(vim.fn.writefile, vim.split(text, '\n', { plain = true }), path, 'b')
  return ok and err == 0, err
end

--- The SVG and DOT of an `hlo-lsp/graph` answer written into `dir` as
--- `<focus name>.svg` and `.dot` (the focus, else the first node, names them); their paths.
function M.write_graph(result, dir)
  vim.fn.mkdir(dir, 'p')
  local name
  for _, node in ipairs(result.nodes or {}) do
    if node.id == result.focus or (not result.focus and not name) then
      name = node.name
    end
  end
  local stem = dir .. '/' .. M.file_stem(name)
  local svg, dot = stem .. '.svg', stem .. '.dot'
  assert(write_file(svg, result.svg or ''), 'could not write ' .. svg)
  assert(write_file(dot, result.dot or ''), 'could not write ' .. dot)
  return svg, dot
end

--- `:HloGraph [radius]`: the dataflow around the instruction under the cursor (`hlo-lsp/graph`
--- with format `svg`: the server lays it out, unsaved edits included) written as SVG and DOT,
--- then opened with the viewer, else the paths are said. opts: bufnr, radius, dir, viewer,
--- on_done(svg_path, dot_path, result).
function M.graph(opts)
  opts = opts or {}
  local cfg = vim.tbl_extend('force', M.config.graph or {}, opts)
  local bufnr = buffer_of(opts)
  local client = attached_client(bufnr)
  if not client then
    return
  end
  local win = vim.fn.bufwinid(bufnr)
  -- The cursor of the buffer's window, in the server's position encoding.
  local params = vim.lsp.util.make_position_params(win ~= -1 and win or 0, client.offset_encoding)
  params.radius = cfg.radius
  params.format = 'svg'
  send(client, 'hlo-lsp/graph', params, function(err, result)
    if err then
      notify('hlo-lsp/graph failed: ' .. (err.message or vim.inspect(err)))
      return
    end
    if not result or result == vim.NIL then
      notify('no graph here: the cursor is in no HLO computation', vim.log.levels.INFO)
      return
    end
    local dir = cfg.dir or (vim.fn.stdpath('cache') .. '/hlo-lsp')
    local ok, svg, dot = pcall(M.write_graph, result, dir)
    if not ok then
      notify(tostring(svg), vim.log.levels.ERROR)
      return
    end
    local viewer = M.viewer_cmd(cfg.viewer, svg)
    if viewer and vim.fn.jobstart(viewer, { detach = true }) > 0 then
      notify('graph opened: ' .. svg .. ' (DOT: ' .. dot .. ')', vim.log.levels.INFO)
    else
      notify('graph written: ' .. svg .. ' (DOT: ' .. dot .. '); no viewer to open it', vim.log.levels.INFO)
    end
    if opts.on_done then
      opts.on_done(svg, dot, result)
    end
  end, bufnr)
end

--- Merges `settings` into the configuration and sends them to running servers
--- (workspace/didChangeConfiguration); servers started later get them too.
function M.update_settings(settings)
  M.config.settings = vim.tbl_deep_extend('force', M.config.settings, settings)
  local merged = M.config.settings
  if has('0.11') and vim.lsp.config then
    -- Clients started from now on (new roots, :lsp restart) read vim.lsp.config.
    vim.lsp.config('hlo_lsp', { settings = merged, init_options = merged })
  end
  local params = { settings = merged }
  for _, client in ipairs(running_clients()) do
    -- 0.11+ answers workspace/configuration from client.settings; older ones from config.
    client.settings = merged
    client.config.settings = merged
    if has('0.11') then
      client:notify('workspace/didChangeConfiguration', params) -- methods take self since 0.11
    else
      client.notify('workspace/didChangeConfiguration', params)
    end
  end
end

return M
