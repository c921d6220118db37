package probe

import (
	"errors"
	"os"
	"strings"

	"github.com/cnibench/cnibench/internal/netns"
)

// BrNetfilterSysctl is the file br_netfilter gives each network
// namespace (per namespace since Linux 5.3), which flanneld stats at start
// and kube-router and weave-kube write 1 to.
const BrNetfilterSysctl = "/proc/sys/net/bridge/bridge-nf-call-iptables"

// tryBrNetfilter looks for bridge netfilter where an emulated node would
// see it: in a new network namespace (the scratch one), as flanneld does
// in its node's namespace (flannel main.go: os.Stat of
// /proc/sys/net/bridge/bridge-nf-call-iptables, exit 1 when it is
// missing). It loads nothing: br_netfilter, once loaded, also sends the
// host's own bridged traffic through iptables, which is the user's call.
// Equivalent to: ip netns exec SCRATCH cat /proc/sys/net/bridge/bridge-nf-call-iptables
func (s *scratch) tryBrNetfilter() (bool, string) {
	var value []byte
	err := netns.Do(s.ns, func() (err error) {
		value, err = os.ReadFile(BrNetfilterSysctl)
		return err
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, "a new network namespace has no " + BrNetfilterSysctl +
			": br_netfilter is not loaded (modprobe br_netfilter; the host's own bridged traffic then passes iptables too)," +
			" or the kernel keeps bridge netfilter in the initial namespace only (before Linux 5.3)"
	case err != nil:
		return false, "reading " + BrNetfilterSysctl + " in a new network namespace failed: " + err.Error()
	}
	return true, "net.bridge.bridge-nf-call-iptables=" + strings.TrimSpace(string(value)) +
		" in a new network namespace, as each emulated node starts: bridged pod-to-pod packets pass the node's iptables when 1"
}
