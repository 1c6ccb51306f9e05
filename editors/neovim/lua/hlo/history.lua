-- Which pass made an instruction, and what each pass did to it, in a snapshot of a
-- pass-by-pass dump directory (--xla_dump_hlo_pass_re=.*):
--   :HloHistory          the passes of the instruction under the cursor (the server's
--                        `hlo-lsp.history`) in the quickfix list, each entry at the
--                        instruction's line in the snapshot just after that pass;
--   :HloHistory diff N   pass N of that list: the snapshots just before and after it in
--                        a new tab, side by side in diff mode, at the instruction's lines;
--   :HloHistory changes N  what pass N did to the instruction's computation
--                        (`hlo-lsp.diff` with the computation) in a scratch split.
-- Running the history code lens (vim.lsp.codelens.run()) does what :HloHistory does for
-- the lens's instruction: the lens's command `hlo.showHistory` is handled here.
local M = {}

--- The last answer of `hlo-lsp.history`, for `:HloHistory diff N`.
M.last = nil

local function hlo()
  return require('hlo')
end

--- Quickfix items for an `hlo-lsp.history` answer: one per pass, at the instruction's
--- line (or what took its place) in the snapshot after it, text `N. label`.
function M.items(result)
  local items = {}
  for n, pass in ipairs((result or {}).passes or {}) do
    local at = pass.after
    -- The columns are bytes and UTF-16 alike: what precedes the name on its line is ASCII.
    table.insert(items, {
      filename = at.file,
      lnum = at.range.start.line + 1,
      col = at.range.start.character + 1,
      text = ('%d. %s'):format(n, pass.label),
    })
  end
  return items
end

local function execute(bufnr, command, argument, on_result)
  local client = hlo().attached_client(bufnr)
  if not client then
    return
  end
  local params = { command = command, arguments = { argument } }
  hlo().request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      hlo().notify(command .. ': ' .. (err.message or vim.inspect(err)))
      return
    end
    on_result(result)
  end, bufnr)
end

--- The history of `argument` ({ uri, computation, instruction } or { uri, position })
--- in the quickfix list, which opens unless opts.open == false; opts.on_done(items).
function M.show(bufnr, argument, opts)
  opts = opts or {}
  execute(bufnr, 'hlo-lsp.history', argument, function(result)
    M.last = result
    local items = M.items(result)
    local title = ('hlo-lsp history of %%%s: %s'):format(result.instruction or '?', result.summary or '')
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if opts.open ~= false then
      vim.cmd('copen')
    end
    if opts.on_done then
      opts.on_done(items)
    end
  end)
end

--- The instruction under the cursor of the current window.
function M.at_cursor(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  -- The server counts UTF-16 columns; the instruction's line is ASCII up to its metadata.
  local character = vim.str_utfindex and select(2, pcall(vim.str_utfindex, line, col)) or col
  if type(character) ~= 'number' then
    character = col
  end
  return { uri = vim.uri_from_bufnr(bufnr), position = { line = row - 1, character = character } }
end

local function open_at(place)
  vim.cmd('edit ' .. vim.fn.fnameescape(place.file))
  vim.api.nvim_win_set_cursor(0, { place.range.start.line + 1, place.range.start.character })
  vim.cmd('normal! zz')
end

--- Pass `n` of the last history: its two snapshots side by side in diff mode, in a new
--- tab (only the one after when the pass made the first snapshot).
function M.diff(n)
  local pass = M.last and M.last.passes and M.last.passes[n]
  if not pass then
    hlo().notify('no pass ' .. tostring(n) .. ': run :HloHistory on an instruction first')
    return
  end
  vim.cmd('tabnew')
  if pass.before ~= vim.NIL and pass.before then
    open_at(pass.before)
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit') -- before on the left, after on the right
  end
  open_at(pass.after)
  if pass.before ~= vim.NIL and pass.before then
    vim.cmd('diffthis')
  end
end

--- Pass `n` of the last history: what it did to the instruction's computation, in a
--- scratch split (opts.on_done(lines)).
function M.changes(bufnr, n, opts)
  local pass = M.last and M.last.passes and M.last.passes[n]
  if not pass or pass.before == vim.NIL or not pass.before then
    hlo().notify('no pass ' .. tostring(n) .. ' with a snapshot before it: run :HloHistory first')
    return
  end
  local argument = { before = pass.before.uri, after = pass.after.uri, computation = M.last.computation }
  execute(bufnr, 'hlo-lsp.diff', argument, function(result)
    local lines = vim.split(pass.label .. '\n' .. (result.text or ''), '\n', { plain = true })
    vim.cmd('new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    if opts and opts.on_done then
      opts.on_done(lines)
    end
  end)
end

--- `:HloHistory [diff N | changes N]`.
function M.command(args)
  local bufnr = vim.api.nvim_get_current_buf()
  local what, n = (args or ''):match('^%s*(%a+)%s+(%d+)%s*$')
  if what == 'diff' then
    M.diff(tonumber(n))
  elseif what == 'changes' then
    M.changes(bufnr, tonumber(n))
  elseif (args or ''):match('^%s*$') then
    M.show(bufnr, M.at_cursor(bufnr))
  else
    hlo().notify('usage: :HloHistory, :HloHistory diff N, :HloHistory changes N')
  end
end

function M.setup()
  vim.api.nvim_create_user_command('HloHistory', function(cmd)
    M.command(cmd.args)
  end, {
    nargs = '*',
    desc = 'hlo-lsp: the passes of the instruction under the cursor (quickfix); diff N / changes N: pass N',
  })
  -- The history lens's command: its argument names the instruction.
  vim.lsp.commands['hlo.showHistory'] = function(command, ctx)
    local argument = (command.arguments or {})[1]
    if argument then
      M.show(ctx and ctx.bufnr or vim.api.nvim_get_current_buf(), argument)
    end
  end
end

return M
