#!/usr/bin/env bash
# Builds the single-file krt binary into dist/krt (git-ignored), embedding version, commit and
# build time with --define. Usage: bash krt/build.sh [outfile]
# scripts/release.sh sets the optional environment: KRT_BUILD_VERSION (default: krt/package.json),
# KRT_BUILD_COMMIT (default: HEAD's, -dirty when krt/ has changes), KRT_BUILD_TIME (default: now),
# KRT_BUILD_TARGET (a bun --target such as bun-darwin-arm64), KRT_BUILD_EXECUTABLE (the Bun
# executable of that target, so nothing is downloaded) and KRT_BUILD_METAFILE (where bun writes
# the bundle's inputs, from which the SBOM is made).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-dist/krt}"
version="${KRT_BUILD_VERSION:-$(bun -e 'console.log(require("./krt/package.json").version)')}"
commit="${KRT_BUILD_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
if [[ -z ${KRT_BUILD_COMMIT:-} && -n "$(git status --porcelain -- krt 2>/dev/null)" ]]; then commit="$commit-dirty"; fi
built="${KRT_BUILD_TIME:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
extra=()
if [[ -n "${KRT_BUILD_TARGET:-}" ]]; then extra+=("--target=$KRT_BUILD_TARGET"); fi
if [[ -n "${KRT_BUILD_EXECUTABLE:-}" ]]; then extra+=("--compile-executable-path=$KRT_BUILD_EXECUTABLE"); fi
if [[ -n "${KRT_BUILD_METAFILE:-}" ]]; then extra+=("--metafile=$KRT_BUILD_METAFILE"); fi
mkdir -p "$(dirname "$out")"
bun build --compile --bytecode --minify "${extra[@]}" \
  --define "KRT_VERSION=\"$version\"" \
  --define "KRT_COMMIT=\"$commit\"" \
  --define "KRT_BUILD_TIME=\"$built\"" \
  --outfile "$out" krt/main.ts >/dev/null
echo "built $out (krt $version, commit $commit${KRT_BUILD_TARGET:+, $KRT_BUILD_TARGET})"
