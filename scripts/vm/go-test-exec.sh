#!/usr/bin/env bash
# Runs a program (a compiled Go test binary) inside the full-kernel VM:
#
#   go test -exec scripts/vm/go-test-exec.sh ./internal/engine/local/ -run TestConnectivity
#
# The guest is Debian's own kernel under QEMU (software emulation), with
# every module cnibench uses loaded (scripts/vm/setup.sh prepares it). The
# guest sees the host's / read-only (with a throw-away tmpfs overlay) and
# runs the binary as root in the current directory; its output streams
# here and its exit code is this script's. One VM per invocation, and a
# second, from the start, when the first does not finish in TIMEOUT.
#
# Environment: CNIBENCH_VM_CACHE (default /var/cache/cnibench-vm),
# CNIBENCH_VM_MEM (512M), CNIBENCH_VM_CPUS (2), CNIBENCH_VM_TIMEOUT
# (seconds, 900), CNIBENCH_VM_TCG (multi: one host thread per guest CPU;
# single: all guest CPUs on one thread, slower). Under multi, QEMU 7.2
# has left a guest CPU running the int3 the kernel writes for a moment
# while it patches a static key (text_poke_bp) after memory held the new
# instruction: each nf_tables trace start or stop flips nft_trace_enabled,
# and with packets in nft_do_chain both CPUs looped there for good.
# Single-threaded emulation has no such race; the end-to-end stage uses it.
# The console (kept at warnings, so a hang shows its stacks) is printed
# when the guest does not finish.
set -euo pipefail
CACHE=${CNIBENCH_VM_CACHE:-/var/cache/cnibench-vm}
MEM=${CNIBENCH_VM_MEM:-512M}
CPUS=${CNIBENCH_VM_CPUS:-2}
TIMEOUT=${CNIBENCH_VM_TIMEOUT:-900}
TCG=${CNIBENCH_VM_TCG:-multi}
case "$TCG" in single | multi) ;; *) echo "vm: CNIBENCH_VM_TCG=$TCG: want single or multi" >&2; exit 2 ;; esac
# Checked here: `timeout abc` or `-smp x` would fail inside the boot loop
# and read as a guest that did not finish.
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || { echo "vm: CNIBENCH_VM_TIMEOUT=$TIMEOUT: want a whole number of seconds" >&2; exit 2; }
[[ $CPUS =~ ^[1-9][0-9]*$ ]] || { echo "vm: CNIBENCH_VM_CPUS=$CPUS: want a whole number" >&2; exit 2; }
[[ $MEM =~ ^[1-9][0-9]*[MG]?$ ]] || { echo "vm: CNIBENCH_VM_MEM=$MEM: want a size such as 512M or 1G" >&2; exit 2; }
if [ $# -lt 1 ]; then echo "usage: $0 PROGRAM [ARGS...]" >&2; exit 2; fi
for f in vmlinux initrd.img; do
  [ -e "$CACHE/$f" ] || { echo "vm: $CACHE/$f missing; run scripts/vm/setup.sh as root" >&2; exit 2; }
done
prog=$1; shift
job=$(mktemp -d /var/tmp/cnibench-vm.XXXXXX)
qpid=
# running PID: not yet exited (an unreaped child stays as a zombie).
running() { [ -e "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# The job folder goes only once QEMU has exited: until then it writes the
# guest's files there (9p) and its console. qpid is timeout's, which
# passes the TERM on to QEMU.
cleanup() {
  if [ -n "$qpid" ] && running "$qpid"; then
    kill "$qpid" 2>/dev/null || true
    for _ in $(seq 1 150); do running "$qpid" || break; sleep 0.2; done
    if running "$qpid"; then pkill -KILL -P "$qpid" 2>/dev/null; kill -KILL "$qpid" 2>/dev/null; fi
    wait "$qpid" 2>/dev/null || true
  fi
  rm -rf "$job"
}
trap cleanup EXIT
# go test sends QUIT when its -timeout passes: stop the guest then too.
trap 'exit 130' INT TERM QUIT
cp "$prog" "$job/prog"
: > "$job/out"
{
  echo 'export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root'
  echo 'export CNIBENCH_IN_VM=1'
  while IFS= read -r kv; do
    case "$kv" in CNIBENCH_VM_*) ;; CNIBENCH_*=* | GOTRACEBACK=* | GODEBUG=*) printf 'export %q\n' "$kv" ;; esac
  done < <(env)
  echo 'ip link set lo up 2>/dev/null'
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'exec /job/prog'
  printf ' %q' "$@"
  echo
} > "$job/run.sh"
# boot runs the guest once, streaming the test's output here.
boot() {
  rm -f "$job/rc"
  : > "$job/out"
  timeout --foreground "$TIMEOUT" qemu-system-x86_64 \
    -accel "tcg,thread=$TCG" -cpu max -smp "$CPUS" -m "$MEM" \
    -bios /usr/share/qemu/qboot.rom -nodefaults -no-user-config -nographic -no-reboot \
    -kernel "$CACHE/vmlinux" -initrd "$CACHE/initrd.img" \
    -append "console=ttyS0 loglevel=5 softlockup_all_cpu_backtrace=1 panic=-1 random.trust_cpu=on" \
    -serial "file:$job/console" -monitor none \
    -device virtio-rng-pci \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$job,mount_tag=job,security_model=none" &
  qpid=$!
  tail -n +1 -f --pid="$qpid" "$job/out" &
  tpid=$!
  set +e
  wait "$qpid"; qrc=$?
  set -e
  qpid=
  wait "$tpid" 2>/dev/null || true
}
# The guest is emulated; on a busy host one has hung now and then (no
# output for minutes). A guest that does not finish within TIMEOUT is
# booted once more and the test run again from the start, in a fresh
# guest; a test that fails, or a guest that hangs twice, fails. A guest
# that ends without a result (a panic, an init that could not mount the
# host's root) is told apart from one that timed out: exit 124 only then.
for attempt in 1 2; do
  boot
  if [ -s "$job/rc" ]; then
    exit "$(cat "$job/rc")"
  fi
  if [ "$qrc" -eq 124 ]; then
    echo "vm: the guest did not finish in ${TIMEOUT}s (attempt $attempt of 2); console:" >&2
  else
    echo "vm: the guest exited without a result (qemu exit $qrc, attempt $attempt of 2); console:" >&2
  fi
  tail -n 120 "$job/console" >&2 || true
done
[ "$qrc" -eq 124 ] && exit 124
exit 1
