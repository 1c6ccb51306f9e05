#!/usr/bin/env bash
# Checks the Helix integration without Helix: warns when the generated queries are stale
# (a grammar helper's query change must not turn the whole suite red), every
# query file compiles against tree-sitter-hlo and captures something in a sample (tree-sitter
# CLI, skipped when absent), and languages.toml parses (Python 3.11+ tomllib, skipped when absent).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
grammar="$(cd "$here/../../tree-sitter-hlo" && pwd)"
sample="$here/../neovim/test/fixtures/transpose_fusion.hlo"
"$here/update-queries.sh" --check || echo "editors/helix: WARNING: stale queries (see above); the committed ones are still checked below"
if command -v tree-sitter >/dev/null 2>&1; then
  for q in "$here"/queries/hlo/*.scm; do
    if ! out="$(cd "$grammar" && timeout 120 tree-sitter query "$q" "$sample" 2>&1)"; then
      echo "editors/helix: $(basename "$q") does not compile against tree-sitter-hlo:"; echo "$out"; exit 1
    fi
    # injections only match backend_config, which the sample lacks.
    if [ "$(basename "$q")" != injections.scm ] && ! grep -q 'capture:' <<<"$out"; then
      echo "editors/helix: $(basename "$q") captures nothing in $sample"; exit 1
    fi
  done
  echo "editors/helix: $(ls "$here"/queries/hlo/*.scm | wc -l) query files compile and capture"
else
  echo "editors/helix: SKIP: tree-sitter CLI not found, queries not compiled"
fi
if python3 -c 'import tomllib' 2>/dev/null; then
  python3 - "$here/languages.toml" <<'PY'
import sys, tomllib
cfg = tomllib.load(open(sys.argv[1], 'rb'))
lang = cfg['language'][0]
assert lang['name'] == 'hlo' and lang['language-servers'] == ['hlo-lsp'], lang
assert cfg['language-server']['hlo-lsp']['config']['inlayHints'] == {'mode': 'short'}
assert cfg['grammar'][0]['name'] == 'hlo'
print('editors/helix: languages.toml parses')
PY
else
  echo "editors/helix: SKIP: python3 tomllib not available, languages.toml not parsed"
fi
