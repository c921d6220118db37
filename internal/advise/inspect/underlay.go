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
// A Linux bridge's ports are its lowers too, pods' veths and VMs' taps
// among them: of a bridge, only the ports that are NICs or stacks of
// their own are kept (a node's address on br0 over eth0 is eth0's).
// depth bounds the walk (a stack is a few devices deep).
func (r reader) lowers(dev string, depth int) []string {
	ents, err := os.ReadDir(r.path("sys/class/net/" + dev))
	if err != nil || depth > 8 {
		return nil
	}
	_, berr := os.Stat(r.path("sys/class/net/" + dev + "/bridge"))
	bridge := berr == nil
	var out []string
	for _, e := range ents {
		if l, ok := strings.CutPrefix(e.Name(), "lower_"); ok {
			below := r.lowers(l, depth+1)
			switch {
			case len(below) > 0:
				out = append(out, below...)
			case !bridge || r.isNIC(l):
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// isNIC says whether dev is a device of hardware (a device link in its
// sysfs directory), not a veth, tap or tunnel.
func (r reader) isNIC(dev string) bool {
	_, err := os.Lstat(r.path("sys/class/net/" + dev + "/device"))
	return err == nil
}

// ovsPorts are the NICs under an Open vSwitch bridge's internal port
// (OpenShift's and OVN-Kubernetes' br-ex): sysfs shows the port with no
// device and no lower_* links, like a veth, and each NIC the datapath
// holds with its master link to ovs-system (a bond or VLAN there: the
// devices under it). Which bridge holds which NIC only the switch's
// database knows, so every NIC on the datapath is taken; nil where dev is a device, a veth (its peer's iflink differs
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
		// A NIC, or a bond or VLAN on the datapath (br-ex over bond0):
		// its own bottom. A veth or tunnel port is neither.
		if r.isNIC(e.Name()) {
			out = append(out, e.Name())
		} else {
			out = append(out, r.lowers(e.Name(), 0)...)
		}
	}
	sort.Strings(out)
	return out
}
