package wire

import (
	"errors"
	"os"
)

// sysctl writes a sysctl in a namespace (a variable for tests: the
// machines they run on have br_netfilter, or lack it, for good).
var sysctl = Sysctl

// BridgeNetfilterOn sets net.bridge.bridge-nf-call-iptables=1 in a
// node's namespace, as Flannel's and Weave's nodes have it (kube-proxy
// and the CNIs' own iptables rules see bridged pod-to-pod packets). A new
// namespace starts with 1 where br_netfilter is present; it is written
// all the same. Where br_netfilter is absent (no file) the node runs
// without it and this is no error: the local engine refused an entry
// whose netfilter state is measured and noted it for any other. A
// datapath that cannot work without it (kube-router) writes the sysctl
// with Sysctl, which fails there.
// Equivalent to: ip netns exec NS sysctl -w net.bridge.bridge-nf-call-iptables=1
func BridgeNetfilterOn(ns string) error {
	if err := sysctl(ns, "net/bridge/bridge-nf-call-iptables", "1"); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
