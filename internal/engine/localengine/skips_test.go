package localengine

import (
	"errors"
	"slices"
	"testing"
)

// Datapaths skipped for one reason share one note, in the order the
// study lists them; a reason of one datapath keeps the singular.
func TestSkipsGroupByReason(t *testing.T) {
	noIPT := errors.New("tool iptables-restore is not available")
	noIPIP := errors.New("kernel feature ipip is not available")
	var k skips
	k.add("flannel", noIPT)
	k.add("calico-wp-ipip", noIPIP)
	k.add("weave", noIPT)
	k.add("kube-router", noIPT)
	got := k.notes()
	want := []string{
		"datapaths flannel, weave, kube-router skipped: tool iptables-restore is not available",
		"datapath calico-wp-ipip skipped: kernel feature ipip is not available",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var none skips
	if none.notes() != nil {
		t.Errorf("no skips: %q", none.notes())
	}
}
