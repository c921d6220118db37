package inspect

import "testing"

func TestIRQOf(t *testing.T) {
	for _, tc := range []struct {
		irq, dev string
		want     bool
	}{
		{"eth1", "eth1", true},
		{"eth1-TxRx-0", "eth1", true},
		{"eth1@pci:0000:01:00.0", "eth1", true},
		{"eth10-TxRx-0", "eth1", false},
		{"veth1", "eth1", false},
	} {
		if got := irqOf(tc.irq, tc.dev); got != tc.want {
			t.Errorf("irqOf(%q, %q) = %v, want %v", tc.irq, tc.dev, got, tc.want)
		}
	}
}
