package study

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// `--set LIST.NAME.FIELD=value` sets one field of a named entry of a
// list, or with LIST.NAME replaces the entry; the other entries stay as
// the study wrote them.
func TestSetNamedEntry(t *testing.T) {
	src := []byte(workloadStudy(`[{name: udp, tool: iperf3, protocol: udp, length: "1400", rates: [500M, 1G]}, {name: tcp, tool: iperf3}]`))
	parse := func(set ...string) (*Study, error) { return Parse("w.yaml", src, Options{Set: set}, testCatalog) }
	s, err := parse("workloads.udp.sender=pktgen", "datapaths.flannel-off.mtu=1300")
	if err != nil {
		t.Fatal(err)
	}
	w := s.Spec.Workloads
	if len(w) != 2 || w[0].Name != "udp" || w[0].Sender != SenderPktgen || w[0].Length != "1400" || len(w[0].Rates) != 2 || w[1].Sender != "" {
		t.Errorf("workloads after workloads.udp.sender=pktgen: %+v", w)
	}
	if d := s.Spec.Datapaths; len(d) != 3 || d[1].Name != "flannel-off" || d[1].MTU != 1300 || d[1].Offloads["gro"] != "on" {
		t.Errorf("datapaths after datapaths.flannel-off.mtu=1300: %+v", d)
	}
	s, err = parse("workloads.udp={name: udp, tool: iperf3, protocol: udp, rate: 200M}")
	if err != nil || s.Spec.Workloads[0].Rate != "200M" || len(s.Spec.Workloads[0].Rates) != 0 || s.Spec.Workloads[1].Name != "tcp" {
		t.Errorf("workloads.udp replaced: %+v, %v", s.Spec.Workloads, err)
	}
	// A plain name is spelled out first: a datapath as {name: X}, a
	// built-in tuning as its definition.
	s, err = parse("datapaths.flannel-vxlan.mtu=1400", "tunings.baseline.sysctls={net.core.busy_read: \"50\"}")
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Spec.Datapaths; len(d) != 3 || d[0].Name != "flannel-vxlan" || d[0].Type != "flannel-vxlan" || d[0].MTU != 1400 || d[1].Name != "flannel-off" {
		t.Errorf("datapaths after datapaths.flannel-vxlan.mtu=1400: %+v", d)
	}
	if tu := s.Spec.Tunings; len(tu) != 1 || tu[0].Name != "baseline" || tu[0].Sysctls["net.core.busy_read"] != "50" || tu[0].RPS != nil {
		t.Errorf("tunings after tunings.baseline.sysctls=...: %+v", tu)
	}
	// A sysctl's name keeps its dots: the rest of the key after sysctls.
	s, err = parse("tunings.baseline.sysctls.net.core.busy_read=50", "tunings.baseline.sysctls.net.core.busy_poll=50")
	if err != nil {
		t.Fatal(err)
	}
	if sc := s.Spec.Tunings[0].Sysctls; len(sc) != 2 || sc["net.core.busy_read"] != "50" || sc["net.core.busy_poll"] != "50" {
		t.Errorf("sysctls after tunings.baseline.sysctls.net.core.busy_read=50 and busy_poll: %v", sc)
	}
	src = []byte(strings.Replace(string(src), "tunings: [baseline]", "tunings: [baseline, rps]\n  impairments: [none, loss-low]", 1))
	s, err = parse("tunings.rps.pods=true")
	if err != nil {
		t.Fatal(err)
	}
	if tu := s.Spec.Tunings; len(tu) != 2 || tu[1].Name != "rps" || !tu[1].Pods || tu[1].RPS == nil || tu[0].Pods {
		t.Errorf("tunings after tunings.rps.pods=true: %+v", tu)
	}
	for _, tc := range []struct{ set, want string }{
		{"workloads.ud.sender=pktgen", `w.yaml (--set): workloads.ud.sender=pktgen: spec.workloads has no entry named "ud" (did you mean "udp"? it has: udp, tcp)`},
		{"impairments.loss-low.where=underlay", `spec.impairments: "loss-low" is a plain name there (its fields are not study fields); give the whole entry (impairments=[...]) to set its fields`},
		// An error in what --set put into the file's entry is --set's,
		// not the entry's line (origin.go, atLine).
		{"tunings.rps.pod=true", `w.yaml (--set): spec.tunings[1].pod: unknown tuning field "pod" (did you mean "pods"?`},
		{"workloads.udp.foo=1", `w.yaml (--set): spec.workloads[0].foo: unknown field "foo"`},
		{"datapaths.flannel-vxlan.pod=1", `w.yaml (--set): spec.datapaths[0].pod: unknown datapath field "pod"`}, // a block list
		// The value is checked as the file's own text would be.
		{"workloads.udp.sender=trex", `spec.workloads[0].sender: "trex" is not iperf3 or pktgen`},
	} {
		_, err := parse(tc.set)
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &fe) {
			t.Errorf("--set %s:\n got %v\nwant %s", tc.set, err, tc.want)
		}
	}
}

// TestProfileErrorBesideSet: an unknown field a profile's flow entry
// already had is the profile's, named by its key, even where --set
// changed that entry too (every field of a flow entry shares a line).
func TestProfileErrorBesideSet(t *testing.T) {
	src := []byte(workloadStudy(`[{name: udp, tool: iperf3, protocol: udp, rate: 1G}]`) +
		"profiles:\n  p:\n    workloads:\n      - {name: udp, tool: iperf3, protocol: udp, rate: 1G, fooo: 1}\n")
	line := strings.Count(string(src), "\n")
	want := fmt.Sprintf(`w.yaml:%d: profile "p": spec.workloads[0].fooo: unknown field "fooo"`, line)
	for _, set := range [][]string{nil, {"workloads.udp.length=1400"}, {"workloads.udp.lengthh=1400"}} {
		_, err := Parse("w.yaml", src, Options{Profile: "p", Set: set}, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("--set %v:\n got %v\nwant %s", set, err, want)
		}
	}
}

// An entry without a name: key goes by the name it defaults to (a
// workload's tool-protocol, a datapath's type), and --set names it so,
// as a field (LIST.NAME.FIELD) or as a pick (LIST=[NAME]); the error of
// an unknown name lists the defaulted names.
func TestSetDefaultNamedEntry(t *testing.T) {
	src := strings.Replace(workloadStudy(`[{tool: iperf3, protocol: udp, rate: 1G}, {tool: iperf3}]`),
		"    - {name: calico-wp, type: calico-vxlan, policy: wp}", "    - {type: calico-vxlan, mtu: 1400}", 1)
	parse := func(set ...string) (*Study, error) {
		return Parse("w.yaml", []byte(src), Options{Set: set}, testCatalog)
	}
	s, err := parse("workloads.iperf3-udp.rate=2G", "workloads.iperf3-tcp.parallel=2", "datapaths.calico-vxlan.mtu=1300")
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Spec.Workloads; len(w) != 2 || w[0].Name != "iperf3-udp" || w[0].Rate != "2G" || w[1].Name != "iperf3-tcp" || w[1].Parallel != 2 {
		t.Errorf("workloads after --set by default names: %+v", w)
	}
	if d := s.Spec.Datapaths; len(d) != 3 || d[2].Name != "calico-vxlan" || d[2].MTU != 1300 {
		t.Errorf("datapaths after datapaths.calico-vxlan.mtu=1300: %+v", d)
	}
	// A pick by the default name keeps the entry's own fields.
	s, err = parse("datapaths=[calico-vxlan]")
	if err != nil || len(s.Spec.Datapaths) != 1 || s.Spec.Datapaths[0].MTU != 1400 {
		t.Errorf("datapaths=[calico-vxlan]: %+v, %v", s.Spec.Datapaths, err)
	}
	_, err = parse("workloads.iperf3-ud.rate=2G")
	want := `w.yaml (--set): workloads.iperf3-ud.rate=2G: spec.workloads has no entry named "iperf3-ud" (did you mean "iperf3-udp"? it has: iperf3-udp, iperf3-tcp)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
