#!/usr/bin/env bash
# Checks the protobuf contracts and the generated code:
#   1. buf lint (STANDARD);
#   2. buf breaking (FILE) against the base branch, when the base has contracts to compare with;
#   3. the code in api/gen/ is what buf generate produces now.
#
# The base is $BUF_BREAKING_AGAINST when set (any git ref), else origin/main, else main. Its
# proto/ tree is exported with `git archive` into a temporary directory, so this works in a
# working tree with uncommitted changes, in a clean (even shallow) clone, and on main itself,
# where it compares the tree with its own last commit.
set -euo pipefail
cd "$(dirname "$0")/.."
buf=node_modules/.bin/buf
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== buf lint"
"$buf" lint

echo "== buf breaking"
base="${BUF_BREAKING_AGAINST:-}"
if [[ -z "$base" ]]; then
  for candidate in origin/main main; do
    if git rev-parse --verify --quiet "$candidate^{commit}" >/dev/null; then
      base="$candidate"
      break
    fi
  done
fi
if [[ -z "$base" ]]; then
  echo "skip: no base ref (origin/main or main) to compare with"
elif ! git ls-tree -r --name-only "$base" -- proto | grep -q '\.proto$'; then
  echo "skip: $base has no .proto files under proto/ yet, nothing can break"
else
  mkdir -p "$tmp/base"
  git archive "$base" proto | tar -x -C "$tmp/base"
  # The breaking rules are the current ones; the base only provides the old contracts.
  cp buf.yaml "$tmp/base/buf.yaml"
  "$buf" breaking --against "$tmp/base"
  echo "no breaking changes against $base ($(git rev-parse --short "$base"))"
fi

echo "== generated code"
"$buf" generate --output "$tmp/gen"
if ! diff -ru "$tmp/gen/api/gen" api/gen; then
  echo "api/gen is stale: run scripts/generate.sh and commit the result" >&2
  exit 1
fi
echo "api/gen is up to date"
