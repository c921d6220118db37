package cnibridge

import (
	"net"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
)

// FlannelNetwork is Flannel's default cluster network, from which each
// node leases its /24.
var FlannelNetwork = &net.IPNet{IP: net.IPv4(10, 244, 0, 0).To4(), Mask: net.CIDRMask(16, 32)}

// FlannelNetworkName is the network name of kube-flannel's CNI
// configuration (10-flannel.conflist), which its plugin passes on to the
// bridge plugin (host-local keeps its leases under that name).
const FlannelNetworkName = "cbr0"

// FlannelPort is the port Flannel's CNI plugin has the bridge plugin make
// for the i-th pod of a node whose lease is subnet: a port of cni0 with
// hairpin on (kube-flannel's delegate sets hairpinMode), the pod's
// address from the lease, the default route (isDefaultGateway) and a
// route to the cluster network (flannel-cni adds FLANNEL_NETWORK to the
// IPAM routes), both via the lease's .1.
func FlannelPort(p datapath.Pod, subnet *net.IPNet, mtu int) Port {
	ones, _ := subnet.Mask.Size()
	return Port{
		Bridge: Bridge, VethPrefix: VethPrefix, MTU: mtu,
		IP: PodIP(subnet, p.Index), PrefixLen: ones, Gateway: Gateway(subnet),
		Routes: []*net.IPNet{FlannelNetwork}, Hairpin: true,
	}
}

// AttachFlannel wires one pod to cni0 as Flannel's CNI plugin, delegating
// to the bridge plugin, does (FlannelPort).
func AttachFlannel(n datapath.Node, p datapath.Pod, subnet *net.IPNet, mtu int) (datapath.Attachment, error) {
	return AttachPort(n, p, FlannelPort(p, subnet, mtu))
}

// FlannelCNIPlugins are the plugins FlannelCNIConfig runs.
func FlannelCNIPlugins() []string { return []string{cniconf.TypeBridge, cniconf.TypeHostLocal} }

// FlannelCNIConfig is the configuration Flannel's CNI plugin hands the
// bridge plugin on a node whose lease is subnet with FLANNEL_MTU mtu,
// given kube-flannel's delegate {"hairpinMode":true,"isDefaultGateway":true}:
//
//	{"type":"bridge","bridge":"cni0","mtu":MTU,"isGateway":true,"isDefaultGateway":true,
//	 "hairpinMode":true,"ipMasq":false,
//	 "ipam":{"type":"host-local","ranges":[[{"subnet":"LEASE"}]],"routes":[{"dst":"10.244.0.0/16"}]}}
//
// as a one-plugin list (cniVersion cniconf.Version; kube-flannel's list
// says 0.3.1, which changes nothing the plugins do here). Two choices:
// flannel-cni sets ipMasq to the opposite of flanneld's FLANNEL_IPMASQ;
// kube-flannel runs flanneld with --ip-masq, so the delegate gets false
// (the emulated cluster has no outside to masquerade to either). The
// bridge name is flannel-cni's implicit default, written out. The portmap
// plugin kube-flannel chains after flannel is left out: studies use no
// hostPort, and without port mappings it does nothing on ADD.
func FlannelCNIConfig(subnet *net.IPNet, mtu int) ([]byte, error) {
	return cniconf.Marshal(FlannelNetworkName, cniconf.Bridge{
		Type: cniconf.TypeBridge, Bridge: Bridge, MTU: mtu,
		IsGateway: true, IsDefaultGateway: true, HairpinMode: true, IPMasq: false,
		IPAM: cniconf.HostLocal{
			Type:   cniconf.TypeHostLocal,
			Ranges: [][]cniconf.Range{{{Subnet: subnet.String()}}},
			Routes: []cniconf.Route{{Dst: FlannelNetwork.String()}},
		},
	})
}
