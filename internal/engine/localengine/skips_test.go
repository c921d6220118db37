package localengine

import (
	"errors"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
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

// The report reads the skipped datapaths back from these notes
// (results.SkippedOf: env.json records them only as notes); a reason
// over several lines stays whole.
func TestSkipNotesReadBack(t *testing.T) {
	var k skips
	k.add("flannel", errors.New("tool iptables-restore is not available"))
	k.add("weave", errors.New("tool iptables-restore is not available"))
	k.add("ovs", errors.New("kernel feature openvswitch is not available:\nthe kernel has no ovs_datapath family"))
	want := []results.Skipped{
		{Datapath: "flannel", Reason: "tool iptables-restore is not available"},
		{Datapath: "weave", Reason: "tool iptables-restore is not available"},
		{Datapath: "ovs", Reason: "kernel feature openvswitch is not available:\nthe kernel has no ovs_datapath family"},
	}
	if got := results.SkippedOf(k.notes()); !slices.Equal(got, want) {
		t.Errorf("read back %q\nwant %q", got, want)
	}
}
