package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reference metric no tool or collector of the study reports is most
// likely a slip that cannot be refused (a tool reports more than its
// headline metrics): show and run say so on stderr, at its line, and go
// on.
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
    - {datapath: bridge, workload: tcp, metric: cpp_bridge_cycle, value: 45}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"show", file}, &out, &errb); code != 0 {
		t.Fatalf("show: exit %d: %s", code, errb.String())
	}
	want := "warning: " + file + `:11: spec.reference[1].metric: "cpp_bridge_cycle" is no headline metric`
	if !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "warning: ") != 1 {
		t.Errorf("show's stderr:\n%s\nwant one warning, starting %q", errb.String(), want)
	}
}
