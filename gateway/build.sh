#!/usr/bin/env bash
# Builds the gateway as one self-contained binary into dist/gateway (git-ignored), the same way
# images/gateway/Dockerfile does. Usage: bash gateway/build.sh [outfile] [bun build flags]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="dist/gateway"
if [[ $# -gt 0 && $1 != --* ]]; then
  out="$1"
  shift
fi
mkdir -p "$(dirname "$out")"
bun build --compile --bytecode --format=esm --minify "$@" --outfile "$out" gateway/main.ts >/dev/null
echo "built $out ($(du -h "$out" | cut -f1))"
