package study

import (
	"strings"
	"testing"
)

const netfilterBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: a
spec:
  tunings: [baseline]
  workloads:
    - tool: iperf3
  replicas: [1]
  duration: 3s
  trials: 1
  datapaths:
    - name: f
      type: flannel-vxlan
`

func TestNetfilterParse(t *testing.T) {
	s, err := Parse("a.yaml", []byte(netfilterBase+"      netfilter: {cni: flannel, kubeProxy: nftables, services: 40}\n"), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	nf := s.Spec.Datapaths[0].Netfilter
	if nf == nil || nf.CNI != "flannel" || nf.Mode() != KubeProxyNFT || nf.ServiceCount() != 40 || nf.EndpointCount() != DefaultEndpoints {
		t.Errorf("netfilter %+v", nf)
	}
	s, err = Parse("a.yaml", []byte(netfilterBase+"      netfilter: {cni: flannel}\n"), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if nf := s.Spec.Datapaths[0].Netfilter; nf.Mode() != KubeProxyIptables || nf.ServiceCount() != DefaultServices {
		t.Errorf("defaults %+v: want kube-proxy iptables with %d Services", nf, DefaultServices)
	}
	s, err = Parse("a.yaml", []byte(netfilterBase+"      netfilter: {cni: cilium-kpr, kubeProxy: cilium, services: 300}\n"), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if nf := s.Spec.Datapaths[0].Netfilter; nf.Mode() != KubeProxyCilium || nf.ServiceCount() != 300 {
		t.Errorf("cilium replacement %+v", nf)
	}
}

// TestNetfilterBadInput: each mistake is one error naming file:line and
// the field.
func TestNetfilterBadInput(t *testing.T) {
	for _, c := range []struct{ field, want string }{
		{"netfilter: {kubeProxy: iptables}", "a.yaml:15: spec.datapaths[0].netfilter.cni: missing"},
		{"netfilter: {cni: flannel, kubeProxy: userspace}", "spec.datapaths[0].netfilter.kubeProxy: must be iptables, nftables, ipvs, kube-router, cilium or none"},
		{"netfilter: {cni: flannel, kubeProxy: cilium}", `a.yaml:15: spec.datapaths[0].netfilter.kubeProxy: cilium (the kube-proxy replacement) comes with Cilium's own rules for it: set cni: cilium-kpr, got "flannel"`},
		{"netfilter: {cni: flannel, services: -1}", "spec.datapaths[0].netfilter.services: must be between 1 and 5000"},
		{"netfilter: {cni: flannel, endpoints: 1000}", "spec.datapaths[0].netfilter.endpoints: must be between 1 and 100"},
		{"netfilter: {cni: flannel, services: 5000, endpoints: 100}", "more than 50000 endpoint chains"},
		{"netfilter: {cni: flannel, kubeProxy: none, services: 3}", "Services need kube-proxy"},
		{"netfilter: {cni: calico-np-xsub}\n      policy: np", "policy and netfilter both write Calico's chains"},
		{"netfilter: {cni: flannel, bogus: 1}", `a.yaml:15: spec.datapaths[0].netfilter.bogus: unknown netfilter field "bogus"`},
	} {
		_, err := Parse("a.yaml", []byte(netfilterBase+"      "+c.field+"\n"), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.field, err, c.want)
		}
	}
}

// TestTargetBadInput: an unknown target, and a Service in front of a
// tool that needs two ports, are refused at the field.
func TestTargetBadInput(t *testing.T) {
	for _, c := range []struct{ w, want string }{
		{"{tool: iperf3, target: clusterip}", `spec.workloads[0].target: "clusterip" is not pod, service or hairpin`},
		{"{tool: iperf3, target: hairpin, background: {connections: [1], pairs: 1, rate: 10M}}", "hairpin runs the client inside the server pod"},
	} {
		y := strings.Replace(netfilterBase, "    - tool: iperf3\n", "    - "+c.w+"\n", 1)
		_, err := Parse("a.yaml", []byte(y), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.w, err, c.want)
		}
	}
	y := strings.Replace(netfilterBase, "    - tool: iperf3\n", "    - {tool: iperf3, target: service}\n", 1)
	s, err := Parse("a.yaml", []byte(y), Options{}, testCatalog)
	if err != nil || s.Spec.Workloads[0].Target != TargetService {
		t.Errorf("target service: %v", err)
	}
	// No Service proxy: nothing would translate the ClusterIP.
	_, err = Parse("a.yaml", []byte(y+"      netfilter: {cni: flannel, kubeProxy: none}\n"), Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), "spec.workloads[0].target: service needs a Service proxy, and datapath") {
		t.Errorf("target service with kubeProxy none: %v", err)
	}
}

// TestSetPicksNamedEntries: --set datapaths=[NAME] keeps the study's own
// entry of that name (its knobs); other names stay catalog names.
func TestSetPicksNamedEntries(t *testing.T) {
	y := netfilterBase + "      netfilter: {cni: flannel}\n    - calico-vxlan\n"
	s, err := Parse("a.yaml", []byte(y), Options{Set: []string{"datapaths=[f, flannel-vxlan]"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Spec.Datapaths
	if len(d) != 2 || d[0].Name != "f" || d[0].Netfilter == nil || d[1].Name != "flannel-vxlan" || d[1].Netfilter != nil {
		t.Errorf("datapaths %+v: want the study's f (with netfilter) and the catalog's flannel-vxlan", d)
	}
}
