#!/usr/bin/env bash
# For machines with Docker: the end-to-end suite against a kind cluster with real images —
# scripts/kind-up.sh, then test/e2e with KUBECONFIG pointing at kind (the chart tests install the
# chart themselves). Needs docker, kind, Go (helm is built like the local cluster's binaries) and
# Chromium for the docs browser test (KRT_NEED_CHROMIUM=1 bash scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cluster="${KIND_CLUSTER:-kruntimes}"
bash scripts/setup.sh
bash scripts/kind-up.sh
bash test/localcluster/build/build-binaries.sh helm
KUBECONFIG="$(mktemp)"
export KUBECONFIG
trap 'rm -f "$KUBECONFIG"' EXIT
kind get kubeconfig --name "$cluster" >"$KUBECONFIG"
bun test --timeout 300000 ./test/e2e
