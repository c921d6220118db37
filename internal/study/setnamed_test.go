package study

import (
	"errors"
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
	for _, tc := range []struct{ set, want string }{
		{"workloads.ud.sender=pktgen", `w.yaml (--set): workloads.ud.sender=pktgen: spec.workloads has no entry named "ud" (did you mean "udp"? it has: udp, tcp)`},
		{"datapaths.flannel-vxlan.mtu=1400", `spec.datapaths: "flannel-vxlan" is a plain name there; give the whole entry (datapaths=[...]) to set its fields`},
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
