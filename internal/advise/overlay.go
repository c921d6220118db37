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
// the node does not use already; for a CNI not listed here cnibench
// cannot say, and the rule is unknown rather than a guess.

// cniOverlays are the overlays each CNI can switch its pod traffic to:
// Calico's IP pools (ipipMode, vxlanMode), Flannel's backends (vxlan,
// ipip; host-gw is no overlay) and Cilium's tunnelProtocol.
var cniOverlays = map[string][]string{
	"calico":  {"vxlan", "ipip"},
	"flannel": {"vxlan", "ipip"},
	"cilium":  {"vxlan", "geneve"},
}

// offloadedTargets lists the overlays of the CNI other than the one in
// use whose segmentation the NICs (every port) offload.
func offloadedTargets(in *inspect.Inspection) ([]string, error) {
	t, ns, err := tunnelAndNIC(in)
	if err != nil {
		return nil, err
	}
	kinds, ok := cniOverlays[in.CNI.Name]
	if !ok {
		name := in.CNI.Name
		if name == "" {
			name = "no CNI detected"
		}
		return nil, fmt.Errorf("which overlays the CNI can use is not known (%s; known: calico, flannel, cilium)", name)
	}
	var out []string
	for _, k := range kinds {
		if k != t.Kind && inspect.TunnelOffload[k] != inspect.TunnelOffload[t.Kind] && allOn(ns, inspect.TunnelOffload[k]) {
			out = append(out, k)
		}
	}
	return out, nil
}

// overlaySwitch is {overlay_switch}: the detected CNI's command that
// moves pod traffic to each proposed overlay, one line per overlay.
func overlaySwitch(in *inspect.Inspection) (string, error) {
	o, err := offloadedTargets(in)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, k := range o {
		switch in.CNI.Name {
		case "calico":
			// The pool's mode says which encapsulation Felix programs;
			// the other one must be off, or the patch keeps the old one.
			ipip, vxlan := "Never", "Always"
			if k == "ipip" {
				ipip, vxlan = "Always", "Never"
			}
			lines = append(lines, fmt.Sprintf(`calicoctl patch ippool default-ipv4-ippool -p '{"spec":{"ipipMode":"%s","vxlanMode":"%s"}}'`, ipip, vxlan),
				fmt.Sprintf("#   (%s: the pool's name is in calicoctl get ippool; %sMode CrossSubnet encapsulates between subnets only)", k, k))
		case "flannel":
			lines = append(lines, fmt.Sprintf(`kubectl -n kube-flannel edit configmap kube-flannel-cfg   # net-conf.json: "Backend": {"Type": "%s"}; then restart the kube-flannel DaemonSet`, k))
		case "cilium":
			lines = append(lines, fmt.Sprintf("helm upgrade cilium cilium/cilium -n kube-system --reuse-values --set tunnelProtocol=%s   # Cilium before 1.14: --set tunnel=%s", k, k))
		}
	}
	if len(lines) == 0 {
		return "", errors.New("the NIC offloads no other overlay the CNI has")
	}
	return strings.Join(lines, "\n"), nil
}

// overlayFirewall is {overlay_firewall}: what firewalls between nodes
// must pass for each proposed overlay under the detected CNI. VXLAN's
// port differs: Calico uses IANA's 4789, Flannel and Cilium the Linux
// kernel's default 8472.
func overlayFirewall(in *inspect.Inspection) (string, error) {
	o, err := offloadedTargets(in)
	if err != nil {
		return "", err
	}
	var out []string
	for _, k := range o {
		switch {
		case k == "vxlan" && in.CNI.Name == "calico":
			out = append(out, "VXLAN: UDP 4789 (Calico's)")
		case k == "vxlan":
			out = append(out, "VXLAN: UDP 8472 ("+in.CNI.Name+"'s, the Linux kernel's default port)")
		case k == "geneve":
			out = append(out, "Geneve: UDP 6081")
		case k == "ipip":
			out = append(out, "IP-in-IP: IP protocol 4 (not a port: a rule for UDP or TCP does not pass it)")
		}
	}
	if len(out) == 0 {
		return "", errors.New("the NIC offloads no other overlay the CNI has")
	}
	return strings.Join(out, "; "), nil
}
