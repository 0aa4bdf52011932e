#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy into a cache outside git:
#   $KRT_CACHE_DIR/bin/<component>-<version>/<binary>
# Each group is rebuilt only when its pinned version changes. When KRT_ASSETS points at a
# directory of prebuilt binaries (like envtest's KUBEBUILDER_ASSETS), nothing is built.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=../../../scripts/lib/cache-fill.sh
source "$here/../../../scripts/lib/cache-fill.sh"
cache="${KRT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruntimes}"
export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
export CGO_ENABLED=0
export GOCACHE="${GOCACHE:-$cache/go-build}"
export GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}"

# The release tools (cosign, syft) are never in KRT_ASSETS: they are built either way.
if [[ -n "${KRT_ASSETS:-}" && ! "${1:-cluster}" =~ ^(s3server|cosign|syft)$ ]]; then
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [[ -x "$KRT_ASSETS/$b" ]] || { echo "KRT_ASSETS=$KRT_ASSETS has no executable $b; unset KRT_ASSETS to build from source" >&2; exit 1; }
  done
  echo "using prebuilt binaries from KRT_ASSETS=$KRT_ASSETS"
  exit 0
fi

log() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# build_group <name> <version> <module-setup-fn> <packages...>: the binaries into
# $cache/bin/<name>-<version>, once; a concurrent build of the same group waits for this one
# (cache_fill holds a lock) and reuses it.
build_group() {
  local name=$1 version=$2
  local out="$cache/bin/$name-$version"
  if [[ -f "$out/.complete" ]]; then log "$name $version cached in $out"; return; fi
  cache_fill "$out" build_into "$@"
}

# build_into <name> <version> <setup-fn> <packages...> <out>: each step checks its own status
# (see scripts/lib/cache-fill.sh on why -e cannot be relied on here).
build_into() {
  local name=$1 version=$2 setup=$3 out=${!#}
  local pkgs=("${@:4:$#-4}")
  local mod="$cache/src/$name-$version"
  rm -rf "$mod" && mkdir -p "$mod" "$out" || return 1
  log "$name $version: preparing helper module in $mod"
  "$setup" "$mod" "$version" || return 1
  log "$name $version: go build ${pkgs[*]} (first build takes a while on 2 cores)"
  local start=$SECONDS
  (cd "$mod" && go build -ldflags "-s -w $(ldflags_for "$name" "$version")" -o "$out/" "${pkgs[@]}") || return 1
  log "$name $version: built in $((SECONDS - start))s"
  # A module-root main package is named after its last path element ("v3" -> "server").
  if [[ $name == etcd ]]; then mv "$out/server" "$out/etcd" || return 1; fi
}

ldflags_for() {
  case $1 in
    kubernetes)
      local v=$2 minor; minor=${v#v1.}; minor=${minor%%.*}
      local p=k8s.io/component-base/version
      echo "-X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z" ;;
    # `helm version` reports only major.minor unless told the full version.
    helm) echo "-X helm.sh/helm/v4/internal/version.version=$2 -X helm.sh/helm/v4/internal/version.gitTreeState=clean" ;;
    # `grpcurl -version` prints main.version.
    grpcurl) echo "-X main.version=$2" ;;
    # `cosign version` and `syft version` print what these say.
    cosign) echo "-X sigs.k8s.io/release-utils/version.gitVersion=$2 -X sigs.k8s.io/release-utils/version.gitTreeState=clean" ;;
    syft) echo "-X main.version=${2#v}" ;;
    *) echo "" ;;
  esac
}

# k8s.io/kubernetes requires every staging module at v0.0.0; pin each to the matching v0.X.Y.
setup_kubernetes() {
  local mod=$1 v=$2 staging
  staging="v0.${v#v1.}"
  local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module kruntimes.local/build/kubernetes"
    echo "go $(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
    echo "require k8s.io/kubernetes $v"
    grep -E '^\s+k8s.io/[^ ]+ v0\.0\.0$' "$gomod" | awk -v s="$staging" '{print "replace " $1 " => " $1 " " s}'
  } >"$mod/go.mod"
  cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "$mod" && go mod tidy)
}

setup_etcd() {
  local mod=$1 v=$2
  printf 'module kruntimes.local/build/etcd\ngo 1.24\nrequire go.etcd.io/etcd/server/v3 %s\n' "$v" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

setup_helm() {
  local mod=$1 v=$2
  printf 'module kruntimes.local/build/helm\ngo 1.25\nrequire helm.sh/helm/v4 %s\n' "$v" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "helm.sh/helm/v4/cmd/helm"\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

setup_grpcurl() {
  local mod=$1 v=$2
  printf 'module kruntimes.local/build/grpcurl\ngo 1.24\nrequire github.com/fullstorydev/grpcurl %s\n' "$v" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/fullstorydev/grpcurl/cmd/grpcurl"\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

# The Go SDK's code generators, one module pinning both (protobuf-go and connect-go).
setup_codegen() {
  local mod=$1
  printf 'module kruntimes.local/build/codegen\ngo 1.24\nrequire (\n\tgoogle.golang.org/protobuf %s\n\tconnectrpc.com/connect %s\n)\n' \
    "$PROTOC_GEN_GO_VERSION" "$CONNECT_GO_VERSION" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "connectrpc.com/connect/cmd/protoc-gen-connect-go"\n\t_ "google.golang.org/protobuf/cmd/protoc-gen-go"\n)\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

# Release tools: cosign (signatures) and syft (SBOMs), each a helper module requiring its release.
setup_cosign() {
  local mod=$1 v=$2
  printf 'module kruntimes.local/build/cosign\ngo 1.25\nrequire github.com/sigstore/cosign/v3 %s\n' "$v" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/sigstore/cosign/v3/cmd/cosign"\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

setup_syft() {
  local mod=$1 v=$2
  printf 'module kruntimes.local/build/syft\ngo 1.25\nrequire github.com/anchore/syft %s\n' "$v" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/anchore/syft/cmd/syft"\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy)
}

# The artifact tests' S3 server: our own module (test/localcluster/s3server) around gofakes3. The
# cache key is gofakes3's version plus a hash of our sources, so editing them rebuilds.
s3server_key() {
  local src="$here/../s3server"
  echo "$GOFAKES3_VERSION-$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-12)"
}
setup_s3server() {
  cp "$here/../s3server/go.mod" "$here/../s3server/go.sum" "$here/../s3server/main.go" "$1/"
  grep -q "github.com/johannesboyne/gofakes3 $GOFAKES3_VERSION" "$1/go.mod" \
    || { echo "test/localcluster/s3server/go.mod does not require gofakes3 $GOFAKES3_VERSION (versions.env)" >&2; exit 1; }
}

# Default: what the local cluster needs. `all` adds helm (chart tests), grpcurl (gateway tests),
# codegen (buf generate's Go plugins), cosign and syft (scripts/release.sh).
want="${1:-cluster}"
if [[ $want == all || $want == cluster || $want == etcd ]]; then
  build_group etcd "$ETCD_VERSION" setup_etcd go.etcd.io/etcd/server/v3
fi
if [[ $want == all || $want == cluster || $want == kubernetes ]]; then
  build_group kubernetes "$KUBERNETES_VERSION" setup_kubernetes \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
fi
if [[ $want == all || $want == cluster || $want == s3server ]]; then
  build_group s3server "$(s3server_key)" setup_s3server .
fi
if [[ $want == all || $want == helm ]]; then
  build_group helm "$HELM_VERSION" setup_helm helm.sh/helm/v4/cmd/helm
fi
if [[ $want == all || $want == grpcurl ]]; then
  build_group grpcurl "$GRPCURL_VERSION" setup_grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl
fi
if [[ $want == all || $want == codegen ]]; then
  build_group codegen "$PROTOC_GEN_GO_VERSION-connect-$CONNECT_GO_VERSION" setup_codegen \
    google.golang.org/protobuf/cmd/protoc-gen-go connectrpc.com/connect/cmd/protoc-gen-connect-go
fi
if [[ $want == all || $want == cosign ]]; then
  build_group cosign "$COSIGN_VERSION" setup_cosign github.com/sigstore/cosign/v3/cmd/cosign
fi
if [[ $want == all || $want == syft ]]; then
  build_group syft "$SYFT_VERSION" setup_syft github.com/anchore/syft/cmd/syft
fi
