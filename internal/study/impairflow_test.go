package study

import (
	"testing"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// TestImpairAtCarries: netem impairs what its device sends, so each
// place and direction acts on one way of the traffic. The client node's
// tunnel device and underlay send client->server; the server node's
// tunnel device and the client pods' host-side veths (which send into
// the pods) send server->client; ingress (an ifb) flips each.
func TestImpairAtCarries(t *testing.T) {
	for _, c := range []struct {
		at   ImpairAt
		want spec.Flow
	}{
		{ImpairAt{}, spec.ClientToServer}, // the defaults: client-tunnel egress
		{ImpairAt{WhereClientTunnel, DirEgress}, spec.ClientToServer},
		{ImpairAt{WhereClientTunnel, DirIngress}, spec.ServerToClient},
		{ImpairAt{WhereServerTunnel, DirEgress}, spec.ServerToClient},
		{ImpairAt{WhereServerTunnel, DirIngress}, spec.ClientToServer},
		{ImpairAt{WhereUnderlay, DirEgress}, spec.ClientToServer},
		{ImpairAt{WhereUnderlay, DirIngress}, spec.ServerToClient},
		{ImpairAt{WhereClientPods, DirEgress}, spec.ServerToClient},
		{ImpairAt{WhereClientPods, DirIngress}, spec.ClientToServer},
	} {
		if got := c.at.Carries(); got != c.want {
			t.Errorf("%+v carries %s, want %s", c.at, got, c.want)
		}
	}
}
