#!/usr/bin/env bash
# The whole test suite: static checks, unit tests, then integration and e2e suites against a
# real cluster — the local control plane (started and stopped here) unless KUBECONFIG is given.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
step() { printf '\n\033[1m== %s\033[0m (%s)\n' "$*" "$(date +%H:%M:%S)"; }

step "setup"
# Chromium (Debian) drives the docs site's browser test.
KRT_NEED_CHROMIUM=1 bash scripts/setup.sh

step "lint and typecheck"
node_modules/.bin/biome check .
node_modules/.bin/tsc -p tsconfig.json --noEmit
# The dashboard's browser code (DOM types, Preact JSX) has its own tsconfig.
node_modules/.bin/tsc -p dashboard/web/tsconfig.json --noEmit

step "generated code is fresh"
for check in scripts/check-generated.sh scripts/check-crds.sh scripts/check-cli-docs.sh \
  scripts/check-python-docs.sh; do
  if [[ -f $check ]]; then bash "$check"; fi
done

step "unit tests"
unit_dirs=()
for d in api kube controller runtimed gateway krt runtimes bench dashboard scripts test/localcluster; do
  if [[ -d $d ]]; then unit_dirs+=("./$d"); fi
done
bun test --timeout 60000 "${unit_dirs[@]}"

step "chaos (its own local cluster)"
# Kills and restarts etcd, the apiserver, the controller leader, runtimed…: on a cluster of its own,
# started and stopped by the suite, before the shared one exists (2 cores: never two at once).
KRT_CHAOS=1 bun test --timeout 600000 ./test/chaos

step "integration and e2e tests"
# helm for the chart tests and grpcurl for the gateway tests (built from the Go module proxy,
# cached by version); cosign and syft for the release suites (scripts/release.sh).
for b in helm grpcurl cosign syft; do bash test/localcluster/build/build-binaries.sh "$b"; done
suites=()
for d in test/integration test/e2e; do if [[ -d $d ]]; then suites+=("./$d"); fi; done
((${#suites[@]})) || exit 0
if [[ -n "${KUBECONFIG:-}" ]]; then
  # A cluster of the caller's: the suites one after another in one process.
  bun test --timeout 300000 "${suites[@]}"
  exit 0
fi
# Local clusters of our own, KRT_E2E_CLUSTERS of them (default 2), each with two nodes (placement,
# a node's lost pods and scaling cross nodes: docs/local-cluster.md) and its own pod address range;
# scripts/run-suites.ts runs one test file at a time on each (README, "Tests").
base="${KRT_CLUSTER_DIR:-$(mktemp -d /tmp/krt-test-cluster.XXXXXX)}"
dirs=()
down() { for d in "${dirs[@]}"; do KRT_CLUSTER_DIR="$d" bun test/localcluster/main.ts down || true; done; }
trap down EXIT
for i in $(seq 1 "${KRT_E2E_CLUSTERS:-2}"); do
  dir="$base/cluster-$i"
  mkdir -p "$dir"
  dirs+=("$dir")
  KRT_CLUSTER_DIR="$dir" KRT_POD_IP_RANGE="127.$((i == 1 ? 1 : 5 + i)).0.0/16" \
    bun test/localcluster/main.ts up --nodes "${KRT_NODES:-2}"
done
args=()
for d in "${dirs[@]}"; do args+=(--cluster "$d"); done
bun scripts/run-suites.ts "${args[@]}" "${suites[@]}"
