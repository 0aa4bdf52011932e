#!/usr/bin/env bash
# Fails when the committed CRDs or API reference differ from what scripts/gen-crds.ts generates.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bun scripts/gen-crds.ts --out "$tmp" >/dev/null
stale=0
for file in chart/crds/*.yaml docs/api-reference.md; do
  if ! diff -u "$file" "$tmp/$file"; then stale=1; fi
done
extra="$(comm -23 <(ls chart/crds | sort) <(ls "$tmp/chart/crds" | sort))"
if [[ -n $extra ]]; then echo "chart/crds holds files the generator does not write: $extra" >&2; stale=1; fi
if ((stale)); then
  echo "CRDs or docs/api-reference.md are stale: run 'bun scripts/gen-crds.ts' and commit the result" >&2
  exit 1
fi
echo "CRDs and API reference are up to date"
