#!/usr/bin/env bash
# Builds the Kubernetes server binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy) from the Go module proxy into a cache
# directory, reusing it when the binaries are already there.
#
# k8s.io/kubernetes' own go.mod replaces its staging modules with local paths,
# so `go install k8s.io/kubernetes/cmd/...@v` fails; a throw-away module that
# requires k8s.io/kubernetes and replaces each staging module with its
# published v0.X.Y twin builds them.
#
# Usage: scripts/kube/build-binaries.sh [CACHE_DIR]   (default /var/cache/cnibench-kube)
# Env:   KUBE_VERSION (default v1.33.13)
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.33.13}
CACHE=${1:-${CNIBENCH_KUBE_CACHE:-/var/cache/cnibench-kube}}
BIN="$CACHE/bin/$KUBE_VERSION"
CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

have_all=1
for c in "${CMDS[@]}"; do [[ -x "$BIN/$c" ]] || have_all=0; done
if [[ $have_all == 1 ]]; then
	echo "build-binaries: cached in $BIN"
	exit 0
fi

# Before anything is made: without Go the build would stop half-way with
# "go: command not found" (test.sh and setup.sh put their Go on PATH first).
command -v go >/dev/null || { echo "build-binaries: go is not on PATH (scripts/setup.sh installs it; PATH=/usr/local/lib/cnibench-go/go/bin:\$PATH)" >&2; exit 2; }
mkdir -p "$BIN" "$CACHE/src"
MOD="$CACHE/src/kube-$KUBE_VERSION"
staging_version="v0.${KUBE_VERSION#v1.}"

# The module is made in a scratch directory and moved into place whole, so
# a build stopped half-way (interrupted, or its machine lost) never leaves
# a go.mod that the next run would take as complete.
if [[ ! -f "$MOD/go.mod" ]]; then
	rm -rf "$MOD.part"
	mkdir -p "$MOD.part"
	cd "$MOD.part"
	go mod init cnibench.local/kubebuild >/dev/null 2>&1
	go mod download k8s.io/kubernetes@"$KUBE_VERSION"
	kmod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod"
	go mod edit -require=k8s.io/kubernetes@"$KUBE_VERSION"
	# Every `k8s.io/x => ./staging/src/k8s.io/x` becomes `k8s.io/x => k8s.io/x vSTAGING`.
	grep -E '^\s*k8s\.io/[^ ]+ => \./staging/' "$kmod" | awk '{print $1}' | while read -r m; do
		go mod edit -replace="$m=$m@$staging_version"
	done
	{
		echo '//go:build tools'
		echo
		echo 'package tools'
		echo
		echo 'import ('
		for c in "${CMDS[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
		echo ')'
	} >tools.go
	go mod tidy
	cd "$CACHE/src"
	rm -rf "$MOD"
	mv "$MOD.part" "$MOD"
fi
cd "$MOD"

ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
	ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
for c in "${CMDS[@]}"; do
	[[ -x "$BIN/$c" ]] && continue
	echo "build-binaries: building $c $KUBE_VERSION"
	CGO_ENABLED=0 go build -trimpath -tags tools -ldflags "$ldflags" -o "$BIN/$c.tmp" k8s.io/kubernetes/cmd/"$c"
	mv "$BIN/$c.tmp" "$BIN/$c"
done
echo "build-binaries: done in $BIN"
