package probe

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// Sysctls whose value names something a module provides: the kernel
// loads it when the value is written, and refuses the write (ENOENT)
// where there is no such module. That a kernel has the sysctl says
// nothing of the value: `sysctls: {net.core.default_qdisc: fq}` on a
// kernel without sch_fq passed preflight, and every trial of the tuning
// failed.
const (
	sysctlDefaultQdisc = "net.core.default_qdisc"
	sysctlCongestion   = "net.ipv4.tcp_congestion_control"
)

// SysctlValue is the feature a tuning's sysctl value needs where the
// value names a module's: a queueing discipline
// (net.core.default_qdisc: fq needs sch_fq) or a TCP congestion control
// (net.ipv4.tcp_congestion_control: bbr needs tcp_bbr). It is "" for the
// other sysctls, whose values need nothing more than the sysctl
// (Sysctl). inNetns says the tuning writes the value in a network
// namespace other than the host's (a local node's, or pods' with pods:
// true): there the kernel (5.13 on) lets it set only a congestion
// control the host allows, which the host's own namespace (a cluster
// node's, where the agent writes) is not held to.
func SysctlValue(name, value string, inNetns bool) string {
	if name != sysctlDefaultQdisc && name != sysctlCongestion {
		return ""
	}
	f := sysctlPrefix + name + "=" + value
	if inNetns && name == sysctlCongestion {
		f += netnsSuffix
	}
	return f
}

// netnsSuffix marks a congestion control written outside the host's
// namespace, whose probe also asks that the host allows it.
const netnsSuffix = "@netns"

// sysctlValueOf splits a SysctlValue feature; ok is false for any other
// name.
func sysctlValueOf(feature string) (name, value string, inNetns, ok bool) {
	rest, ok := strings.CutPrefix(feature, sysctlPrefix)
	if !ok {
		return "", "", false, false
	}
	rest, inNetns = strings.CutSuffix(rest, netnsSuffix)
	name, value, ok = strings.Cut(rest, "=")
	if !ok || SysctlValue(name, value, inNetns) != feature {
		return "", "", false, false
	}
	return name, value, inNetns, true
}

// sysctlValueProbe is the kernel probe of a SysctlValue feature.
func sysctlValueProbe(feature string) (kernelProbe, bool) {
	name, value, inNetns, ok := sysctlValueOf(feature)
	if !ok {
		return kernelProbe{}, false
	}
	try := func(s *scratch) (bool, string) { return s.tryCongestion(value, inNetns, modprobeDryRun) }
	if name == sysctlDefaultQdisc {
		try = func(s *scratch) (bool, string) { return s.tryDefaultQdisc(value) }
	}
	return kernelProbe{name: feature, try: try}, true
}

// tryDefaultQdisc adds a root qdisc of the kind the sysctl would make
// every new device's, on the scratch veth, with no options (as the
// kernel makes a default one), and deletes it: adding it loads its
// module, as writing the sysctl would. The sysctl itself is global, so
// it is not written.
// Equivalent to: tc qdisc add dev cnbp-p0 root handle 1: KIND; tc qdisc del dev cnbp-p0 root
func (s *scratch) tryDefaultQdisc(kind string) (bool, string) {
	if s.parent == nil {
		return false, "not probed: needs a veth device to add the qdisc to, and creating one failed (see veth)"
	}
	q := &netlink.GenericQdisc{QdiscType: kind, QdiscAttrs: netlink.QdiscAttrs{
		LinkIndex: s.parent.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}}
	if err := s.h.QdiscAdd(q); err != nil {
		return false, failed("adding a "+kind+" qdisc (what "+sysctlDefaultQdisc+"="+kind+" gives every new device)", "sch_"+kind, err)
	}
	if err := s.h.QdiscDel(q); err != nil {
		return false, failed("deleting the "+kind+" qdisc", "sch_"+kind, err)
	}
	return true, ""
}

// tryCongestion writes the congestion control in the scratch namespace
// (per namespace since Linux 4.15), which loads its module as the
// tuning's write will. Where the scratch namespace has no such sysctl
// (before 4.15 it is global) it writes nothing: the algorithm is there
// when the kernel lists it as available or modprobe could load
// tcp_NAME (dryRun). The kernel finds (and loads) the algorithm before
// it asks whether a namespace other than the host's may set it, so
// EPERM means the algorithm is there and not allowed outside the host's
// namespace: a refusal only where the tuning writes there (inNetns).
// Equivalent to: ip netns exec SCRATCH sysctl net.ipv4.tcp_congestion_control=NAME
func (s *scratch) tryCongestion(algo string, inNetns bool, dryRun func(module string) error) (bool, string) {
	file := "/proc/sys/net/ipv4/tcp_congestion_control"
	var perNetns bool
	err := netns.Do(s.ns, func() error {
		if _, err := os.Stat(file); err != nil {
			return nil
		}
		perNetns = true
		return os.WriteFile(file, []byte(algo), 0)
	})
	switch {
	case perNetns && err == nil:
		return true, ""
	case perNetns && errors.Is(err, unix.ENOENT):
		return false, "writing " + algo + " to " + sysctlCongestion + " in a new network namespace failed: this kernel has no TCP congestion control " +
			algo + " (no module tcp_" + algo + " to load; CONFIG_TCP_CONG_" + strings.ToUpper(algo) + ")"
	case perNetns && errors.Is(err, unix.EPERM) && !inNetns:
		// tcp_set_default_congestion_control (net/ipv4/tcp_cong.c):
		// tcp_ca_find_autoload first, then the EPERM for a namespace
		// other than init_net; the host's may set any it has.
		return true, ""
	case perNetns && errors.Is(err, unix.EPERM):
		// As root: the kernel (5.13 on, and the stable kernels that took it) lets
		// a namespace other than the host's set only an algorithm the
		// host allows, and a tuning writes it in the node's namespace.
		return false, "writing " + algo + " to " + sysctlCongestion + " in a new network namespace was refused (EPERM): " +
			"a namespace other than the host's may set only the algorithms in net.ipv4.tcp_allowed_congestion_control, and " + algo +
			" is not among them; allow it on the host (sysctl -w net.ipv4.tcp_allowed_congestion_control=\"$(sysctl -n net.ipv4.tcp_allowed_congestion_control) " +
			algo + "\")"
	case perNetns:
		return false, "writing " + algo + " to " + sysctlCongestion + " in a new network namespace failed: " + reason("tcp_"+algo, err)
	case err != nil:
		return false, "not probed: " + err.Error()
	}
	return congestionAvailable(algo, "/proc/sys/net/ipv4/tcp_available_congestion_control", dryRun)
}

// congestionAvailable is the read-only check of tryCongestion: listed as
// available (loaded or built in), or loadable.
func congestionAvailable(algo, availableFile string, dryRun func(module string) error) (bool, string) {
	if b, err := os.ReadFile(availableFile); err == nil && slices.Contains(strings.Fields(string(b)), algo) {
		return true, ""
	}
	if err := dryRun("tcp_" + algo); err != nil {
		return false, "this kernel has no TCP congestion control " + algo + ": it is not in " + availableFile +
			" and no module tcp_" + algo + " can be loaded (" + err.Error() + ")"
	}
	return true, "module tcp_" + algo + " is not loaded; the tuning's write loads it"
}
