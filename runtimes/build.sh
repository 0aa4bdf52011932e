#!/usr/bin/env bash
# Builds the Runtime Server as one self-contained binary (bash and python adapters included) into
# dist/runtime-server (git-ignored). Inject it into any image that has bash or python3 and run
# `runtime-server --runtime bash|python` (docs/runtime-server.md).
# Usage: bash runtimes/build.sh [outfile] [bun build flags, e.g. --target=bun-linux-arm64]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="dist/runtime-server"
if [[ $# -gt 0 && $1 != --* ]]; then
  out="$1"
  shift
fi
mkdir -p "$(dirname "$out")"
bun build --compile --bytecode --minify "$@" --outfile "$out" runtimes/server/main.ts >/dev/null
echo "built $out ($(du -h "$out" | cut -f1))"
