#!/usr/bin/env bash
# Builds the Kubernetes binaries the end-to-end test runs (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) from the Go
# module proxy into a cache keyed by the Kubernetes and Go versions and the
# architecture, unless they are there already, and prints the folder that
# holds them.
#
# k8s.io/kubernetes cannot be installed with `go install`: its go.mod
# replaces its staging modules (k8s.io/api, k8s.io/client-go, ...) with
# folders of its own repository. A small module of its own, written here,
# requires it and replaces each staging module with the published version
# of the same release (v0.MINOR.PATCH), generated from that go.mod.
#
#   test/k8s/build-kubernetes.sh            # prints the folder of the binaries
#   K8S_VERSION=v1.37.2 CEILING_K8S_CACHE=/var/cache/ceiling-k8s test/k8s/build-kubernetes.sh
set -euo pipefail

k8s_version="${K8S_VERSION:-v1.37.2}"
cache="${CEILING_K8S_CACHE:-$HOME/.cache/ceiling-k8s}"
go_version="$(go env GOVERSION)"
arch="$(go env GOARCH)"
dir="$cache/kubernetes-$k8s_version-$go_version-$arch"
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

have=1
for b in "${binaries[@]}"; do
  [ -x "$dir/bin/$b" ] || have=0
done
if [ "$have" -eq 1 ]; then
  echo "$dir/bin"
  exit 0
fi

echo "building Kubernetes $k8s_version with $go_version into $dir (once; about 17 CPU-minutes)" >&2
mkdir -p "$dir"
build="$dir/module"
rm -rf "$build" "$dir/bin.new"
mkdir -p "$build"

# Its go.mod, from the module cache (downloaded through the proxy).
gomod="$(cd "$build" && go mod download -json "k8s.io/kubernetes@$k8s_version" |
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
if [ ! -s "$gomod" ]; then
  echo "cannot find the go.mod of k8s.io/kubernetes@$k8s_version" >&2
  exit 1
fi
minor="${k8s_version#v1.}"
staging="v0.${minor}" # v1.37.2 -> v0.37.2
go_directive="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
{
  echo "module ceiling-k8s-build"
  echo
  echo "go $go_directive"
  echo
  echo "require k8s.io/kubernetes $k8s_version"
  echo
  echo "replace ("
  # Every staging module k8s.io/kubernetes replaces with a folder of its
  # own, but the samples, which it does not build into its commands.
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => \./staging/src/k8s.io/[a-z0-9-]*$#\1#p' "$gomod" |
    grep -v '^k8s.io/sample-' | while read -r m; do
      echo "	$m => $m $staging"
    done
  echo ")"
} >"$build/go.mod"
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
targets=()
for b in "${binaries[@]}"; do
  targets+=("k8s.io/kubernetes/cmd/$b")
done
mkdir -p "$dir/bin.new"
(cd "$build" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$dir/bin.new/" "${targets[@]}")
rm -rf "${dir:?}/bin"
mv "$dir/bin.new" "$dir/bin"
"$dir/bin/kube-apiserver" --version >&2
echo "$dir/bin"
