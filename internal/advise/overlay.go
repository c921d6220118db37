package advise

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// What overlay-offload may propose. A NIC may offload an overlay the CNI
// has no backend for (GRE under Calico or Flannel), so the targets are
// the overlays the detected CNI can carry pods in, the NIC offloads and
// the node does not use already; under Cilium there is none (see
// cniOverlays); for another CNI cnibench cannot say, and the rule is
// unknown rather than a guess.

// cniOverlays are the overlays each CNI can switch its pod traffic to
// whose segmentation a NIC offloads apart: Calico's IP pools (ipipMode,
// vxlanMode) and Flannel's backends (vxlan, ipip; host-gw is no overlay).
// Cilium is not here: its overlays, VXLAN and Geneve, are both UDP
// tunnels under one ethtool feature (tx-udp_tnl-segmentation), which
// shows both on or both off (a driver may still segment one UDP port and
// not the other: mlx5 decides per port), so ethtool gives nothing to
// propose; its way off the overlay's cost is native routing.
var cniOverlays = map[string][]string{
	"calico":  {"vxlan", "ipip"},
	"flannel": {"vxlan", "ipip"},
}

// noOtherOverlay are the CNIs whose overlays are known and share one
// NIC offload, for which overlay-offload is not applicable rather than
// unknown, with the reason the rule's line gives.
var noOtherOverlay = map[string]string{
	"cilium": "cilium's overlays, VXLAN and Geneve, share one offload flag (tx-udp_tnl-segmentation), so ethtool cannot show one offloaded and not the other; native routing is its way off the overlay (native-routing)",
}

// offloadedTargets lists the overlays of the CNI other than the one in
// use whose segmentation the NICs (every port) offload.
func offloadedTargets(in *inspect.Inspection) ([]string, error) {
	t, ns, err := tunnelAndNIC(in)
	if err != nil {
		return nil, err
	}
	if noOtherOverlay[in.CNI.Name] != "" {
		return nil, nil
	}
	kinds, ok := cniOverlays[in.CNI.Name]
	if !ok {
		name := in.CNI.Name
		if name == "" {
			name = "no CNI detected"
		}
		return nil, fmt.Errorf("which overlays the CNI can use is not known (%s; known: calico, flannel; cilium has none to propose)", name)
	}
	var out []string
	for _, k := range kinds {
		// IP-in-IP carries IPv4 only: an IPv6 overlay (vxlan-v6.calico)
		// has no IP-in-IP to move to.
		if k == "ipip" && t.IPv6 {
			continue
		}
		if k != t.Kind && inspect.TunnelOffload[k] != inspect.TunnelOffload[t.Kind] && allOn(ns, inspect.TunnelOffload[k]) {
			out = append(out, k)
		}
	}
	return out, nil
}

// overlaySwitch is {overlay_switch}: the detected CNI's command that
// moves pod traffic to each proposed overlay, with what it needs.
func overlaySwitch(in *inspect.Inspection) (string, error) {
	return perTarget(in, "\n", func(k string) []string {
		switch in.CNI.Name {
		case "calico":
			return calicoSwitch(k)
		case "flannel":
			return flannelSwitch(k, primaryTunnel(in).Name)
		}
		return nil
	})
}

// perTarget joins with sep what each proposed overlay (offloadedTargets)
// gives; an error where the NIC offloads none the CNI has.
func perTarget(in *inspect.Inspection, sep string, each func(kind string) []string) (string, error) {
	o, err := offloadedTargets(in)
	if err != nil {
		return "", err
	}
	var out []string
	for _, k := range o {
		out = append(out, each(k)...)
	}
	if len(out) == 0 {
		return "", errors.New("the NIC offloads no other overlay the CNI has")
	}
	return strings.Join(out, sep), nil
}

// calicoSwitch moves Calico's pool to overlay k in both installs: a
// manifest install's pools are changed with calicoctl; the tigera
// operator reconciles the pools from its Installation resource and puts
// a calicoctl change back, so there the Installation is patched.
func calicoSwitch(k string) []string {
	// The pool's mode says which encapsulation Felix programs; the
	// other one must be off, or the patch keeps the old one.
	ipip, vxlan, enc := "Never", "Always", "VXLAN"
	if k == "ipip" {
		ipip, vxlan, enc = "Always", "Never", "IPIP"
	}
	lines := []string{
		"# manifest install (calico-node without the tigera-operator): patch the IP pool",
		fmt.Sprintf(`calicoctl patch ippool default-ipv4-ippool -p '{"spec":{"ipipMode":"%s","vxlanMode":"%s"}}'`, ipip, vxlan),
		"# operator-managed (tigera-operator v1.35, Calico 3.28.1, and later): it reverts a calicoctl patch from",
		"#   the Installation; patch that (an older operator only creates pools that do not exist: use calicoctl)",
		fmt.Sprintf(`kubectl patch installation default --type=json -p '[{"op":"replace","path":"/spec/calicoNetwork/ipPools/0/encapsulation","value":"%s"}]'`, enc),
		fmt.Sprintf("#   (%s: the pool's name is in calicoctl get ippool, the Installation's pools in its spec.calicoNetwork.ipPools;", k),
		fmt.Sprintf("#   %sMode CrossSubnet, encapsulation %sCrossSubnet, encapsulates between subnets only)", k, enc),
	}
	if k == "ipip" {
		lines = append(lines,
			"#   IP-in-IP's routes come from BGP where BIRD routes the cluster (manifest: calico_backend: bird in",
			"#   calico-config; operator: Installation spec.calicoNetwork.bgp: Enabled, without which it refuses IPIP),",
			"#   the default before Calico 3.33; Felix programs them without BGP with the Installation's",
			"#   spec.calicoNetwork.clusterRoutingMode: Felix (Calico 3.32) and by default from 3.33.",
			"#   On a BIRD-routed VXLAN install without BGP (calico_backend: vxlan, bgp: Disabled) the patch cuts pod",
			"#   traffic between nodes: turn BGP (or Felix routing) on first. IP-in-IP is IPv4 only.")
	}
	return lines
}

// flannelSwitch moves Flannel's backend to overlay k. The ConfigMap's
// place depends on the install, and flannel's backends.md warns that
// the backend "should not be changed at runtime": the old device (old)
// and its routes stay behind.
func flannelSwitch(k, old string) []string {
	return []string{
		fmt.Sprintf(`kubectl -n kube-flannel edit configmap kube-flannel-cfg   # net-conf.json: "Backend": {"Type": "%s"}; then restart the kube-flannel DaemonSet`, k),
		"#   (Flannel before v0.19: kube-system/kube-flannel-cfg; Canal, reported as flannel: kube-system/canal-config",
		"#   and the canal DaemonSet)",
		fmt.Sprintf(`#   flannel's backends.md: the backend "should not be changed at runtime": the old device (%s) and its`, old),
		"#   routes stay until the nodes reboot or they are removed by hand: plan a reboot of each node",
	}
}

// overlayFirewall is {overlay_firewall}: what firewalls between nodes
// must pass for each proposed overlay under the detected CNI. VXLAN's
// port differs: Calico uses IANA's 4789, Flannel the Linux kernel's
// default 8472. Calico's IP-in-IP needs BGP between the nodes too.
func overlayFirewall(in *inspect.Inspection) (string, error) {
	return perTarget(in, "; ", func(k string) []string {
		switch {
		case k == "vxlan" && in.CNI.Name == "calico":
			return []string{"VXLAN: UDP 4789 (Calico's)"}
		case k == "vxlan":
			return []string{"VXLAN: UDP 8472 (" + in.CNI.Name + "'s, the Linux kernel's default port)"}
		case k == "ipip" && in.CNI.Name == "calico":
			return []string{"IP-in-IP: IP protocol 4 (not a port: a rule for UDP or TCP does not pass it), and TCP 179 where BGP routes it"}
		case k == "ipip":
			return []string{"IP-in-IP: IP protocol 4 (not a port: a rule for UDP or TCP does not pass it)"}
		}
		return nil
	})
}
