#!/usr/bin/env bash
# Builds the single-file krt binary into dist/krt (git-ignored), embedding version, commit and
# build time with --define. Usage: bash krt/build.sh [outfile]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-dist/krt}"
version="$(bun -e 'console.log(require("./krt/package.json").version)')"
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain -- krt 2>/dev/null)" ]]; then commit="$commit-dirty"; fi
built="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
mkdir -p "$(dirname "$out")"
bun build --compile --bytecode --minify \
  --define "KRT_VERSION=\"$version\"" \
  --define "KRT_COMMIT=\"$commit\"" \
  --define "KRT_BUILD_TIME=\"$built\"" \
  --outfile "$out" krt/main.ts >/dev/null
echo "built $out (krt $version, commit $commit)"
