#!/usr/bin/env bash
# Checks the protobuf contracts and the generated code:
#   1. buf lint (STANDARD, see buf.yaml);
#   2. buf breaking (FILE) against the main branch, when main already has proto/;
#   3. the generated TypeScript, Go and Python code is exactly what buf generate produces now.
#
# The breaking check reads main from the local git repository (.git#branch=main,subdir=proto),
# so it compares the working tree with the tip of the local main branch. In a clean clone of
# main the two are equal and the check passes trivially; on a branch it catches changes that
# would break deployed runtimed/Runtime Server pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
buf=node_modules/.bin/buf
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== buf lint"
"$buf" lint
echo "lint ok"

echo "== buf breaking"
if [[ ! -d .git ]]; then
  echo "skipping breaking check: no .git directory here to read main from"
elif ! git rev-parse --verify --quiet "main^{commit}" >/dev/null; then
  echo "skipping breaking check: no local main branch"
elif ! git cat-file -e main:proto 2>/dev/null; then
  echo "skipping breaking check: main has no proto/"
else
  "$buf" breaking --against '.git#branch=main,subdir=proto'
  echo "no breaking changes against main ($(git rev-parse --short main))"
fi

echo "== generated code"
PATH="$(bash scripts/codegen-tools.sh):$PATH"
export PATH
# Same template, output redirected into the temporary directory (--output prefixes each out:
# directory, so api/gen lands in $tmp/gen/api/gen and so on).
"$buf" generate --output "$tmp/gen"
stale=0
for dir in api/gen sdk/go/gen sdk/python/src/kruntimes/runtime sdk/python/src/kruntimes/gateway \
  sdk/python/src/kruntimes/dataplane; do
  if ! diff -r "$tmp/gen/$dir" "$dir"; then stale=1; fi
done
if ((stale)); then
  echo "generated code is stale: run scripts/generate.sh" >&2
  exit 1
fi
echo "api/gen, sdk/go/gen and the Python SDK's generated modules are up to date"
