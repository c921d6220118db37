#!/usr/bin/env bash
# Builds the real flanneld (github.com/flannel-io/flannel, pinned) for the
# flannel-udp datapath (and `implementation: flanneld`).
#
# Usage: scripts/build-flanneld.sh [DEST_DIR]
#   DEST_DIR defaults to $CNIBENCH_FLANNELD_DIR or /usr/local/lib/cnibench.
#   The binary lands in DEST_DIR/flanneld; cnibench looks there (and in PATH).
#
# Idempotent: when DEST_DIR/flanneld already reports the pinned version the
# script does nothing. The throw-away module lives in a cache directory that
# is reused, and Go's module and build caches are the user's own, so a
# rebuild takes seconds.
#
# Why a throw-away module: flannel's own go.mod cannot be `go install`ed at
# a version (it has replace directives); a module that requires flannel and
# one dependency the proxy lacks at flannel's pinned version
# (tencentcloud common v1.3.79 -> v1.3.103) builds it. The UDP backend is
# cgo, so CGO_ENABLED=1 (needs gcc).
set -euo pipefail

FLANNEL_VERSION=v0.28.4
TENCENT_COMMON=v1.3.103

# cloud-init runs this with HOME unset: the cache below and go's own
# caches live under it.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
  if [ -z "$HOME" ] && [ "$(id -u)" -eq 0 ]; then HOME=/root; fi
  export HOME
fi
dest=${1:-${CNIBENCH_FLANNELD_DIR:-/usr/local/lib/cnibench}}
cache=${CNIBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cnibench}/flanneld-build-$FLANNEL_VERSION
bin="$dest/flanneld"

if [ -x "$bin" ] && "$bin" --version 2>&1 | grep -q -- "$FLANNEL_VERSION"; then
  echo "build-flanneld: $bin is already $FLANNEL_VERSION"
  exit 0
fi

command -v go >/dev/null || { echo "build-flanneld: go is not in PATH (run scripts/setup.sh)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "build-flanneld: gcc is missing (apt-get install gcc); flannel's UDP backend needs cgo" >&2; exit 1; }

mkdir -p "$cache" "$dest"
cd "$cache"
if [ ! -f go.mod ]; then
  cat > go.mod <<EOF
module cnibench.local/flanneld-build

go 1.24
EOF
  cat > tools.go <<'EOF'
//go:build tools

package tools

import _ "github.com/flannel-io/flannel"
EOF
fi
export GOFLAGS=-mod=mod
go get "github.com/flannel-io/flannel@$FLANNEL_VERSION" \
  "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common@$TENCENT_COMMON"

echo "build-flanneld: building flanneld $FLANNEL_VERSION (a few minutes on a cold cache)"
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
CGO_ENABLED=1 go build -trimpath \
  -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$FLANNEL_VERSION" \
  -o "$tmp" github.com/flannel-io/flannel
mv "$tmp" "$bin"
echo "build-flanneld: built $bin ($("$bin" --version 2>&1 | head -n1))"
