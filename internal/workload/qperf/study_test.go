package qperf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Study files see qperf through its description: 1 B is the default and
// the smallest size, and sizes outside 1..65000 are refused with the
// field and the note.
func TestStudyOptions(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: []spec.Tool{New().Describe()}}
	resolve := func(workload string) (*study.Study, error) {
		f := filepath.Join(t.TempDir(), "s.yaml")
		y := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: q}\nspec:\n  datapaths: [flannel-vxlan]\n  tunings: [baseline]\n" +
			"  workloads:\n    - " + workload + "\n  replicas: [1]\n  trials: 1\n  duration: 3s\n"
		if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return study.Resolve(f, study.Options{}, cat)
	}
	s, err := resolve("{name: rr, tool: qperf, protocol: tcp}")
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Spec.Workloads[0]; w.MessageSize != 1 {
		t.Errorf("default message size %d, want 1", w.MessageSize)
	}
	if _, err := resolve("{name: rr, tool: qperf, protocol: udp, messageSizes: [1, 14, 64]}"); err != nil {
		t.Errorf("sweep: %v", err)
	}
	for _, bad := range []string{"{tool: qperf, messageSize: 65001}", "{tool: qperf, messageSizes: [-1]}", "{tool: qperf, rates: [1G]}"} {
		_, err := resolve(bad)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "s.yaml:") {
			t.Errorf("%s: %v, want an error naming the file and line", bad, err)
		}
	}
}
