#!/usr/bin/env bash
# Regenerates the protobuf TypeScript code under api/gen/ from proto/ (see buf.gen.yaml).
# Offline: buf and protoc-gen-es both come from node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/buf generate
echo "generated api/gen from proto/"
