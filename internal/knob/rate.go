package knob

import (
	"context"
	"errors"
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// linkRateEntry is spec.link.rate: a tbf qdisc on each emulated node's
// underlay that charges Ethernet framing per packet (wire.ShapeTBF), so
// goodput matches a NIC of that speed. It is applied once the cluster is
// up and reverted before teardown; a root qdisc added after the datapath
// stacked its devices on the underlay shapes their packets just the same.
// The shaper lives inside the run's node namespaces, so there is nothing
// to journal: a crashed run's shaper goes with its namespaces. The kube
// engine refuses spec.link.rate in preflight (nodes are real machines
// with real NICs); a node without a namespace of its own is refused here
// too, so the host's NIC is never shaped.
var linkRateEntry = Entry{
	Name:    "link-rate",
	Changes: "egress rate of each emulated node's underlay (tbf qdisc with Ethernet framing overhead), spec.link.rate",
	Scope:   Datapath,
	Wanted:  func(t *Target) bool { return t.Study != nil && t.Study.Spec.Link.Rate != "" },
	Needs:   func(*Target) []string { return []string{probe.TBF} },
	Apply:   applyLinkRate,
}

// The shaper's qdisc operations, variables so that a test can stand in
// for the kernel.
var (
	shapeTBF   = wire.ShapeTBF
	unshapeTBF = wire.Unshape
)

// applyLinkRate shapes both nodes' underlays and notes the rate in env.
// If the second node fails, the first is unshaped before returning.
func applyLinkRate(_ context.Context, t *Target) (Undo, error) {
	rate, err := t.Study.Spec.Link.RateBits()
	if err != nil {
		return nil, err
	}
	var shaped []engine.Node
	undo := func() error {
		var errs []error
		for i := len(shaped) - 1; i >= 0; i-- {
			n := shaped[i]
			if err := unshapeTBF(n.Netns(), n.Underlay().Name); err != nil {
				errs = append(errs, fmt.Errorf("link rate on %s: %w", n.Name(), err))
			}
		}
		return errors.Join(errs...)
	}
	for _, n := range []engine.Node{t.Cluster.Server(), t.Cluster.Client()} {
		if n.Netns() == "" {
			return nil, failedApply(fmt.Errorf("link rate: node %s is not emulated; only the local engine's underlay can be shaped", n.Name()), undo)
		}
		if err := shapeTBF(n.Netns(), n.Underlay().Name, rate); err != nil {
			return nil, failedApply(fmt.Errorf("link rate on %s: %w", n.Name(), err), undo)
		}
		shaped = append(shaped, n)
	}
	t.Env.LinkRate = rate
	return undo, nil
}
