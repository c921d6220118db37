package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// A reference metric one letter from a headline metric of the study's
// tools is most likely a slip that cannot be refused (a tool reports
// more than its headline metrics: retransmits): show and run say so on
// stderr, at its line, and go on.
func TestReferenceMetricWarned(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  workloads: [{name: tcp, tool: iperf3, cpp: true}]
  trials: 2
  duration: 5s
  reference:
    - {datapath: bridge, workload: tcp, metric: bitrate, value: 1e9}
    - {datapath: bridge, workload: tcp, metric: retransmits, value: 45}
    - {datapath: bridge, workload: tcp, metric: bitrat, value: 45}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"show", file}, &out, &errb); code != 0 {
		t.Fatalf("show: exit %d: %s", code, errb.String())
	}
	want := "warning: " + file + `:12: spec.reference[2].metric: "bitrat" is no metric of the study's tools: did you mean "bitrate"?`
	if !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "warning: ") != 1 {
		t.Errorf("show's stderr:\n%s\nwant one warning, starting %q", errb.String(), want)
	}
}

// No built-in study, in any profile, warns of a reference metric: a
// warning there would be noise on every run of it.
func TestBuiltinReferenceMetricsNotWarned(t *testing.T) {
	for _, name := range study.Builtins() {
		base, err := study.Resolve(name, study.Options{}, studyCatalog())
		if err != nil {
			t.Fatal(err)
		}
		for _, profile := range append([]string{""}, base.ProfileNames()...) {
			s, err := study.Resolve(name, study.Options{Profile: profile}, studyCatalog())
			if err != nil {
				t.Fatalf("%s %s: %v", name, profile, err)
			}
			if w := s.ReferenceWarnings(studyCatalog()); len(w) != 0 {
				t.Errorf("%s %s: %q", name, profile, w)
			}
		}
	}
}
