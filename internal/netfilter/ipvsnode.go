package netfilter

import (
	"fmt"
	"net"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
)

// Proxy is an IPVS service proxy.
type Proxy string

const (
	// ProxyKubeProxy is kube-proxy --proxy-mode ipvs (KubeProxyIPVS).
	ProxyKubeProxy Proxy = "kube-proxy"
	// ProxyKubeRouter is kube-router --run-service-proxy (KubeRouterProxy).
	ProxyKubeRouter Proxy = "kube-router"
)

// IPVSOn is proxy p's state on node n, whose pods are in podCIDR, for
// services; what the model needs from the node (kube-router: the
// node's underlay address and its local addresses) is read from it.
func IPVSOn(p Proxy, n engine.Node, podCIDR, clusterCIDR *net.IPNet, svcs []Service) (*IPVS, error) {
	switch p {
	case ProxyKubeProxy:
		return KubeProxyIPVS(clusterCIDR, podCIDR, svcs)
	case ProxyKubeRouter:
		nodeIP, err := ifaceIP(n.Netns(), n.Underlay().Name)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name(), err)
		}
		local, err := localIPs(n.Netns())
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name(), err)
		}
		return KubeRouterProxy(nodeIP, podCIDR, local, svcs)
	}
	return nil, fmt.Errorf("unknown IPVS proxy %q", p)
}

// Layout is proxy p's dummy device and sets, without entries: what
// ClearIPVS takes away.
func Layout(p Proxy) (*IPVS, error) {
	switch p {
	case ProxyKubeProxy:
		return &IPVS{Dummy: DummyDevice, Sets: ipvsSets}, nil
	case ProxyKubeRouter:
		return &IPVS{Dummy: KubeRouterDummy, Sets: krSets}, nil
	}
	return nil, fmt.Errorf("unknown IPVS proxy %q", p)
}

// localIPs are the IPv4 addresses of namespace ns's devices except those
// whose name says dummy, kube or docker, as kube-router's getAllLocalIPs
// lists them (so kube-dummy-if's Service IPs and kube-bridge's gateway
// are not "local").
func localIPs(ns string) ([]net.IP, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	var out []net.IP
	for _, l := range links {
		name := l.Attrs().Name
		if strings.Contains(name, "dummy") || strings.Contains(name, "kube") || strings.Contains(name, "docker") {
			continue
		}
		addrs, err := h.AddrList(l, netlink.FAMILY_V4)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			out = append(out, a.IP)
		}
	}
	return out, nil
}
