#!/usr/bin/env bash
# Fails when docs/cli-reference.md differs from what scripts/gen-cli-docs.ts renders from krt's commands.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bun scripts/gen-cli-docs.ts --out "$tmp" >/dev/null
if ! diff -u docs/cli-reference.md "$tmp/docs/cli-reference.md"; then
  echo "docs/cli-reference.md is stale: run 'bun scripts/gen-cli-docs.ts' and commit the result" >&2
  exit 1
fi
echo "CLI reference is up to date"
