package iptables

import "testing"

// The backend is picked as kube-proxy's iptables-wrapper picks it:
// kubelet's marker chains first (nf_tables before legacy), else more
// rules; with no rule in either, the default iptables-save as before.
func TestPickSave(t *testing.T) {
	kubeLegacy := []byte("*mangle\n:KUBE-IPTABLES-HINT - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n*nat\n:KUBE-SERVICES - [0:0]\n[3:180] -A PREROUTING -j KUBE-SERVICES\n[0:0] -A KUBE-SERVICES -d 10.96.0.1/32 -j KUBE-SVC-X\nCOMMIT\n")
	dockerNft := []byte("*filter\n:DOCKER - [0:0]\n-A FORWARD -j DOCKER\nCOMMIT\n")
	many := []byte("*filter\n-A INPUT -j A\n-A INPUT -j B\n-A INPUT -j C\nCOMMIT\n")
	for _, tc := range []struct {
		name        string
		legacy, nft []byte
		want        string
		other       string
		rules       int
	}{
		{"kube-proxy legacy beside docker on nft", kubeLegacy, dockerNft, LegacySave, NftSave, 1},
		{"kube-proxy nft", dockerNft, []byte("*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n"), NftSave, LegacySave, 1},
		{"no markers, more legacy rules", many, dockerNft, LegacySave, NftSave, 1},
		{"no markers, more nft rules", nil, many, NftSave, "", 0},
		{"nothing anywhere", nil, nil, Save, "", 0},
		{"nft only, the image has no legacy", nil, kubeLegacy, NftSave, "", 0},
		{"counters (-c) and a kube-proxy chain", []byte("*nat\n[0:0] -A KUBE-SERVICES -j RETURN\n[1:60] -A PREROUTING -j KUBE-SERVICES\nCOMMIT\n"), dockerNft, LegacySave, NftSave, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			save, other, rules := PickSave(tc.legacy, tc.nft)
			if save != tc.want || other != tc.other || rules != tc.rules {
				t.Errorf("PickSave = %s, %q, %d; want %s, %q, %d", save, other, rules, tc.want, tc.other, tc.rules)
			}
		})
	}
}
