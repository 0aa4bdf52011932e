#!/usr/bin/env bash
# Writes a kubeconfig for a ServiceAccount: the current context's cluster (server and CA) with a
# token of the ServiceAccount from the TokenRequest API, its namespace as the default. The SDK
# sends the kubeconfig's bearer token to the gateway; a client certificate (the local cluster's
# admin.kubeconfig) gives it none.
#
#   bash examples/user-kubeconfig.sh [namespace] [serviceaccount] [file]
#   (defaults: kruntimes examples examples.kubeconfig; $KUBECTL names kubectl)
set -euo pipefail
ns="${1:-kruntimes}"
sa="${2:-examples}"
out="${3:-examples.kubeconfig}"
kubectl="${KUBECTL:-kubectl}"

view() { "$kubectl" config view --minify --raw -o jsonpath="{.clusters[0].cluster.$1}"; }
server="$(view server)"
ca="$(view certificate-authority-data)"
if [[ -z "$ca" ]]; then
  ca_file="$(view certificate-authority)"
  [[ -n "$ca_file" ]] || { echo "the current context's cluster has no CA (certificate-authority[-data])" >&2; exit 1; }
  ca="$(base64 -w0 <"$ca_file")"
fi
token="$("$kubectl" -n "$ns" create token "$sa" --duration=12h)"

umask 077
cat >"$out" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: kruntimes
    cluster:
      server: $server
      certificate-authority-data: $ca
users:
  - name: $sa
    user:
      token: $token
contexts:
  - name: $sa
    context:
      cluster: kruntimes
      user: $sa
      namespace: $ns
current-context: $sa
KUBECONFIG
abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
echo "wrote $abs (ServiceAccount $ns/$sa, token valid 12h); use it: export KUBECONFIG=$abs"
