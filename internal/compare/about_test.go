package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// A comparison's header says what each run was and what differs between
// them besides the change under test.
func TestHead(t *testing.T) {
	started := time.Date(2026, 11, 28, 13, 55, 0, 0, time.UTC)
	a := results.Env{Engine: "local", Hostname: "h1", Kernel: "6.1.0", CPUs: 2, CPUModel: "X", Version: "v1", Started: started,
		Origin: &results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--set", "replicas=[1]"}}}
	a.Tunings = map[string][]results.TuningSetting{
		"bbr":   {{Where: results.WhereClientNode, Knob: "net.ipv4.tcp_congestion_control", Value: "bbr", Found: []string{"bbr"}, Unchanged: true}},
		"same":  {{Where: results.WhereHost, Knob: "net.core.busy_read", Value: "50", Found: []string{"0"}}},
		"onlyA": {{Where: results.WhereHost, Knob: "net.core.busy_poll", Value: "50", Found: []string{"0"}}},
	}
	b := a
	b.Kernel, b.Engine = "6.18.4", "kube"
	b.CNI = &results.CNI{Name: "flannel", Mode: "vxlan"}
	b.Tunings = map[string][]results.TuningSetting{
		"bbr":  {{Where: results.WhereClientNode, Knob: "net.ipv4.tcp_congestion_control", Value: "bbr", Found: []string{"cubic"}}},
		"same": a.Tunings["same"],
	}
	h := NewHead("main/", "pr/", &results.Run{Env: a, HasEnv: true}, &results.Run{Env: b, HasEnv: true}, nil, nil, false)
	if want := "cnibench run rps-rfs --set 'replicas=[1]'; local engine, host h1, kernel 6.1.0, started 2026-11-28 13:55 UTC"; h.AboutA != want {
		t.Errorf("about A: %q, want %q", h.AboutA, want)
	}
	if got := strings.Join(h.Differ, "; "); got != "engine local / kube; kernel 6.1.0 / 6.18.4; CNI (none) / "+b.CNI.String()+
		"; tuning bbr net.ipv4.tcp_congestion_control = bbr at client-node over unchanged / net.ipv4.tcp_congestion_control = bbr at client-node over cubic" {
		t.Errorf("differ: %q", got)
	}
	var buf bytes.Buffer
	rows := []Row{{Key: "bridge/baseline/tcp/1", Metric: "bitrate"}}
	if err := WriteMarkdown(&buf, h, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A = main/: cnibench run rps-rfs", "B = pr/: cnibench run rps-rfs --set 'replicas=[1]'; kube engine",
		"The runs differ in: engine local / kube; kernel 6.1.0 / 6.18.4;"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, buf.String())
		}
	}
	// A tuning both runs measured that wrote nothing in A ("baseline")
	// and something in B (a baseline redefined by --set) differs; one
	// that only A ran (onlyA) is no difference of the compared cells.
	cell := func(tuning string) results.Sample { return results.Sample{Cell: results.Cell{Tuning: tuning}} }
	b.Tunings["baseline"] = []results.TuningSetting{{Where: results.WhereNode, Knob: "rps_cpus", Value: "00000003", Found: []string{"0"}}}
	h = NewHead("main/", "pr/", &results.Run{Env: a, HasEnv: true, Samples: []results.Sample{cell("baseline"), cell("onlyA")}},
		&results.Run{Env: b, HasEnv: true, Samples: []results.Sample{cell("baseline")}}, nil, nil, false)
	if got := strings.Join(h.Differ, "; "); !strings.HasSuffix(got, "; tuning baseline (none) / rps_cpus = 00000003 at node over 0; "+
		"tuning bbr net.ipv4.tcp_congestion_control = bbr at client-node over unchanged / net.ipv4.tcp_congestion_control = bbr at client-node over cubic") {
		t.Errorf("differ: %q", got)
	}
	// The same run twice differs in nothing; a run without env.json is
	// named by its directory alone.
	if d := Differences(a, a, nil); len(d) != 0 {
		t.Errorf("a run against itself differs in %v", d)
	}
	// How the cores idle differs when both runs recorded it; a run from
	// before env.json had cpuidle is no difference.
	idleA, idleB := a, a
	idleA.CPUIdle = &results.CPUIdle{Driver: "intel_idle", Governor: "menu"}
	idleB.CPUIdle = &results.CPUIdle{Driver: "haltpoll", Governor: "haltpoll"}
	if d := Differences(idleA, idleB, nil); len(d) != 1 || d[0] != "CPU idle driver intel_idle, governor menu / driver haltpoll, governor haltpoll" {
		t.Errorf("cpuidle: %q", d)
	}
	if d := Differences(a, idleB, nil); len(d) != 0 {
		t.Errorf("one run without cpuidle: %q", d)
	}
	// A datapath's bridged frames passing iptables in one run only (some
	// program loaded br_netfilter in between) differs; unread is not.
	brA, brB, brOld := a, a, a
	brA.Datapaths = map[string]results.DatapathEnv{"bridge": {BridgeNFCallIPTables: "absent"}}
	brB.Datapaths = map[string]results.DatapathEnv{"bridge": {BridgeNFCallIPTables: "1"}}
	brOld.Datapaths = map[string]results.DatapathEnv{"bridge": {}}
	if d := Differences(brA, brB, nil); len(d) != 1 || d[0] != "datapath bridge bridge-nf-call-iptables absent / 1" {
		t.Errorf("br_netfilter: %q", d)
	}
	if d := Differences(brOld, brB, nil); len(d) != 0 {
		t.Errorf("one run without the fact: %q", d)
	}
	// weave built as Open vSwitch's datapath in one run and as the
	// bridge standing in for it in the other differs; unrecorded is not.
	ovs, stand, unrecorded := a, a, a
	ovs.Datapaths = map[string]results.DatapathEnv{"weave": {Mode: "ovs"}}
	stand.Datapaths = map[string]results.DatapathEnv{"weave": {Mode: "bridge", StandIn: "a bridge"}}
	unrecorded.Datapaths = map[string]results.DatapathEnv{"weave": {}}
	if d := Differences(ovs, stand, nil); len(d) != 1 || d[0] != "datapath weave mode ovs / bridge" {
		t.Errorf("weave's mode: %q", d)
	}
	if d := Differences(unrecorded, stand, nil); len(d) != 0 {
		t.Errorf("one run without the mode: %q", d)
	}
	if h := NewHead("a", "b", &results.Run{}, &results.Run{Env: a, HasEnv: true}, nil, nil, false); h.AboutA != "" || h.Differ != nil {
		t.Errorf("without env.json: %+v", h)
	}
}

// TestNoMatchSaysWhatEachHolds: runs of two studies share no cell; the
// page says what each holds, so the reader sees why (workloads named
// apart), instead of only that nothing matched.
func TestNoMatchSaysWhatEachHolds(t *testing.T) {
	mk := func(dp, wl string, reps int) results.Sample {
		return results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: wl, Replicas: reps}, Metrics: map[string]float64{"bitrate": 1}}
	}
	a := []results.Sample{mk("flannel", "http", 1), mk("bridge", "tcp", 1), mk("flannel", "tcp", 1)}
	b := []results.Sample{mk("flannel", "tcp-inter", 1), mk("flannel", "tcp-inter", 4)}
	if got, want := Holds(a), "datapaths flannel, bridge; workloads http, tcp; tunings baseline; replicas 1"; got != want {
		t.Errorf("Holds: %q, want %q", got, want)
	}
	rows := Runs(counted(a), counted(b), nil, nil, nil, nil)
	var out strings.Builder
	h := NewHead("runs/a", "runs/b", &results.Run{Samples: a}, &results.Run{Samples: b}, nil, nil, false)
	if err := WriteMarkdown(&out, h, rows); err != nil || len(rows) != 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, want := range []string{"No cell and metric appear in both runs", "A = runs/a: datapaths flannel, bridge; workloads http, tcp",
		"B = runs/b: datapaths flannel; workloads tcp-inter; tunings baseline; replicas 1, 4"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, out.String())
		}
	}
	// Tools read the same from the JSON.
	out.Reset()
	if err := Write(&out, "json", h, rows, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HoldsA string `json:"holds_a"`
		HoldsB string `json:"holds_b"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || doc.HoldsA != Holds(a) || doc.HoldsB != Holds(b) {
		t.Errorf("JSON holds %+v (%v), want %q and %q", doc, err, Holds(a), Holds(b))
	}
}

// TestDifferencesUnknownBuild: two runs of a "dev" build, or of one
// commit's "-dirty" build, said nothing of the version, as if the same
// code ran both; such builds cannot be told apart, and that is said.
func TestDifferencesUnknownBuild(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want string
	}{
		{"dev", "dev", "cnibench dev / dev (a dev or -dirty build: the builds cannot be told apart"},
		{"v1.2.0-3-gabc-dirty", "v1.2.0-3-gabc-dirty", "cnibench v1.2.0-3-gabc-dirty / v1.2.0-3-gabc-dirty (a dev or -dirty build"},
		{"v0.0.0-20261206043634-c5a8e45658cd+dirty", "v0.0.0-20261206043634-c5a8e45658cd+dirty", "(a dev or -dirty build"}, // Go's own mark of a modified checkout
		{"v1.2.0", "dev", "cnibench v1.2.0 / dev (a dev or -dirty build"},
		{"v1.2.0", "v1.3.0", "cnibench v1.2.0 / v1.3.0"},
		{"v1.2.0", "v1.2.0", ""},
	} {
		got := strings.Join(Differences(results.Env{Version: tc.a}, results.Env{Version: tc.b}, nil), "; ")
		if tc.want == "" && strings.Contains(got, "cnibench") || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s / %s: %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
