package offload

import (
	"os"
	"testing"
)

func TestParseFeatures(t *testing.T) {
	b, err := os.ReadFile("testdata/ethtool-k-veth.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFeatures(b)
	for name, want := range map[string]bool{
		"tcp-segmentation-offload":     true,
		"generic-segmentation-offload": true,
		"large-receive-offload":        false,
		"tx-udp_tnl-segmentation":      true,
		"rx-checksumming":              true,
	} {
		got, ok := f[name]
		if !ok {
			t.Errorf("%s missing", name)
		} else if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if _, ok := f["Features for veth0"]; ok {
		t.Error("header line parsed as a feature")
	}
}

func FuzzParseFeatures(f *testing.F) {
	if b, err := os.ReadFile("testdata/ethtool-k-veth.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("Features for x:\nfoo: on [fixed]\nbar: off\n: on\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for k := range ParseFeatures(data) {
			if k == "" {
				t.Error("empty feature name")
			}
		}
	})
}
