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
cache="${KRT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruntimes}"

bash "$root/test/localcluster/build/build-binaries.sh" codegen >&2
gobin="$cache/bin/codegen-$PROTOC_GEN_GO_VERSION-connect-$CONNECT_GO_VERSION"

req="$root/scripts/codegen-requirements.txt"
venv="$cache/venv/codegen-$(sha256sum "$req" | cut -c1-12)"
if [[ ! -f $venv/.complete ]]; then
  echo "[codegen] creating $venv from scripts/codegen-requirements.txt" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  printf '#!/bin/sh\nexec "%s/bin/python" -m grpc_tools.protoc "$@"\n' "$venv" >"$venv/bin/protoc"
  chmod +x "$venv/bin/protoc"
  touch "$venv/.complete"
fi
echo "$gobin:$venv/bin"
