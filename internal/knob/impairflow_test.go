package knob

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// flowStudy is a study of spec's lines validated against the real tools'
// descriptions, whose Data the notes read.
func flowStudy(t *testing.T, spec string) *study.Study {
	t.Helper()
	src := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n" + spec + "  trials: 1\n  duration: 3s\n"
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestImpairFlowNotes: a workload whose measured data goes the way
// opposite to the one spec.impairAt's netem acts on (netem impairs what
// its device sends) is noted once, naming what it impairs instead and
// the direction that impairs its data; a place on its data's way, a
// request/response tool (both ways) or a study that impairs nothing is
// not.
func TestImpairFlowNotes(t *testing.T) {
	const (
		tcp     = "{name: tcp, tool: iperf3}"
		rev     = "{name: down, tool: iperf3, reverse: true}"
		udp     = "{name: udp, tool: iperf3, protocol: udp, rate: 1G}"
		http    = "{name: http, tool: ab}"
		rr      = "{name: rr, tool: sockperf}"
		tcpACKs = "workload tcp (iperf3 tcp, the client sends) has only its ACKs impaired"
	)
	for _, c := range []struct {
		name, at, workloads string
		impairments         string
		want                []string // each note's start, in order; "+..." a further part of the last
	}{
		{"client-pods egress, upload", "{where: client-pods}", tcp, "[loss-low]",
			[]string{"impairAt client-pods egress acts on server->client traffic: " + tcpACKs + " (a delay lengthens its round trips either way; loss, corruption and a rate act on the packets netem sees); direction: ingress impairs its data"}},
		{"client-pods ingress, upload", "{where: client-pods, direction: ingress}", tcp, "[loss-low]", nil},
		{"client-pods egress, download", "{where: client-pods}", rev, "[loss-low]", nil},
		{"client-pods ingress, download", "{where: client-pods, direction: ingress}", rev, "[loss-low]",
			[]string{"impairAt client-pods ingress acts on client->server traffic: workload down (iperf3 tcp, the server sends) has only its ACKs impaired"}},
		{"default place, upload", "{}", tcp, "[loss-low]", nil},
		{"default place, download", "{}", rev, "[none, delay-low]",
			[]string{"impairAt client-tunnel egress acts on client->server traffic: workload down (iperf3 tcp, the server sends) has only its ACKs impaired", "+; direction: ingress impairs its data"}},
		{"client-tunnel ingress, upload", "{direction: ingress}", tcp, "[loss-low]",
			[]string{"impairAt client-tunnel ingress acts on server->client traffic: " + tcpACKs, "+; direction: egress impairs its data"}},
		{"server-tunnel egress, upload", "{where: server-tunnel}", tcp, "[loss-low]",
			[]string{"impairAt server-tunnel egress acts on server->client traffic: " + tcpACKs}},
		{"server-tunnel ingress, upload", "{where: server-tunnel, direction: ingress}", tcp, "[loss-low]", nil},
		{"underlay egress, upload", "{where: underlay}", tcp, "[loss-low]", nil},
		{"underlay ingress, UDP upload", "{where: underlay, direction: ingress}", udp, "[loss-low]",
			[]string{"impairAt underlay ingress acts on server->client traffic: workload udp (iperf3 udp, the client sends) has none of its datagrams impaired; direction: egress impairs its data"}},
		{"default place, HTTP", "{}", http, "[loss-low]",
			[]string{"impairAt client-tunnel egress acts on client->server traffic: workload http (ab tcp, the server sends its responses) has only its requests and ACKs impaired"}},
		{"client-pods egress, HTTP", "{where: client-pods}", http, "[loss-low]", nil},
		{"request/response", "{where: client-pods}", rr, "[delay-low]", nil},
		{"nothing impaired", "{where: client-pods}", tcp, "[none, {name: l0, loss: 0%}]", nil},
		{"once per workload, each its own", "{where: client-pods}", tcp + ", " + rev + ", " + udp, "[loss-low, delay-low]",
			[]string{"impairAt client-pods egress acts on server->client traffic: " + tcpACKs,
				"impairAt client-pods egress acts on server->client traffic: workload udp (iperf3 udp, the client sends) has none of its datagrams impaired"}},
	} {
		s := flowStudy(t, "  datapaths: [flannel-vxlan]\n  tunings: [baseline]\n  impairAt: "+c.at+"\n  impairments: "+c.impairments+"\n  workloads: ["+c.workloads+"]\n")
		got := ImpairFlowNotes(s)
		var starts [][]string
		for _, w := range c.want {
			if part, ok := strings.CutPrefix(w, "+"); ok {
				starts[len(starts)-1] = append(starts[len(starts)-1], part)
				continue
			}
			starts = append(starts, []string{w})
		}
		if len(got) != len(starts) {
			t.Errorf("%s: notes %q, want %d", c.name, got, len(starts))
			continue
		}
		for i, parts := range starts {
			if !strings.HasPrefix(got[i], parts[0]) {
				t.Errorf("%s: note %q, want it to start %q", c.name, got[i], parts[0])
			}
			for _, p := range parts[1:] {
				if !strings.Contains(got[i], p) {
					t.Errorf("%s: note %q, want %q in it", c.name, got[i], p)
				}
			}
		}
	}
}
