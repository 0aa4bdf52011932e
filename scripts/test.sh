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
for d in api kube controller runtimed gateway krt runtimes bench dashboard test/localcluster; do
  if [[ -d $d ]]; then unit_dirs+=("./$d"); fi
done
bun test --timeout 60000 "${unit_dirs[@]}"

step "chaos (its own local cluster)"
# Kills and restarts etcd, the apiserver, the controller leader, runtimed…: on a cluster of its own,
# started and stopped by the suite, before the shared one exists (2 cores: never two at once).
KRT_CHAOS=1 bun test --timeout 600000 ./test/chaos

step "integration and e2e tests"
if [[ -z "${KUBECONFIG:-}" ]]; then
  export KRT_CLUSTER_DIR="${KRT_CLUSTER_DIR:-$(mktemp -d /tmp/krt-test-cluster.XXXXXX)}"
  trap 'bun test/localcluster/main.ts down || true' EXIT
  # Two nodes, so placement, a node's lost pods and scaling cross nodes (docs/local-cluster.md).
  bun test/localcluster/main.ts up --nodes "${KRT_NODES:-2}"
  KUBECONFIG="$(bun -e 'console.log(JSON.parse(require("fs").readFileSync(process.env.KRT_CLUSTER_DIR + "/cluster.json","utf8")).kubeconfig)')"
  export KUBECONFIG
fi
# helm for the chart tests and grpcurl for the gateway tests (built from the Go module proxy,
# cached by version).
bash test/localcluster/build/build-binaries.sh helm
bash test/localcluster/build/build-binaries.sh grpcurl
# cosign and syft for the release suites (scripts/release.sh; cached by version like the others).
bash test/localcluster/build/build-binaries.sh cosign
bash test/localcluster/build/build-binaries.sh syft
suites=()
for d in test/integration test/e2e; do if [[ -d $d ]]; then suites+=("./$d"); fi; done
if ((${#suites[@]})); then
  bun test --timeout 300000 "${suites[@]}"
fi
