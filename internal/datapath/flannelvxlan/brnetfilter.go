package flannelvxlan

import (
	"errors"
	"os"

	"github.com/cnibench/cnibench/internal/wire"
)

// sysctl writes a sysctl in a namespace (a variable for tests: the
// machines they run on have br_netfilter, or lack it, for good).
var sysctl = wire.Sysctl

// brNetfilterOn sets net.bridge.bridge-nf-call-iptables=1 in the node's
// namespace, as on a Kubernetes node. A new namespace starts with 1
// where br_netfilter is present; it is written all the same, as
// kube-router's datapath does. Where br_netfilter is absent (no file)
// the node runs without it: the local engine refused an entry whose
// netfilter state is measured and noted it for any other.
func brNetfilterOn(ns string) error {
	if err := sysctl(ns, "net/bridge/bridge-nf-call-iptables", "1"); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// WithoutBrNetfilter says what the datapath misses where br_netfilter
// is absent. The local engine reads it (a datapath that has it runs
// without the module unless its study entry has netfilter:, which then
// requires it) and records it in env.json's notes.
func (*Datapath) WithoutBrNetfilter() string {
	return "bridged pod-to-pod packets on one node skip iptables, unlike a real Flannel node"
}
