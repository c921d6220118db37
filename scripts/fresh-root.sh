#!/usr/bin/env bash
# The README's first command on a fresh machine. Builds a minimal Debian
# root (mmdebstrap --variant=minbase: no compiler, no Go, no iproute2, no
# workload tools), copies this checkout's files into it (no .git, as from
# a tarball) and runs scripts/quickstart.sh there as root, in a chroot with
# its own mount namespace. The root shares this machine's kernel, so the
# run's namespaces, tunings and processes are real; afterwards the run's
# files are checked, and that nothing of it is left: in the root's /run
# (namespace names, journals), checked before its mount namespace ends, and
# on the host, checked whether the run passed or not. The run's journals
# and the machine's lock are the host's own (/run/cnibench and
# /run/cnibench.lock, bind-mounted into the root): its changes are to the
# host's kernel, so a run killed in the root is refused and undone by the
# host's `cnibench cleanup` like any other, and it never runs beside one.
#
# Usage: scripts/fresh-root.sh OUTDIR [SUITE]
#   OUTDIR  where the run directory is copied (it must not exist)
#   SUITE   Debian (or Ubuntu) suite of the root (default: this machine's
#           codename); an Ubuntu suite's root has the universe component too
# Needs root and the network (the distribution's mirror, the Go module proxy).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "fresh-root: run as root" >&2; exit 2; }
out=${1:?usage: scripts/fresh-root.sh OUTDIR [SUITE]}
[ ! -e "$out" ] || { echo "fresh-root: $out exists" >&2; exit 2; }
host_codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
suite=${2:-$host_codename}
# mmdebstrap takes the mirror from the suite (archive.ubuntu.com for
# Ubuntu's) and only its main component unless told: Ubuntu keeps iperf3,
# sockperf, qperf and etcd-server in universe. An Ubuntu suite is this
# Ubuntu machine's own, or one distro-info-data lists (its series column),
# as mmdebstrap tells them apart. A Debian root is built as before.
components=()
if { [ "$(. /etc/os-release && echo "$ID")" = ubuntu ] && [ "$suite" = "$host_codename" ]; } ||
  awk -F, -v s="$suite" '$3 == s {f = 1} END {exit !f}' /usr/share/distro-info/ubuntu.csv 2>/dev/null; then
  components=(--components=main,universe)
fi
if ! command -v mmdebstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends mmdebstrap >/dev/null
fi

R=$(mktemp -d /var/tmp/cnibench-fresh.XXXXXX)
# in_root: the processes whose root is the fresh root (the chrooted run,
# and mmdebstrap's dpkg), one pid a line.
in_root() {
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" != "$R" ] || echo "${p#/proc/}"
  done
}
# The root is removed only when nothing runs in it: a run stopped by a
# signal first reverts what it changed, from inside the root. The mounts
# below live in the chroot's own mount namespace and end with it, so
# removing the root never reaches the host's /sys or /dev.
remove_root() {
  for _ in $(seq 1 600); do [ -z "$(in_root)" ] && break; sleep 0.2; done
  if [ -n "$(in_root)" ]; then
    echo "fresh-root: processes still run in $R after 120 s ($(in_root | tr '\n' ' ')): it is left in place" >&2
    return
  fi
  rm -rf --one-file-system "$R"
}
trap remove_root EXIT
# On TERM or INT (CI stopping the suite, Ctrl-C) the stage that runs is
# stopped and waited for before the root goes: during the run, the
# processes in the root get the TERM (cnibench tears down and reverts),
# and the namespace's shell still checks what they left.
child=
stop_child() { # SIGNAL
  trap '' TERM INT
  if [ -n "$child" ]; then
    echo "fresh-root: $1: stopping and waiting for the run in the root" >&2
    pids=$(in_root)
    # shellcheck disable=SC2086 # one pid a word
    if [ -n "$pids" ]; then kill -TERM $pids 2>/dev/null; else kill -TERM "$child" 2>/dev/null; fi
    wait "$child" 2>/dev/null || true
  fi
  exit $((128 + $(kill -l "$1")))
}
trap 'stop_child TERM' TERM
trap 'stop_child INT' INT
run() { # CMD...: in the background, so that a signal reaches stop_child at once
  "$@" &
  child=$!
  local r=0
  wait "$child" || r=$?
  child=
  return "$r"
}

echo "fresh-root: building a $suite minbase root in $R"
run mmdebstrap --variant=minbase --quiet "${components[@]}" "$suite" "$R"
mkdir -p "$R/root/cnibench"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z | tar --null -T - -cf - | tar -C "$R/root/cnibench" -xf -
else # a checkout from a tarball: everything but what builds and runs leave
  tar --exclude=./bin --exclude=./results -cf - . | tar -C "$R/root/cnibench" -xf -
fi
cp /etc/resolv.conf "$R/etc/resolv.conf"
# The host's trust anchors: where the host reaches the registries through
# a TLS-inspecting proxy (CI machines often do), its CA is trusted in the
# root too once ca-certificates is installed; elsewhere this adds only the
# public roots the root gets anyway.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$R/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$R/usr/local/share/ca-certificates/host-bundle.crt"
fi
# The proxy settings the host reaches the mirror and the Go module proxy
# through (the CA bundle is for that case), for the run's apt-get,
# curl and go: the chroot's env -i starts it without the host's environment.
# Passed to the namespace's shell after the root's path, as NAME=VALUE.
pass_env=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY GOPROXY; do
  [ -z "${!v:-}" ] || pass_env+=("$v=${!v}")
done

sock_before=$(cat /proc/sys/net/core/rps_sock_flow_entries)
links_before=$(ip -o link | wc -l)
# The host's journal directory and machine lock, made as cnibench makes
# them, to be bind-mounted into the root (a file is bind-mounted onto a
# file).
[ -d /run/cnibench ] || mkdir -m 700 /run/cnibench
[ -e /run/cnibench.lock ] || [ -L /run/cnibench.lock ] || (umask 077 && : >/run/cnibench.lock)
# "/" is made a mount point, as it is on a machine or in a container. The
# root's /run (its /var/run too) is a tmpfs of this mount namespace, but
# for the host's /run/cnibench and /run/cnibench.lock bound onto it: the
# run's network namespace names live there and vanish with the namespace,
# so the shell of the namespace looks for them after the run, whether it
# passed or not, and for journals and state the run added to the host's
# directory (exit 3: it left some). Were the journals the tmpfs's too, a
# run killed in the root would lose them with the namespace while its
# changes stayed on the host's kernel, out of any cleanup's reach.
rc=0
run unshare --mount --propagation private --fork sh -c '
R=$1
shift
set -e
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mkdir -m 700 "$R/run/cnibench"
mount --bind /run/cnibench "$R/run/cnibench"
: >"$R/run/cnibench.lock"
mount --bind /run/cnibench.lock "$R/run/cnibench.lock"
mount -t tmpfs tmpfs "$R/tmp"
before=$(ls -d /run/cnibench/*.journal /run/cnibench/state/* 2>/dev/null || true)
set +e
# A signal stops the run, not these checks (a handler, not an ignore: the
# run must get the default dispositions).
trap "echo fresh-root: signal: the run stops, then the checks run >&2" INT TERM
chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" \
  sh -c "cd /root/cnibench && ./scripts/quickstart.sh --out /root/run"
rc=$?
left=
for f in "$R"/run/netns/cnb-* "$R"/run/cnibench/*.journal "$R"/run/cnibench/state/*; do
  [ -e "$f" ] || continue
  case "
$before
" in *"
${f#"$R"}
"*) continue ;; esac # the host had it before the run
  left="$left ${f#"$R"}"
done
if [ -n "$left" ]; then
  echo "fresh-root: the run left in the root:$left" >&2
  [ "$rc" -ne 0 ] || rc=3
fi
exit "$rc"' sh "$R" "${pass_env[@]}" || rc=$?

# The host is checked whatever the run's outcome.
problems=
# A value left changed is set back to what it was (the check still
# fails): the host must not stay changed by a failed check. Read and
# written under the machine's lock, which cnibench takes with flock(2)
# (journal.LockHost), as flock(1) does: a run of the host's that started
# meanwhile has tuned the value and journaled ours as its old one, and
# writing ours back under it would leave its cleanup finding the value
# "changed since". Held by such a run for long, the value is left alone,
# and so it is while a journal in /run/cnibench names it: a run killed
# after tuning it released the lock, and its journal's cleanup sets it back.
sock_after=$(cat /proc/sys/net/core/rps_sock_flow_entries)
if [ "$sock_after" != "$sock_before" ]; then
  problems="$problems; rps_sock_flow_entries not restored (found $sock_after, was $sock_before"
  if flock -w 60 /run/cnibench.lock sh -c '
    [ "$(cat /proc/sys/net/core/rps_sock_flow_entries)" = "$1" ] || exit 4
    for j in /run/cnibench/*.journal; do grep -qs rps_sock_flow_entries "$j" && exit 5; done
    echo "$2" >/proc/sys/net/core/rps_sock_flow_entries' sh "$sock_after" "$sock_before"; then
    problems="$problems: set back to $sock_before)"
  else
    problems="$problems: not set back: the machine's lock was held for 60s, it changed meanwhile (another run's), a run's journal in /run/cnibench names it (cnibench cleanup reverts it), or the write failed)"
  fi
fi
if [ "$(ip -o link | wc -l)" -ne "$links_before" ]; then ip -o link >&2; problems="$problems; interfaces left on the host"; fi
for p in $(in_root); do problems="$problems; process $(cat "/proc/$p/comm" 2>/dev/null) ($p) left running in the root"; done
fail() { echo "fresh-root: $*" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "the run in the root failed (exit $rc; 3: it left the names above)$problems"
[ -z "$problems" ] || fail "${problems#; }"
for f in study.yaml env.json samples.jsonl cpu.jsonl summary.csv summary.json summary.md report.html; do
  [ -s "$R/root/run/$f" ] || fail "$f missing or empty in the run directory"
done
cp -a "$R/root/run" "$out"
echo "fresh-root: ok (the first command on a fresh $suite root; run directory: $out)"
