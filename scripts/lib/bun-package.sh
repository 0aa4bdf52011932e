#!/usr/bin/env bash
# bun-package.sh <os> <arch>: prints the directory of the @oven/bun-<os>-<arch> npm package of the
# running Bun's version (bin/bun, package.json), fetched with npm (which checks the registry's
# integrity hash) into $KRT_CACHE_DIR/bin/bun-<os>-<arch>-<version> once. `bun build --compile
# --compile-executable-path` then uses it instead of downloading. Concurrent releases share one
# fill (cache-fill.sh locks it), so neither deletes the other's download.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=cache-fill.sh
source "$here/cache-fill.sh"
(($# == 2)) || { echo "usage: $0 <os> <arch>   (e.g. linux amd64)" >&2; exit 2; }
cache="${KRT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruntimes}"
bun_version="$(bun --version)"
npm_arch=$2
[[ $npm_arch == amd64 ]] && npm_arch=x64
[[ $npm_arch == arm64 ]] && npm_arch=aarch64
name="@oven/bun-$1-$npm_arch"

fetch() {
  local dir=$1
  mkdir -p "$dir" \
    && (cd "$dir" && npm pack --silent "$name@$bun_version" >/dev/null && tar -xzf ./*.tgz --strip-components=1 && rm ./*.tgz) \
    || return 1
  [[ -x $dir/bin/bun ]] || { echo "$name@$bun_version has no bin/bun" >&2; return 1; }
}

dir="$cache/bin/bun-$1-$2-$bun_version"
cache_fill "$dir" fetch
echo "$dir"
