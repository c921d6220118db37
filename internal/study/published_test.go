package study

import (
	"strings"
	"testing"
)

const publishedBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: pub
spec:
  datapaths: [flannel-vxlan, calico-vxlan]
  impairments: [none, delay-low, loss-low]
  workloads:
    - {name: udp, tool: iperf3, protocol: udp, rates: [500M, 800M]}
    - {name: tcp, tool: iperf3, protocol: tcp}
  trials: 2
  duration: 4s
  warmup: 1s
  verdict:
    udp: {maxLossPct: 30}
    published:
      - {datapath: calico-vxlan, protocol: tcp, impairment: none, pass: true}
      - {datapath: calico-vxlan, protocol: udp, workload: udp@800M, impairment: loss-low, pass: true}
      - {datapath: flannel-vxlan, protocol: udp, workload: udp, impairment: delay-low, pass: true}
profiles:
  narrow:
    impairments: [none]
    workloads:
      - {name: udp, tool: iperf3, protocol: udp, rates: [500M]}
      - {name: tcp, tool: iperf3, protocol: tcp}
`

// A published verdict naming a datapath, workload (entry or variant),
// protocol or impairment the study does not have would never stand
// beside a cell: it is refused at its file's line with the names the
// study has and a suggestion, as spec.only's selectors are.
func TestPublishedVerdictNamesChecked(t *testing.T) {
	if _, err := Parse("pub.yaml", []byte(publishedBase), Options{}, testCatalog); err != nil {
		t.Fatalf("base: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"workload: udp@800M", "workload: udp@80M", `pub.yaml:18: spec.verdict.published[1].workload: the study has no workload "udp@80M" (did you mean "udp@800M"?`},
		{"datapath: calico-vxlan, protocol: tcp", "datapath: calico-vxlam, protocol: tcp", `pub.yaml:17: spec.verdict.published[0].datapath: the study has no datapath "calico-vxlam" (did you mean "calico-vxlan"?`},
		{"protocol: tcp, impairment: none", "protocol: TCP, impairment: none", `pub.yaml:17: spec.verdict.published[0].protocol: want udp or tcp`},
		{"impairment: delay-low, pass", "impairment: delay-lo, pass", `pub.yaml:19: spec.verdict.published[2].impairment: the study has no impairment "delay-lo" (did you mean "delay-low"?`},
		// A scalar rate makes the variant plain "udp", and 0.8G names
		// udp@0.8G: the paper's udp@800M matches neither.
		{"rates: [500M, 800M]}", "rate: 800M}", `spec.verdict.published[1].workload: the study has no workload "udp@800M"`},
		{"rates: [500M, 800M]}", "rates: [500M, 0.8G]}", `spec.verdict.published[1].workload: the study has no workload "udp@800M" (did you mean "udp@500M"? it has: udp, udp@500M, udp@0.8G, tcp)`},
	} {
		src := strings.Replace(publishedBase, c.from, c.to, 1)
		if src == publishedBase {
			t.Fatalf("%q not in the base", c.from)
		}
		_, err := Parse("pub.yaml", []byte(src), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
}

// A profile or --set that measures fewer cells leaves the file's
// verdicts of the others unmatched, not wrong (as a reference to an
// unmeasured cell): the file names them. The study the run stores keeps
// only those its cells can have, so that it parses again on a resume.
func TestPublishedVerdictOfDroppedCells(t *testing.T) {
	for _, opt := range []Options{{Profile: "narrow"}, {Set: []string{"impairments=[none]", "datapaths=[calico-vxlan]"}}} {
		s, err := Parse("pub.yaml", []byte(publishedBase), opt, testCatalog)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if n := len(s.Spec.Verdict.Published); n != 3 {
			t.Errorf("%+v: the run's study has %d published verdicts, want the file's 3", opt, n)
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := Parse("study.yaml", b, Options{}, testCatalog)
		if err != nil {
			t.Fatalf("%+v: the stored study does not parse again: %v", opt, err)
		}
		if got := stored.Spec.Verdict.Published; len(got) != 1 || got[0].Protocol != "tcp" {
			t.Errorf("%+v: stored published verdicts %+v, want calico-vxlan tcp none alone", opt, got)
		}
	}
}
