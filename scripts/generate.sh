#!/usr/bin/env bash
# Regenerates the protobuf code from proto/ (see buf.gen.yaml): TypeScript in api/gen, Go in
# sdk/go/gen, Python in sdk/python/src/kruntimes/{runtime,gateway,dataplane}. Offline: buf and
# protoc-gen-es come from node_modules, the Go and Python plugins from scripts/codegen-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash scripts/codegen-tools.sh):$PATH"
export PATH
# Generated trees only: sdk/python/src/kruntimes also holds the SDK's own modules.
rm -rf api/gen sdk/go/gen sdk/python/src/kruntimes/{runtime,gateway,dataplane}
node_modules/.bin/buf generate
echo "generated api/gen, sdk/go/gen and sdk/python/src/kruntimes/* from proto/"
