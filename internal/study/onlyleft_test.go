package study

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onlyStudy is a study of two datapaths whose spec.only is only.
func onlyStudy(t *testing.T, only string) *Study {
	t.Helper()
	data := []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: o}
spec:
  datapaths: [calico-vxlan, flannel-vxlan]
  workloads: [{name: tcp, tool: iperf3}]
  tunings: [baseline, rps]
  baseline: baseline
  replicas: [1, 2]
  trials: 2
  duration: 5s
  only: ` + only + `
`)
	s, err := Parse("o.yaml", data, Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dropDatapath does what preflight does to a datapath the machine
// cannot build under skipUnavailable (localengine) or a cluster's CNI
// does not stand for (kube's pickDatapath): the study runs without it.
func dropDatapath(s *Study, name string) {
	var keep []Datapath
	for _, d := range s.Spec.Datapaths {
		if d.Name != name {
			keep = append(keep, d)
		}
	}
	s.Spec.Datapaths = keep
}

// A run's study.yaml, written after preflight dropped a datapath a
// selector of spec.only names, keeps the other selectors and loads
// again as a resume, report and advise --run load it.
func TestMarshalDropsOnlyOfDroppedDatapath(t *testing.T) {
	s := onlyStudy(t, "[{datapath: flannel-vxlan, tuning: rps}, {datapath: calico-vxlan, replicas: 2, tuning: rps}]")
	dropDatapath(s, "flannel-vxlan")
	if err := s.CheckOnlyLeft(); err != nil {
		t.Fatalf("a selector is left: %v", err)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Resolve(p, Options{Stored: true}, testCatalog)
	if err != nil {
		t.Fatalf("stored study does not load: %v\n%s", err, b)
	}
	if len(s2.Spec.Only) != 1 || s2.Spec.Only[0].Datapath != "calico-vxlan" {
		t.Errorf("stored only %+v, want the calico-vxlan selector alone", s2.Spec.Only)
	}
	// The run measured the picked cell and its baseline, and the stored
	// study says the same cells.
	if got, want := len(s2.Cells()), len(s.Cells()); got != want || want != 2 {
		t.Errorf("stored study has %d cells, the run %d; want 2", got, want)
	}
}

// A spec.only whose every selector names a dropped datapath picks no
// cell of what is left: the run is refused at spec.only, at its line,
// and nothing is written that would select every cell.
func TestOnlyNothingLeft(t *testing.T) {
	s := onlyStudy(t, "[{datapath: flannel-vxlan}]")
	dropDatapath(s, "flannel-vxlan")
	if n := len(s.Cells()); n != 0 {
		t.Fatalf("%d cells left, want none", n)
	}
	err := s.Locate(s.CheckOnlyLeft())
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "spec.only" || fe.Line != 12 ||
		!strings.Contains(fe.Msg, "nothing is left to run: its selectors pick only cells of datapath flannel-vxlan") {
		t.Errorf("got %v, want an error at o.yaml:12: spec.only saying nothing is left to run", err)
	}
	if b, err := s.Marshal(); err == nil {
		t.Errorf("marshalled a study whose only picks nothing:\n%s", b)
	}
}
