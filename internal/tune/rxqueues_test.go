package tune

import (
	"errors"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/netns"
)

// TestRxQueuesKernelNamesOnly: a queue directory is rx-%u in the kernel
// (net/core/net-sysfs.c). An entry in another form (leading zero, sign)
// is skipped like tx-0, so it cannot stand for a real queue: before,
// rx-01 and rx-+1 were read as queue 1 and rx--1 as queue -1.
func TestRxQueuesKernelNamesOnly(t *testing.T) {
	eth1 := netns.Iface{Name: "eth1"}
	listed := []string{"rx-01", "rx-+1", "rx-1", "rx-0", "rx--1", "rx-00", "rx- 2", "rx-2 ", "tx-0", "rx-1"}
	got, err := RxQueues(listFS{names: listed}, eth1)
	want := []string{"class/net/eth1/queues/rx-0", "class/net/eth1/queues/rx-1"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("RxQueues(%q) = %q, %v; want %q", listed, got, err, want)
	}
	// Only odd names: no queue, as for a device without any, rather
	// than rx-1 which the listing does not hold.
	for _, odd := range [][]string{{"rx-01"}, {"rx-+1", "tx-1"}, {"rx--0"}} {
		if got, err := RxQueues(listFS{names: odd}, eth1); !errors.Is(err, ErrNotSupported) {
			t.Errorf("RxQueues(%q) = %q, %v; want ErrNotSupported", odd, got, err)
		}
	}
}
