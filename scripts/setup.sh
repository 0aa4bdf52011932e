#!/usr/bin/env bash
# Idempotent machine setup shared by scripts/up.sh and scripts/test.sh: Debian packages the local
# cluster needs, Bun from npm at the pinned version, and the workspace's dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUN_VERSION=1.4.5

need_apt=()
for pkg_cmd in curl:curl jq:jq openssl:openssl util-linux:setpriv util-linux:nsenter util-linux:unshare; do
  command -v "${pkg_cmd#*:}" >/dev/null || need_apt+=("${pkg_cmd%%:*}")
done
if [[ -n "${KRT_NEED_CHROMIUM:-}" ]] && ! command -v chromium >/dev/null; then need_apt+=(chromium); fi
# Python venvs (code generation, the Python SDK's tests) need ensurepip, which Debian ships apart.
if ! python3 -c 'import ensurepip' 2>/dev/null; then need_apt+=(python3-venv); fi
if ((${#need_apt[@]})); then
  echo "installing Debian packages: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [[ "$(bun --version 2>/dev/null || true)" != "$BUN_VERSION" ]]; then
  echo "installing bun@$BUN_VERSION from npm"
  npm install -g --silent "bun@$BUN_VERSION"
fi
command -v go >/dev/null || { echo "Go is required to build the local control plane (go.dev/dl)" >&2; exit 1; }

bun install --frozen-lockfile >/dev/null
