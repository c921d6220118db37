package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/calicorouted"
	"github.com/cnibench/cnibench/internal/datapath/flanneld"
	"github.com/cnibench/cnibench/internal/datapath/kuberouter"
	"github.com/cnibench/cnibench/internal/study"
)

// Options are a study's knobs that change how a datapath is built.
type Options struct {
	// Type is the catalog name (flannel-vxlan).
	Type string
	// MTU overrides the datapath's pod MTU; 0 keeps the CNI's default.
	MTU int
	// Implementation is "" or "builtin" (in-process), "flanneld" or
	// "bird" (study.Impl*).
	Implementation string
	// Policy is "" (no rules), "wp" or "np"; see PolicyStyle.
	Policy string
	// Wiring is "" or "netlink" (in-process) or "cni" (the reference
	// plugins, for datapaths that are a datapath.CNIDelegate).
	Wiring string
}

// FromStudy picks the knobs of a study entry that change how it is built.
func FromStudy(d study.Datapath) Options {
	return Options{Type: d.Type, MTU: d.MTU, Implementation: d.Implementation, Policy: d.Policy, Wiring: d.Wiring}
}

// flanneldBackends maps the datapaths the real flanneld can also program
// to its backend names.
var flanneldBackends = map[string]string{
	"flannel-vxlan": "vxlan",
	"bridge":        "host-gw",
}

// Build returns a fresh datapath with o applied. Each call returns a new
// value, so one run's state never leaks into another's.
func Build(o Options) (datapath.Datapath, error) {
	var d datapath.Datapath
	switch o.Implementation {
	case "", study.ImplBuiltin:
		var err error
		if d, err = Lookup(o.Type); err != nil {
			return nil, err
		}
	case study.ImplFlanneld:
		b, ok := flanneldBackends[o.Type]
		if !ok {
			return nil, fmt.Errorf("implementation flanneld: only %s can be run by flanneld", strings.Join(flanneldDatapaths(), " and "))
		}
		d = flanneld.NewWithBackend(b)
	case study.ImplBird:
		switch o.Type {
		case "calico-routed":
			d = calicorouted.NewBIRD()
		case "kube-router":
			// BIRD stands in for kube-router's GoBGP (kuberouter.BIRD).
			d = kuberouter.NewBIRD()
		default:
			// Calico's IP-in-IP routes also come from BIRD, but through
			// krt_tunnel, a patch of Calico's own BIRD; its VXLAN routes
			// are Felix's.
			return nil, fmt.Errorf("implementation bird: only calico-routed and kube-router have their routes distributed by BIRD here (not %s)", o.Type)
		}
	default:
		return nil, fmt.Errorf("unknown implementation %q (%s)", o.Implementation, strings.Join(study.Implementations, ", "))
	}
	if o.MTU > 0 {
		s, ok := d.(datapath.MTUSetter)
		if !ok {
			return nil, fmt.Errorf("datapath %s has no MTU of its own to set (its pods use the node's network)", o.Type)
		}
		s.SetMTU(o.MTU)
	}
	return d, nil
}

// Check reports, per study field (mtu, implementation, policy), why o
// cannot be built over an underlay of that MTU. It touches nothing.
func Check(o Options, underlayMTU int) map[string]string {
	problems := map[string]string{}
	impl := o
	impl.MTU = 0
	d, err := Build(impl)
	if err != nil {
		problems["implementation"] = err.Error()
		return problems
	}
	if max := datapath.MaxMTU(d, underlayMTU); o.MTU == 0 && d.MTU(underlayMTU) > max {
		// A fixed default (Weave's 1376) over a small underlay would be
		// fragmented without a word.
		problems["mtu"] = fmt.Sprintf("%s's default pod MTU %d is more than it carries over a %d-byte underlay without fragmenting (at most %d); set mtu", o.Type, d.MTU(underlayMTU), underlayMTU, max)
	}
	if o.MTU > 0 {
		if _, ok := d.(datapath.MTUSetter); !ok {
			problems["mtu"] = fmt.Sprintf("datapath %s has no MTU of its own to set (its pods use the node's network)", o.Type)
		} else if max := datapath.MaxMTU(d, underlayMTU); o.MTU > max {
			problems["mtu"] = fmt.Sprintf("%d is more than %s carries over a %d-byte underlay without fragmenting (at most %d)", o.MTU, o.Type, underlayMTU, max)
		}
	}
	if o.Wiring == "cni" {
		if _, ok := d.(datapath.CNIDelegate); !ok || datapath.IsHostNetwork(d) {
			problems["wiring"] = fmt.Sprintf("datapath %s has no wiring through the reference CNI plugins (its CNI has its own plugin, or none); cni wiring: %s", o.Type, strings.Join(CNIDelegates(), ", "))
		}
	}
	if o.Policy != "" {
		if _, err := PolicyStyle(o.Type); err != nil {
			problems["policy"] = err.Error()
		}
	}
	return problems
}

// PolicyStyle names the network-policy rule set a datapath's CNI
// programs with iptables. Only Calico's is modelled: it is the CNI whose
// policy cost seed 004 measured (Calico-wp vs -np).
func PolicyStyle(typ string) (string, error) {
	switch typ {
	case "calico-routed", "calico-vxlan", "calico-ipip":
		return "calico", nil
	case "cilium":
		return "", fmt.Errorf("cilium enforces policy in eBPF, not iptables, and keeps netfilter off its path; cnibench models only Calico's iptables policy")
	}
	return "", fmt.Errorf("datapath %s: cnibench models only Calico's iptables policy (calico-routed, calico-vxlan, calico-ipip)", typ)
}

// CNIDelegates lists the datapaths whose pods the reference CNI plugins
// can wire (wiring: cni).
func CNIDelegates() []string {
	var out []string
	for _, d := range All() {
		if _, ok := d.(datapath.CNIDelegate); ok && !datapath.IsHostNetwork(d) {
			out = append(out, d.Name())
		}
	}
	sort.Strings(out)
	return out
}

func flanneldDatapaths() []string {
	return []string{"bridge", "flannel-vxlan"}
}

// Variants lists every datapath that some implementation other than the
// builtin one builds, so doctor can say what each needs.
func Variants() []Options {
	var out []Options
	for _, t := range flanneldDatapaths() {
		out = append(out, Options{Type: t, Implementation: study.ImplFlanneld})
	}
	return append(out, Options{Type: "calico-routed", Implementation: study.ImplBird},
		Options{Type: "kube-router", Implementation: study.ImplBird})
}
