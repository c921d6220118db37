// Package cnidetect recognises a cluster's CNI and its mode from what can
// be seen without the CNI's own API: the DaemonSets of the cluster, the
// node's CNI config files (/etc/cni/net.d) and the node's network
// devices. It is pure: the kube engine gathers the inputs.
//
// Design notes: evidence is weighed in a fixed order — a CNI's own
// config file names it most reliably, its DaemonSet next, its devices
// last — and every clue found is kept in Evidence, so an "unknown" result
// still says what was seen.
package cnidetect

import (
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cnitunnels"
)

// DaemonSet is what detection needs of one DaemonSet.
type DaemonSet struct {
	Namespace, Name string
	Images          []string
	// Env holds the containers' literal values of the variables in
	// PoolEnv (calico-node's CALICO_IPV4POOL_IPIP and _VXLAN: the
	// default pool's encapsulation, decisive where no device says it).
	Env map[string]string
}

// Input is everything seen.
type Input struct {
	DaemonSets []DaemonSet
	// ConfFiles are the node's CNI config files by name.
	ConfFiles map[string]string
	// Links are the node's network device names.
	Links []string
	// Down are those of Links known to be administratively down (no
	// IFF_UP), read for the devices whose state decides (tunl0: loading
	// the ipip module makes one in every namespace, and felix sets it up
	// only when IP-in-IP is on).
	Down []string
	// Pools are Calico's IP pools as read (crd.projectcalico.org
	// IPPools); none where they could not be read, and PoolsUnread then
	// why ("" where they were read or not asked for).
	Pools       []Pool
	PoolsUnread string
	// FlannelNetConf is Flannel's net-conf.json (its ConfigMap), "" where
	// it could not be read.
	FlannelNetConf string
	// Subnet says whether the run's two nodes share a subnet.
	Subnet Subnet
}

// Result names the CNI.
type Result struct {
	Name     string   `json:"name"` // calico, flannel, cilium, weave, kube-router, bridge, unknown
	Mode     string   `json:"mode,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Routed says why the measured path between the run's two nodes is
	// routed natively although the node has the CNI's tunnel device (a
	// CrossSubnet pool, Flannel's DirectRouting, the nodes on one
	// subnet): no tunnel device carries the measured packets. "" when it
	// is not known to be.
	Routed string `json:"routed,omitempty"`
	// NoTunnel says why no device of the node is the measured path's
	// tunnel although the CNI encapsulates (kube-router's per-peer tun-*
	// devices): the kube engine takes none. "" where not so.
	NoTunnel string `json:"no_tunnel,omitempty"`
	// Warning says what detection could not settle that changes what the
	// cells measure (the path may be routed), "" for nothing.
	Warning string `json:"warning,omitempty"`
	// Chained names a CNI chained after this one (cilium after Calico's
	// or Flannel's plugin): its BPF is on every packet's path too.
	Chained string `json:"chained,omitempty"`
}

func (r Result) String() string {
	s := r.Name
	if r.Mode != "" {
		s += " (" + r.Mode + ")"
	}
	if r.Chained != "" {
		s += " with " + r.Chained + " chained after it"
	}
	return s
}

// PoolEnv are the environment variables of a DaemonSet's containers
// that detection reads (DaemonSet.Env): calico-node's settings for the
// IP pool it creates at first start, when the install made it so.
var PoolEnv = []string{"CALICO_IPV4POOL_IPIP", "CALICO_IPV4POOL_VXLAN"}

// Detect weighs the input; see the package notes.
func Detect(in Input) Result {
	var r Result
	ev := func(s string) {
		if !slices.Contains(r.Evidence, s) {
			r.Evidence = append(r.Evidence, s)
		}
	}
	name, types := byConfig(in, ev)
	conf := len(types) > 0
	chained := conf && slices.Contains(types[1:], "cilium-cni")
	if name == "" && chained {
		// Cilium chained after the plugin that wires the pods (its
		// aws-cni, azure, generic-veth chaining): its eBPF does policy
		// and load balancing on that plugin's devices, on every packet's
		// path, so the datapath is Cilium's over that plugin's wiring, a
		// mode no built-in datapath stands for.
		ev("cilium-cni chained after " + types[0] + ": " + types[0] + " wires the pods, Cilium's eBPF (policy, load balancing) is on every packet's path")
		hints(in, ev, "cilium")
		r.Name, r.Mode = "cilium", "chained after "+types[0]
		return r
	}
	if name == "" && conf {
		// A config file names a plugin detection does not know (Azure
		// CNI, the AWS VPC CNI, Antrea, OVN-Kubernetes...): that plugin
		// wires the pods, whatever policy add-on (Calico, Cilium's
		// Tetragon, kube-router) runs beside it as a DaemonSet.
		hints(in, ev, "")
		r.Name = "unknown"
		return r
	}
	if chained && name != "cilium" {
		// Calico's or Flannel's pods with Cilium chained after (generic
		// veth chaining): the known CNI's devices carry the packets, and
		// Cilium's BPF programs on its veths are on their path too.
		ev("cilium-cni chained after " + types[0] + ": Cilium's BPF (policy, load balancing) is on every packet's path, beside " + name + "'s datapath")
		r.Chained = "cilium"
	}
	r.Name = name
	byDS, canalDS := byDaemonSets(in, conf, ev)
	if r.Name == "" {
		r.Name = byDS
	}
	canal(in, &r, canalDS, ev)
	byDevices(in, &r, ev)
	encapAcross(in, &r, ev)
	if r.Name == "" {
		r.Name = "unknown"
	}
	idleFallback(in, &r)
	return r
}

// byConfig names the CNI from its config file: the first (lexically) is
// the one the runtime uses, and of a chained .conflist its first plugin
// wires the pod (the others, portmap, bandwidth, a policy add-on's,
// follow it). A meta-plugin (Multus) is looked through to the network it
// delegates to. types are the primary config's plugins, none where no
// config file was found: with one found, a plugin it names that
// detection does not know is the answer (unknown), not a DaemonSet's
// guess.
func byConfig(in Input, ev func(string)) (name string, types []string) {
	names := confNames(in.ConfFiles)
	for i := 0; i < len(names); i++ {
		types, next := primaryOf(in.ConfFiles, names[i])
		ev("cni config " + names[i] + ": plugins " + strings.Join(types, ","))
		if next == skip {
			continue // Multus naming no delegate: the next file is the network
		}
		if next != "" {
			if _, ok := in.ConfFiles[next]; ok {
				types, _ = primaryOf(in.ConfFiles, next)
				ev("cni config " + next + " (multus's cluster network): plugins " + strings.Join(types, ","))
			}
		}
		if len(types) == 0 {
			return "", nil // unreadable: no plugin named
		}
		return knownPlugin(in, names[i], types[0]), types
	}
	return "", nil
}

// knownPlugin names the CNI of the primary plugin typ, "" for one
// detection does not know.
func knownPlugin(in Input, file, typ string) string {
	switch typ {
	case "calico":
		return "calico"
	case "flannel":
		return "flannel"
	case "cilium-cni":
		return "cilium"
	case "weave-net", "weave-plugin":
		return "weave"
	case "bridge":
		if strings.Contains(strings.ToLower(file), "kuberouter") || slices.Contains(in.Links, "kube-bridge") {
			return "kube-router"
		}
		return "bridge"
	}
	return ""
}

// cniDaemonSets are the DaemonSets each CNI's own manifests ship, by
// exact name: a DaemonSet that merely runs one of their images (Cilium's
// Tetragon, weave-scope-agent, a calico-node for policy only beside a
// cloud's CNI) names no CNI.
var cniDaemonSets = map[string]string{
	"calico-node": "calico", "kube-flannel-ds": "flannel", "kube-flannel": "flannel",
	"cilium": "cilium", "weave-net": "weave", "kube-router": "kube-router",
}

// canalDaemonSets are Canal's (its manifest's and RKE2's): Calico's and
// Flannel's images in one DaemonSet.
var canalDaemonSets = []string{"canal", "rke2-canal"}

// byDaemonSets names the CNI from the first DaemonSet that is one's, only
// where no config file was found (conf): a config file names the plugin
// the runtime runs, and a DaemonSet beside it may be a policy add-on.
// Every such DaemonSet is evidence, once; canal says one is Canal's.
func byDaemonSets(in Input, conf bool, ev func(string)) (byDS string, canal bool) {
	for _, d := range in.DaemonSets {
		if slices.Contains(canalDaemonSets, d.Name) {
			canal = true
			ev("daemonset " + d.Namespace + "/" + d.Name)
			continue
		}
		if c, ok := cniDaemonSets[d.Name]; ok {
			if byDS == "" && !conf {
				byDS = c
			}
			ev("daemonset " + d.Namespace + "/" + d.Name)
		}
	}
	if canal && byDS == "" && !conf {
		byDS = "calico" // Canal's CNI plugin; canal() says what carries
	}
	return byDS, canal
}

// canal turns a Calico result into Flannel's when the cluster runs Canal:
// Calico's CNI plugin (10-canal.conflist, type calico) and policy, over
// Flannel's network (flannel.1 and its other backends' devices). The
// packets take Flannel's datapath, so Flannel's mode is what the cells
// measure; the evidence says it is Canal.
func canal(in Input, r *Result, byDS bool, ev func(string)) {
	if r.Name != "calico" {
		return
	}
	_, fdev := flannelBackend(in.Links)
	var why []string
	if byDS {
		why = append(why, "its DaemonSet")
	}
	if fdev != "" {
		why = append(why, "Calico's plugin beside Flannel's device "+fdev)
	}
	if len(why) == 0 {
		return
	}
	r.Name = "flannel"
	ev("canal (" + strings.Join(why, ", ") + "): Calico's policy over Flannel's network, so Flannel's mode")
}

// byDevices decides the mode (and the name when nothing else did) from
// the node's devices. The tunnel devices and the modes they tell are
// the table's (internal/cnitunnels); the order they are weighed in is
// this switch's.
func byDevices(in Input, r *Result, ev func(string)) {
	has := func(l string) bool { return slices.Contains(in.Links, l) }
	calico := r.Name == "" || r.Name == "calico"
	fmode, fdev := flannelBackend(in.Links)
	// Calico's devices are felix's: WireGuard's (wireguard.cali,
	// wg-v6.cali, first in the table) carries pod traffic between the
	// nodes it encrypts for, whatever the pool's encapsulation;
	// vxlan.calico and vxlan-v6.calico exist in VXLAN mode, tunl0 up
	// whenever IP-in-IP is on (felix keeps it, pods or not: a fresh
	// benchmark node has no cali* veth yet).
	cmode, cdev := tunnelOf(in.Links, "calico")
	ipip := fallbackOf(in.Links, "calico", "ipip")
	ciliumMode, ciliumDev := tunnelOf(in.Links, "cilium")
	weaveMode, weaveDev := tunnelOf(in.Links, "weave")
	krMode, krDev := tunnelOf(in.Links, "kube-router")
	switch {
	case calico && cdev != "":
		ev("device " + cdev)
		r.Name, r.Mode = "calico", cmode
	case r.Name == "calico" && ipip != "" && !slices.Contains(in.Down, ipip) && !poolsOff(in, "ipip"):
		ev("device " + ipip)
		r.Mode = "ipip"
	case r.Name == "calico":
		switch {
		case ipip != "" && slices.Contains(in.Down, ipip):
			ev("device " + ipip + " down: the ipip module's own, not felix's (felix sets it up for IP-in-IP: ipip_mgr.go keepIPIPDeviceInSync)")
		case ipip != "":
			ev("device " + ipip + " up, but every enabled IPv4 IPPool has ipipMode Never: left from before (felix runs no IP-in-IP manager then, and nothing takes the device down)")
		}
		r.Mode = calicoPoolMode(in, ev)
	case fdev != "" && fmode == "":
		ev("device " + fdev + ": of no Flannel backend known")
		r.Name = or(r.Name, "flannel")
	case fdev != "":
		ev("device " + fdev)
		r.Name, r.Mode = or(r.Name, "flannel"), fmode
	case r.Name == "flannel":
		r.Mode = "host-gw"
	case ciliumDev != "":
		ev("device " + ciliumDev)
		r.Name, r.Mode = or(r.Name, "cilium"), ciliumMode
	case r.Name == "cilium" || has("cilium_host"):
		r.Name, r.Mode = or(r.Name, "cilium"), "native-routing"
	case weaveDev != "":
		// The fast datapath's VXLAN vport (weave router/fastdp.go).
		ev("device " + weaveDev)
		r.Name, r.Mode = or(r.Name, "weave"), weaveMode
	case has("weave") && (r.Name == "" || r.Name == "weave"):
		// The bridge without the vport: the router encapsulates in user
		// space (sleeve), as where the openvswitch module is missing.
		ev("device weave without " + strings.Join(patternsOf("weave"), ", "))
		r.Name, r.Mode = "weave", "sleeve"
	case krDev != "" && (r.Name == "" || r.Name == "kube-router"):
		ev("device " + krDev + ": kube-router's IP-in-IP tunnel to a peer node")
		r.Name, r.Mode, r.Warning, r.NoTunnel = "kube-router", krMode, kubeRouterOverlay, kubeRouterPeers
	case has("kube-bridge"):
		ev("device kube-bridge")
		r.Name, r.Mode = or(r.Name, "kube-router"), "bgp"
	case r.Name == "bridge":
		r.Mode = "bridge + host-local, routes between nodes"
	}
}

// encapAcross settles the mode of a CNI that encapsulates only between
// nodes on different subnets (a Calico pool's CrossSubnet, Flannel's
// DirectRouting): its tunnel device is there either way (felix makes
// vxlan.calico and keeps tunl0 up, flannel makes flannel.N), so the
// device alone says an overlay where the run's nodes may route natively.
func encapAcross(in Input, r *Result, ev func(string)) {
	switch {
	case r.Name == "calico" && (r.Mode == "vxlan" || r.Mode == "ipip"):
		cross, what, fromEnv := calicoCross(in, r.Mode)
		if cross {
			crossSubnet(in, r, r.Mode, "bgp", "cross-subnet", what, ev)
			return
		}
		if what != "" {
			ev(what)
		}
		r.Warning = calicoUnsettled(in, r.Mode, what, fromEnv)
	case r.Name == "flannel" && r.Mode == "vxlan":
		if direct, what := flannelDirect(in); direct {
			crossSubnet(in, r, "vxlan", "host-gw", "direct-routing", what, ev)
		}
	}
}

// tunnelOf is the mode a CNI's own tunnel device on the node tells, and
// that device: of the table's lines of the CNI, the first a link
// matches; "" for none. A line of no mode (Cilium's WireGuard, there in
// any mode) tells none, nor does a module's fallback device (tunl0),
// whose state decides (fallbackOf).
func tunnelOf(links []string, cni string) (mode, dev string) {
	d, dev, _ := cnitunnels.First(links, func(d cnitunnels.Device) bool {
		return d.CNI == cni && d.Mode != "" && !d.EveryNS
	})
	return d.Mode, dev
}

// fallbackOf is the kernel module's fallback device that the CNI sends
// through in mode (Calico's IP-in-IP: tunl0), where the node has it.
func fallbackOf(links []string, cni, mode string) string {
	_, dev, _ := cnitunnels.First(links, func(d cnitunnels.Device) bool {
		return d.CNI == cni && d.Mode == mode && d.EveryNS
	})
	return dev
}

// patternsOf names the CNI's tunnel devices, for the evidence of their
// absence.
func patternsOf(cni string) []string {
	var out []string
	for _, d := range cnitunnels.List {
		if d.CNI == cni {
			out = append(out, d.Pattern)
		}
	}
	return out
}

// calicoPoolMode is Calico's mode where the node has none of its
// tunnel devices: the encapsulation calico-node's DaemonSet sets for the
// default pool (PoolEnv), else routed (bgp).
func calicoPoolMode(in Input, ev func(string)) string {
	// The IPPools read are what felix follows now; calico-node's env is
	// the default pool's setting at its first start only.
	for _, mode := range []string{"vxlan", "ipip"} {
		if len(ipv4Pools(in.Pools)) > 0 && !poolsOff(in, mode) {
			ev("ippool: " + mode + "Mode on")
			return mode
		}
	}
	if len(ipv4Pools(in.Pools)) > 0 {
		return "bgp"
	}
	for _, v := range []struct{ name, mode string }{{"CALICO_IPV4POOL_VXLAN", "vxlan"}, {"CALICO_IPV4POOL_IPIP", "ipip"}} {
		for _, d := range in.DaemonSets {
			if val := d.Env[v.name]; strings.EqualFold(val, "Always") || strings.EqualFold(val, "CrossSubnet") {
				ev("daemonset " + d.Namespace + "/" + d.Name + ": " + v.name + "=" + val)
				return v.mode
			}
		}
	}
	return "bgp"
}

// flannelBackend is Flannel's mode from the node's devices and the
// device that says it. Flannel's backends' devices are the table's
// (internal/cnitunnels, after flannel pkg/backend/*: vxlan's
// flannel.<VNI> and flannel-v6.<VNI>, ipip's flannel.ipip, wireguard's
// flannel-wg and flannel-wg-v6, udp's TUN device flannel%d); host-gw
// makes none. A flannel* device of no known backend gives it with no
// mode, and no flannel* device none.
func flannelBackend(links []string) (mode, dev string) {
	if mode, dev := tunnelOf(links, "flannel"); dev != "" {
		return mode, dev
	}
	for _, l := range slices.Sorted(slices.Values(links)) {
		if strings.HasPrefix(l, "flannel") {
			return "", l
		}
	}
	return "", ""
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// DaemonSetNames are the names of every DaemonSet detection weighs
// (cniDaemonSets, canalDaemonSets, hintDaemonSets), sorted: a DaemonSet
// of another name is no evidence, so the kube engine reads these alone,
// and the runner's ClusterRole grants reading these alone (any other's
// pod template may carry literal secrets in its environment).
func DaemonSetNames() []string {
	out := slices.Clone(canalDaemonSets)
	for n := range cniDaemonSets {
		out = append(out, n)
	}
	for _, h := range hintDaemonSets {
		out = append(out, h.name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
