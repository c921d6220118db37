package study

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Datapath is one datapath of a study: a catalog datapath (Type) and the
// knobs it runs with, named so that one type can appear several times
// (flannel-vxlan and "flannel-off" with tunnel offload disabled, as seed
// 004 measured). A plain string "flannel-vxlan" is shorthand for
// {name: flannel-vxlan, type: flannel-vxlan}. The knobs apply to the local
// engine's emulated nodes; on a real cluster the CNI decides them.
type Datapath struct {
	// Name names the datapath's cells in results and reports.
	Name string `yaml:"name"`
	// Type is the catalog datapath (calico-vxlan, bridge, ...).
	Type string `yaml:"type,omitempty"`
	// MTU overrides the pod (and tunnel device) MTU; 0 keeps the CNI's
	// own (flannel-vxlan 1450, calico-ipip 1440, ... on a 1500 underlay).
	MTU int `yaml:"mtu,omitempty" zero:"mtu"`
	// Offloads sets ethtool features ("tx-udp_tnl-segmentation": off) on
	// every node's underlay NIC and tunnel device, as `ethtool -K` does;
	// OffloadDevices narrows them to one of the two.
	Offloads map[string]string `yaml:"offloads,omitempty"`
	// OffloadDevices says which node devices Offloads go on: "all" (or
	// empty) the underlay NIC and the tunnel device, "underlay" or
	// "tunnel" that one alone. An A/B of one device's feature must change
	// that device alone: GRO on the underlay and GRO on a VXLAN device
	// are two knobs (advise's nic-gro and tunnel-gro), and setting both
	// would credit either with the other's effect.
	OffloadDevices string `yaml:"offloadDevices,omitempty"`
	// PodOffloads sets ethtool features on every pod's own device (eth0)
	// and its host-side peer ("gro": off), once the pods exist: seed 001
	// turns GRO off on the containers' devices to show what it is worth.
	PodOffloads map[string]string `yaml:"podOffloads,omitempty"`
	// Policy installs a network-policy rule set in the style of the CNI:
	// "wp" (with policy) or "np" (the CNI's chains without a policy);
	// empty installs no rules.
	Policy string `yaml:"policy,omitempty"`
	// Wiring is how pods are wired: "netlink" (in-process, the default)
	// or "cni" (the reference CNI plugins, called as a runtime does).
	Wiring string `yaml:"wiring,omitempty"`
	// Implementation picks who programs the datapath: "builtin" (the
	// default, in-process), "flanneld" (the real Flannel daemon; for
	// flannel-vxlan and bridge) or "bird" (a BIRD BGP daemon per node
	// distributes the routes between nodes; for calico-routed and kube-router).
	Implementation string `yaml:"implementation,omitempty"`
	// Netfilter installs on both nodes the iptables state a real node of
	// this CNI carries (its daemon's chains and kube-proxy's), so the
	// netfilter share of the cost per packet and the chains a packet
	// traverses (seed 004, Table III) are measured, not zero.
	Netfilter *Netfilter `yaml:"netfilter,omitempty"`
}

// Netfilter is a datapath entry's netfilter state (knob netfilter).
type Netfilter struct {
	// CNI names the rule set of a CNI daemon (internal/netfilter:
	// flannel, weave, cilium, cilium-kpr, kube-router, calico-wp-ipip,
	// calico-np-ipip, calico-wp-xsub, calico-np-xsub).
	CNI string `yaml:"cni"`
	// KubeProxy is the Service proxy: kube-proxy's mode iptables (the
	// default), nftables or ipvs; kube-router (its own IPVS proxy);
	// cilium (Cilium's eBPF kube-proxy replacement: Services translated
	// at the socket, with cni cilium-kpr); or none (no Service proxy).
	KubeProxy string `yaml:"kubeProxy,omitempty"`
	// Services is the number of ClusterIP Services kube-proxy programs
	// (DefaultServices when 0); Endpoints the endpoints of each
	// (DefaultEndpoints when 0).
	Services  int `yaml:"services,omitempty" zero:"services"`
	Endpoints int `yaml:"endpoints,omitempty" zero:"endpoints"`
}

// Kube-proxy modes and the netfilter defaults: a small cluster's
// Services (kubernetes, kube-dns and a few applications), two
// endpoints each.
const (
	KubeProxyIptables = "iptables"
	KubeProxyNFT      = "nftables"
	KubeProxyIPVS     = "ipvs"
	// KubeProxyKubeRouter is kube-router's own IPVS service proxy in
	// kube-proxy's place (kube-router --run-service-proxy).
	KubeProxyKubeRouter = "kube-router"
	// KubeProxyCilium is Cilium's kube-proxy replacement: socket-level
	// load balancing by BPF programs (internal/socklb), no rules.
	KubeProxyCilium = "cilium"
	KubeProxyNone   = "none"

	DefaultServices  = 10
	DefaultEndpoints = 2
	MaxServices      = 5000
	MaxEndpoints     = 100
	// MaxServiceEndpoints bounds Services x endpoints: each endpoint is
	// a chain and a DNAT rule on every node.
	MaxServiceEndpoints = 50000
)

// Mode is the kube-proxy mode with the default filled in.
func (n Netfilter) Mode() string {
	if n.KubeProxy == "" {
		return KubeProxyIptables
	}
	return n.KubeProxy
}

// ServiceCount and EndpointCount are Services and Endpoints with the
// defaults filled in.
func (n Netfilter) ServiceCount() int  { return orDefault(n.Services, DefaultServices) }
func (n Netfilter) EndpointCount() int { return orDefault(n.Endpoints, DefaultEndpoints) }

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Policy and wiring values.
const (
	PolicyWith    = "wp"
	PolicyWithout = "np"

	WiringNetlink = "netlink"
	WiringCNI     = "cni"

	ImplBuiltin  = "builtin"
	ImplFlanneld = "flanneld"
	ImplBird     = "bird"
)

// Implementations lists the implementation values a study may name.
var Implementations = []string{ImplBuiltin, ImplFlanneld, ImplBird}

// OffloadDevices values: which node devices a datapath's offloads go on.
const (
	OffloadsAll      = "all"
	OffloadsUnderlay = "underlay"
	OffloadsTunnel   = "tunnel"
)

// offloadDevices lists the OffloadDevices values a study may give.
var offloadDevices = []string{OffloadsAll, OffloadsUnderlay, OffloadsTunnel}

// OffloadsOnUnderlay and OffloadsOnTunnel report whether the entry's
// offloads go on the node's underlay NIC and on its tunnel device.
func (d Datapath) OffloadsOnUnderlay() bool { return d.OffloadDevices != OffloadsTunnel }
func (d Datapath) OffloadsOnTunnel() bool   { return d.OffloadDevices != OffloadsUnderlay }

// Plain reports whether the entry is only a catalog name with no knobs.
func (d Datapath) Plain() bool {
	return d.Name == d.Type && d.MTU == 0 && len(d.Offloads) == 0 && d.OffloadDevices == "" && len(d.PodOffloads) == 0 && d.Policy == "" &&
		d.Wiring == "" && d.Implementation == "" && d.Netfilter == nil
}

// OffloadNames lists the offload features in a stable order.
func (d Datapath) OffloadNames() []string { return sortedKeys(d.Offloads) }

// sortedKeys lists a feature map's keys in a stable order, so errors
// name the same feature on every run.
func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OffloadOn reports the requested state of a feature ("on" or "off").
func (d Datapath) OffloadOn(feature string) bool { return d.Offloads[feature] == "on" }

// UnmarshalYAML accepts a datapath name or a mapping of datapath knobs.
func (d *Datapath) UnmarshalYAML(n *yaml.Node) error {
	*d = Datapath{}
	switch n.Kind {
	case yaml.ScalarNode:
		d.Name, d.Type = n.Value, n.Value
		return nil
	case yaml.MappingNode:
	default:
		return atNode(n, "a datapath is a name (calico-vxlan) or a mapping {%s}", strings.Join(datapathKeys(), ", "))
	}
	// The decoder's KnownFields does not reach into a custom unmarshaler,
	// so unknown keys are caught here.
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !contains(datapathKeys(), k.Value) {
			return atNode(k, "%s", unknownKey("datapath", "Datapath", k.Value, datapathKeys()))
		}
		if k.Value == "offloads" || k.Value == "podOffloads" {
			if err := checkOffloads(n.Content[i+1]); err != nil {
				return err
			}
		}
		if k.Value == "netfilter" {
			if err := checkKeys(n.Content[i+1], "netfilter", "Netfilter", netfilterKeys); err != nil {
				return err
			}
		}
		if k.Value == "offloadDevices" {
			if err := checkOffloadDevices(n.Content[i+1]); err != nil {
				return err
			}
		}
	}
	type plain Datapath
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*d = Datapath(p)
	if d.OffloadDevices != "" && len(d.Offloads) == 0 {
		return atNode(keyNode(n, "offloadDevices"), "offloadDevices says which node devices offloads go on; without offloads it changes nothing (podOffloads go on the pods' devices)")
	}
	d.nameDefaults()
	return nil
}

// nameDefaults fills what an entry's name and type default to: each
// other (`{type: bridge, mtu: 1400}` is named bridge).
func (d *Datapath) nameDefaults() {
	if d.Type == "" {
		d.Type = d.Name
	}
	if d.Name == "" {
		d.Name = d.Type
	}
}

var netfilterKeys = []string{"cni", "kubeProxy", "services", "endpoints"}

// checkKeys refuses keys of a mapping that are not in known (the
// decoder's KnownFields does not reach inside a custom unmarshaler).
func checkKeys(m *yaml.Node, what, goType string, known []string) error {
	if m.Kind != yaml.MappingNode {
		return atNode(m, "%s is a mapping {%s}", what, strings.Join(known, ", "))
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; !contains(known, k.Value) {
			return atNode(k, "%s", unknownKey(what, goType, k.Value, known))
		}
	}
	return nil
}

// unknownKey is the error of an unknown key name of a what (of Go type
// goType) whose keys are known: the slip of a known one, or where a field
// of another part belongs, and the known ones.
func unknownKey(what, goType, name string, known []string) string {
	hint := strings.TrimSpace(suggest.Hint(name, known))
	if hint == "" {
		hint = placeHint(name, goType)
	}
	return fmt.Sprintf("unknown %s field %q (%s)", what, name, joinHint(hint, "known: "+strings.Join(known, ", ")))
}

// checkOffloads accepts on/off (and YAML booleans) per feature and
// normalises them to "on"/"off" in place.
func checkOffloads(m *yaml.Node) error {
	if m.Kind != yaml.MappingNode {
		return atNode(m, "offloads is a mapping of ethtool features to on/off, e.g. {tx-udp_tnl-segmentation: off}")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !featureRE.MatchString(k.Value) {
			return atNode(k, "offload %q is not an ethtool feature name (letters, digits, - and _)", k.Value)
		}
		on, err := onOff(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			return atNode(v, "want on or off, got %q", v.Value)
		}
		v.Tag, v.Value = "!!str", map[bool]string{true: "on", false: "off"}[on]
	}
	return nil
}

// checkOffloadDevices accepts the OffloadDevices values.
func checkOffloadDevices(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || !contains(offloadDevices, v.Value) {
		return atNode(v, "want %s (the underlay NIC and the tunnel device), %s or %s, got %q",
			OffloadsAll, OffloadsUnderlay, OffloadsTunnel, v.Value)
	}
	return nil
}

// keyNode is the node of a mapping's key, the mapping when absent.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return m
}

// datapathKeys are the keys a datapath mapping may have, read from
// Datapath's tags (fieldNames) so that its errors list every one.
func datapathKeys() []string { return fieldNames()["Datapath"] }

var featureRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func onOff(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return strconv.ParseBool(s)
}

// MarshalYAML writes a plain datapath back as its name. offloadDevices
// goes with the offloads it qualifies: an engine that leaves the offloads
// out (kube, on a real cluster) leaves it out too, so the run's study.yaml
// parses back.
func (d Datapath) MarshalYAML() (any, error) {
	if len(d.Offloads) == 0 {
		d.OffloadDevices = ""
	}
	if d.Plain() {
		return d.Name, nil
	}
	type plain Datapath
	return plain(d), nil
}

// Link is the underlay link between the nodes.
type Link struct {
	// Rate is the line rate ("1gbit", "100mbit", "10G"); empty leaves
	// the link unshaped (as fast as the machine moves packets).
	Rate string `yaml:"rate,omitempty"`
}

// RateBits returns the line rate in bits per second, 0 when unshaped.
func (l Link) RateBits() (uint64, error) {
	if l.Rate == "" {
		return 0, nil
	}
	return ParseLineRate(l.Rate)
}

var lineRateRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)(bit|bps|b)?(?:/s)?$`)

// ParseLineRate reads a line rate: 1gbit, 100mbit, 10G, 500M, 2500000
// (bits/s). Prefixes are decimal (k = 1000), as NIC speeds and tc rates
// are. tc's bps spellings (kbps, mbps, ...) are refused: tc(8), whose
// tbf the knob sets, reads them as bytes per second, and taking
// "100mbps" for 100 Mbit/s shaped the link 8 times slower than a tc
// user meant.
func ParseLineRate(s string) (uint64, error) {
	m := lineRateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("invalid rate %q (use e.g. 1gbit, 100mbit, 10G)", s)
	}
	if m[3] == "bps" {
		return 0, bytesRate(s, m[1], m[2])
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid rate %q: %w", s, err)
	}
	mult := map[string]float64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[strings.ToLower(m[2])]
	bits := v * mult
	if bits < 1e6 || bits > 1e12 {
		return 0, fmt.Errorf("rate %q is outside 1 Mbit/s .. 1 Tbit/s", s)
	}
	return uint64(bits), nil
}

// bytesRate is the error of a rate in tc's bytes per second (num,
// prefix, "bps"): what to write in bits for either reading.
func bytesRate(s, num, prefix string) error {
	v, _ := strconv.ParseFloat(num, 64)
	p := strings.ToLower(prefix)
	names := map[string]string{"": "bytes", "k": "kilobytes", "m": "megabytes", "g": "gigabytes", "t": "terabytes"}
	return fmt.Errorf("invalid rate %q: tc reads %sbps as %s per second; write %s%sbit (or %s%sbit for %s %sB/s)",
		s, p, names[p], num, p, strconv.FormatFloat(v*8, 'f', -1, 64), p, num, strings.ToUpper(p))
}
