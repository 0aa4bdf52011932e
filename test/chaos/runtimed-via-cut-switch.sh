#!/usr/bin/env bash
# The chaos suite's runtimed command: runtimed reaches the kube-apiserver through the suite's cut
# switch (test/chaos/cut-switch.ts), one loopback port per pod, so one runtimed can be cut off.
# $1 is the cut switch's control URL; the rest is runtimed's own command line.
set -euo pipefail
port=$(curl -fsS --retry 20 --retry-connrefused --retry-delay 1 "$1/port?pod=${POD_NAME:?}")
shift
export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$port"
exec "$@"
