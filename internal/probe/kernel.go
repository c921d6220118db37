package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// NamespacePrefix starts the name of the scratch namespace, so leftovers
// of a crash are recognisable (and removable with ip netns delete).
const NamespacePrefix = "cnbprobe-"

// ScratchName names a scratch namespace after the probing process: its
// pid and start time (clock ticks after boot, /proc/PID/stat field 22)
// and a random tag. The namespace is not journaled (doctor runs without
// a journal, and a probe may run before a run has one): `cnibench
// cleanup` finds a probe killed with kill -9 by its name, and deletes the
// namespace once that process is gone (ParseScratchName).
func ScratchName(pid int, start uint64, tag string) string {
	return fmt.Sprintf("%s%d-%d-%s", NamespacePrefix, pid, start, tag)
}

// ParseScratchName returns the pid and start time in a ScratchName; ok is
// false for any other name (an older cnibench's random one).
func ParseScratchName(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, NamespacePrefix)
	if !ok {
		return 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 3 || f[2] == "" {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != f[0] {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(f[1], 10, 64)
	if err != nil || strconv.FormatUint(start, 10) != f[1] {
		return 0, 0, false
	}
	return pid, start, true
}

// hostEffects names, for the kernel features whose probe can change the
// host's own namespace, the module the probe makes the kernel load and
// the devices that module adds until it is unloaded: a tunnel module's
// fallback devices go into every network namespace, the host's included;
// ifb's into the host's only (numifbs=2 at load). doctor says so; a run
// probes them only when its study uses them (Require). (A run's own
// devices load such modules too: see docs/safety.md, "Where changes
// happen", which also names pktgen, loaded by a run and never by a
// probe, and dummy, loaded by a run's IPVS proxy and by its probe.)
var hostEffects = map[string]struct {
	module  string
	devices []string
	// hostOnly: the devices are made in the host's namespace alone.
	hostOnly bool
}{
	IPIP: {"ipip", []string{"tunl0"}, false},
	GRE:  {"ip_gre", []string{"gre0", "gretap0", "erspan0"}, false},
	IFB:  {"ifb", []string{"ifb0", "ifb1"}, true},
	// numdummies=1 at load.
	Dummy: {"dummy", []string{"dummy0"}, true},
}

// hostEffectNote is the note doctor shows for feature: what its probe
// added to the host namespace (added, measured), or else what it may add.
func hostEffectNote(feature string, added []string) string {
	e, known := hostEffects[feature]
	where := "every network namespace, the host's included"
	if known && e.hostOnly {
		where = "the host's network namespace"
	}
	if len(added) > 0 {
		return "probing it loaded a module that added " + strings.Join(added, ", ") +
			" to " + where + " (until the module is unloaded)"
	}
	if !known {
		return ""
	}
	return "probing it loads module " + e.module + " (if not loaded yet), which adds " +
		strings.Join(e.devices, ", ") + " to " + strings.TrimSuffix(where, ", the host's included") + "; a run probes it only when its study needs it"
}

// probeNote is hostEffectNote for a probe of feature, given the host's
// links before and after it: of the links that appeared, only the
// devices its own module makes (hostEffects) are put down to it. Another
// process may add a link meanwhile (a run's own ifb0, a container's
// veth), which is no doing of the probe's.
func probeNote(feature string, before, after map[string]bool) string {
	var own []string
	if e, ok := hostEffects[feature]; ok {
		for _, l := range newLinks(before, after) {
			if slices.Contains(e.devices, l) {
				own = append(own, l)
			}
		}
	}
	return hostEffectNote(feature, own)
}

// hostLinks lists the link names of this process's own namespace.
func hostLinks() map[string]bool {
	links, err := netlink.LinkList()
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(links))
	for _, l := range links {
		m[l.Attrs().Name] = true
	}
	return m
}

// newLinks lists the names in after that are not in before (nil when
// either list is unknown).
func newLinks(before, after map[string]bool) []string {
	if before == nil || after == nil {
		return nil
	}
	var added []string
	for n := range after {
		if !before[n] {
			added = append(added, n)
		}
	}
	slices.Sort(added)
	return added
}

// Addresses for tunnel endpoints come from TEST-NET-1 (RFC 5737). The
// probe devices are never brought up, so nothing is ever sent to them.
var (
	testLocal  = net.IPv4(192, 0, 2, 1)
	testRemote = net.IPv4(192, 0, 2, 2)
)

// scratch is the probe namespace, a netlink handle into it, and the veth
// that macvlan, ipvlan, the qdiscs and RPS are tried on.
type scratch struct {
	ns     string
	h      *netns.NetlinkHandle
	parent netlink.Link // nil when no veth could be created
}

type kernelProbe struct {
	name string
	try  func(s *scratch) (ok bool, detail string)
}

func kernelProbes() []kernelProbe {
	return []kernelProbe{
		{Veth, func(s *scratch) (bool, string) {
			return s.tryLink(Veth, "veth", &netlink.Veth{LinkAttrs: attrs("cnbp-veth0"), PeerName: "cnbp-veth1"})
		}},
		{Bridge, func(s *scratch) (bool, string) {
			return s.tryLink(Bridge, "bridge", &netlink.Bridge{LinkAttrs: attrs("cnbp-bridge")})
		}},
		{Vxlan, func(s *scratch) (bool, string) {
			return s.tryLink(Vxlan, "vxlan", &netlink.Vxlan{LinkAttrs: attrs("cnbp-vxlan"), VxlanId: 42, Port: 4789})
		}},
		{Macvlan, func(s *scratch) (bool, string) {
			return s.tryChild(Macvlan, "macvlan", func(a netlink.LinkAttrs) netlink.Link {
				return &netlink.Macvlan{LinkAttrs: a, Mode: netlink.MACVLAN_MODE_BRIDGE}
			})
		}},
		{IPVlan, func(s *scratch) (bool, string) {
			return s.tryChild(IPVlan, "ipvlan", func(a netlink.LinkAttrs) netlink.Link {
				return &netlink.IPVlan{LinkAttrs: a, Mode: netlink.IPVLAN_MODE_L2}
			})
		}},
		// ipip and gre get endpoints: a tunnel without them has the same
		// keys as the fallback device (tunl0, gre0) and fails with EEXIST.
		{IPIP, func(s *scratch) (bool, string) {
			return s.tryLink(IPIP, "ipip", &netlink.Iptun{LinkAttrs: attrs("cnbp-ipip"), Local: testLocal, Remote: testRemote})
		}},
		{GRE, func(s *scratch) (bool, string) {
			return s.tryLink(GRE, "ip_gre", &netlink.Gretun{LinkAttrs: attrs("cnbp-gre"), Local: testLocal, Remote: testRemote})
		}},
		{Geneve, func(s *scratch) (bool, string) {
			return s.tryLink(Geneve, "geneve", &netlink.Geneve{LinkAttrs: attrs("cnbp-geneve"), ID: 42, Remote: testRemote})
		}},
		{WireGuard, func(s *scratch) (bool, string) {
			return s.tryLink(WireGuard, "wireguard", &netlink.Wireguard{LinkAttrs: attrs("cnbp-wg")})
		}},
		{Tun, (*scratch).tryTun},
		{Netem, func(s *scratch) (bool, string) {
			return s.tryQdisc(Netem, "sch_netem", func(a netlink.QdiscAttrs) netlink.Qdisc {
				return netlink.NewNetem(a, netlink.NetemQdiscAttrs{Latency: 1000})
			})
		}},
		{IFB, (*scratch).tryIFB},
		{TBF, func(s *scratch) (bool, string) {
			// tc qdisc add dev cnbp-p0 root tbf rate 1mbit burst 32k limit 64k
			return s.tryQdisc(TBF, "sch_tbf", func(a netlink.QdiscAttrs) netlink.Qdisc {
				const rate, burst = 125000, 32 << 10
				return &netlink.Tbf{QdiscAttrs: a, Rate: rate, Limit: 2 * burst, Buffer: netlink.Xmittime(rate, burst)}
			})
		}},
		{HTB, func(s *scratch) (bool, string) {
			return s.tryQdisc(HTB, "sch_htb", func(a netlink.QdiscAttrs) netlink.Qdisc { return netlink.NewHtb(a) })
		}},
		{ClsBPF, (*scratch).tryClsBPF},
		{CiliumBPF, (*scratch).tryCiliumBPF},
		{OpenvSwitch, (*scratch).tryOVS},
		{IPVS, (*scratch).tryIPVS},
		{Iptables, (*scratch).tryIptables},
		{NFTables, (*scratch).tryNFTables},
		{Dummy, func(s *scratch) (bool, string) {
			return s.tryLink(Dummy, "dummy", &netlink.Dummy{LinkAttrs: attrs("cnbp-dummy")})
		}},
		{IPSet, (*scratch).tryIPSet},
		{SocketLB, (*scratch).trySocketLB},
		{RPS, (*scratch).tryRPS},
		{RFS, (*scratch).tryRFS},
		{CPUIdle, (*scratch).tryCPUIdle},
		{PacketGen, func(*scratch) (bool, string) {
			if err := Pktgen(); err != nil {
				return false, strings.TrimPrefix(err.Error(), ErrNoPktgen.Error()+": ") + "; needed for a UDP workload's sender: pktgen"
			}
			return true, ""
		}},
		{BrNetfilter, (*scratch).tryBrNetfilter},
	}
}

// attrs starts from NewLinkAttrs: a LinkAttrs literal has TxQLen 0, which
// the library sends as txqueuelen 0 (and qdiscs on such a device warn).
func attrs(name string) netlink.LinkAttrs {
	a := netlink.NewLinkAttrs()
	a.Name = name
	return a
}

// kernel runs the kernel probes named in only (nil: all) in a scratch
// namespace it always deletes. A sysctl value's probe (SysctlValue) is
// made for the value, and runs only when named.
func kernel(ctx context.Context, priv []Result, only []string) []Result {
	var probes []kernelProbe
	for _, p := range kernelProbes() {
		if only == nil || slices.Contains(only, p.name) {
			probes = append(probes, p)
		}
	}
	for _, n := range only {
		if p, ok := sysctlValueProbe(n); ok {
			probes = append(probes, p)
		}
	}
	all := func(detail string) []Result {
		out := make([]Result, len(probes))
		for i, p := range probes {
			out[i] = Result{Name: p.name, Kind: KindKernel, Detail: detail}
		}
		return out
	}
	for _, r := range priv {
		if (r.Name == CapSysAdmin || r.Name == CapNetAdmin) && !r.OK {
			return all("not probed: probing creates a scratch network namespace and devices, which needs " + r.Name + " (run as root)")
		}
	}
	b := make([]byte, 4)
	rand.Read(b)
	start, err := journal.ProcessStart(os.Getpid())
	if err != nil {
		return all("not probed: " + err.Error())
	}
	name := ScratchName(os.Getpid(), start, hex.EncodeToString(b))
	if err := netns.Add(name); err != nil {
		return all("not probed: creating a scratch network namespace failed: " + reason("net_ns", err))
	}
	defer func() {
		if err := netns.Delete(name); err != nil {
			slog.Warn("probe: could not delete scratch namespace", "netns", name, "err", err)
		}
	}()
	h, err := netns.Handle(name)
	if err != nil {
		return all("not probed: " + err.Error())
	}
	defer h.Close()
	s := &scratch{ns: name, h: h}
	// Modules loaded from here on are the probes' (the parent veth's
	// included): what a dry run says it changed (HostChanges).
	mods := loadedModules()
	s.makeParent()

	out := make([]Result, 0, len(probes))
	for _, p := range probes {
		r := Result{Name: p.name, Kind: KindKernel}
		if err := ctx.Err(); err != nil {
			r.Detail = "not probed: " + err.Error()
		} else {
			before := hostLinks()
			cache.kernelTried = append(cache.kernelTried, p.name)
			r.OK, r.Detail = p.try(s)
			note := probeNote(p.name, before, hostLinks())
			if mods != nil {
				after := loadedModules()
				noteLoaded(mods, after, p.name, note)
				mods = after
			}
			if note != "" && (r.OK || len(r.Detail) == 0) {
				r.Detail = note
			} else if note != "" && !strings.HasPrefix(note, "probing it loads") {
				r.Detail += "; " + note
			}
		}
		out = append(out, r)
	}
	return out
}

// makeParent creates the veth pair the child devices and qdiscs use.
// Equivalent to: ip link add cnbp-p0 type veth peer name cnbp-p1
func (s *scratch) makeParent() {
	v := &netlink.Veth{LinkAttrs: attrs("cnbp-p0"), PeerName: "cnbp-p1"}
	if s.h.LinkAdd(v) != nil {
		return
	}
	if l, err := s.h.LinkByName("cnbp-p0"); err == nil {
		s.parent = l
	}
}

// tryLink creates a device and deletes it again.
// Equivalent to: ip link add NAME type KIND ...; ip link delete NAME
func (s *scratch) tryLink(kind, module string, l netlink.Link) (bool, string) {
	if err := s.h.LinkAdd(l); err != nil {
		return false, failed("creating "+article(kind)+" device", module, err)
	}
	if err := s.h.LinkDel(l); err != nil {
		return false, failed("deleting the "+kind+" device", module, err)
	}
	return true, ""
}

// tryChild is tryLink for kinds that sit on a parent device.
// Equivalent to: ip link add NAME link cnbp-p0 type KIND mode ...
func (s *scratch) tryChild(kind, module string, mk func(netlink.LinkAttrs) netlink.Link) (bool, string) {
	if s.parent == nil {
		return false, "not probed: " + article(kind) + " device needs a parent device, and creating a veth for it failed (see veth)"
	}
	a := attrs("cnbp-" + kind)
	a.ParentIndex = s.parent.Attrs().Index
	return s.tryLink(kind, module, mk(a))
}

// tryQdisc makes a qdisc the root qdisc of the parent veth and deletes it.
// Equivalent to: tc qdisc add dev cnbp-p0 root handle 1: KIND ...;
// tc qdisc del dev cnbp-p0 root
func (s *scratch) tryQdisc(kind, module string, mk func(netlink.QdiscAttrs) netlink.Qdisc) (bool, string) {
	if s.parent == nil {
		return false, "not probed: needs a veth device to attach the qdisc to, and creating one failed (see veth)"
	}
	q := mk(netlink.QdiscAttrs{LinkIndex: s.parent.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT})
	if err := s.h.QdiscAdd(q); err != nil {
		return false, failed("adding a "+kind+" qdisc", module, err)
	}
	if err := s.h.QdiscDel(q); err != nil {
		return false, failed("deleting the "+kind+" qdisc", module, err)
	}
	return true, ""
}

func article(kind string) string {
	switch kind[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + kind
	}
	return "a " + kind
}
