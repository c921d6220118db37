package inspect

import (
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
)

// kube-proxy's mode from what it leaves: its nftables table, the ipvs
// dummy device, or the iptables nat chain KUBE-SERVICES (in either view).
func TestKubeProxyMode(t *testing.T) {
	ipt := &iptables.Ruleset{Chains: map[string]uint64{"nat/KUBE-SERVICES": 0, "filter/INPUT": 0}}
	for _, c := range []struct {
		name  string
		ipt   *iptables.Ruleset
		nft   *nftables.Ruleset
		links []string
		want  string
	}{
		{"nftables", nil, &nftables.Ruleset{Tables: []string{"ip/kube-proxy", "ip6/kube-proxy"}}, nil, KubeProxyNftables},
		{"ipvs", ipt, nil, []string{"eth0", "kube-ipvs0"}, KubeProxyIPVS},
		{"iptables", ipt, nil, []string{"eth0"}, KubeProxyIptables},
		{"iptables-nft", nil, &nftables.Ruleset{Tables: []string{"ip/nat"}, Chains: []string{"ip/nat/KUBE-SERVICES"}}, nil, KubeProxyIptables},
		{"none", &iptables.Ruleset{Chains: map[string]uint64{"filter/cali-INPUT": 0}}, nil, []string{"eth0"}, ""},
	} {
		if got := kubeProxyMode(c.ipt, c.nft, c.links); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
