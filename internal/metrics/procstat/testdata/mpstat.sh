#!/bin/bash
# Prints what sysstat's `mpstat -u -P ALL 1 1` makes of a pair of captured
# /proc/stat files, to produce the *.mpstat files the tests compare with.
# Needs root: in a private mount namespace it bind-mounts NAME-t0 over
# /proc/stat and a directory of NCPU empty cpuN entries over
# /sys/devices/system/cpu (which mpstat counts), then swaps in NAME-t1
# while mpstat waits for its interval.
#
# usage: sudo ./mpstat.sh NCPU NAME > NAME.mpstat
set -euo pipefail
n=$1
t0=$(realpath "$2-t0")
t1=$(realpath "$2-t1")
exec unshare -m --propagation private bash -euc '
n=$1 t0=$2 t1=$3
d=$(mktemp -d)
trap "rm -rf $d" EXIT
for ((i = 0; i < n; i++)); do mkdir "$d/cpu$i"; done
cp "$t0" "$d/stat"
mount --bind "$d" /sys/devices/system/cpu
mount --bind "$d/stat" /proc/stat
S_TIME_FORMAT=ISO LC_ALL=C mpstat -u -P ALL 1 1 >"$d/out" &
sleep 0.5
cat "$t1" >"$d/stat" # same inode, so the bind mount sees it
wait
echo "# mpstat -u -P ALL 1 1 ($(mpstat -V 2>&1 | head -1)) over $(basename "$t0") and $(basename "$t1"), by mpstat.sh"
grep -v -e "^Average" -e "^Linux" -e "^$" "$d/out"
' _ "$n" "$t0" "$t1"
