package inspect

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// underlay finds the default route's device in proc/net/route.
func (r reader) underlay() {
	s, err := r.read("proc/net/route")
	if err != nil {
		r.unknown("underlay", err)
		return
	}
	for _, line := range strings.Split(s, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			r.in.Underlay = f[0]
			r.in.UnderlayLower = r.stackedOn(f[0])
			return
		}
	}
	r.unknown("underlay", errors.New("no IPv4 default route"))
}

// StackedOn returns the devices at the bottom of dev's stack under root
// ("/" on a node): a bond's ports, a VLAN's parent (or its bond's
// ports), an Open vSwitch bridge's NICs (ovsPorts); nil for a plain
// device. They are where the kernel decides RPS for what dev receives:
// get_rps_cpu runs as the NIC's driver hands a packet up
// (netif_receive_skb), before a bond, VLAN or bridge takes it, so a
// mask on dev's own queues steers nothing.
func StackedOn(root, dev string) []string { return reader{env: Env{Root: root}}.stackedOn(dev) }

func (r reader) stackedOn(dev string) []string {
	if l := r.lowers(dev, 0); len(l) > 0 {
		return l
	}
	return r.ovsPorts(dev)
}

// lowers returns the devices at the bottom of dev's stack, from the
// lower_<name> links sysfs keeps in a stacked device's directory (a
// VLAN over a bond: the bond's ports), sorted; nil for a plain device.
// depth bounds the walk (a stack is a few devices deep).
func (r reader) lowers(dev string, depth int) []string {
	ents, err := os.ReadDir(r.path("sys/class/net/" + dev))
	if err != nil || depth > 8 {
		return nil
	}
	var out []string
	for _, e := range ents {
		if l, ok := strings.CutPrefix(e.Name(), "lower_"); ok {
			if below := r.lowers(l, depth+1); len(below) > 0 {
				out = append(out, below...)
			} else {
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ovsPorts are the NICs under an Open vSwitch bridge's internal port
// (OpenShift's and OVN-Kubernetes' br-ex): sysfs shows the port with no
// device and no lower_* links, like a veth, and each NIC the datapath
// holds with its master link to ovs-system. Which bridge holds which
// NIC only the switch's database knows, so every NIC on the datapath is
// taken; nil where dev is a device, a veth (its peer's iflink differs
// from its ifindex) or there is no ovs-system.
func (r reader) ovsPorts(dev string) []string {
	dir := "sys/class/net/" + dev
	if _, err := os.Stat(r.path(dir + "/device")); err == nil {
		return nil
	}
	if _, err := os.Stat(r.path("sys/class/net/ovs-system")); err != nil {
		return nil
	}
	if link, err := r.read(dir + "/iflink"); err == nil {
		if index, err := r.read(dir + "/ifindex"); err == nil && link != index {
			return nil
		}
	}
	ents, err := os.ReadDir(r.path("sys/class/net"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		d := "sys/class/net/" + e.Name()
		master, err := os.Readlink(r.path(d + "/master"))
		if err != nil || filepath.Base(master) != "ovs-system" {
			continue
		}
		if _, err := os.Lstat(r.path(d + "/device")); err == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
