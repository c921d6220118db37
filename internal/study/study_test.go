package study

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testCatalog = Catalog{
	Datapaths: []string{"calico-vxlan", "flannel-vxlan"},
	Tools:     map[string][]string{"iperf3": {"tcp", "udp"}, "sockperf": {"tcp", "udp"}, "ab": {"tcp"}},
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
		"invalid-malformed.yaml":          {0, "malformed YAML"},
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
	if sp.Trials != 20 {
		t.Errorf("trials %d, want 20", sp.Trials)
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
	// Budget: trials x cells x duration must fit well inside 3 minutes.
	total := time.Duration(len(s.Cells())*s.Spec.Trials) * (s.Spec.Duration.Duration + s.Spec.Cooldown.Duration)
	if total > 150*time.Second {
		t.Errorf("quick profile measures for %s; must leave room for setup within 3 minutes", total)
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
	if s.Spec.Trials != 3 || len(s.Spec.Replicas) != 2 || s.Spec.Nodes.Server.CPUs != "0" || s.Metadata.Name != "mine" {
		t.Errorf("overrides not applied: %+v %+v", s.Spec, s.Metadata)
	}
}

func TestSetErrors(t *testing.T) {
	for _, tc := range []struct {
		set, want string
	}{
		{"trials=0", "spec.trials: must be >= 1"},
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
	if err == nil || !strings.Contains(err.Error(), "no built-in study") {
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
}

func TestCellsOrder(t *testing.T) {
	s, err := Resolve("rps-rfs", Options{Profile: "quick"}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 3*5 {
		t.Fatalf("%d cells", len(cells))
	}
	if cells[0].Replicas != 1 || cells[0].Tuning != "baseline" || cells[5].Replicas != 2 {
		t.Errorf("unexpected order: %+v", cells[:6])
	}
}
