package knob

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// TestPlaceFitsKeepsTheTraffic: the places proposed for a datapath
// that cannot take impairAt impair the same way of the traffic. Before,
// "underlay or client-pods" sent a client->server study to client-pods'
// default egress, which acts on what goes into the pods: an upload's
// ACKs.
func TestPlaceFitsKeepsTheTraffic(t *testing.T) {
	const ifb = " with direction: ingress (through an ifb device: needs the ifb module)"
	for _, c := range []struct {
		name    string
		at      study.ImpairAt
		tunnel  bool
		noPeers string
		want    string // the advice after "set impairAt.where to "; "" fits
	}{
		{"client-tunnel egress", study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}, false, "",
			"underlay, or client-pods" + ifb + ", for the same client->server traffic"},
		{"defaults", study.ImpairAt{}, false, "",
			"underlay, or client-pods" + ifb + ", for the same client->server traffic"},
		{"client-tunnel ingress", study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirIngress}, false, "",
			"underlay, or client-pods with direction: egress, for the same server->client traffic"},
		{"server-tunnel egress", study.ImpairAt{Where: study.WhereServerTunnel, Direction: study.DirEgress}, false, "",
			"underlay" + ifb + ", or client-pods, for the same server->client traffic"},
		{"server-tunnel ingress", study.ImpairAt{Where: study.WhereServerTunnel, Direction: study.DirIngress}, false, "",
			"underlay with direction: egress, or client-pods, for the same client->server traffic"},
		{"no pod devices either", study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}, false, "macvlan",
			"underlay, for the same client->server traffic"},
		{"client-pods egress without pod devices", study.ImpairAt{Where: study.WhereClientPods, Direction: study.DirEgress}, true, "macvlan",
			"underlay" + ifb + ", for the same server->client traffic"},
		{"client-pods ingress without pod devices", study.ImpairAt{Where: study.WhereClientPods, Direction: study.DirIngress}, true, "macvlan",
			"underlay with direction: egress, for the same client->server traffic"},
		{"tunnel there", study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}, true, "", ""},
		{"underlay", study.ImpairAt{Where: study.WhereUnderlay, Direction: study.DirIngress}, false, "macvlan", ""},
	} {
		err := PlaceFits(c.at, "dp", c.tunnel, c.noPeers)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "set impairAt.where to "+c.want+", or leave this datapath's impaired cells out")):
			t.Errorf("%s: %v\nwant advice %q", c.name, err, c.want)
		}
	}
}
