#!/usr/bin/env bash
# The extension in VS Code itself: installs code-server (host/install-code-server.sh, cached),
# packages the .vsix (npm run package), and runs host/codeServer.host.ts: code-server on
# 127.0.0.1 with the .vsix installed, driven by playwright-core in headless Chromium
# (Debian's `chromium`). Screenshots go to test-artifacts/ (gitignored).
# Skips with a message when Chromium or code-server cannot be had, unless
# HLO_EDITOR_CLIENTS_REQUIRED=1 (CI), which makes that a failure.
#   HLO_LSP_BIN     the server (default: built by scripts/server-bin)
#   HLO_CHROMIUM    the browser (default: chromium on PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ext="$(cd "$here/.." && pwd)"
repo="$(cd "$ext/../.." && pwd)"
# shellcheck source=../../cache.sh
. "$repo/editors/cache.sh"
missing() {
  if editors_required; then
    echo "editors/vscode host: FAILED: $1 (HLO_EDITOR_CLIENTS_REQUIRED=1)"
    exit 1
  fi
  echo "editors/vscode host: SKIP: $1"
  exit 0
}
start=$SECONDS
HLO_CHROMIUM="${HLO_CHROMIUM:-$(command -v chromium || true)}"
[ -n "$HLO_CHROMIUM" ] || missing "chromium not found (apt-get install -y chromium), VS Code (code-server) test not run"
HLO_CODE_SERVER_DIR="$("$here/install-code-server.sh")" || missing "could not install code-server (see above), VS Code (code-server) test not run"
installed=$((SECONDS - start))
if [ -z "${HLO_LSP_BIN:-}" ]; then
  HLO_LSP_BIN="$("$repo/scripts/server-bin")"
fi
cd "$ext"
[ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund --loglevel=error
npm run --silent package >/dev/null
npx --no-install tsc -p host
export HLO_CHROMIUM HLO_CODE_SERVER_DIR HLO_LSP_BIN HLO_VSIX="$ext/hlo-lsp.vsix"
export HLO_ARTIFACTS="${HLO_ARTIFACTS:-$ext/test-artifacts}"
rm -rf "$HLO_ARTIFACTS"
node --test --test-reporter=tap out/host/codeServer.host.js
echo "editors/vscode host: passed in $((SECONDS - start)) s (code-server install: $installed s); screenshots in $HLO_ARTIFACTS"
