#!/usr/bin/env bash
# Brings kruntimes up and runs its main job: on the cluster in $KUBECONFIG, or on a local cluster
# started here (real control plane + node agent, no Docker) when KUBECONFIG is not set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
if [[ -z "${KUBECONFIG:-}" ]]; then
  bun test/localcluster/main.ts up
  export KRT_CLUSTER_DIR="${KRT_CLUSTER_DIR:-/tmp/krt-local-cluster}"
  KUBECONFIG="$(bun -e 'console.log(JSON.parse(require("fs").readFileSync(process.env.KRT_CLUSTER_DIR + "/cluster.json","utf8")).kubeconfig)')"
  export KUBECONFIG
fi
kubectl="$(bun -e 'import("./test/localcluster/binaries.ts").then(m => console.log(m.binaryPath("kubectl", process.cwd(), process.env)))')"
"$kubectl" get nodes -o wide
