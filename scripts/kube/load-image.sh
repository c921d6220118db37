#!/usr/bin/env bash
# Rebuilds the workload image from a cnibench binary and imports it into
# every node of the running test cluster.
#   scripts/kube/load-image.sh ./bin/cnibench
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
CNIBENCH=$(readlink -f "${1:?usage: load-image.sh CNIBENCH_BINARY}")
mkdir -p "$STATE/images"
"$CNIBENCH" kube image --out "$STATE/images/cnibench.tar" --tag "$IMAGE" --binary "$CNIBENCH"
for n in "${NODES[@]}"; do
	timeout 300 ctr --address "$RUNDIR/$n/containerd.sock" -n k8s.io images import "$STATE/images/cnibench.tar" >/dev/null ||
		{ echo "load-image: importing into $n's containerd failed or took over 300 s" >&2; exit 1; }
done
echo "load-image: $IMAGE imported on ${NODES[*]}"
