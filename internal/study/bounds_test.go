package study

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// boundsBase is a valid study with a workload of every tool, so one --set
// can push any field out of range.
const boundsBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: bounds
spec:
  datapaths: [flannel-vxlan]
  tunings:
    - baseline
    - name: rfs-small
      rps: {cpus: all}
      rfs: {sockFlowEntries: 4096, flowCnt: 4096}
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
    - {name: http, tool: ab, size: 1M}
    - {name: rr, tool: sockperf}
  replicas: [1, 2]
  trials: 2
  duration: 4s
  warmup: 1s
  reference:
    - {tuning: baseline, replicas: 1, metric: bitrate, value: 1}
`

// tunings lists n distinct RPS tunings and the baseline.
func tunings(n int) string {
	out := []string{"baseline"}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("{name: t%d, rps: {cpus: all}}", i))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func parseBounds(t *testing.T, set ...string) (*Study, error) {
	t.Helper()
	return Parse("bounds.yaml", []byte(boundsBase), Options{Set: set}, testCatalog)
}

// refusedAt checks that the bounds study with set is refused by one
// one-line error naming the file, field and what is wrong (want).
func refusedAt(t *testing.T, set []string, field, want string) {
	t.Helper()
	_, err := parseBounds(t, set...)
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "bounds.yaml") || !strings.Contains(msg, field+": ") || !strings.Contains(msg, want) {
		t.Errorf("got %q, want file, field %s and %q", msg, field, want)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("multi-line error %q", msg)
	}
}

func TestBoundsBaseIsValid(t *testing.T) {
	if _, err := parseBounds(t); err != nil {
		t.Fatal(err)
	}
}

// Every out-of-range value is refused, and the error names the file, the
// field and the bound.
func TestOutOfRangeValues(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen+1)
	ints := func(n int) string {
		var b []string
		for i := 1; i <= n; i++ {
			b = append(b, fmt.Sprint(i))
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	for _, tc := range []struct {
		name  string
		set   []string
		field string
		want  string
	}{
		// Names that become paths.
		{"name traversal", []string{"metadata.name=../../etc/x"}, "metadata.name", "use ASCII letters"},
		{"name parent", []string{"metadata.name=../x"}, "metadata.name", "use ASCII letters"},
		{"name slash", []string{"metadata.name=a/b"}, "metadata.name", "use ASCII letters"},
		{"name dot", []string{"metadata.name=."}, "metadata.name", "use ASCII letters"},
		{"name dotdot", []string{"metadata.name=.."}, "metadata.name", "use ASCII letters"},
		{"name dash", []string{"metadata.name=-rf"}, "metadata.name", "use ASCII letters"},
		{"name absolute", []string{"metadata.name=/etc"}, "metadata.name", "use ASCII letters"},
		{"name non-ASCII", []string{"metadata.name=étude"}, "metadata.name", "use ASCII letters"},
		{"name space", []string{"metadata.name=a b"}, "metadata.name", "use ASCII letters"},
		{"name long", []string{"metadata.name=" + long}, "metadata.name", "at most 64"},
		{"name empty", []string{`metadata.name=""`}, "metadata.name", "missing"},
		{"datapath name long", []string{"datapaths=[{name: " + long + ", type: flannel-vxlan}]"}, "spec.datapaths[0].name", "at most 64"},
		{"tuning name slash", []string{"tunings=[baseline, {name: a/b, rps: {cpus: all}}]"}, "spec.tunings[1].name", "use ASCII letters"},
		{"tuning name long", []string{"tunings=[baseline, {name: " + long + ", rps: {cpus: all}}]"}, "spec.tunings[1].name", "at most 64"},
		{"workload name dots", []string{"workloads=[{name: .., tool: iperf3}]"}, "spec.workloads[0].name", "use ASCII letters"},
		{"workload name long", []string{"workloads=[{name: " + long + ", tool: iperf3}]"}, "spec.workloads[0].name", "at most 64"},
		{"offload name long", []string{"datapaths=[{name: f, type: flannel-vxlan, offloads: {" + strings.Repeat("x", 32) + ": off}}]"},
			"spec.datapaths[0].offloads", "at most 31"},
		// Lists.
		{"replicas duplicate", []string{"replicas=[1,2,1]"}, "spec.replicas[2]", "replica count 1 listed twice"},
		{"replicas too many", []string{"replicas=" + ints(MaxListLen+1)}, "spec.replicas", "65 entries; at most 64"},
		{"replica too large", []string{"replicas=[251]"}, "spec.replicas[0]", "between 1 and 250"},
		{"sweep duplicate", []string{"workloads=[{name: p, tool: iperf3, parallels: [1, 4, 4]}]"}, "spec.workloads[0].parallels[2]", "4 listed twice"},
		{"sweep too long", []string{"workloads=[{name: p, tool: iperf3, parallels: " + ints(MaxListLen+1) + "}]"}, "spec.workloads[0].parallels", "at most 64"},
		{"tunings too many", []string{"tunings=" + tunings(MaxListLen+1)}, "spec.tunings", "at most 64"},
		// Counts and durations.
		{"trials huge", []string{"trials=1000000"}, "spec.trials", "between 1 and 1000"},
		{"trials zero", []string{"trials=0"}, "spec.trials", "between 1 and 1000"},
		{"duration overflow", []string{"duration=2562047h"}, "spec.duration", "at most 24h"},
		{"duration 25h", []string{"duration=25h"}, "spec.duration", "at most 24h"},
		{"cooldown huge", []string{"cooldown=2562047h"}, "spec.cooldown", "at most 24h"},
		{"cooldown negative", []string{"cooldown=-1s"}, "spec.cooldown", "must be >= 0"},
		{"planned too long", []string{"duration=24h", "trials=1000"}, "spec.trials", "at most 720h"},
		// RFS.
		{"flowCnt 2^30", []string{"tunings=[baseline, {name: rfs-big, rps: {cpus: all}, rfs: {sockFlowEntries: 4096, flowCnt: 1073741824}}]"},
			"spec.tunings[1].rfs.flowCnt", "between 1 and 1048576"},
		{"sockFlowEntries 2^30", []string{"tunings=[baseline, {name: rfs-big, rps: {cpus: all}, rfs: {sockFlowEntries: 1073741824, flowCnt: 4096}}]"},
			"spec.tunings[1].rfs.sockFlowEntries", "between 1 and 1048576"},
		// scaling.rst's 32768 / N per queue: the kernel rounds it up,
		// and the tuning would fail every trial on the read-back.
		{"flowCnt 10000", []string{"tunings=[baseline, {name: r3, rps: {cpus: all}, rfs: {sockFlowEntries: 32768, flowCnt: 10000}}]"},
			"spec.tunings[1].rfs.flowCnt", "10000 is not a power of two: the kernel would round it up to 16384; write 16384"},
		{"tuning devices unknown", []string{"tunings=[baseline, {name: r, rps: {cpus: all}, devices: tunnel}]"},
			"spec.tunings[1].devices", `want "node" (underlay, tunnel and pod veths) or "underlay", got "tunnel"`},
		// Tool options, bounded by the tools' descriptions.
		{"ab size huge", []string{"workloads=[{name: http, tool: ab, size: 100G}]"}, "spec.workloads[0].size", "between 1 and 64M"},
		{"ab size overflow", []string{"workloads=[{name: http, tool: ab, size: 99999999999999999999G}]"}, "spec.workloads[0].size", "not a size below 8E"},
		{"ab size int64 overflow", []string{"workloads=[{name: http, tool: ab, size: 9000000000000G}]"}, "spec.workloads[0].size", "not a size below 8E"},
		{"iperf3 length huge", []string{"workloads=[{name: tcp, tool: iperf3, length: 2M}]"}, "spec.workloads[0].length", "between 1 and 1M for tcp"},
		{"iperf3 lengths huge", []string{"workloads=[{name: tcp, tool: iperf3, lengths: [1K, 4G]}]"}, "spec.workloads[0].lengths[1]", "between 1 and 1M"},
		{"iperf3 UDP length huge", []string{"workloads=[{name: udp, tool: iperf3, protocol: udp, rate: 1G, length: 65508}]"},
			"spec.workloads[0].length", "between 16 and 65507 for udp"},
		{"rate huge", []string{"workloads=[{name: udp, tool: iperf3, protocol: udp, rate: 2000G}]"}, "spec.workloads[0].rate", "1 Tbit/s"},
		{"background rate huge", []string{"workloads=[{name: bg, tool: iperf3, background: {connections: [1], pairs: 1, rate: 99999999G}}]"},
			"spec.workloads[0].background.rate", "1 Tbit/s"},
		{"parallel huge", []string{"workloads=[{name: tcp, tool: iperf3, parallel: 100000}]"}, "spec.workloads[0].parallel", "between 1 and 128"},
		{"concurrency huge", []string{"workloads=[{name: http, tool: ab, concurrency: [1, 1000000]}]"}, "spec.workloads[0].concurrency[1]", "between 1 and 20000"},
		{"message huge", []string{"workloads=[{name: rr, tool: sockperf, messageSize: 1000000}]"}, "spec.workloads[0].messageSize", "between 14 and 65000"},
		// References.
		{"reference replicas negative", []string{"reference=[{replicas: -1, metric: bitrate, value: 1}]"}, "spec.reference[0].replicas", "between 1 and 250"},
		{"reference replicas huge", []string{"reference=[{replicas: 100000, metric: bitrate, value: 1}]"}, "spec.reference[0].replicas", "between 1 and 250"},
		{"reference cpu negative", []string{"reference=[{cpu: -1, metric: core_idle, value: 1}]"}, "spec.reference[0].cpu", "between 0 and 4095"},
		{"reference no metric", []string{"reference=[{tuning: baseline, value: 1}]"}, "spec.reference[0].metric", "missing"},
		{"reference NaN", []string{"reference=[{metric: bitrate, value: .nan}]"}, "spec.reference[0].value", "finite"},
		{"reference Inf", []string{"reference=[{metric: bitrate, normalized: .inf}]"}, "spec.reference[0].normalized", "finite"},
		{"reference tuning path", []string{"reference=[{tuning: ../x, metric: bitrate, value: 1}]"}, "spec.reference[0].tuning", "use ASCII letters"},
		{"reference datapath path", []string{"reference=[{datapath: a/b, metric: bitrate, value: 1}]"}, "spec.reference[0].datapath", "use ASCII letters"},
	} {
		t.Run(tc.name, func(t *testing.T) { refusedAt(t, tc.set, tc.field, tc.want) })
	}
}

// Values at the bounds are accepted: the bounds are not off by one.
func TestValuesAtBounds(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen)
	for _, set := range [][]string{
		{"metadata.name=" + long},
		{"metadata.name=rps-rfs_2.v1"},
		// No iperf3 workload: iperf3's --omit takes at most 60 s.
		{"duration=24h", "warmup=23h", "cooldown=24h", "trials=1", "workloads=[{name: rr, tool: sockperf}, {name: http, tool: ab}]"},
		{"duration=24h", "warmup=60s", "cooldown=24h", "trials=1"},
		{"tunings=[baseline, {name: rfs-max, rps: {cpus: all}, rfs: {sockFlowEntries: 1048576, flowCnt: 1048576}}]"},
		// RFS alone: the kernel steers by the flow table without a mask.
		{"tunings=[baseline, {name: rfs-alone, rfs: {sockFlowEntries: 32768, flowCnt: 32768}}]"},
		{"workloads=[{name: http, tool: ab, size: 64M}, {name: tcp, tool: iperf3, lengths: [1, 1M]}]"},
		{"workloads=[{name: udp, tool: iperf3, protocol: udp, rate: 1000G, length: 65507}]"},
		{"replicas=[250]"},
		{"reference=[{replicas: 250, cpu: 4095, metric: core_idle, value: 0}, {metric: bitrate, normalized: 0}]"},
	} {
		if _, err := parseBounds(t, set...); err != nil {
			t.Errorf("%v: %v", set, err)
		}
	}
}

// An error from the file itself names its line.
func TestBoundErrorNamesLine(t *testing.T) {
	data := strings.Replace(boundsBase, "name: bounds", "name: ../../etc/x", 1)
	_, err := Parse("bounds.yaml", []byte(data), Options{}, testCatalog)
	if err == nil || !strings.HasPrefix(err.Error(), "bounds.yaml:4: metadata.name: ") {
		t.Errorf("got %v, want bounds.yaml:4: metadata.name", err)
	}
	data = strings.Replace(boundsBase, "replicas: [1, 2]", "replicas: [1, 2, 2]", 1)
	_, err = Parse("bounds.yaml", []byte(data), Options{}, testCatalog)
	if err == nil || !strings.HasPrefix(err.Error(), "bounds.yaml:16: spec.replicas[2]: replica count 2 listed twice") {
		t.Errorf("got %v, want bounds.yaml:16: spec.replicas[2]", err)
	}
}

func TestParseBytesOverflow(t *testing.T) {
	for _, s := range []string{"9223372036854775807K", "8589934592G", "99999999999999999999"} {
		if n, ok := ParseBytes(s); ok {
			t.Errorf("ParseBytes(%q) = %d, want refused", s, n)
		}
	}
	if n, ok := ParseBytes("8589934591G"); !ok || n != 8589934591<<30 {
		t.Errorf("ParseBytes(8589934591G) = %d, %v", n, ok)
	}
}

// ShortDuration writes what a user writes, and what it writes parses
// back to the same duration (study files and flags take it).
func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{5 * time.Minute: "5m", 720 * time.Hour: "720h", 90 * time.Minute: "1h30m",
		90 * time.Second: "1m30s", 500 * time.Millisecond: "500ms", 0: "0s", 3*time.Hour + 20*time.Second: "3h0m20s"} {
		got := ShortDuration(d)
		if back, err := time.ParseDuration(got); got != want || err != nil || back != d {
			t.Errorf("ShortDuration(%v) = %q (parses to %v, %v), want %q", d, got, back, err, want)
		}
	}
}

// A matrix far past MaxCells is refused by its count, without listing
// its cells first: the pods-per-node bound walks the cells the run
// measures, which here would take hundreds of megabytes.
func TestHugeMatrixRefusedWithoutListingIt(t *testing.T) {
	var dps, reps []string
	for i := 1; i <= 30; i++ {
		dps = append(dps, fmt.Sprintf("{name: d%d, type: flannel-vxlan}", i))
		reps = append(reps, fmt.Sprint(i))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := parseBounds(t, "datapaths=["+strings.Join(dps, ", ")+"]", "replicas=["+strings.Join(reps, ", ")+"]",
		"tunings="+tunings(30), "workloads=[{name: s, tool: iperf3, parallels: ["+strings.Join(reps, ", ")+"]}]")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "810000 cells") {
		t.Fatalf("err = %v; want the cells bound", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing it allocated %d MB", got>>20)
	}
}
