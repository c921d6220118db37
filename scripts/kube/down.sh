#!/usr/bin/env bash
# Tears down the test cluster of up.sh: pods first, deleted with their grace
# periods so the kubelets stop the containers and sandboxes (the CNI DEL, the
# pod network namespaces, which containerd keeps under the run directory) and
# the agent reverts what it tuned; then node daemons, leftover container
# processes (found by the nodes' own cgroups) and their shims, mounts,
# cgroups, the control plane, and the namespaces. Only processes up.sh
# started (pid files naming its state or run directory) or that live in its
# cgroups / use its sockets are signalled.
#
# It returns only when those processes are gone. Exit 0: nothing of the
# cluster is left; exit 1: it names what survived (a process, cgroup, mount
# or namespace). Idempotent: safe to run when nothing is up.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
. "$here/cgroup.sh"
pki="$STATE/pki"
log() { echo "down: $(date +%T) $*"; }
left=() # what survived, one entry per thing

# ours PID: the process's command line names this cluster's state or run
# directory, as every daemon up.sh starts and every shim of its containerds
# does; a pid file whose process is gone and whose pid was reused is not.
ours() {
	local c
	{ c=$(tr '\0' ' ' <"/proc/$1/cmdline"); } 2>/dev/null || return 1
	[[ $c == *"$STATE/"* || $c == *"$RUNDIR/"* ]]
}
# gone_within SECONDS PID...: waits until none of the pids runs.
gone_within() {
	local t=$1 p alive
	shift
	for _ in $(seq 1 $((t * 5))); do
		alive=
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[[ -z $alive ]] && return 0
		sleep 0.2
	done
	return 1
}
# stop_pids TIMEOUT PID...: TERM, wait, KILL the rest, wait; the pids that
# still run are printed.
stop_pids() {
	local t=$1 p
	shift
	[[ $# -gt 0 ]] || return 0
	kill -TERM "$@" 2>/dev/null
	gone_within "$t" "$@" && return 0
	kill -KILL "$@" 2>/dev/null
	gone_within 10 "$@" && return 0
	for p in "$@"; do kill -0 "$p" 2>/dev/null && echo "$p"; done
}
stop() { # name [timeout]: the daemon of RUNDIR/name.pid
	local f="$RUNDIR/$1.pid" pid
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid" && [[ -n $(stop_pids "${2:-30}" "$pid") ]]; then
		left+=("process $1 (pid $pid) survived SIGKILL")
		return
	fi
	rm -f "$f"
}
api() { ip netns exec "$CP_NS" curl -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://$CP_IP:6443$1" "${@:2}"; }
no_pods() { # the API lists no pod (an unreachable API is not "no pods")
	local out
	out=$(api /api/v1/pods 2>/dev/null) || return 1
	[[ $(tr -d ' \n' <<<"$out") == *'"items":[]'* ]]
}
delete_pods() { # [query]: every pod of every namespace, and the daemonsets that would recreate them
	local ns
	for ns in $(api /api/v1/namespaces 2>/dev/null | grep -o '"name": "[^"]*"' | cut -d'"' -f4); do
		api "/apis/apps/v1/namespaces/$ns/daemonsets" -X DELETE >/dev/null 2>&1
		api "/api/v1/namespaces/$ns/pods${1:-}" -X DELETE >/dev/null 2>&1
	done
}

if ip netns list 2>/dev/null | grep -qw "$CP_NS" && api /readyz >/dev/null 2>&1; then
	# The pods' grace periods are at most 30 s (the agent's); a pod still
	# there after 90 s has a kubelet that no longer answers: force-delete
	# it, and its processes go with the node's cgroups below.
	log "deleting pods"
	delete_pods
	for i in $(seq 1 180); do
		no_pods && break
		((i % 20 == 0)) && delete_pods # a daemonset's pod made before its deletion was seen
		sleep 0.5
	done
	if ! no_pods; then
		log "pods still there after 90s: force-deleting them"
		delete_pods '?gracePeriodSeconds=0'
	fi
fi

for n in "${NODES[@]}"; do
	stop "kube-proxy-$n" 15
	stop "kubelet-$n" 15
done
for n in "${NODES[@]}"; do
	# Container processes: everything in the node's own cgroups. Under v2
	# cgroup.kill (Linux 5.14+) also gets a process forking meanwhile.
	pids=$(cgroup_pids "$n")
	if [[ -n $pids ]]; then
		log "$n: stopping $(wc -w <<<"$pids") container processes"
		# shellcheck disable=SC2086 # one pid a word
		kill -TERM $pids 2>/dev/null
		# shellcheck disable=SC2086
		if ! gone_within 10 $pids; then
			cgroup_v2 && [[ -f $CGROUP_FS/$n/cgroup.kill ]] && echo 1 >"$CGROUP_FS/$n/cgroup.kill"
			pids=$(cgroup_pids "$n")
			# shellcheck disable=SC2086
			[[ -z $pids ]] || kill -KILL $pids 2>/dev/null
		fi
		for _ in $(seq 1 50); do [[ -z $(cgroup_pids "$n") ]] && break; sleep 0.2; done
		for p in $(cgroup_pids "$n"); do left+=("process $(cat "/proc/$p/comm" 2>/dev/null) (pid $p) in $n's cgroups survived SIGKILL"); done
	fi
	# Shims of this node's containerd (they run outside the node's cgroups).
	shims=()
	for p in /proc/[0-9]*; do
		{ c=$(tr '\0' ' ' <"$p/cmdline"); } 2>/dev/null || continue
		[[ $c == *"-address $RUNDIR/$n/containerd.sock"* ]] && shims+=("${p#/proc/}")
	done
	for p in $(stop_pids 5 "${shims[@]}"); do left+=("containerd shim (pid $p) of $n survived SIGKILL"); done
	stop "containerd-$n" 20
done
# Mounts under the state and run dirs (overlay roots, pod volumes, the pods'
# network namespaces, the nodes' sysfs), deepest first.
mounts() { awk '{print $5}' /proc/self/mountinfo | grep -E "^($STATE|$RUNDIR)/" | sort -r; }
for m in $(mounts); do umount -l "$m" 2>/dev/null; done
for m in $(mounts); do left+=("mount $m"); done
# Cgroups go once their processes have (rmdir of an emptied v1 memory
# cgroup can fail for a moment while the kernel offlines it: retried).
for n in "${NODES[@]}"; do
	for d in $(node_cgroups "$n"); do
		[[ -d $d ]] || continue
		for _ in $(seq 1 25); do
			find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
			[[ -d $d ]] || break
			sleep 0.2
		done
		[[ -d $d ]] && left+=("cgroup $d")
	done
done
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c" 30; done
# A namespace outlives its name while a process is in it: name such
# processes (a command someone runs there with exec.sh) instead.
for ns in "${NODES[@]}" "$CP_NS"; do
	[[ -e /var/run/netns/$ns ]] || continue
	id="net:[$(stat -L -c %i "/var/run/netns/$ns")]"
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/ns/net" 2>/dev/null) == "$id" ]] &&
			left+=("process $(cat "$p/comm" 2>/dev/null) (pid ${p#/proc/}) in namespace $ns")
	done
	ip netns delete "$ns" 2>/dev/null
	[[ -e /var/run/netns/$ns ]] && left+=("namespace $ns")
done
if [[ -z $(mounts) ]]; then
	rm -rf --one-file-system "$STATE/etcd" "$RUNDIR"
	for n in "${NODES[@]}"; do rm -rf --one-file-system "${STATE:?}/$n"; done
fi
if [[ ${#left[@]} -gt 0 ]]; then
	printf 'down: left behind: %s\n' "${left[@]}" >&2
	exit 1
fi
log "done"
