#!/usr/bin/env bash
# Cuts a release into OUT_DIR (default dist/release/VERSION): krt for linux and darwin on amd64
# and arm64, the component binaries for linux (controller, runtimed, gateway, runtime-server), the
# packaged Helm chart, a CycloneDX SBOM per artifact (syft), SHA256SUMS, a cosign signature bundle
# per file, cosign.pub and VERIFY.md. Needs only the package registries: cosign, syft and helm
# are built from the Go module proxy and the Bun executables of the other platforms come from
# npm (@oven/bun-<os>-<arch>), all cached by version in ~/.cache/kruntimes. See docs/release.md.
#
#   COSIGN_KEY=cosign.key COSIGN_PASSWORD=... scripts/release.sh 0.2.0 [OUT_DIR]
#
# Environment: COSIGN_KEY (a cosign private key file; required), COSIGN_PASSWORD (its password;
# required, may be empty), KRT_RELEASE_PLATFORMS (default "linux/amd64 linux/arm64 darwin/amd64
# darwin/arm64"; components are built for the linux ones), KRT_RELEASE_ALLOW_DIRTY=1 (release a
# working tree with uncommitted changes; the commit is then recorded with -dirty).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

die() { echo "release: $*" >&2; exit 1; }
step_start=$SECONDS
step() { printf '[release %s +%ss] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - step_start))" "$*" >&2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: scripts/release.sh VERSION [OUT_DIR]   (for example 0.2.0 or v0.2.0)"
version="${1#v}"
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
[[ $version =~ $semver ]] || die "VERSION '$1' is not a semantic version like 0.2.0 or 0.2.0-rc.1"
# A final release needs its dated section in CHANGELOG.md; a pre-release (0.2.0-rc.1) does not.
if [[ $version != *-* ]]; then
  grep -Eq "^## \[${version//./\\.}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\b" CHANGELOG.md \
    || die "CHANGELOG.md has no section '## [$version] - YYYY-MM-DD'; write it (docs/release.md) and commit it first"
fi
out="${2:-dist/release/$version}"
if [[ -e $out && -n "$(ls -A "$out")" ]]; then die "$out is not empty; choose a new directory or empty it"; fi

[[ -n "${COSIGN_KEY:-}" ]] || die "set COSIGN_KEY to a cosign private key (make one: cosign generate-key-pair)"
[[ -f $COSIGN_KEY ]] || die "COSIGN_KEY=$COSIGN_KEY is not a file"
[[ -v COSIGN_PASSWORD ]] || die "set COSIGN_PASSWORD to the key's password (empty if it has none)"
export COSIGN_PASSWORD
key="$(cd "$(dirname "$COSIGN_KEY")" && pwd)/$(basename "$COSIGN_KEY")"

commit="$(git rev-parse HEAD)"
if [[ -n "$(git status --porcelain)" ]]; then
  [[ ${KRT_RELEASE_ALLOW_DIRTY:-} == 1 ]] || die "the working tree has uncommitted changes; commit them (or KRT_RELEASE_ALLOW_DIRTY=1 for a test release)"
  commit="$commit-dirty"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# The build time is the commit's, so rebuilding a commit embeds the same time.
built="$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)"
platforms="${KRT_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
bun_version="$(bun --version)"
cache="${KRT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kruntimes}"
work="$(mktemp -d "${TMPDIR:-/tmp}/krt-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT

step "kruntimes $version from ${commit:0:12} into $out (platforms: $platforms)"

step "tools: helm, cosign, syft (built from the Go module proxy once per version)"
for tool in helm cosign syft; do bash test/localcluster/build/build-binaries.sh "$tool" 2>&1 | sed 's/^/  /' >&2; done
# shellcheck source=../test/localcluster/build/versions.env
source test/localcluster/build/versions.env
helm="${KRT_ASSETS:-$cache/bin/helm-$HELM_VERSION}/helm"
cosign="$cache/bin/cosign-$COSIGN_VERSION/cosign"
syft="$cache/bin/syft-$SYFT_VERSION/syft"

# bun_package <os> <arch>: the cached @oven/bun-<os>-<arch> package of this Bun (scripts/lib).
bun_package() { bash scripts/lib/bun-package.sh "$1" "$2" || die "could not fetch the Bun $bun_version package for $1/$2"; }

# compile <name> <os> <arch> <entry> [extra bun flags...]: one binary, and the bundle's metafile
# (its inputs, for the SBOM) in $work/meta/<name>.json.
compile() {
  local name=$1 os=$2 arch=$3 entry=$4; shift 4
  local pkg; pkg="$(bun_package "$os" "$arch")"
  echo "$pkg" >"$work/pkg/$name"
  bun build --compile --bytecode --minify "$@" --target="bun-$os-$arch" \
    --compile-executable-path="$pkg/bin/bun" --metafile="$work/meta/$name.json" \
    --outfile "$out/$name" "$entry" >/dev/null
}

mkdir -p "$work/meta" "$work/pkg"
binaries=()
step "krt for $platforms"
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  name="krt-$os-$arch"
  pkg="$(bun_package "$os" "$arch")"
  echo "$pkg" >"$work/pkg/$name"
  KRT_BUILD_VERSION="$version" KRT_BUILD_COMMIT="${commit:0:12}${commit#"${commit%-dirty}"}" \
    KRT_BUILD_TIME="$built" KRT_BUILD_TARGET="bun-$os-$arch" \
    KRT_BUILD_EXECUTABLE="$pkg/bin/bun" KRT_BUILD_METAFILE="$work/meta/$name.json" \
    bash krt/build.sh "$out/$name" >/dev/null
  binaries+=("$name")
done
# The components run in Linux pods: the same entry points and flags as images/*/Dockerfile.
components=(controller:controller/main.ts runtimed:runtimed/main.ts gateway:gateway/main.ts
  runtime-server:runtimes/server/main.ts)
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  [[ $os == linux ]] || continue
  step "components for $p"
  for c in "${components[@]}"; do
    name="${c%%:*}-$os-$arch"
    compile "$name" "$os" "$arch" "${c#*:}" --format=esm
    binaries+=("$name")
  done
done

step "Helm chart"
"$helm" package chart --version "$version" --app-version "$version" -d "$out" >/dev/null
chart="kruntimes-$version.tgz"
[[ -f $out/$chart ]] || die "helm package did not write $chart"

step "SBOMs (syft, CycloneDX JSON)"
# syft_sbom <artifact> <directory to catalog>: the SBOM is named for the artifact and version and
# also lists the artifact itself as a file with its SHA-256 (staged beside the packages).
syft_sbom() {
  local name=$1 dir=$2
  ln "$out/$name" "$dir/$name"
  SYFT_CHECK_FOR_APP_UPDATE=false SYFT_FILE_METADATA_SELECTION=all SYFT_FILE_METADATA_DIGESTS=sha256 \
    "$syft" scan "dir:$dir" --quiet --source-name "$name" --source-version "$version" \
    --override-default-catalogers javascript-package-cataloger \
    -o "cyclonedx-json=$out/$name.cdx.json"
}
for name in "${binaries[@]}"; do
  bun scripts/release/stage-sbom.ts "$work/meta/$name.json" "$(cat "$work/pkg/$name")" "$work/sbom/$name" "$version" >/dev/null
done
# The chart bundles no software: its SBOM lists its files.
mkdir -p "$work/sbom/$chart" && tar -xzf "$out/$chart" -C "$work/sbom/$chart"
# Two syft runs at a time (each is mostly one thread).
pids=()
for name in "${binaries[@]}" "$chart"; do
  syft_sbom "$name" "$work/sbom/$name" &
  pids+=("$!:$name")
  if ((${#pids[@]} >= 2)); then wait "${pids[0]%%:*}" || die "syft failed for ${pids[0]#*:}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "${p%%:*}" || die "syft failed for ${p#*:}"; done

step "SHA256SUMS"
artifacts=("${binaries[@]}" "$chart")
files=()
for a in "${artifacts[@]}"; do files+=("$a" "$a.cdx.json"); done
(cd "$out" && sha256sum "${files[@]}" >SHA256SUMS)

step "signatures (cosign sign-blob with $COSIGN_KEY)"
# Offline: no transparency log upload and no signing config from the Sigstore TUF root.
for f in "${files[@]}" SHA256SUMS; do
  "$cosign" sign-blob --yes --key "$key" --tlog-upload=false --use-signing-config=false \
    --bundle "$out/$f.sigstore.json" "$out/$f" >/dev/null 2>"$work/cosign.err" \
    || die "cosign sign-blob $f failed: $(cat "$work/cosign.err")"
done
"$cosign" public-key --key "$key" >"$out/cosign.pub"

step "VERIFY.md"
{
  cat <<MD
# Verifying kruntimes $version

Built from commit \`$commit\` with Bun $bun_version. Every artifact has a CycloneDX SBOM
(\`<artifact>.cdx.json\`); every artifact, every SBOM and \`SHA256SUMS\` has a cosign signature
bundle (\`<file>.sigstore.json\`), signed with the key whose public half is \`cosign.pub\`. Compare
\`cosign.pub\` with the key the project publishes before trusting it. The signatures are not in a
transparency log, so verification skips it (\`--insecure-ignore-tlog=true\`).

In the directory of the downloaded files, with \`cosign\` ($("$cosign" version 2>/dev/null | sed -n 's/^GitVersion: *//p') or newer) and \`sha256sum\`:

\`\`\`sh
MD
  echo "cosign verify-blob --key cosign.pub --insecure-ignore-tlog=true --bundle SHA256SUMS.sigstore.json SHA256SUMS"
  echo "sha256sum --check SHA256SUMS"
  for f in "${files[@]}"; do
    echo "cosign verify-blob --key cosign.pub --insecure-ignore-tlog=true --bundle $f.sigstore.json $f"
  done
  cat <<MD
\`\`\`

Only some of the files? \`sha256sum --check --ignore-missing SHA256SUMS\` checks those present,
after the \`SHA256SUMS\` signature check above.

| artifact | what it is |
| -------- | ---------- |
MD
  for a in "${artifacts[@]}"; do
    case $a in
      krt-*) what="the krt CLI" ;;
      controller-*) what="the controller (image ghcr.io/kruntimes/controller:$version)" ;;
      runtimed-*) what="runtimed, the Runtime pod sidecar (image ghcr.io/kruntimes/runtimed:$version)" ;;
      gateway-*) what="the gateway (image ghcr.io/kruntimes/gateway:$version)" ;;
      runtime-server-*) what="the Runtime Server (images ghcr.io/kruntimes/bash and python:$version)" ;;
      *.tgz) what="the Helm chart (\`helm install kruntimes $a\`)" ;;
    esac
    echo "| \`$a\` | $what |"
  done
} >"$out/VERIFY.md"

step "done: $(ls "$out" | wc -l) files, $(du -sh "$out" | cut -f1)"
cat "$out/VERIFY.md"
