#!/usr/bin/env bash
# Makes buf generate's local plugins available offline and prints the directories to put in
# front of PATH (colon-separated):
#   - Go:     protoc-gen-go + protoc-gen-connect-go, built from the Go module proxy at the
#             versions in test/localcluster/build/versions.env (cached by version);
#   - Python: a venv keyed by scripts/codegen-requirements.txt with protoc-gen-connect-python
#             and grpcio-tools, plus a `protoc` wrapper around grpc_tools.protoc, since buf runs
#             protoc's builtin python/pyi generators through a protoc binary on PATH.
# TypeScript's protoc-gen-es comes from node_modules (buf.gen.yaml names it by path).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../test/localcluster/build/versions.env
source "$root/test/localcluster/build/versions.env"
# shellcheck source=lib/cache-fill.sh
source "$root/scripts/lib/cache-fill.sh"
cache="${KRT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruntimes}"

bash "$root/test/localcluster/build/build-binaries.sh" codegen >&2
gobin="$cache/bin/codegen-$PROTOC_GEN_GO_VERSION-connect-$CONNECT_GO_VERSION"

req="$root/scripts/codegen-requirements.txt"
venv="$cache/venv/codegen-$(sha256sum "$req" | cut -c1-12)"
# make_venv <venv>: run by cache_fill under its lock, so concurrent generators share one venv.
make_venv() {
  echo "[codegen] creating $1 from scripts/codegen-requirements.txt" >&2
  python3 -m venv "$1" \
    && "$1/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2 \
    && printf '#!/bin/sh\nexec "%s/bin/python" -m grpc_tools.protoc "$@"\n' "$1" >"$1/bin/protoc" \
    && chmod +x "$1/bin/protoc"
}
cache_fill "$venv" make_venv
echo "$gobin:$venv/bin"
