package nftrace

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestSubscribed: only the monitor's own NETLINK_NETFILTER socket in the
// trace group counts (the line captured with `nft -a monitor trace`
// running; another socket of the same process in the nf_tables group,
// 0x2, does not).
func TestSubscribed(t *testing.T) {
	b, err := os.ReadFile("testdata/proc-net-netlink.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		inodes []uint64
		want   bool
	}{
		{[]uint64{1892848}, true},
		{[]uint64{1892999}, false}, // nf_tables events only
		{[]uint64{412}, false},     // the kernel's socket: no groups
		{[]uint64{4}, false},       // group 0 protocol 0
		{nil, false},
	} {
		in := map[uint64]bool{}
		for _, i := range tc.inodes {
			in[i] = true
		}
		got, err := Subscribed(bytes.NewReader(b), in)
		if err != nil || got != tc.want {
			t.Errorf("inodes %v: %v, %v; want %v", tc.inodes, got, err, tc.want)
		}
	}
	if _, err := Subscribed(strings.NewReader("0 12 1 zz 0 0 0 2 0 7\n"), map[uint64]bool{7: true}); err == nil {
		t.Error("a Groups column that is not hex was read")
	}
}

// FuzzSubscribed: any text parses or is refused without a panic, and a
// line that says yes names an inode asked for.
func FuzzSubscribed(f *testing.F) {
	b, _ := os.ReadFile("testdata/proc-net-netlink.txt")
	f.Add(string(b), uint64(1892848))
	f.Add("x 12 1 100 0 0 0 2 0 9\n", uint64(9))
	f.Fuzz(func(t *testing.T, text string, inode uint64) {
		ok, err := Subscribed(strings.NewReader(text), map[uint64]bool{inode: true})
		if ok && (err != nil || !strings.Contains(text, "12")) {
			t.Fatalf("subscribed with err %v in %q", err, text)
		}
		if ok2, _ := Subscribed(strings.NewReader(text), map[uint64]bool{}); ok2 {
			t.Fatal("subscribed with no inode asked for")
		}
	})
}
