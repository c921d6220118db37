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

// A study running qperf's UDP test through a preset that loses datagrams
// is refused with the real description (package impair resolves the
// preset) at the workload's protocol, file and line; TCP, and UDP through
// delay alone, are taken.
func TestStudyRefusesUDPThroughLoss(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: []spec.Tool{New().Describe()}}
	resolve := func(protocol, impairments string) error {
		f := filepath.Join(t.TempDir(), "s.yaml")
		y := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: q}\nspec:\n  datapaths: [flannel-vxlan]\n  tunings: [baseline]\n" +
			"  workloads:\n    - {name: rr, tool: qperf,\n       protocol: " + protocol + "}\n  impairments: " + impairments + "\n  replicas: [1]\n  trials: 1\n  duration: 3s\n"
		if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := study.Resolve(f, study.Options{}, cat)
		return err
	}
	err := resolve("udp", "[none, delay-low, delay-corruption-low]")
	if err == nil || !strings.Contains(err.Error(), "s.yaml:9: spec.workloads[0].protocol: qperf udp cannot run through impairment delay-corruption-low (spec.impairments[2]): it corrupts them (corrupt 5%") {
		t.Errorf("udp through corruption: %v", err)
	}
	for _, ok := range []struct{ protocol, impairments string }{{"tcp", "[loss-high, corruption-high]"}, {"udp", "[none, delay-high]"}} {
		if err := resolve(ok.protocol, ok.impairments); err != nil {
			t.Errorf("%s through %s: %v", ok.protocol, ok.impairments, err)
		}
	}
}
