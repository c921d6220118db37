package localengine

import (
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
)

// brNetfilterOptional is a datapath whose CNI turns bridge netfilter on
// in its nodes (net.bridge.bridge-nf-call-iptables=1) and which turns it
// on where br_netfilter is there but can run without it (flannel-vxlan,
// weave): cnibench loads no module, which would send the host's own
// bridged traffic through iptables too. WithoutBrNetfilter says what is
// lost without it. (Datapaths whose daemon will not run without it,
// flanneld, or that kube-router's datapath follows in refusing, list
// probe.BrNetfilter among their Features instead.)
type brNetfilterOptional interface{ WithoutBrNetfilter() string }

// brNetfilterMissing says why this machine's new namespaces have no
// bridge netfilter, nil when they have it (a variable for tests: the
// machines they run on have it, or lack it, for good).
var brNetfilterMissing = func() error { return probe.Require(probe.BrNetfilter) }

// brNetfilter is what d's study entry makes of bridge netfilter. Where
// the entry emulates and measures its CNI's iptables state (netfilter:),
// bridged pod-to-pod packets on one node meet that state only through
// bridge netfilter, so it is required (refused or, with skipUnavailable,
// skipped without it). Otherwise the datapath runs either way, and note
// says what is lost where this machine lacks it ("" where it has it).
func brNetfilter(d engine.Datapath) (required bool, note string) {
	o, ok := d.Built.(brNetfilterOptional)
	switch {
	case !ok:
		return false, ""
	case d.Spec.Netfilter != nil:
		return true, ""
	case brNetfilterMissing() == nil:
		return false, ""
	}
	return false, d.Built.Name() + ": bridge netfilter unavailable: " + o.WithoutBrNetfilter() + "; modprobe br_netfilter to match it"
}

// Required lists what this engine's preflight asks of d beyond d.Features
// (bridge netfilter where brNetfilter requires it), without probing:
// what doctor counts among the features a study needs.
func Required(d engine.Datapath) []string {
	if _, ok := d.Built.(brNetfilterOptional); ok && d.Spec.Netfilter != nil {
		return []string{probe.BrNetfilter}
	}
	return nil
}

// requireBrNetfilter checks what brNetfilter asks of d, adding its note
// (once per text) to f's.
func requireBrNetfilter(d engine.Datapath, f *engine.Facts) error {
	required, note := brNetfilter(d)
	if required {
		if err := brNetfilterMissing(); err != nil {
			return fmt.Errorf("its netfilter state (netfilter:) is measured, and bridged pod-to-pod packets on one node meet it only through bridge netfilter: %w", err)
		}
	}
	if note != "" && !slices.Contains(f.Notes, note) {
		f.Notes = append(f.Notes, note)
	}
	return nil
}
