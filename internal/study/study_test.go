package study

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testCatalog = Catalog{
	Datapaths:        []string{"calico-vxlan", "flannel-vxlan"},
	Tools:            testTools,
	CollectorMetrics: []string{"cpp_*", "iptables_*"},
}

func TestValidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	if len(files) == 0 {
		t.Fatal("no valid fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Resolve(f, Options{}, testCatalog)
			if err != nil {
				t.Fatalf("want valid, got %v", err)
			}
			if len(s.Cells()) == 0 {
				t.Fatal("no cells")
			}
		})
	}
}

// Each invalid fixture must fail with file:line and a message naming the
// problem.
func TestInvalidFixtures(t *testing.T) {
	want := map[string]struct {
		line int
		msg  string
	}{
		"invalid-unknown-datapath.yaml":   {6, `spec.datapaths[0]: unknown datapath "nosuch-dp"`},
		"invalid-unknown-tuning.yaml":     {7, `unknown tuning "turbo"`},
		"invalid-replicas-zero.yaml":      {9, "spec.replicas[1]: replica count must be between 1 and"},
		"invalid-duration-le-warmup.yaml": {11, "spec.duration: duration 2s must be longer than warmup 2s"},
		"invalid-malformed.yaml":          {6, "malformed YAML: did not find expected ',' or ']' (in the [...] list that starts on this line)"},
		"invalid-unknown-tool.yaml":       {8, `unknown workload tool "netperf"`},
		"invalid-unknown-field.yaml":      {12, `unknown field "colour"`},
		"invalid-bad-cpulist.yaml":        {7, "spec.tunings[1].rps.cpus"},
		"invalid-api-version.yaml":        {1, `apiVersion: must be "cnibench/v1alpha1"`},
		"invalid-length.yaml":             {8, `"12Q" is not a size`},
		"invalid-duration-syntax.yaml":    {11, `invalid duration "soon"`},
		"invalid-udp-concurrency.yaml":    {12, "spec.workloads[0].concurrency: tool iperf3 has no option concurrency"},
		"invalid-rates-rr.yaml":           {10, "spec.workloads[0].rates: tool sockperf has no option rates"},
		"invalid-two-sweeps.yaml":         {11, "a workload sweeps one parameter; it sweeps rates and parallels"},
		"invalid-udp-no-rate.yaml":        {0, "a UDP test needs an offered bitrate"},
		"invalid-background-streams.yaml": {11, "1500 connections over 2 pairs is 750 streams per iperf3 client"},
		"invalid-placement.yaml":          {10, `"same-host" is not inter-node or intra-node`},
		"invalid-loss-ceiling.yaml":       {11, `spec.workloads[0].lossCeiling: loss ceiling "100%" must be above 0% and below 100%`},
		"invalid-pin-name.yaml":           {10, `spec.workloads[0].pin.server: "same-socket" is neither a placement name`},
		"invalid-sysctl.yaml":             {11, `spec.tunings[1].sysctls.kernel.sched_autogroup_enabled: "kernel.sched_autogroup_enabled" is not a network sysctl`},
		"invalid-mss.yaml":                {10, "spec.workloads[0].mss: mss 9000 is above what the largest pod MTU of this study allows (1500 - 40 = 1460 bytes)"},
		"invalid-sockperf-duration.yaml":  {11, "spec.duration: 1s is shorter than sockperf runs (at least 2s: sockperf leaves out its first 400 ms and a tail"},
		"invalid-qperf-udp-loss.yaml":     {9, "spec.workloads[0].protocol: qperf udp cannot run through impairment loss-low (spec.impairments[1]): it loses datagrams"},
		"invalid-udp-length.yaml":         {9, "spec.workloads[0].length: length must be between 16 and 65507 for udp (iperf3's bounds on -l), got 8"},
		"invalid-pktgen-length.yaml":      {9, "spec.workloads[0].length: the pktgen sender sends a UDP payload of 18 to 65493 bytes (its smallest frame is 60 bytes, its largest what an IP length holds), got 17"},
	}
	files, _ := filepath.Glob("testdata/invalid-*.yaml")
	if len(files) != len(want) {
		t.Fatalf("%d invalid fixtures, %d expectations", len(files), len(want))
	}
	for _, f := range files {
		base := filepath.Base(f)
		t.Run(base, func(t *testing.T) {
			w, ok := want[base]
			if !ok {
				t.Fatalf("no expectation for %s", base)
			}
			_, err := Resolve(f, Options{}, testCatalog)
			if err == nil {
				t.Fatal("want error, got none")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, f) {
				t.Errorf("error does not start with the file name: %s", msg)
			}
			if w.line > 0 && !strings.Contains(msg, f+":"+itoa(w.line)+":") {
				t.Errorf("want line %d in %q", w.line, msg)
			}
			if !strings.Contains(msg, w.msg) {
				t.Errorf("want %q in %q", w.msg, msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error must be one line: %q", msg)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestBuiltinRPSRFSCarriesPaperParameters(t *testing.T) {
	s, err := Resolve("rps-rfs", Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	sp := s.Spec
	if got := sp.Replicas; len(got) != 5 || got[0] != 1 || got[4] != 16 {
		t.Errorf("replicas %v, want 1,2,4,8,16", got)
	}
	// Up to the paper's 20 trials, a cell stopping once decided; the
	// paper profile runs exactly 20.
	if sp.Trials != (Trials{Min: 3, Max: 20}) || sp.DecisionMargin() != 0.05 {
		t.Errorf("trials %s, margin %g; want 3 to 20 and 5%%", sp.Trials, sp.DecisionMargin())
	}
	if p, err := Resolve("rps-rfs", Options{Profile: "paper"}, testCatalog); err != nil || p.Spec.Trials != Fixed(20) {
		t.Errorf("paper profile: %v, trials %v; want 20", err, p)
	}
	if m := sp.Duration.Duration - sp.Warmup.Duration; m != 30*time.Second {
		t.Errorf("measured window %s, want 30s", m)
	}
	if sp.Workloads[0].Length != "128K" {
		t.Errorf("length %s, want 128K", sp.Workloads[0].Length)
	}
	var names []string
	for _, tu := range sp.Tunings {
		names = append(names, tu.Name)
	}
	if strings.Join(names, ",") != "baseline,rps,rps+,rfs,rfs+,rps-7" {
		t.Errorf("tunings %v", names)
	}
	rfsp, _ := s.Tuning("rfs+")
	if rfsp.RFS == nil || rfsp.RFS.SockFlowEntries != 32768 || rfsp.RFS.FlowCnt != 32768 || !rfsp.Pods {
		t.Errorf("rfs+ = %+v", rfsp)
	}
}

func TestQuickProfileIsSmall(t *testing.T) {
	s, err := Resolve("rps-rfs", Options{Profile: "quick"}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	// The quick profile is adaptive: its budget bounds the machine time
	// (the cluster's set-up included), and the run must end within 5
	// minutes (issue 11) with room for the preflight before the budget
	// starts, the teardown and the report after it, a few seconds each.
	if b := s.Spec.Budget.Duration; b == 0 || b > 4*time.Minute+30*time.Second || !s.Spec.Trials.Adaptive() {
		t.Errorf("quick profile: trials %s, budget %s; want adaptive with a budget of at most 4m30s", s.Spec.Trials, b)
	}
	if s.Profile != "quick" {
		t.Errorf("profile %q", s.Profile)
	}
}

func TestSetOverrides(t *testing.T) {
	s, err := Resolve("rps-rfs", Options{Set: []string{"trials=3", "replicas=[2,4]", "spec.nodes.server.cpus=0", "metadata.name=mine"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Trials != Fixed(3) || len(s.Spec.Replicas) != 2 || s.Spec.Nodes.Server.CPUs != "0" || s.Metadata.Name != "mine" {
		t.Errorf("overrides not applied: %+v %+v", s.Spec, s.Metadata)
	}
}

func TestSetErrors(t *testing.T) {
	for _, tc := range []struct {
		set, want string
	}{
		{"trials=0", "spec.trials: missing or 0: give the trials of each cell, a count between 1 and 1000"},
		{"nosuchfield=1", `unknown field "nosuchfield"`},
		{"trials", "override must be key=value"},
		{"tunings=[warp]", `unknown tuning "warp"`},
		{"duration=1s", "must be longer than warmup"},
	} {
		_, err := Resolve("rps-rfs", Options{Set: []string{tc.set}}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: want %q, got %v", tc.set, tc.want, err)
		}
	}
}

func TestUnknownProfile(t *testing.T) {
	_, err := Resolve("rps-rfs", Options{Profile: "nope"}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), `no profile "nope"`) {
		t.Fatalf("got %v", err)
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Resolve(filepath.Join(t.TempDir(), "none.yaml"), Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), "none.yaml\": no such file (a path names a file; built-in studies are named bare: ") {
		t.Fatalf("got %v", err)
	}
}

// The resolved study written to a run directory must load again to the
// same matrix (cnibench report rebuilds from it).
func TestMarshalRoundTrip(t *testing.T) {
	s, err := Resolve("testdata/valid-custom-tunings.yaml", Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Resolve(p, Options{}, testCatalog)
	if err != nil {
		t.Fatalf("re-load resolved study: %v\n%s", err, b)
	}
	if len(s2.Cells()) != len(s.Cells()) {
		t.Fatalf("cells %d != %d", len(s2.Cells()), len(s.Cells()))
	}
	tu, _ := s2.Tuning("rfs-small")
	if tu.RFS == nil || tu.RFS.FlowCnt != 2048 || !tu.Pods {
		t.Errorf("custom tuning lost: %+v", tu)
	}
	if tu, _ := s2.Tuning("bbr"); tu.Side != SideClient || !slices.Equal(tu.Sides(), []string{SideClient}) {
		t.Errorf("client-side tuning lost its side: %+v", tu)
	}
	if tu, _ := s2.Tuning("c1"); tu.CPUIdle == nil || tu.CPUIdle.MaxExitLatencyUS() != 10 || tu.Side != SideBoth || tu.IsBaseline() {
		t.Errorf("cpuIdle tuning lost: %+v", tu)
	}
}

func TestCellsOrder(t *testing.T) {
	s, err := Resolve("rps-rfs", Options{Profile: "quick"}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 2*5 {
		t.Fatalf("%d cells", len(cells))
	}
	if cells[0].Replicas != 1 || cells[0].Tuning != "baseline" || cells[5].Replicas != 4 {
		t.Errorf("unexpected order: %+v", cells[:6])
	}
}

func TestVariantsExpandSweeps(t *testing.T) {
	s, err := Resolve("testdata/valid-workloads.yaml", Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range s.Variants() {
		names = append(names, w.Name)
	}
	want := "udp@500M,udp@1G,tcp-p@P1,tcp-p@P2,tcp-p@P4,tcp-len@1K,tcp-len@64K,rr@14B,rr@64B,http@c1,http@c50,bg@bg0,bg@bg10,cpp"
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("variants %s\nwant     %s", got, want)
	}
	if len(s.Cells()) != 14 {
		t.Errorf("%d cells, want 14", len(s.Cells()))
	}
	v, ok := s.Workload("udp@1G")
	if !ok || v.Rate != "1G" || v.Rates != nil || v.Base != "udp" || v.Param != "1G" || v.Length != "1400" {
		t.Errorf("udp@1G = %+v", v)
	}
	bg, _ := s.Workload("bg@bg10")
	if bg.BackgroundConnections() != 10 || bg.Background.Pairs != 2 {
		t.Errorf("bg@bg10 = %+v", bg.Background)
	}
	// Expanding must not alias the original's background.
	if bg0, _ := s.Workload("bg@bg0"); bg0.BackgroundConnections() != 0 {
		t.Errorf("bg@bg0 has %d connections", bg0.BackgroundConnections())
	}
	if h, _ := s.Workload("http@c50"); h.Concurrent() != 50 || h.Size != "1M" {
		t.Errorf("http@c50 = %+v", h)
	}
	if rr, _ := s.Workload("rr@14B"); rr.MessageSize != 14 {
		t.Errorf("rr@14B = %+v", rr)
	}
	if tl, _ := s.Workload("tcp-len@1K"); !tl.IntraNode() {
		t.Errorf("tcp-len placement %q", tl.Placement)
	}
}

func TestParseRateAndBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{{"500M", 500e6, true}, {"1.5G", 1.5e9, true}, {"10K", 1e4, true}, {"0", 0, false}, {"fast", 0, false}} {
		if got, ok := ParseRate(tc.in); ok != tc.ok || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v", tc.in, got, ok)
		}
	}
	if n, ok := ParseBytes("5M"); !ok || n != 5<<20 {
		t.Errorf("ParseBytes(5M) = %d", n)
	}
}

func TestBuiltinWorkloadsStudy(t *testing.T) {
	for _, prof := range []string{"", "quick"} {
		s, err := Resolve("workloads", Options{Profile: prof}, testCatalog)
		if err != nil {
			t.Fatalf("profile %q: %v", prof, err)
		}
		tools := map[string]bool{}
		cpp, bg, intra := false, false, false
		for _, w := range s.Variants() {
			tools[w.Tool] = true
			cpp = cpp || w.CPP
			bg = bg || w.BackgroundConnections() > 0
			intra = intra || w.IntraNode()
		}
		if !tools["iperf3"] || !tools["sockperf"] || !tools["ab"] || !cpp || !bg || !intra {
			t.Errorf("profile %q misses a workload: tools %v cpp %v background %v intra %v", prof, tools, cpp, bg, intra)
		}
	}
	s, _ := Resolve("workloads", Options{Profile: "quick"}, testCatalog)
	total := time.Duration(len(s.Cells())*s.Spec.Trials.Max) * (s.Spec.Duration.Duration + s.Spec.Cooldown.Duration)
	if total > 2*time.Minute {
		t.Errorf("quick profile measures for %s", total)
	}
}

// A key missing from the top of a file is the file's to have: its error
// names line 1, not "(--set)", which no --set gave.
func TestMissingTopKeyNamesTheFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "nokind.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: cnibench/v1alpha1\nmetadata:\n  name: x\nspec:\n  datapaths: [bridge]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(f, Options{}, testCatalog)
	if err == nil || !strings.HasPrefix(err.Error(), f+":1: kind: ") {
		t.Errorf("got %v, want %s:1: kind: ...", err, f)
	}
}
