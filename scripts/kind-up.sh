#!/usr/bin/env bash
# For machines with Docker: builds the kruntimes images from this checkout, creates a kind cluster
# (once) and loads the images into it, tagged with the chart's appVersion so the chart's defaults
# use them as they are. kubectl's current context becomes kind-$KIND_CLUSTER.
# Needs docker and kind. Usage: bash scripts/kind-up.sh   (KIND_CLUSTER=kruntimes by default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cluster="${KIND_CLUSTER:-kruntimes}"
tag="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' chart/Chart.yaml)"
for tool in docker kind; do
  command -v "$tool" >/dev/null || { echo "$tool is required (this script builds real images)" >&2; exit 1; }
done

components=(controller runtimed bash python)
# The gateway image is a placeholder until gateway/main.ts exists.
if [[ -f gateway/main.ts ]]; then components+=(gateway); fi
# The dashboard (dashboard.enabled=true in the chart).
components+=(dashboard)
for c in "${components[@]}"; do
  echo "building ghcr.io/kruntimes/$c:$tag"
  docker build -f "images/$c/Dockerfile" -t "ghcr.io/kruntimes/$c:$tag" .
done

if ! kind get clusters | grep -qx "$cluster"; then
  kind create cluster --name "$cluster" --wait 120s
fi
for c in "${components[@]}"; do
  kind load docker-image --name "$cluster" "ghcr.io/kruntimes/$c:$tag"
done
echo "kind cluster $cluster has the kruntimes $tag images; next: helm install kruntimes ./chart -n kruntimes --create-namespace --wait"
