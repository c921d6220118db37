package inspect

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFeatures(t *testing.T) {
	m, err := ParseFeatures(read(t, "ethtool-k-virtio.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]Offload{
		FeatGRO: {On: true}, FeatUDPTunnel: {On: false, Fixed: true}, FeatGROHW: {On: true, Fixed: true},
		"tx-tcp-segmentation": {On: true}, FeatIPIP: {Fixed: true},
	}
	for f, w := range checks {
		if got, ok := m[f]; !ok || got != w {
			t.Errorf("%s = %+v (present %v), want %+v", f, got, ok, w)
		}
	}
	for _, bad := range []string{"", "Features for x:\n", "gro on\n", "generic-receive-offload: maybe\n", "two words: on\n"} {
		if _, err := ParseFeatures([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestParseRSS(t *testing.T) {
	r, err := ParseRSS(read(t, "ethtool-x-virtio.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Rings != 1 || r.Table != 0 || len(r.Used) != 0 || r.Hash != "toeplitz" {
		t.Errorf("virtio: %+v", r)
	}
	r, err = ParseRSS(read(t, "ethtool-x-mlx5.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Rings != 4 || r.Table != 32 || !slices.Equal(r.Used, []int{0, 1, 2, 3}) || r.Hash != "toeplitz" {
		t.Errorf("mlx5: %+v", r)
	}
	for _, bad := range []string{
		"RX flow hash indirection table for x\n",
		"RX flow hash indirection table for x with many RX ring(s):\n",
		"RX flow hash indirection table for x with 2 RX ring(s):\n    0: 0 one\n",
	} {
		if _, err := ParseRSS([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestParseInterrupts(t *testing.T) {
	irqs, err := ParseInterrupts(read(t, "interrupts-2cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range irqs {
		if len(it.Counts) != 2 {
			t.Errorf("IRQ %d: %d counts for 2 CPUs", it.IRQ, len(it.Counts))
		}
		if it.IRQ == 38 {
			found = it.Name == "virtio2-input.0"
		}
		if strings.Contains(it.Name, "Non-maskable") {
			t.Errorf("named line %+v kept", it)
		}
	}
	if !found {
		t.Errorf("IRQ 38 virtio2-input.0 not found in %+v", irqs)
	}
	for _, bad := range []string{"", "  0:  1 2\n", "  CPU0 CPU1\n 5: 1\n", "  CPU0\n 5: x edge name\n"} {
		if _, err := ParseInterrupts([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func FuzzParseFeatures(f *testing.F) {
	f.Add(read(f, "ethtool-k-virtio.txt"))
	f.Add([]byte("a: on [fixed]\n\tb: off\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseFeatures(b)
		if err == nil && len(m) == 0 {
			t.Fatal("no error and no features")
		}
	})
}

func FuzzParseRSS(f *testing.F) {
	f.Add(read(f, "ethtool-x-virtio.txt"))
	f.Add(read(f, "ethtool-x-mlx5.txt"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRSS(b)
		if err == nil && (len(r.Used) > r.Table || r.Rings < 0) {
			t.Fatalf("inconsistent %+v", r)
		}
	})
}

func FuzzParseInterrupts(f *testing.F) {
	f.Add(read(f, "interrupts-2cpu.txt"))
	f.Add([]byte(" CPU0 CPU1\n 1: 2 3 IO-APIC x\nNMI: 0 0 y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		irqs, err := ParseInterrupts(b)
		if err != nil {
			return
		}
		for i := 1; i < len(irqs); i++ {
			if len(irqs[i].Counts) != len(irqs[0].Counts) {
				t.Fatalf("rows of %d and %d CPUs", len(irqs[0].Counts), len(irqs[i].Counts))
			}
		}
	})
}

// ethtool -l as virtio_net prints it with ethtool 6 ("n/a" for counts it
// lacks) and as mlx4_en, whose receive and transmit channels are
// separate (combined 0), with an older ethtool's zeros.
func TestParseChannels(t *testing.T) {
	virtio := "Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t4\n" +
		"Current hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t2\n"
	mlx4 := "Channel parameters for eth1:\nPre-set maximums:\nRX:\t\t128\nTX:\t\t32\nOther:\t\t0\nCombined:\t0\n" +
		"Current hardware settings:\nRX:\t\t8\nTX:\t\t8\nOther:\t\t0\nCombined:\t0\n"
	for _, c := range []struct {
		out  string
		want Channels
	}{
		{virtio, Channels{MaxCombined: 4, Combined: 2}},
		{mlx4, Channels{MaxRX: 128, MaxTX: 32, RX: 8, TX: 8}},
	} {
		got, err := ParseChannels([]byte(c.out))
		if err != nil || got != c.want {
			t.Errorf("%+v, %v; want %+v", got, err, c.want)
		}
	}
	for _, bad := range []string{"", "Channel parameters for eth0:\nPre-set maximums:\nCombined:\t4\n", strings.Replace(virtio, "Combined:\t4", "Combined:\tmany", 1)} {
		if got, err := ParseChannels([]byte(bad)); err == nil {
			t.Errorf("%q: %+v, want an error", bad, got)
		}
	}
}
