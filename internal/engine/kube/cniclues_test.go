package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/study"
)

// The operator quickstart's pool (VXLANCrossSubnet) and Flannel's
// DirectRouting are read from the cluster, and the nodes' Calico address
// annotations say whether the run's nodes share a subnet: detection then
// names the path routed, not an overlay.
func TestCNICluesCrossSubnet(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "kube-flannel-cfg"},
		Data: map[string]string{"net-conf.json": `{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","DirectRouting":true}}`}}
	cs, place := kubeFixture(t, cfg, cm)
	place.Server.Annotations = map[string]string{cnidetect.CalicoAddrAnnotation: "192.168.1.10/24"}
	place.Client.Annotations = map[string]string{cnidetect.CalicoAddrAnnotation: "192.168.1.11/24"}
	old := getIPPools
	t.Cleanup(func() { getIPPools = old })
	getIPPools = func(context.Context, kubernetes.Interface) ([]byte, error) {
		return []byte(`{"items":[{"metadata":{"name":"default-ipv4-ippool"},"spec":{"cidr":"192.168.0.0/16","ipipMode":"Never","vxlanMode":"CrossSubnet"}}]}`), nil
	}
	in := cnidetect.Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"eth0", "vxlan.calico"}}
	cniClues(context.Background(), cs, place, &in)
	if r := cnidetect.Detect(in); r.String() != "calico (bgp)" || !strings.Contains(r.Routed, "ippool default-ipv4-ippool: vxlanMode CrossSubnet") {
		t.Errorf("calico: %s, routed %q", r, r.Routed)
	}
	in = cnidetect.Input{Links: []string{"cni0", "flannel.1"}, DaemonSets: []cnidetect.DaemonSet{{Namespace: "kube-flannel", Name: "kube-flannel-ds"}}}
	getIPPools = func(context.Context, kubernetes.Interface) ([]byte, error) { return nil, errors.New("forbidden") }
	cniClues(context.Background(), cs, place, &in)
	if r := cnidetect.Detect(in); r.String() != "flannel (host-gw)" || r.Routed == "" {
		t.Errorf("flannel: %s, routed %q (net-conf %q)", r, r.Routed, in.FlannelNetConf)
	}
}

// Where the path is routed, impairments at a tunnel device are refused
// with the reason, before anything is created, and neither node keeps a
// tunnel device for netem or a tuning to go on; elsewhere nothing changes.
func TestRoutedPathNoTunnel(t *testing.T) {
	routed := cnidetect.Result{Name: "calico", Mode: "bgp", Routed: "ippool p: vxlanMode CrossSubnet (vxlan cross-subnet), and the nodes share a subnet"}
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Impairments = []study.Impairment{{Name: "none"}, {Name: "loss-low"}}
	err := refuseTunnelPlace(s, routed)
	if err == nil || !strings.Contains(err.Error(), "client-tunnel go on the tunnel device, which carries no measured packet") || !strings.Contains(err.Error(), "CrossSubnet") {
		t.Errorf("routed, client-tunnel: %v", err)
	}
	// The places it proposes impair the same client->server traffic:
	// client-pods' veths send into the pods, so it is their ingress.
	if err == nil || !strings.HasSuffix(err.Error(), "set impairAt.where to underlay, or client-pods with direction: ingress (through an ifb device: needs the ifb module), for the same client->server traffic") {
		t.Errorf("routed, client-tunnel's advice: %v", err)
	}
	if err := refuseTunnelPlace(s, cnidetect.Result{Name: "calico", Mode: "vxlan"}); err != nil {
		t.Errorf("tunnelled: %v", err)
	}
	s.Spec.ImpairAt.Where = study.WhereUnderlay
	if err := refuseTunnelPlace(s, routed); err != nil {
		t.Errorf("underlay: %v", err)
	}
	if w := routedWarnings(routed); len(w) != 1 || !strings.Contains(w[0], "routed, not tunnelled") {
		t.Errorf("warnings %q", w)
	}
	c := &Cluster{server: &Node{tunnel: "vxlan.calico", hasTunnel: true}, client: &Node{tunnel: "vxlan.calico", hasTunnel: true}}
	c.routedPath(cnidetect.Result{Name: "calico", Mode: "vxlan"})
	if _, ok := c.server.Tunnel(); !ok {
		t.Error("tunnelled path lost its tunnel device")
	}
	c.routedPath(routed)
	if _, ok := c.server.Tunnel(); ok {
		t.Error("routed path keeps the server's tunnel device")
	}
	if _, ok := c.client.Tunnel(); ok {
		t.Error("routed path keeps the client's tunnel device")
	}
}

// tunl0 up on a Calico cluster whose every IPv4 pool has ipipMode Never
// carries nothing: detection's routed path takes it off both nodes (which
// had picked it, pickTunnel keeping any device that is not down) and
// impairments at client-tunnel are refused, as on a BGP cluster.
func TestIdleTunl0NotTunnel(t *testing.T) {
	links := []string{"eth0", "tunl0", "cali1"}
	dev, ok := pickTunnel(links, nil)
	if !ok || dev != "tunl0" {
		t.Fatalf("pickTunnel = %q, %v: the fixture's premise", dev, ok)
	}
	cni := cnidetect.Detect(cnidetect.Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`},
		Links: links, Pools: []cnidetect.Pool{{Name: "p", IPIPMode: "Never", VXLANMode: "Never"}}})
	c := &Cluster{server: &Node{tunnel: dev, hasTunnel: true}, client: &Node{tunnel: dev, hasTunnel: true}}
	c.routedPath(cni)
	if d, ok := c.server.Tunnel(); ok {
		t.Errorf("%s: server keeps tunnel %s", cni, d)
	}
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Impairments = []study.Impairment{{Name: "none"}, {Name: "loss-low"}}
	if err := refuseTunnelPlace(s, cni); err == nil || !strings.Contains(err.Error(), "tunl0") {
		t.Errorf("client-tunnel on %s: %v, want refused naming tunl0", cni, err)
	}
}

// kube-router's per-peer tunnels are no node's tunnel device: a tunl0 up
// beside them is not taken, and impairments at client-tunnel are refused.
func TestKubeRouterNoTunnel(t *testing.T) {
	links := []string{"eth0", "kube-bridge", "tun-1921680012", "tunl0"}
	cni := cnidetect.Detect(cnidetect.Input{DaemonSets: []cnidetect.DaemonSet{{Namespace: "kube-system", Name: "kube-router"}}, Links: links})
	dev, _ := pickTunnel(links, nil)
	c := &Cluster{server: &Node{tunnel: dev, hasTunnel: dev != ""}, client: &Node{tunnel: dev, hasTunnel: dev != ""}}
	c.routedPath(cni)
	if d, ok := c.server.Tunnel(); ok {
		t.Errorf("%s: server keeps tunnel %s", cni, d)
	}
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Impairments = []study.Impairment{{Name: "none"}, {Name: "loss-low"}}
	if err := refuseTunnelPlace(s, cni); err == nil || !strings.Contains(err.Error(), "no device is taken for it on this cluster: kube-router's IP-in-IP devices (tun-*)") {
		t.Errorf("client-tunnel on %s: %v", cni, err)
	}
}
