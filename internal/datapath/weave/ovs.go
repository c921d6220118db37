package weave

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/ovsdp"
)

// OVSTunnelPrefix starts the name of the VXLAN port ovs-dpctl creates
// (vxlan_sys_6784).
const OVSTunnelPrefix = "vxlan_sys_"

func haveDpctl() bool { return ovsdp.Available() }

// setupOVS builds Weave's fast datapath: an OVS kernel datapath named
// "datapath" with vethwe-datapath and a VXLAN vport on UDP 6784.
// Equivalent to: ovs-dpctl add-dp datapath vethwe-datapath vxlan-6784,type=vxlan,dst_port=6784,remote_ip=flow,key=flow
func setupOVS(n datapath.Node, mtu int) error {
	_ = mtu // the vport is a collect-metadata device; the pods' MTU bounds the traffic
	err := ovsdp.AddDP(n.Netns, DatapathDev, DatapathVeth,
		fmt.Sprintf("%s,type=vxlan,dst_port=%d,remote_ip=flow,key=flow", Device, port))
	if err != nil {
		return fmt.Errorf("weave fast datapath on %s: %w", n.Name, err)
	}
	return nil
}

// connectOVS adds the flows Weave's router would install, simplified to
// whole ports: frames from the bridge go out through the tunnel to every
// other node (the remote bridge drops what is not for it), frames from
// the tunnel go to the bridge.
// Equivalent to, per EtherType:
//
//	ovs-dpctl add-flow datapath 'in_port(VETH),eth(),eth_type(0x0800),ipv4(frag=no)' 'set(tunnel(tun_id=0x5eaf,dst=REMOTE,ttl=64,tp_dst=6784,flags(df|key))),VXLAN'
//	ovs-dpctl add-flow datapath 'in_port(VXLAN),eth(),eth_type(0x0800),ipv4(frag=no)' VETH
func connectOVS(nodes []datapath.Node) error {
	for i, n := range nodes {
		ports, err := ovsdp.Ports(n.Netns, DatapathDev)
		if err != nil {
			return err
		}
		veth, ok := ports[DatapathVeth]
		if !ok {
			return fmt.Errorf("weave fast datapath on %s has no port %s (ports %v)", n.Name, DatapathVeth, ports)
		}
		vx := -1
		for name, no := range ports {
			if strings.HasPrefix(name, OVSTunnelPrefix) || name == Device {
				vx = no
			}
		}
		if vx < 0 {
			return fmt.Errorf("weave fast datapath on %s has no VXLAN port (ports %v)", n.Name, ports)
		}
		var acts []string
		for j, r := range nodes {
			if i != j {
				acts = append(acts, fmt.Sprintf("set(tunnel(tun_id=%#x,dst=%s,ttl=64,tp_dst=%d,flags(df|key))),%d", vni, r.UnderlayIP, port, vx))
			}
		}
		if err := ovsdp.Connect(n.Netns, DatapathDev, veth, strings.Join(acts, ",")); err != nil {
			return fmt.Errorf("weave flows on %s: %w", n.Name, err)
		}
		if err := ovsdp.Connect(n.Netns, DatapathDev, vx, strconv.Itoa(veth)); err != nil {
			return fmt.Errorf("weave flows on %s: %w", n.Name, err)
		}
	}
	return nil
}
