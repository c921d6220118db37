package study

import (
	"strings"
	"testing"
)

// refStudy has a swept workload (http@c1, http@c8), the default tuning
// (baseline), a profile with a datapath, a workload, a tuning and an
// impairment of its own, and the references tc appends.
const refStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: refs}
spec:
  datapaths:
    - {name: flannel, type: flannel-vxlan}
    - {name: calico, type: calico-vxlan}
  workloads:
    - {name: http, tool: ab, size: 5M, concurrency: [1, 8]}
    - {name: tcp, tool: iperf3}
  trials: 1
  duration: 4s
profiles:
  more:
    datapaths: [{name: extra, type: flannel-vxlan}]
    workloads: [{name: rr, tool: sockperf}]
    tunings: [baseline, rfs+]
    impairments: [loss-low]
`

func refFile(refs ...string) []byte {
	return []byte(strings.Replace(refStudy, "profiles:", "  reference:\n    - "+strings.Join(refs, "\n    - ")+"\nprofiles:", 1))
}

// A reference naming a datapath or workload (an entry or one variant of
// its sweep) that neither the study nor any of its profiles has is
// refused at its line and field: the report would only list it as "not
// measured".
func TestReferenceUnknownNamesRefused(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"{datapath: flannell, metric: bitrate, value: 1}",
			`r.yaml:14: spec.reference[0].datapath: the study has no datapath "flannell" (did you mean "flannel"? it has: flannel, calico, extra)`},
		{"{datapath: flannel, against: calcio, metric: bitrate, ratio: 1.1}",
			`r.yaml:14: spec.reference[0].against: the study has no datapath "calcio"`},
		{"{workload: http@c400, metric: requests_per_s, value: 1}",
			`r.yaml:14: spec.reference[0].workload: the study has no workload "http@c400" (it has: http, http@c1, http@c8, tcp, rr)`},
		{"{workload: tcp, againstWorkload: htp, metric: bitrate, ratio: 1.1}",
			`r.yaml:14: spec.reference[0].againstWorkload: the study has no workload "htp" (did you mean "http"?`},
		// A tuning or an impairment no cell has stood as "not measured".
		{"{tuning: rsf+, metric: bitrate, value: 1}",
			`r.yaml:14: spec.reference[0].tuning: the study has no tuning "rsf+" (did you mean "rfs+"? it has: baseline, rfs+)`},
		{"{impairment: los-low, metric: bitrate, value: 1}",
			`r.yaml:14: spec.reference[0].impairment: the study has no impairment "los-low" (did you mean "loss-low"? it has: loss-low, none)`},
		// An impairment's name is bounded like the study's own.
		{"{impairment: ../x, metric: bitrate, value: 1}",
			`r.yaml:14: spec.reference[0].impairment: "../x": use ASCII letters, digits and '.', '_', '-'`},
		{"{impairment: " + strings.Repeat("a", MaxNameLen+1) + ", metric: bitrate, value: 1}",
			`r.yaml:14: spec.reference[0].impairment: name is 65 bytes long; at most 64`},
	} {
		_, err := Parse("r.yaml", refFile(tc.ref), Options{}, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s...", tc.ref, err, tc.want)
		}
	}
}

// A reference to a cell of a profile, or one a profile or --set leaves
// out, is the file's: accepted with or without that profile.
func TestReferenceNamesOfProfilesAndSetAccepted(t *testing.T) {
	data := refFile("{datapath: extra, workload: rr, tuning: rfs+, impairment: loss-low, metric: transactions_per_s, value: 1}",
		"{tuning: baseline, impairment: none, metric: bitrate, value: 1}",
		"{datapath: calico, workload: http@c8, metric: requests_per_s, value: 1}",
		"{datapath: calico, against: flannel, workload: http@c1, againstWorkload: http@c8, metric: requests_per_s, ratio: 2}")
	for _, opt := range []Options{{}, {Profile: "more"}, {Set: []string{"datapaths=[flannel]", "workloads.http.concurrency=[1]"}}} {
		if _, err := Parse("r.yaml", data, opt, testCatalog); err != nil {
			t.Errorf("%+v: %v", opt, err)
		}
	}
	// The file's spec, which lists no tunings, has the baseline
	// (Defaults), also where the run's profile replaces it.
	noBaseline := strings.Replace(string(data), "tunings: [baseline, rfs+]", "tunings: [rfs+]", 1)
	if _, err := Parse("r.yaml", []byte(noBaseline), Options{Profile: "more"}, testCatalog); err != nil {
		t.Errorf("baseline of the file's spec: %v", err)
	}
}

// storedStudy is a run's study.yaml, its references unmarked (as every
// run wrote them): the run kept flannel (--set datapaths=[flannel], or
// the engine skipped calico), and every reference, one of calico's.
const storedStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: refs}
spec:
  datapaths:
    - {name: flannel, type: flannel-vxlan}
  workloads:
    - {name: tcp, tool: iperf3}
  trials: 1
  duration: 4s
  reference:
    - {datapath: calico, workload: tcp, metric: bitrate, value: 1}
    - {datapath: flannel, against: calico, workload: tcp, metric: bitrate, ratio: 1.1}
`

// A run's study.yaml keeps every reference, but its spec holds only what
// ran: read as stored (resume, advise --run, compare, report), its
// references' names are not checked, so one naming a datapath the run
// left out loads; read as a user's file, the same text is refused.
func TestStoredStudyReferencesNotChecked(t *testing.T) {
	s, err := Parse("study.yaml", []byte(storedStudy), Options{Stored: true}, testCatalog)
	if err != nil {
		t.Fatalf("stored study refused: %v", err)
	}
	if len(s.Spec.Reference) != 2 {
		t.Errorf("stored references %+v: want both kept", s.Spec.Reference)
	}
	// Its tunings and impairments are what ran, too.
	more := strings.Replace(storedStudy, "  reference:\n", "  reference:\n    - {tuning: rfs+, impairment: loss-low, metric: bitrate, value: 1}\n", 1)
	if _, err := Parse("study.yaml", []byte(more), Options{Stored: true}, testCatalog); err != nil {
		t.Errorf("stored study's tuning and impairment refused: %v", err)
	}
	if _, err := Parse("study.yaml", []byte(storedStudy), Options{}, testCatalog); err == nil ||
		!strings.HasPrefix(err.Error(), `study.yaml:12: spec.reference[0].datapath: the study has no datapath "calico"`) {
		t.Errorf("as a user's file: %v, want calico refused", err)
	}
	// What Marshal writes of a run that left calico out reads back as
	// stored, unmarked and unchanged.
	run, err := Parse("r.yaml", refFile("{datapath: calico, workload: http@c8, metric: requests_per_s, value: 1}"),
		Options{Set: []string{"workloads.http.concurrency=[1, 2]"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Datapaths = run.Spec.Datapaths[:1] // the engine keeps flannel
	out, err := run.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "leftOut") {
		t.Errorf("study.yaml marks references:\n%s", out)
	}
	back, err := Parse("study.yaml", out, Options{Stored: true}, testCatalog)
	if err != nil {
		t.Fatalf("stored study refused: %v\n%s", err, out)
	}
	if again, err := back.Marshal(); err != nil || string(again) != string(out) {
		t.Errorf("marshalled again (%v):\n%s\nwant\n%s", err, again, out)
	}
}

// A metric one slip from a headline metric of the study's tools is
// warned of, at its line, with that metric; an unknown one otherwise is
// not (tools report more than their headline metrics: retransmits), nor
// a collector's.
func TestReferenceMetricWarnings(t *testing.T) {
	data := refFile("{workload: http, metric: request_per_s, value: 1}",
		"{workload: http, metric: requests_per_s, value: 1}",
		"{workload: tcp, metric: cpp_bridge_cycles, value: 1}",
		"{workload: tcp, metric: retransmits, value: 1}")
	s, err := Parse("r.yaml", data, Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog
	cat.CollectorMetrics = []string{"cpp_*_cycles (sampling cycles)", "cpp_*_ns (sampling cpu-clock)"}
	w := s.ReferenceWarnings(cat)
	if len(w) != 1 || !strings.HasPrefix(w[0], `r.yaml:14: spec.reference[0].metric: "request_per_s" is no metric of the study's tools: did you mean "requests_per_s"?`) {
		t.Errorf("warnings %q: want request_per_s's alone, with requests_per_s", w)
	}
}

// A collector's described names match as their patterns say: "*" and an
// upper-case word any part, "{a,b}" an alternative; nothing else.
func TestCollectorMetric(t *testing.T) {
	var cat Catalog
	cat.CollectorMetrics = []string{"cpp_*_cycles (sampling cycles)", "cpp_*_ns (sampling cpu-clock)",
		"if_{underlay,tunnel,pods}_{rx,tx}_{packets,dropped}_count", "daemon_NAME_NODE_cpu_pct", "iptables_*", "bpf_cilium_*_count"}
	for metric, want := range map[string]bool{
		"cpp_bridge_cycles": true, "cpp_total_ns": true, "cpp_bridge_cycle": false, "cpp_cycles": false,
		"if_tunnel_tx_packets_count": true, "if_pods_rx_dropped_count": true, "if_eth0_rx_packets_count": false,
		"daemon_flanneld_server_cpu_pct": true, "daemon_cpu_pct": false, "iptables_rules_count": true, "iptables_": false,
		"bpf_cilium_lb4_count": true, "bpf_cilium_count": false,
	} {
		if got := collectorMetric(cat, metric); got != want {
			t.Errorf("%s: matched %v, want %v", metric, got, want)
		}
	}
}
