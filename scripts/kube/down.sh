#!/usr/bin/env bash
# Tears down the test cluster of up.sh: pods first (so kubelets remove
# their sandboxes and network namespaces), then node daemons, leftover
# container processes (found by the nodes' own cgroups), mounts, cgroups,
# the control plane, and the namespaces. Only processes up.sh started
# (pid files) or that live in its cgroups / use its sockets are signalled.
# Idempotent: safe to run when nothing is up.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
pki="$STATE/pki"
log() { echo "down: $(date +%T) $*"; }

stop_pid() { # pid [timeout]: TERM, wait, then KILL
	local pid=$1 t=${2:-30}
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 $((t * 5))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
	kill -KILL "$pid" 2>/dev/null
	for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
}
stop() { # name
	local f="$RUNDIR/$1.pid"
	[[ -f $f ]] || return 0
	stop_pid "$(cat "$f")" "${2:-30}"
	rm -f "$f"
}
api() { ip netns exec "$CP_NS" curl -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://$CP_IP:6443$1" "${@:2}"; }

if ip netns list 2>/dev/null | grep -qw "$CP_NS" && api /readyz >/dev/null 2>&1; then
	log "deleting pods"
	for ns in $(api /api/v1/namespaces | grep -o '"name": "[^"]*"' | cut -d'"' -f4); do
		api "/apis/apps/v1/namespaces/$ns/daemonsets" -X DELETE >/dev/null 2>&1 || true
		api "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" -X DELETE >/dev/null 2>&1 || true
	done
	for _ in $(seq 1 120); do
		api /api/v1/pods | grep '"nodeName"' >/dev/null || break # not -q: under pipefail curl's SIGPIPE would end the wait early
		sleep 0.5
	done
fi

for n in "${NODES[@]}"; do
	stop "kube-proxy-$n" 15
	stop "kubelet-$n" 15
done
for n in "${NODES[@]}"; do
	# Container processes: everything in the node's own cgroups.
	for h in /sys/fs/cgroup/pids /sys/fs/cgroup/memory /sys/fs/cgroup/cpu; do
		[[ -d $h/$n ]] || continue
		find "$h/$n" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | while read -r pid; do
			kill -KILL "$pid" 2>/dev/null
		done
	done
	# Shims of this node's containerd.
	for p in /proc/[0-9]*; do
		if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "-address $RUNDIR/$n/containerd.sock"; then
			kill -KILL "${p#/proc/}" 2>/dev/null
		fi
	done
	stop "containerd-$n" 20
done
# Mounts under the state and run dirs, deepest first.
awk '{print $5}' /proc/self/mountinfo | grep -E "^($STATE|$RUNDIR)/" | sort -r | while read -r m; do
	umount -l "$m" 2>/dev/null
done
for n in "${NODES[@]}"; do
	for h in /sys/fs/cgroup/*/; do
		[[ -d $h/$n ]] || continue
		find "$h/$n" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
done
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c" 30; done
for ns in "${NODES[@]}" "$CP_NS"; do
	ip netns delete "$ns" 2>/dev/null
done
rm -rf "$STATE/etcd" "$RUNDIR"
for n in "${NODES[@]}"; do rm -rf "$STATE/$n"; done
log "done"
