#!/usr/bin/env bash
# Builds the tree-sitter-hlo parser for Neovim and installs its queries where Neovim looks:
#   parser/hlo.so       (found on the runtimepath as parser/hlo.so)
#   queries/hlo/*.scm   (copied from tree-sitter-hlo/queries)
# The committed src/parser.c is generated at ABI 14, which Neovim 0.7 (tree-sitter 0.20.7)
# through 0.11 all load. To regenerate it at that ABI:
#   cd tree-sitter-hlo && tree-sitter generate --abi 14
# Usage: scripts/build-parser.sh [CC]   (default: cc; set CFLAGS to override -O2)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
grammar="$(cd "$here/../../tree-sitter-hlo" && pwd)"
cc="${1:-${CC:-cc}}"
src=("$grammar/src/parser.c")
[ -f "$grammar/src/scanner.c" ] && src+=("$grammar/src/scanner.c")
mkdir -p "$here/parser"
ext=so # Neovim looks for parser/<lang>.so on every platform
# shellcheck disable=SC2086
"$cc" ${CFLAGS:--O2} -shared -fPIC -std=c11 -I "$grammar/src" "${src[@]}" -o "$here/parser/hlo.$ext"
mkdir -p "$here/queries/hlo"
for q in "$grammar"/queries/*.scm; do
  [ -e "$q" ] || continue
  [ "$(basename "$q")" = tags.scm ] && continue # Neovim has no use for tags
  cp "$q" "$here/queries/hlo/"
done
echo "built $here/parser/hlo.$ext; queries in $here/queries/hlo: $(cd "$here/queries/hlo" && ls | tr '\n' ' ')"
