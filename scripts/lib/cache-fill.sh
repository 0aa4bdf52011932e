#!/usr/bin/env bash
# One way to fill a cache directory that several runs may want at the same moment (two test
# suites starting scripts/release.sh together, two clusters building the same tool).
#
#   cache_fill <dir> <command...>     (sourced), or
#   scripts/lib/cache-fill.sh <dir> <command...>
#
# Runs `<command...> <dir>` at most once per cache: it holds an exclusive flock on <dir>.lock
# while it checks <dir>/.complete, clears a partial <dir> a killed run left, fills and marks it.
# A second run waits on the lock and then reuses the result; nobody deletes a finished or
# in-progress fill. The fill happens in place (not in a temporary directory renamed at the end)
# because Python venvs record their absolute path; the marker is what makes it complete. flock
# is released when its holder dies, so a killed fill blocks nobody.
# The fill command must report its own failure by status: `set -e` does not reach a function
# that runs as the condition of `||` (bash ignores -e there), so each step checks itself.
cache_fill() {
  local dir=$1
  shift
  [[ -f $dir/.complete ]] && return 0
  mkdir -p "$(dirname "$dir")" || return 1
  (
    flock 9 || exit 1
    [[ -f $dir/.complete ]] && exit 0
    rm -rf "$dir" || exit 1
    if ! "$@" "$dir"; then
      rm -rf "$dir"
      exit 1
    fi
    touch "$dir/.complete"
  ) 9>"$dir.lock" || { echo "cache fill of $dir failed: $*" >&2; return 1; }
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  (($# >= 2)) || { echo "usage: $0 <dir> <command...>  (runs <command...> <dir> once)" >&2; exit 2; }
  cache_fill "$@"
fi
