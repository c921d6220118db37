package engine

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/netns"
)

type namedNode struct{ Node }

func (namedNode) Name() string { return "w1" }

// TestOnePerPod: the rules of a CNI's policy or netfilter state match each
// pod by its host-side device, and netem on client pods goes on each
// one's; HostVeths leaves out a pod without one, and the callers indexed
// devices by pod (a panic past the end on a cluster with a macvlan pod).
func TestOnePerPod(t *testing.T) {
	pods := make([]Pod, 3)
	if err := OnePerPod(namedNode{}, pods, make([]netns.Iface, 3), "the rules"); err != nil {
		t.Errorf("one device per pod: %v", err)
	}
	err := OnePerPod(namedNode{}, pods, make([]netns.Iface, 1), "the rules")
	if err == nil || !strings.Contains(err.Error(), "the rules needs each pod's host-side device, and 2 of the 3 pods on node w1 have none") {
		t.Errorf("two pods without a device: %v", err)
	}
}
