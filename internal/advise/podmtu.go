package advise

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// cniPodPrefix is the prefix of the host sides of a CNI's pod veths where
// it names them itself (Calico's cali*, Cilium's lxc*); bridge CNIs'
// (Flannel, Weave, Kube-router) are the kernel's veth*, as Docker's
// containers' are. Beside Calico or Cilium a veth* is no pod of theirs: a
// Docker container at 1500 on a jumbo node is not the CNI's MTU.
var cniPodPrefix = map[string]string{"calico": "cali", "cilium": "lxc"}

// cniPodLinks are the node's pod link groups of its CNI: every group
// where the CNI names no prefix of its own.
func cniPodLinks(in *inspect.Inspection) []inspect.LinkGroup {
	p, ok := cniPodPrefix[in.CNI.Name]
	if !ok {
		return in.PodLinks
	}
	var out []inspect.LinkGroup
	for _, g := range in.PodLinks {
		if g.Prefix == p {
			out = append(out, g)
		}
	}
	return out
}

// foundMTU is the smallest MTU on the pods' path: the overlay device's,
// or a pod link's where lower (pods started before an MTU raise keep
// theirs until restarted), and where it is, in words.
func foundMTU(in *inspect.Inspection) (int, string, error) {
	t := primaryTunnel(in)
	if t == nil {
		return 0, "", fmt.Errorf("no tunnel device")
	}
	low, lowPods := t.MTU, []string(nil)
	for _, g := range cniPodLinks(in) {
		if g.MinMTU <= 0 {
			// A link whose MTU could not be read (a pod gone between
			// listing and reading): no MTU of the path.
			continue
		}
		switch {
		case g.MinMTU < low:
			low, lowPods = g.MinMTU, []string{g.Prefix + "*"}
		case g.MinMTU == low:
			lowPods = append(lowPods, g.Prefix+"*")
		}
	}
	pods := "the pods' " + strings.Join(lowPods, ", ") + " links"
	switch {
	case len(lowPods) == 0:
		return low, "on " + t.Name, nil
	case t.MTU == low:
		return low, "on " + t.Name + " and " + pods, nil
	}
	return low, fmt.Sprintf("on %s (%s is at %s; running pods keep their MTU until restarted)", pods, t.Name, strconv.Itoa(t.MTU)), nil
}
