package agent

import (
	"strings"
	"testing"
)

// A tunnel's lower device comes with the devices it is stacked on: the
// NIC the CNI sends on, where the kube engine puts the underlay's RPS
// masks and netem (a node's InternalIP may be on another NIC).
func TestLowerDevOverProtocol(t *testing.T) {
	cfg := Config{Run: "r4", FS: testNode(), JournalDir: t.TempDir(),
		LowerDev: func(tunnel string) (string, error) {
			if tunnel == "flannel.1" {
				return "bond1", nil
			}
			return "", nil
		},
		StackedOn: func(dev string) []string {
			if dev == "bond1" {
				return []string{"ens3", "ens4"}
			}
			return nil
		}}
	c, wait := session(t, cfg)
	defer func() { c.Close(); wait() }()
	dev, below, err := c.LowerDev("flannel.1")
	if err != nil || dev != "bond1" || strings.Join(below, ",") != "ens3,ens4" {
		t.Fatalf("lower dev = %q on %v, %v", dev, below, err)
	}
	if dev, below, err := c.LowerDev("tunl0"); err != nil || dev != "" || below != nil {
		t.Fatalf("unbound tunnel: %q on %v, %v", dev, below, err)
	}
}

// Through netlink: lo is bound to nothing (no root needed to read it).
func TestLowerDevNetlink(t *testing.T) {
	if dev, err := lowerDev("lo"); err != nil || dev != "" {
		t.Errorf("lowerDev(lo) = %q, %v", dev, err)
	}
	if _, err := lowerDev("cnibench-no-such-dev"); err == nil {
		t.Error("no error for a missing device")
	}
}
