package app

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// runDir records a run directory of n trials per tuning whose bitrate is
// mean·(1 + sd·N(0,1)), as a real run writes it (study.yaml, samples).
func runDir(t *testing.T, rng *rand.Rand, n int, means map[string]float64, sd float64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: gate}\n")); err != nil {
		t.Fatal(err)
	}
	for trial := 1; trial <= n; trial++ {
		for tuning, m := range means {
			s := results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricBitrate: m * (1 + sd*rng.NormFloat64())}}
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func compareExit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"compare"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCompareGate: a real 10% regression fails the gate (exit 1); two
// runs of the same distribution (noise) pass it (exit 0) in every one of
// 20 repetitions; bad rules are bad input (exit 2).
func TestCompareGate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := map[string]float64{"baseline": 10e9, "rfs": 12e9}
	a := runDir(t, rng, 10, base, 0.02)
	slow := runDir(t, rng, 10, map[string]float64{"baseline": 10e9, "rfs": 10.8e9}, 0.02)
	code, out, _ := compareExit(t, a, slow, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "**FAIL**") || !strings.Contains(out, "bridge/rfs/tcp/r=1") {
		t.Errorf("10%% regression: exit %d, want %d\n%s", code, ExitFailure, out)
	}
	for i := 0; i < 20; i++ {
		same := runDir(t, rng, 10, base, 0.02)
		if code, out, errs := compareExit(t, a, same, "--fail-if", "bitrate < -5%"); code != ExitOK {
			t.Fatalf("noise failed the gate (repetition %d): exit %d\n%s%s", i, code, out, errs)
		}
	}
	for _, bad := range []string{"bitrate < -5", "nope < -5%"} {
		if code, _, errs := compareExit(t, a, slow, "--fail-if", bad); code != ExitBadInput || strings.Count(errs, "\n") != 1 {
			t.Errorf("--fail-if %q: exit %d, want %d with one line: %q", bad, code, ExitBadInput, errs)
		}
	}
	if code, _, _ := compareExit(t, a, slow, "--format", "xml"); code != ExitBadInput {
		t.Errorf("--format xml: exit %d", code)
	}
}

func TestCompareFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a := runDir(t, rng, 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, rng, 5, map[string]float64{"baseline": 8e9}, 0.02)
	code, out, _ := compareExit(t, a, b, "--format", "json", "--fail-if", "bitrate < -5%")
	var doc struct {
		Rows []struct {
			Cell        string   `json:"cell"`
			Ratio       *float64 `json:"ratio"`
			FailedRules []string `json:"failed_rules"`
		} `json:"rows"`
		Failed bool `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if code != ExitFailure || !doc.Failed || len(doc.Rows) != 1 || doc.Rows[0].Ratio == nil || len(doc.Rows[0].FailedRules) != 1 {
		t.Errorf("json: exit %d %+v", code, doc)
	}
	code, out, _ = compareExit(t, a, b, "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 2 || !strings.HasPrefix(lines[0], "cell,metric,n_a,") || !strings.HasPrefix(lines[1], "bridge/baseline/tcp/r=1,bitrate,5,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
}
