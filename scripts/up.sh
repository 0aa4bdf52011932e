#!/usr/bin/env bash
# Brings kruntimes up and runs its main job: on the cluster in $KUBECONFIG, or on a local cluster
# started here (real control plane + node agent, no Docker) when KUBECONFIG is not set. Installs
# (or upgrades) the Helm chart as release `kruntimes` in namespace `kruntimes`, waits for the
# built-in Runtimes, builds krt, and runs a first Run, printing its output and its status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
step() { printf '\n\033[1m== %s\033[0m (%s)\n' "$*" "$(date +%H:%M:%S)"; }

step "setup"
bash scripts/setup.sh
if [[ -z "${KUBECONFIG:-}" ]]; then
  step "local cluster"
  bun test/localcluster/main.ts up
  export KRT_CLUSTER_DIR="${KRT_CLUSTER_DIR:-/tmp/krt-local-cluster}"
  KUBECONFIG="$(bun -e 'console.log(JSON.parse(require("fs").readFileSync(process.env.KRT_CLUSTER_DIR + "/cluster.json","utf8")).kubeconfig)')"
  export KUBECONFIG
fi
bash test/localcluster/build/build-binaries.sh helm
bin() { bun -e "import('./test/localcluster/binaries.ts').then(m => console.log(m.binaryPath('$1', process.cwd(), process.env)))"; }
kubectl="$(bin kubectl)"
helm="$(bin helm)"
"$kubectl" get nodes -o wide

step "install kruntimes (helm release kruntimes, namespace kruntimes)"
# The CRDs first, as Helm's field manager: creates them on a new cluster, updates them on an
# existing one (Helm itself never upgrades CRDs; docs/install.md).
"$kubectl" apply --server-side --field-manager=helm --force-conflicts -f chart/crds/
"$helm" upgrade --install kruntimes ./chart --namespace kruntimes --create-namespace --wait --timeout 5m
"$kubectl" -n kruntimes wait runtime/bash runtime/python --for=condition=Ready --timeout=180s
"$kubectl" -n kruntimes get runtimes

step "krt"
bash krt/build.sh
krt=dist/krt

step "first Run"
run="hello-$(date +%s)"
"$krt" run -n kruntimes --runtime bash --name "$run" --follow -- 'echo "hello from $(hostname), $(bash --version | head -n 1)"'
"$krt" describe -n kruntimes "$run"
printf '\nkruntimes is up. KUBECONFIG=%s; try: %s run -n kruntimes --runtime python --follow --file - <<<"print(42)"\n' "$KUBECONFIG" "$krt"
