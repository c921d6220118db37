package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/cniexec"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestWiringCNIMatchesNetlink builds, for every datapath whose CNI
// delegates to a reference plugin and that this machine can run, a
// two-node cluster with two pods per node once with wiring netlink and
// once with wiring cni, and compares inside every pod the links (name,
// kind, MTU, state), addresses and routes (all tables), and on the node
// the pod's host-side veth (bridge, MTU, hairpin, state). With wiring cni
// it then checks TCP between pods on one node and across nodes both ways,
// and that tearing down leaves nothing: no namespace, no host link, no
// state directory, nothing under /var/lib/cni. Datapaths or plugins this
// machine lacks are skipped with the reason; present but broken fails.
func TestWiringCNIMatchesNetlink(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, d := range catalog.All() {
		del, ok := d.(datapath.CNIDelegate)
		if !ok {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			kerneltest.RequireFeatures(t, d)
			kerneltest.RequireCNIPlugins(t, append([]string{cniconf.TypeLoopback}, del.CNIPlugins()...)...)
			hostLinks, varLibCNI := hostLinkNames(t), treeOf(t, "/var/lib/cni")

			want, wantTimes := wiredPods(t, d, WiringNetlink)
			got, gotTimes := wiredPods(t, d, WiringCNI)
			for i := range want {
				if diff := diffLines(want[i].lines(), got[i].lines()); diff != "" {
					t.Errorf("pod %s: wiring cni differs from wiring netlink (- netlink, + cni):\n%s", want[i].name, diff)
				}
			}
			t.Logf("per-pod network setup / teardown, median of %d pods: netlink %s / %s, cni %s / %s",
				len(wantTimes), median(wantTimes, true), median(wantTimes, false), median(gotTimes, true), median(gotTimes, false))

			if after := hostLinkNames(t); !slices.Equal(after, hostLinks) {
				t.Errorf("host links changed: before %v, after %v", hostLinks, after)
			}
			if after := treeOf(t, "/var/lib/cni"); !slices.Equal(after, varLibCNI) {
				t.Errorf("/var/lib/cni changed: before %v, after %v", varLibCNI, after)
			}
		})
	}
}

// wiredPods builds a cluster with the wiring, scales it to two pods per
// node, checks connectivity (wiring cni), snapshots every pod's network,
// tears the cluster down and returns the snapshots (server pods, then
// client pods) and every pod's setup and teardown times.
func wiredPods(t *testing.T, d datapath.Datapath, wiring string) ([]podNet, []PodTime) {
	t.Helper()
	c := upClusterWith(t, Config{RunID: kerneltest.RunID(), Datapath: d, Wiring: wiring, Kill: cleanup.KillInNetns})
	state := c.stateDir
	if wiring == WiringCNI && state != journal.StateDir(journal.DefaultDir, c.cfg.RunID) {
		t.Errorf("state directory %q, want %s", state, journal.StateDir(journal.DefaultDir, c.cfg.RunID))
	}
	servers, clients, err := c.ScalePods(context.Background(), 2)
	if err != nil {
		t.Fatalf("wiring %s: %v", wiring, err)
	}
	var out []podNet
	for _, p := range append(servers, clients...) {
		out = append(out, snapshot(t, d, p))
		// What the datapath says of its pods (the runner refuses
		// impairAt client-pods by it before the run) is what it wires.
		if why := datapath.WhyNoPodPeers(d); (why == "") != (p.hostVeth != "") {
			t.Errorf("wiring %s: pod %s has host-side device %q, but the datapath says %q of its pods' peers", wiring, p.name, p.hostVeth, why)
		}
	}
	if wiring == WiringCNI {
		for i, pair := range [][2]*Pod{{servers[0], servers[1]}, {servers[0], clients[0]}, {clients[1], servers[1]}} {
			if err := tcpRoundTrip(pair[0], pair[1], 7200+i, 256<<10); err != nil {
				fail(t, c, "tcp with wiring cni", pair[0], pair[1], err)
			}
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close (wiring %s): %v", wiring, err)
	}
	times := c.PodTimes()
	if len(times) != 4 {
		t.Fatalf("wiring %s: %d pod times, want 4: %+v", wiring, len(times), times)
	}
	for _, pt := range times {
		if pt.Setup <= 0 || pt.Teardown <= 0 {
			t.Errorf("wiring %s: pod %s on %s: setup %s, teardown %s; want both recorded", wiring, pt.Pod, pt.Node, pt.Setup, pt.Teardown)
		}
	}
	if state != "" {
		if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("state directory %s left after Close: %v", state, err)
		}
	}
	return out, times
}

// podNet is one pod's network as seen from inside it and, for its
// host-side veth, from its node.
type podNet struct {
	name                 string
	links, addrs, routes []string
	host                 string
}

func (p podNet) lines() []string {
	var out []string
	for _, l := range p.links {
		out = append(out, "link "+l)
	}
	for _, a := range p.addrs {
		out = append(out, "addr "+a)
	}
	for _, r := range p.routes {
		out = append(out, "route "+r)
	}
	return append(out, "host "+p.host)
}

// snapshot reads pod p's network. What must differ between the two
// wirings, and only that, is normalised:
//   - MAC addresses are not read: both wirings let the kernel choose them
//     (neither the plugins nor the in-process wiring sets one).
//   - IPv6 link-local addresses, and their local-table routes, are
//     derived from the MAC (EUI-64): each becomes "fe80::EUI64/64".
//   - Interface indexes are replaced by names: the plugin creates the
//     veth in the node and moves it, the in-process wiring creates it in
//     place, so indexes differ.
//   - The host-side veth is described by what it is (bridge port, MTU,
//     hairpin, state), not by its name: the bridge plugin names it
//     veth<random>, the in-process wiring veth<hash of the pod name>.
//
// The snapshot waits until IPv6 addressing has settled (waitSettled): the
// link-local address appears up to a second after the link comes up, and
// the bridge plugin turns duplicate address detection off on eth0
// (accept_dad=0) where the in-process wiring leaves it on, so for a while
// the address is tentative and has no local route in one wiring only.
// Compared once settled, both are the same.
//   - flannel-udp: flanneld leases a random /24 per run, so the lease's
//     third octet becomes "L" (the host part is still compared).
func snapshot(t *testing.T, d datapath.Datapath, p *Pod) podNet {
	t.Helper()
	h, err := netns.Handle(p.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitSettled(t, h, p.name)
	links, err := netns.Dump(h.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	out := podNet{name: p.name}
	for _, l := range links {
		a := l.Attrs()
		names[a.Index] = a.Name
		kind := l.Type()
		switch v := l.(type) {
		case *netlink.Macvlan:
			kind += fmt.Sprintf(" mode %d", v.Mode)
		case *netlink.IPVlan:
			kind += fmt.Sprintf(" mode %d", v.Mode)
		}
		out.links = append(out.links, fmt.Sprintf("%s %s mtu %d up=%v", a.Name, kind, a.MTU, a.Flags&net.FlagUp != 0))
		addrs, err := netns.Dump(func() ([]netlink.Addr, error) { return h.AddrList(l, netlink.FAMILY_ALL) })
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range addrs {
			out.addrs = append(out.addrs, fmt.Sprintf("%s %s scope %d flags %#x", a.Name, linkLocal(ad.IPNet.String()), ad.Scope, ad.Flags))
		}
	}
	routes, err := netns.Dump(func() ([]netlink.Route, error) {
		return h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		dst := "default"
		if r.Dst != nil {
			if ones, _ := r.Dst.Mask.Size(); ones > 0 || !r.Dst.IP.IsUnspecified() {
				dst = linkLocal(r.Dst.String())
			}
		}
		out.routes = append(out.routes, fmt.Sprintf("table %d type %d %s via %v dev %s proto %d scope %d src %v metric %d flags %d",
			r.Table, r.Type, dst, r.Gw, names[r.LinkIndex], r.Protocol, r.Scope, r.Src, r.Priority, r.Flags))
	}
	sort.Strings(out.links)
	sort.Strings(out.addrs)
	sort.Strings(out.routes)
	out.host = hostSide(t, p)
	if d.Name() == "flannel-udp" {
		lease := regexp.MustCompile(`\b10\.244\.\d+\.`)
		for _, s := range []*[]string{&out.addrs, &out.routes} {
			for i := range *s {
				(*s)[i] = lease.ReplaceAllString((*s)[i], "10.244.L.")
			}
		}
	}
	return out
}

// waitSettled waits until the pod's IPv6 addressing has settled: every
// interface that is up has its link-local address (the kernel adds it
// when the carrier comes, which link watching may delay by up to a
// second) and no address is tentative (duplicate address detection has
// ended). On a kernel without IPv6 there is nothing to wait for.
func waitSettled(t *testing.T, h *netns.NetlinkHandle, pod string) {
	t.Helper()
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		links, err := netns.Dump(h.LinkList)
		if err != nil {
			t.Fatal(err)
		}
		settled := true
		var addrs []netlink.Addr
		for _, l := range links {
			a, err := netns.Dump(func() ([]netlink.Addr, error) { return h.AddrList(l, netlink.FAMILY_V6) })
			if err != nil {
				t.Fatal(err)
			}
			addrs = append(addrs, a...)
			up := l.Attrs().Flags&net.FlagUp != 0 && l.Attrs().Flags&net.FlagLoopback == 0
			if up && !slices.ContainsFunc(a, func(a netlink.Addr) bool { return a.IP.IsLinkLocalUnicast() }) {
				settled = false
			}
			if slices.ContainsFunc(a, func(a netlink.Addr) bool { return a.Flags&unix.IFA_F_TENTATIVE != 0 }) {
				settled = false
			}
		}
		if settled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: IPv6 addresses not settled after 10 s: %v", pod, addrs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// linkLocal replaces an IPv6 link-local address (a host address or a /64
// prefix of one) by a placeholder; the fe80::/64 prefix itself stays.
func linkLocal(s string) string {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		ip = net.ParseIP(s)
	}
	if ip == nil || ip.To4() != nil || !ip.IsLinkLocalUnicast() || ip.Equal(net.ParseIP("fe80::")) {
		return s
	}
	ones := 128
	if n != nil {
		ones, _ = n.Mask.Size()
	}
	return fmt.Sprintf("fe80::EUI64/%d", ones)
}

// hostSide describes the pod's host-side veth on its node: its bridge,
// MTU, hairpin flag and state ("none" for macvlan and ipvlan).
func hostSide(t *testing.T, p *Pod) string {
	t.Helper()
	if p.hostVeth == "" {
		return "none"
	}
	h, err := netns.Handle(p.node.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(p.hostVeth)
	if err != nil {
		t.Fatalf("host veth %s of pod %s: %v", p.hostVeth, p.name, err)
	}
	a := l.Attrs()
	master := "none"
	if m, err := h.LinkByIndex(a.MasterIndex); err == nil {
		master = m.Attrs().Name
	}
	// Bridge port flags come only with an AF_BRIDGE dump (bridge link show).
	pi, err := h.LinkGetProtinfo(l)
	if err != nil {
		t.Fatalf("bridge link show dev %s: %v", p.hostVeth, err)
	}
	return fmt.Sprintf("%s master %s mtu %d hairpin %v learning %v flood %v up=%v",
		l.Type(), master, a.MTU, pi.Hairpin, pi.Learning, pi.Flood, a.Flags&net.FlagUp != 0)
}

// diffLines lists the lines only in a (-) and only in b (+).
func diffLines(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func median(ts []PodTime, setup bool) time.Duration {
	var d []time.Duration
	for _, pt := range ts {
		if setup {
			d = append(d, pt.Setup)
		} else {
			d = append(d, pt.Teardown)
		}
	}
	slices.Sort(d)
	return d[len(d)/2].Round(10 * time.Microsecond)
}

// hostLinkNames lists the links of the host's own namespace.
func hostLinkNames(t *testing.T) []string {
	t.Helper()
	ls, err := netns.Dump(netlink.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Attrs().Name)
	}
	sort.Strings(out)
	return out
}

// treeOf lists the paths under root (none when it does not exist).
func treeOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// TestWiringCNIScaleDown: with wiring cni, scaling down runs DEL: the
// deleted pod's host veth and its host-local lease are gone, its teardown
// is timed, and a pod added afterwards is wired and reachable.
func TestWiringCNIScaleDown(t *testing.T) {
	kerneltest.RequireRoot(t)
	d, _ := catalog.Lookup("flannel-vxlan")
	kerneltest.RequireFeatures(t, d)
	kerneltest.RequireCNIPlugins(t, cniconf.TypeLoopback, cniconf.TypeBridge, cniconf.TypeHostLocal)
	c := upClusterWith(t, Config{RunID: kerneltest.RunID(), Datapath: d, Wiring: WiringCNI, Kill: cleanup.KillInNetns})
	servers, _, err := c.ScalePods(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	gone := servers[1]
	lease := filepath.Join(c.stateDir, ServerNode, cniexec.NetworksDir, "cbr0", gone.IP().String())
	if _, err := os.Stat(lease); err != nil {
		t.Fatalf("lease of %s: %v", gone.name, err)
	}
	if _, _, err := c.ScalePods(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if gone.TeardownLatency() <= 0 {
		t.Errorf("pod %s: no teardown latency recorded", gone.name)
	}
	if _, err := os.Stat(lease); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lease %s still held after the pod was deleted: %v", lease, err)
	}
	h, err := netns.Handle(c.server.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.LinkByName(gone.hostVeth); err == nil {
		t.Errorf("host veth %s of the deleted pod is still on the node", gone.hostVeth)
	}
	servers, clients, err := c.ScalePods(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := tcpRoundTrip(servers[1], clients[1], 7300, 64<<10); err != nil {
		fail(t, c, "tcp to a pod added after scaling down", servers[1], clients[1], err)
	}
}

// TestWiringRefused: wiring cni is refused, before anything is created,
// for a datapath whose CNI has its own plugin, when a plugin is missing,
// and an unknown wiring is refused.
func TestWiringRefused(t *testing.T) {
	calico, _ := catalog.Lookup("calico-vxlan")
	flannel, _ := catalog.Lookup("flannel-vxlan")
	host, _ := catalog.Lookup("host")
	empty := t.TempDir()
	for _, tt := range []struct {
		name string
		cfg  Config
		is   error
		msg  string
	}{
		{"own plugin", Config{Datapath: calico, Wiring: WiringCNI}, ErrNoCNIDelegate, "datapath calico-vxlan: no wiring through the reference CNI plugins"},
		{"host network", Config{Datapath: host, Wiring: WiringCNI}, ErrNoCNIDelegate, "datapath host: no wiring through the reference CNI plugins: its pods use the node's network"},
		{"plugins missing", Config{Datapath: flannel, Wiring: WiringCNI, CNIPath: []string{empty}}, probe.ErrUnsupported,
			"datapath flannel-vxlan with wiring cni: CNI plugin loopback is not available: not in " + empty},
		{"unknown wiring", Config{Datapath: flannel, Wiring: "ebpf"}, nil, `unknown wiring "ebpf"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.RunID = kerneltest.RunID()
			c, err := Up(context.Background(), tt.cfg)
			if err == nil {
				c.Close()
				t.Fatal("Up succeeded")
			}
			if (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Up = %v\nwant an error wrapping %v that says %q", err, tt.is, tt.msg)
			}
			if left, _ := netns.List(Prefix + tt.cfg.RunID); len(left) != 0 {
				t.Errorf("refused, yet namespaces were created: %v", left)
			}
			if _, err := os.Stat(journal.StateDir(journal.DefaultDir, tt.cfg.RunID)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("refused, yet a state directory exists: %v", err)
			}
		})
	}
}
