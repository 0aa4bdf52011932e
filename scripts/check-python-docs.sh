#!/usr/bin/env bash
# Fails when docs/sdk/python-reference.md differs from what scripts/gen-python-docs.py renders from
# the Python SDK's docstrings (sdk/python/src/kruntimes). Needs only python3 (the source is parsed, not imported).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 scripts/gen-python-docs.py --out "$tmp" >/dev/null
if ! diff -u docs/sdk/python-reference.md "$tmp/docs/sdk/python-reference.md"; then
  echo "docs/sdk/python-reference.md is stale: run 'python3 scripts/gen-python-docs.py' and commit the result" >&2
  exit 1
fi
echo "Python SDK reference is up to date"
