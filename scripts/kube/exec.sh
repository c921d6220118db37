#!/usr/bin/env bash
# Runs a command in the test cluster's control-plane namespace, where the
# API server is reachable, with KUBECONFIG pointing at the admin config.
#   scripts/kube/exec.sh ./bin/cnibench run rps-rfs --quick --engine kube
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
export KUBECONFIG="$KUBECONFIG_ADMIN"
exec nsenter --net="/var/run/netns/$CP_NS" "$@"
