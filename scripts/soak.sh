#!/bin/sh
# soak.sh: kill -9 cnibench at a random moment of a quick run, N times,
# each followed by `cnibench cleanup --run ID`, and check that nothing of
# the run is left: no namespace of the run, no link added to the host
# namespace (but the fallback devices a module the run loaded adds once,
# ipip's tunl0 or ifb's ifb0/ifb1: docs/safety.md), no qdisc changed on a host device, no process of the run (one
# carrying the run's TMPDIR in its environment), no
# file under the journal directory or the run's TMPDIR, and no changed
# value of what cnibench tunes on the host (rps_sock_flow_entries, the
# host devices' rps_cpus and rps_flow_cnt). Not part of the default suite:
# it takes minutes per iteration and needs root.
#
# Usage: scripts/soak.sh [N]    (N defaults to 50)
# Environment: CNIBENCH (binary, default: built from this tree),
# SOAK_JOURNAL_DIR (default: a private directory, so a run of someone
# else's on this machine is never touched), SOAK_MAX_DELAY (seconds before
# the kill, at most; default 40).
# Shared test machines: run it under the test lock,
#   flock /tmp/cnibench-test.lock scripts/soak.sh 5
set -u
N=${1:-50}
MAXDELAY=${SOAK_MAX_DELAY:-40}
case $N in '' | *[!0-9]* | 0) echo "soak: N=$N: want a whole number of iterations, at least 1" >&2; exit 2 ;; esac
case $MAXDELAY in '' | *[!0-9]* | 0 | 1) echo "soak: SOAK_MAX_DELAY=$MAXDELAY: want whole seconds, at least 2" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cnibench-soak.XXXXXX)
BIN=${CNIBENCH:-}
if [ -z "$BIN" ]; then
	BIN=$work/cnibench
	(cd "$here" && go build -o "$BIN" ./cmd/cnibench) || exit 1
fi
JDIR=${SOAK_JOURNAL_DIR:-$work/journal}
TMPBASE=${TMPDIR:-/tmp}

# The quick studies, shortened with --set.
STUDIES="rps-rfs|--quick --set trials=1
datapaths|--quick --set trials=1 --set duration=3s --set warmup=1s
cni-compare|--quick --set datapaths=[flannel,calico-np-xsub,kube-router] --set duration=3s --set warmup=1s
nic-modes|--quick --set duration=3s --set warmup=1s"

snapshot() { # what cnibench may change on the host, one value a line
	ip -o link show | awk -F': ' '{print "link " $2}' | sed 's/@.*//' | sort
	tc qdisc show | sed 's/^/qdisc /' | sort
	echo "sysctl net.core.rps_sock_flow_entries $(cat /proc/sys/net/core/rps_sock_flow_entries)"
	for f in /sys/class/net/*/queues/rx-*/rps_cpus /sys/class/net/*/queues/rx-*/rps_flow_cnt; do
		[ -r "$f" ] && echo "sysfs $f $(cat "$f" 2>/dev/null)"
	done
}
# The programs a run starts, by exact command name, with their state: a
# killed run's programs are reparented to PID 1 and, once killed, stay
# zombies (Z) until it reaps them; they hold nothing.
procs() { ps -eo pid=,stat=,comm= | awk '$3 ~ /^(iperf3|sockperf|qperf|perf|nginx|ab|flanneld|etcd|bird)$/ {print $1, $3, $2}' | sort; }

pass=0 fail=0 early=0 i=0
start=$(date -u +%FT%TZ)
while [ "$i" -lt "$N" ]; do
	i=$((i + 1))
	line=$(echo "$STUDIES" | sed -n "$(( (i - 1) % 4 + 1 ))p")
	study=${line%%|*} args=${line#*|}
	delay=$(awk -v m="$MAXDELAY" -v s="$$$i" 'BEGIN{srand(s); printf "%.1f", 2 + rand() * (m - 2)}')
	snapshot >"$work/before"
	procs >"$work/procs-before"
	ip netns list | awk '{print $1}' | sort >"$work/netns-before"
	# The run's own journal is the one that was not there before it (one a
	# failed cleanup left would sort first as well).
	ls "$JDIR" 2>/dev/null | sed -n 's/\.journal$//p' | sort >"$work/journals-before"
	# shellcheck disable=SC2086
	"$BIN" run "$study" $args --journal-dir "$JDIR" --out "$work/out-$i" >"$work/log-$i" 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$? # 137: killed; anything else: the run ended before the kill
	run=$(ls "$JDIR" 2>/dev/null | sed -n 's/\.journal$//p' | sort | comm -13 "$work/journals-before" - | head -1)
	problems=""
	if [ -n "$run" ]; then
		"$BIN" cleanup --run "$run" --journal-dir "$JDIR" >"$work/cleanup-$i" 2>&1 || problems="$problems cleanup-failed"
		ip netns list | awk '{print $1}' | grep -q "^cnb-$run-" && problems="$problems namespaces"
		ls -d "$JDIR/$run.journal" "$JDIR/state/$run" "$TMPBASE/cnibench-$run" 2>/dev/null | grep -q . && problems="$problems files"
	fi
	ip netns list | awk '{print $1}' | sort >"$work/netns-after"
	comm -13 "$work/netns-before" "$work/netns-after" | grep -q . && problems="$problems new-namespaces"
	snapshot >"$work/after"
	if ! diff -u "$work/before" "$work/after" >"$work/diff-$i"; then problems="$problems host-changed"; fi
	procs >"$work/procs-after"
	# A process of the run: one that inherited the run's TMPDIR (every
	# program the run starts does). New workload programs are only
	# reported: on a shared machine they may be someone else's.
	if [ -n "$run" ] && grep -lz "cnibench-$run" /proc/[0-9]*/environ 2>/dev/null | grep -q .; then
		problems="$problems processes"
	fi
	comm -13 "$work/procs-before" "$work/procs-after" >"$work/newprocs-$i"
	what="killed after ${delay}s"
	[ "$rc" -eq 137 ] || what="ended by itself (exit $rc) before the kill at ${delay}s, see $work/log-$i"
	if [ -n "$problems" ]; then
		fail=$((fail + 1))
		echo "soak $i/$N: $study $what (run ${run:-none}): LEFT$problems (see $work/*-$i)"
	elif [ "$rc" -ne 137 ]; then
		early=$((early + 1))
		echo "soak $i/$N: $study $what (run ${run:-none}): clean, not counted"
	else
		pass=$((pass + 1))
		echo "soak $i/$N: $study $what (run ${run:-none}): clean"
	fi
done
echo "soak summary: $pass of $N killed and clean, $fail with leftovers, $early ended before the kill; started $start, ended $(date -u +%FT%TZ); work directory $work"
# An iteration whose run ended before the kill tested nothing: the soak
# passes when none left anything and at least one kill was tested.
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
