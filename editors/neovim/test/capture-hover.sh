#!/usr/bin/env bash
# Captures, as text, what a user sees in Neovim when hovering an instruction inside a fused
# computation: runs nvim (with a UI; HLO_NVIM picks which, default the one on PATH) in a
# detached tmux session, waits for hlo-lsp to attach,
# puts the cursor on %neg, calls vim.lsp.buf.hover(), and prints `tmux capture-pane`.
# Usage: editors/neovim/test/capture-hover.sh [FILE] [NEEDLE]
# (HLO_LSP_BIN=/path/to/hlo-lsp to skip the cargo build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(cd "$here/.." && pwd)"
file="$(realpath "${1:-$here/fixtures/transpose_fusion.hlo}")"
needle="${2:-%neg = }"
bin="$(realpath "${HLO_LSP_BIN:-$("$here/../../../scripts/server-bin")}")"
session="hlo-capture-$$"
init="$(mktemp --suffix=.lua)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$init"' EXIT
cat >"$init" <<LUA
vim.opt.runtimepath:prepend('$plugin')
vim.g.hlo_lsp_config = { cmd = { '$bin' } }
vim.cmd('filetype on')
vim.cmd('syntax on')
vim.cmd('runtime! plugin/hlo.lua')
vim.o.number = true
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. 'F'
if vim.fn.has('nvim-0.11') == 1 then
  vim.o.winborder = 'rounded'
else
  vim.lsp.handlers['textDocument/hover'] = vim.lsp.with(vim.lsp.handlers.hover, { border = 'rounded' })
end
function _G.hlo_attached()
  return vim.tbl_count(vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = 0 }) or vim.lsp.buf_get_clients(0))
end
LUA
tmux new-session -d -s "$session" -x 110 -y 32 \
  "${HLO_NVIM:-nvim} -u NONE -i NONE -n --cmd 'luafile $init' '$file'"
# Wait for the client to attach (up to 20 s), then hover.
for _ in $(seq 1 100); do
  sleep 0.2
  tmux send-keys -t "$session" ":lua vim.g.hlo_attached = hlo_attached()" Enter
  tmux send-keys -t "$session" ":echo 'attached=' . g:hlo_attached" Enter
  if tmux capture-pane -p -t "$session" | grep -q 'attached=1'; then break; fi
done
tmux send-keys -t "$session" ":lua local p = vim.fn.searchpos('\\\\V$needle'); vim.api.nvim_win_set_cursor(0, {p[1], p[2]})" Enter
tmux send-keys -t "$session" ":echo ''" Enter
tmux send-keys -t "$session" ":lua vim.lsp.buf.hover()" Enter
sleep 4
tmux capture-pane -p -t "$session"
