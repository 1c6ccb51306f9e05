#!/usr/bin/env bash
# Runs the Neovim end-to-end test (test/e2e.lua) against the real hlo-lsp binary.
# Skips with a message when nvim is not installed. HLO_LSP_BIN overrides the binary;
# by default it is built with cargo (debug profile, as `cargo test` builds it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
if ! command -v nvim >/dev/null 2>&1; then
  echo "editors/neovim: SKIP: nvim is not installed (apt-get install -y neovim), Neovim end-to-end test not run"
  exit 0
fi
if [ -z "${HLO_LSP_BIN:-}" ]; then
  (cd "$repo" && cargo build -q -p hlo-lsp --bin hlo-lsp)
  HLO_LSP_BIN="$repo/target/debug/hlo-lsp"
fi
export HLO_LSP_BIN
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
# -u NONE: no user config; the test puts the plugin on the runtimepath itself.
timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $here/e2e.lua" >"$log" 2>&1 || status=$?
cat "$log"
if [ "$status" -ne 0 ]; then
  echo "editors/neovim: Neovim end-to-end test FAILED (exit $status)"
  exit 1
fi
grep -q '^not ok' "$log" && { echo "editors/neovim: failures reported"; exit 1; }
grep -q '^ok ' "$log" || { echo "editors/neovim: no checks ran"; exit 1; }
echo "editors/neovim: end-to-end test passed"
