package agent

import (
	"errors"
	"strings"
	"testing"
)

// peerNode is a node with an uplink (ens3, ifindex 2), a bridge
// (docker0, 3) and one veth (veth1234, 7) whose peer is pod srv-0's eth0
// (ifindex 3 in its namespace, iflink 7), and two pods whose eth0 has no
// host-side peer: vf, a device moved into the pod whole (an SR-IOV VF:
// its iflink is its own ifindex, 3), and mv, a macvlan child of ens3
// (iflink 2). Ifindexes are per namespace, so the pods' 3 is docker0's
// number on the node by coincidence. veth1234 is docker0's port, as a
// bridge CNI leaves it: sysfs links docker0/lower_veth1234 and
// veth1234/upper_docker0 (netdev_adjacent_sysfs_add), which a veth's
// peer never gets.
func peerNode() (*memFS, fakePods) {
	fs := newMemFS()
	for _, d := range []struct{ dev, idx, link string }{{"ens3", "2", "2"}, {"docker0", "3", "3"}, {"veth1234", "7", "3"}} {
		fs.vals[key("", "sysfs", "class/net/"+d.dev+"/ifindex")] = d.idx + "\n"
		fs.vals[key("", "sysfs", "class/net/"+d.dev+"/iflink")] = d.link + "\n"
		fs.vals[key("", "sysfs", "class/net/"+d.dev+"/queues/rx-0/rps_cpus")] = "0"
	}
	adjacent(fs, "docker0", "veth1234")
	for _, p := range []struct{ ns, idx, link string }{{"podns1", "3", "7"}, {"podvf", "3", "3"}, {"podmv", "5", "2"}} {
		fs.vals[key(p.ns, "sysfs", "class/net/eth0/ifindex")] = p.idx + "\n"
		fs.vals[key(p.ns, "sysfs", "class/net/eth0/iflink")] = p.link + "\n"
	}
	return fs, fakePods{"ns/srv-0": "podns1", "ns/vf": "podvf", "ns/mv": "podmv"}
}

// TestHostVethOnlyMutualPeer: the host-side device of a pod's eth0 is
// the node device whose ifindex is eth0's iflink and whose iflink is
// eth0's ifindex (a veth pair names each other). A pod device without
// a peer matched an unrelated node device by its number alone: vf's
// docker0, mv's uplink ens3, which a tuning then wrote RPS masks on and
// an impairment put netem on.
func TestHostVethOnlyMutualPeer(t *testing.T) {
	fs, pods := peerNode()
	c, wait := session(t, Config{Run: "hv", Node: "w1", FS: fs, Pods: pods, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	if v, err := c.HostVeth(PodNetns("ns", "srv-0"), "eth0"); err != nil || v != "veth1234" {
		t.Errorf("host veth of srv-0 = %q, %v; want veth1234", v, err)
	}
	for _, pod := range []string{"vf", "mv"} {
		v, err := c.HostVeth(PodNetns("ns", pod), "eth0")
		if err == nil || !errors.Is(err, ErrNoHostPeer) || !strings.Contains(err.Error(), "pod ns/"+pod) {
			t.Errorf("host veth of %s = %q, %v; want ErrNoHostPeer naming the pod", pod, v, err)
		}
	}
}

// TestHostVethPeerElsewhere: a veth whose peer is in another namespace
// than the node's (a pod of a nested runtime) has no host-side device
// on the node either; a node device that happens to hold the number is
// not it.
func TestHostVethPeerElsewhere(t *testing.T) {
	fs, pods := peerNode()
	fs.vals[key("podns1", "sysfs", "class/net/eth0/iflink")] = "2" // ens3's number, whose iflink is 2, not 3
	srv := NewServer(Config{Run: "hv2", Node: "w1", FS: fs, Pods: pods, JournalDir: t.TempDir()})
	if v, err := srv.hostVeth(PodNetns("ns", "srv-0"), "eth0"); !errors.Is(err, ErrNoHostPeer) {
		t.Errorf("host veth = %q, %v; want ErrNoHostPeer", v, err)
	}
}

// adjacent stacks upper on lower as the kernel shows it in sysfs: a
// lower_LOWER link in upper's directory and upper_UPPER in lower's
// (net/core/dev.c netdev_adjacent_sysfs_add). memFS lists a directory
// by the files under it, so each link holds an ifindex.
func adjacent(fs *memFS, upper, lower string) {
	fs.vals[key("", "sysfs", "class/net/"+upper+"/lower_"+lower+"/ifindex")] = fs.vals[key("", "sysfs", "class/net/"+lower+"/ifindex")]
	fs.vals[key("", "sysfs", "class/net/"+lower+"/upper_"+upper+"/ifindex")] = fs.vals[key("", "sysfs", "class/net/"+upper+"/ifindex")]
}

// TestHostVethNotStacked: a macvlan child of a VLAN, made in the pod's
// namespace (the CNI macvlan plugin on master ens3.100), is ifindex 2
// there and links to ens3.100 (8); ens3.100 links to its lower device
// ens3, ifindex 2 on the node. The two name each other by number, and
// hostVeth gave ens3.100, which RPS masks and client-pods netem then
// went on: the VLAN uplink. A device stacked on another (lower_* in
// its sysfs directory) is no pod's peer; a veth still is.
func TestHostVethNotStacked(t *testing.T) {
	fs, pods := peerNode()
	fs.vals[key("", "sysfs", "class/net/ens3.100/ifindex")] = "8\n"
	fs.vals[key("", "sysfs", "class/net/ens3.100/iflink")] = "2\n"
	adjacent(fs, "ens3.100", "ens3")
	fs.vals[key("podmv100", "sysfs", "class/net/eth0/ifindex")] = "2\n"
	fs.vals[key("podmv100", "sysfs", "class/net/eth0/iflink")] = "8\n"
	pods["ns/mv100"] = "podmv100"
	srv := NewServer(Config{Run: "hv3", Node: "w1", FS: fs, Pods: pods, JournalDir: t.TempDir()})
	v, err := srv.hostVeth(PodNetns("ns", "mv100"), "eth0")
	if !errors.Is(err, ErrNoHostPeer) || !strings.Contains(err.Error(), "ens3.100") {
		t.Errorf("host veth of mv100 = %q, %v; want ErrNoHostPeer naming ens3.100", v, err)
	}
	if v, err := srv.hostVeth(PodNetns("ns", "srv-0"), "eth0"); err != nil || v != "veth1234" {
		t.Errorf("host veth of srv-0 = %q, %v; want veth1234 (a bridge port: upper_docker0 is no lower device)", v, err)
	}
}
