package kube

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/tune"
)

// tunl0's flags decide whether it counts: 0x80 (IFF_NOARP) alone is the
// ipip module's fresh device, down; 0xc1 is up. A device the node does
// not have, or whose flags cannot be read, is not called down.
func TestDownLinks(t *testing.T) {
	fs := newMemFS()
	fs.set("", tune.FSSysfs, "class/net/tunl0/flags", "0x80\n")
	fs.set("", tune.FSSysfs, "class/net/vxlan.calico/flags", "0x11c3\n")
	links := []string{"eth0", "tunl0", "vxlan.calico", "gone"}
	if got := downLinks(fs, links, "tunl0", "vxlan.calico", "gone", "absent"); !slices.Equal(got, []string{"tunl0"}) {
		t.Errorf("down %q, want [tunl0]", got)
	}
	fs.set("", tune.FSSysfs, "class/net/tunl0/flags", "0xc1\n")
	if got := downLinks(fs, links, "tunl0"); len(got) != 0 {
		t.Errorf("tunl0 up: down %q", got)
	}
}
