#!/usr/bin/env bash
# The README's first command on a fresh machine. Builds a minimal Debian
# root (mmdebstrap --variant=minbase: no compiler, no Go, no iproute2, no
# workload tools), copies this checkout's files into it (no .git, as from
# a tarball) and runs scripts/quickstart.sh there as root, in a chroot with
# its own mount namespace. The root shares this machine's kernel, so the
# run's namespaces, tunings and processes are real; afterwards the run's
# files are checked, and that nothing of it is left on the host.
#
# Usage: scripts/fresh-root.sh OUTDIR [SUITE]
#   OUTDIR  where the run directory is copied (it must not exist)
#   SUITE   Debian suite of the root (default: this machine's codename)
# Needs root and the network (the Debian mirror, the Go module proxy).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "fresh-root: run as root" >&2; exit 2; }
out=${1:?usage: scripts/fresh-root.sh OUTDIR [SUITE]}
[ ! -e "$out" ] || { echo "fresh-root: $out exists" >&2; exit 2; }
suite=${2:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
if ! command -v mmdebstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

R=$(mktemp -d /var/tmp/cnibench-fresh.XXXXXX)
# The mounts below live in the chroot's own mount namespace and end with
# it, so removing the root never reaches the host's /sys or /dev.
trap 'rm -rf --one-file-system "$R"' EXIT
echo "fresh-root: building a $suite minbase root in $R"
mmdebstrap --variant=minbase --quiet "$suite" "$R"
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

sock_before=$(cat /proc/sys/net/core/rps_sock_flow_entries)
links_before=$(ip -o link | wc -l)
# "/" is made a mount point, as it is on a machine or in a container.
unshare --mount --propagation private --fork sh -ec '
R=$1
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
exec chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  sh -c "cd /root/cnibench && ./scripts/quickstart.sh --out /root/run"' sh "$R"

fail() { echo "fresh-root: $*" >&2; exit 1; }
for f in study.yaml env.json samples.jsonl cpu.jsonl summary.csv summary.json summary.md report.html; do
  [ -s "$R/root/run/$f" ] || fail "$f missing or empty in the run directory"
done
[ "$(cat /proc/sys/net/core/rps_sock_flow_entries)" = "$sock_before" ] || fail "rps_sock_flow_entries not restored"
[ "$(ip -o link | wc -l)" -eq "$links_before" ] || { ip -o link; fail "interfaces left on the host"; }
for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" != "$R" ] || fail "process $(cat "$p/comm") (${p#/proc/}) left running in the root"
done
cp -a "$R/root/run" "$out"
echo "fresh-root: ok (the first command on a fresh $suite root; run directory: $out)"
