package netfilter

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/moby/ipvs"
	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// SyncIPVS makes the kernel state of kube-proxy's IPVS mode in namespace
// ns what st says, as kube-proxy's syncProxyRules does: the sysctls, the
// dummy device with exactly st's addresses, the ipsets with exactly
// st's entries, and the IPVS services with their real servers (all of
// them replaced). The iptables rules (st.Rules) are the caller's to
// load, after this: they match the sets, which must exist first.
func SyncIPVS(ns string, st *IPVS) error {
	for p, v := range st.Sysctls {
		if err := wire.Sysctl(ns, p, v); err != nil {
			return err
		}
	}
	h, err := netns.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := syncDummy(h, st); err != nil {
		return err
	}
	if err := syncSets(h, st.Sets); err != nil {
		return err
	}
	return syncVirtual(ns, st.Virtual)
}

// syncDummy creates the dummy device if needed and binds st's addresses
// to it, removing any other.
// Equivalent to: ip link add kube-ipvs0 type dummy; ip addr add IP/32 dev kube-ipvs0
func syncDummy(h *netns.NetlinkHandle, st *IPVS) error {
	l, err := h.LinkByName(st.Dummy)
	if err != nil {
		if err := h.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: st.Dummy}}); err != nil {
			return fmt.Errorf("add dummy device %s: %w", st.Dummy, err)
		}
		if l, err = h.LinkByName(st.Dummy); err != nil {
			return err
		}
	}
	have, err := h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, ip := range st.Addrs {
		want[ip.String()] = true
	}
	for _, a := range have {
		if want[a.IP.String()] {
			delete(want, a.IP.String())
			continue
		}
		if err := h.AddrDel(l, &a); err != nil {
			return fmt.Errorf("unbind %s from %s: %w", a.IP, st.Dummy, err)
		}
	}
	for _, ip := range st.Addrs {
		if !want[ip.String()] {
			continue
		}
		a := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}}
		if err := h.AddrAdd(l, a); err != nil {
			return fmt.Errorf("bind %s to %s: %w", ip, st.Dummy, err)
		}
	}
	return nil
}

// syncSets creates each set if it is missing, empties it and adds its
// entries. Equivalent to: ipset create NAME TYPE comment; ipset flush NAME; ipset add NAME ENTRY
func syncSets(h *netns.NetlinkHandle, sets []IPSet) error {
	for _, s := range sets {
		opts := netlink.IpsetCreateOptions{Replace: true, Comments: true}
		if s.Type == "bitmap:port" {
			opts.PortFrom, opts.PortTo = 0, 65535
		}
		if err := h.IpsetCreate(s.Name, s.Type, opts); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("ipset create %s %s: %w", s.Name, s.Type, err)
		}
		if err := h.IpsetFlush(s.Name); err != nil {
			return fmt.Errorf("ipset flush %s: %w", s.Name, err)
		}
		for _, e := range s.Entries {
			ne := &netlink.IPSetEntry{IP: e.IP, IP2: e.IP2, Replace: true}
			if e.Port != 0 {
				port, proto := uint16(e.Port), protoNumber(e.Protocol)
				ne.Port, ne.Protocol = &port, &proto
			}
			if err := h.IpsetAdd(s.Name, ne); err != nil {
				return fmt.Errorf("ipset add %s %s: %w", s.Name, e, err)
			}
		}
	}
	return nil
}

func (e IPSetEntry) String() string {
	s := e.IP.String()
	if e.Port != 0 {
		s += fmt.Sprintf(",%s:%d", e.Protocol, e.Port)
	}
	if e.IP2 != nil {
		s += "," + e.IP2.String()
	}
	return s
}

func protoNumber(p string) uint8 {
	if p == "udp" {
		return syscall.IPPROTO_UDP
	}
	return syscall.IPPROTO_TCP
}

// syncVirtual replaces every IPVS service of the namespace by vs.
// Equivalent to: ipvsadm -C; ipvsadm -A -t IP:PORT -s rr; ipvsadm -a -t IP:PORT -r EP:PORT -m
func syncVirtual(ns string, vs []VirtualServer) error {
	h, err := ipvsHandle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Flush(); err != nil {
		return fmt.Errorf("ipvsadm -C: %w", err)
	}
	for _, v := range vs {
		svc := &ipvs.Service{Address: v.IP, Protocol: uint16(protoNumber(v.Protocol)), Port: uint16(v.Port),
			SchedName: v.Scheduler, AddressFamily: unix.AF_INET, Netmask: 0xffffffff}
		if err := h.NewService(svc); err != nil {
			return fmt.Errorf("ipvs service %s %s:%d: %w", v.Protocol, v.IP, v.Port, err)
		}
		for _, d := range v.Dests {
			dst := &ipvs.Destination{Address: d.IP, Port: uint16(d.Port), Weight: 1, ConnectionFlags: ipvs.ConnectionFlagMasq, AddressFamily: unix.AF_INET}
			if err := h.NewDestination(svc, dst); err != nil {
				return fmt.Errorf("ipvs real server %s of %s:%d: %w", d, v.IP, v.Port, err)
			}
		}
	}
	return nil
}

// quietIPVS stops moby/ipvs's one log line: on its first use it runs
// modprobe ip_vs and logs a warning through logrus's standard logger
// when that fails, which it does wherever ip_vs is built in or loaded
// from elsewhere (preflight probed IPVS already). Nothing else in
// cnibench logs through logrus.
var quietIPVS = sync.OnceFunc(func() { logrus.SetOutput(io.Discard) })

func ipvsHandle(ns string) (*ipvs.Handle, error) {
	quietIPVS()
	p := ""
	if ns != "" {
		p = netns.Path(ns)
	}
	h, err := ipvs.New(p)
	if err != nil {
		return nil, fmt.Errorf("ipvs netlink in %s: %w", ns, err)
	}
	return h, nil
}

// ClearIPVS removes an IPVS proxy's state from namespace ns: the IPVS
// services, st's dummy device and st's ipsets (after the iptables rules
// that match them are gone: the kernel refuses to destroy a set in use).
// What is already gone is success. The sysctls are left: they belong to
// the run's node namespace and go with it.
func ClearIPVS(ns string, st *IPVS) error {
	var errs []error
	if h, err := ipvsHandle(ns); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, h.Flush())
		h.Close()
	}
	nh, err := netns.Handle(ns)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer nh.Close()
	if l, err := nh.LinkByName(st.Dummy); err == nil {
		errs = append(errs, nh.LinkDel(l))
	}
	for _, s := range st.Sets {
		if err := nh.IpsetDestroy(s.Name); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("ipset destroy %s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// ReadIPVS lists the IPVS services of namespace ns with their real
// servers. Equivalent to: ipvsadm -Ln
func ReadIPVS(ns string) ([]VirtualServer, error) {
	h, err := ipvsHandle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	svcs, err := h.GetServices()
	if err != nil {
		return nil, fmt.Errorf("ipvsadm -Ln: %w", err)
	}
	var out []VirtualServer
	for _, s := range svcs {
		v := VirtualServer{IP: s.Address, Port: int(s.Port), Protocol: "tcp", Scheduler: s.SchedName}
		if s.Protocol == syscall.IPPROTO_UDP {
			v.Protocol = "udp"
		}
		dests, err := h.GetDestinations(s)
		if err != nil {
			return nil, err
		}
		for _, d := range dests {
			v.Dests = append(v.Dests, Endpoint{IP: d.Address, Port: int(d.Port)})
		}
		out = append(out, v)
	}
	return out, nil
}
