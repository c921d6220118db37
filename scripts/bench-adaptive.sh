#!/bin/sh
# bench-adaptive.sh: the benchmark of docs/statistics.md ("Adaptive
# against fixed"). It answers the rps-rfs question (each tuning against
# the baseline at 1, 4 and 16 pod pairs) twice on this machine: with the
# fixed 20-trial design and with adaptive rounds (3 to 20) and the paired
# analysis, then prints both machine times and the decisions side by
# side; and replays the adaptive controller over the fixed run's own
# trials (scripts/bench-replay), which compares the designs on the same
# measurements. Not part of the suite: it takes about 90 minutes on 2
# cores (30 with 4-second trials) and wants a quiet machine. Needs root,
# Go (for the replay) and python3 (for the table).
#
# Usage: scripts/bench-adaptive.sh [OUTDIR]
# Environment: CNIBENCH (binary, default: built from this tree),
# BENCH_DURATION (per trial, default 11s, 1 s of it warm-up; 3-second
# trials spread more per trial at 16 pairs, docs/statistics.md).
# Shared test machines: flock /tmp/cnibench-test.lock scripts/bench-adaptive.sh
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d /tmp/cnibench-bench.XXXXXX)}
BIN=${CNIBENCH:-}
if [ -z "$BIN" ]; then
	BIN=$out/cnibench
	(cd "$here" && go build -o "$BIN" ./cmd/cnibench)
fi
common="--set replicas=[1,4,16] --set tunings=[baseline,rps,rps+,rfs,rfs+] --set duration=${BENCH_DURATION:-11s} --set warmup=1s --set cooldown=0s --set budget=0s --set margin=5%"
run() { # name, extra --set ...
	name=$1
	shift
	start=$(date +%s)
	# shellcheck disable=SC2086 # $common is a list of flags
	"$BIN" run rps-rfs $common "$@" --out "$out/$name" >"$out/$name.log" 2>&1
	echo $(($(date +%s) - start)) >"$out/$name.seconds"
}
# A fixed run already in OUTDIR is kept (it is the slow half); the
# adaptive one always runs again.
[ -f "$out/fixed/summary.json" ] || run fixed --set trials=20
rm -rf "$out/adaptive" "$out/adaptive.seconds"
run adaptive --set 'trials={min: 3, max: 20}'
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def secs(n): return int(open(f"{out}/{n}.seconds").read())
fixed = {}
for r in json.load(open(f"{out}/fixed/summary.json"))["rows"]:
    p = r.get("VsBaseline") or r.get("vs_baseline")
    cpu = r.get("cpu")  # null (model 2) or -1 (model 1): not one core's row
    if r["metric"] == "bitrate" and (cpu is None or cpu < 0) and p:
        fixed[(r["tuning"], r["replicas"])] = (p["decision"], p["chosen_ratio"], p["chosen_low"], p["chosen_high"], r["n"])
ada = {}
for s in json.load(open(f"{out}/adaptive/stops.json")):
    if s.get("decision"):
        c = s["cell"]
        ada[(c["tuning"], c["replicas"])] = (s["decision"], s.get("ratio"), s.get("low"), s.get("high"), s["n"])
f = lambda d: "-" if d is None else "%s %.3f [%.3f, %.3f] n=%d" % (d[0], d[1] or 0, d[2] or 0, d[3] or 0, d[4])
def side(d):  # a significant "equal" as the side of 1 it lies on (bitrate: higher is better)
    if d[0] == "equal" and d[2] is not None and (d[2] > 1 or d[3] < 1):
        return "better" if d[1] > 1 else "worse"
    return d[0]
print("| tuning | pairs | fixed 20 trials | adaptive + paired | same |")
print("|---|---|---|---|---|")
count = {"yes": 0, "compatible": 0, "no": 0}
for k in sorted(fixed, key=lambda k: (k[1], k[0])):
    a = ada.get(k)
    agree = "no" if a is None else "yes" if a[0] == fixed[k][0] else "compatible" if side(a) == side(fixed[k]) else "no"
    count[agree] += 1
    print(f"| {k[0]} | {k[1]} | {f(fixed[k])} | {f(a)} | {agree} |")
print(f"\nsame decision in {count['yes']} of {len(fixed)} cells ({count['compatible']} more compatible: equal and significant in one, better or worse on that side in the other); machine time: fixed {secs('fixed')} s, adaptive {secs('adaptive')} s ({secs('adaptive')/secs('fixed'):.2f} of fixed)")
PY
echo
echo "Replay of the adaptive design over the fixed run's trials:"
# -holds: the cells the adaptive run held before a decision (few-valued
# trials, stops.json "held") are held in the replay too.
(cd "$here" && go run ./scripts/bench-replay -min 3 -max 20 -margin 0.05 -holds "$out/adaptive" "$out/fixed")
