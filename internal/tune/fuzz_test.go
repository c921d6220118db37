package tune

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/netns"
)

// equalPaths are the knobs Equal is asked about: a mask, a number, a
// vector of numbers (tcp_rmem, which the kernel prints tab-separated).
var equalPaths = []string{
	"class/net/eth1/queues/rx-0/rps_cpus",
	"/proc/sys/net/core/rps_default_mask",
	"class/net/eth1/queues/rx-0/rps_flow_cnt",
	"/proc/sys/net/ipv4/tcp_rmem",
}

// FuzzEqual: a value read from the kernel (or a node's agent) is compared
// with the one a tuning writes, to skip a write that would change
// nothing and to check the kernel took one. Equal is an equivalence
// (symmetric, transitive, reflexive on every value it can read), blind
// to how white space separates fields; a mask equals itself as the
// kernel pads it to any CPU count, and a garbled mask equals nothing.
func FuzzEqual(f *testing.F) {
	for _, s := range [][3]string{
		{"3", "00000003", "0,00000003"},
		{"4096\t131072\t6291456", "4096 131072 6291456", " 4096  131072 6291456\n"},
		{"0", "00000000", ""},
		{"+5", "05", "5"},
		{"ffffffff,ffffffff", "g", "1,,1"},
		{"9223372036854775808", "18446744073709551615", "-1"},
	} {
		for k := range equalPaths {
			f.Add(uint8(k), s[0], s[1], s[2])
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, a, b, c string) {
		p := equalPaths[int(k)%len(equalPaths)]
		ab, ba, bc, ac := Equal(p, a, b), Equal(p, b, a), Equal(p, b, c), Equal(p, a, c)
		if ab != ba {
			t.Errorf("%s: Equal(%q, %q) = %v but Equal(%q, %q) = %v", p, a, b, ab, b, a, ba)
		}
		if ab && bc && !ac {
			t.Errorf("%s: %q = %q = %q, but %q != %q", p, a, b, c, a, c)
		}
		if oneLine(a) != a && Equal(p, a, b) != Equal(p, oneLine(a), b) {
			t.Errorf("%s: %q and %q compare otherwise with %q", p, a, oneLine(a), b)
		}
		if !IsMask(p) {
			if !Equal(p, a, a) {
				t.Errorf("%s: %q is not equal to itself", p, a)
			}
			return
		}
		set, err := cpuset.ParseMask(a)
		if err != nil {
			if Equal(p, a, a) {
				t.Errorf("%s: the unreadable mask %q equals itself", p, a)
			}
			return
		}
		for _, n := range []int{0, 1, 33, 4096} {
			if m := set.Mask(n); !Equal(p, a, m) {
				t.Errorf("%s: %q != %q, the same CPUs %v padded to %d", p, a, m, set, n)
			}
		}
	})
}

// listFS lists one directory; it is all RxQueues reads.
type listFS struct {
	FS
	names []string
}

func (l listFS) List(_, _, _ string) ([]string, error) { return l.names, nil }

// FuzzRxQueues: a device's queue directory is listed from sysfs (a
// cluster node's through its agent), and every rps_cpus and
// rps_flow_cnt write goes to the queues RxQueues returns. They are in
// queue order without repeats, each is a listed entry named as the
// kernel names them (rx-%u, net/core/net-sysfs.c), never one it lacks,
// and every such entry is returned: whatever else the listing holds
// (rx-01, rx-+1, a name twice) is skipped, not read as a queue.
func FuzzRxQueues(f *testing.F) {
	for _, s := range []string{"rx-0,rx-1,tx-0,tx-1", "rx-10,rx-9,rx-2", "tx-0", "", "rx-0,rx-0", "rx-,rx-x,rx--1", "rx-01,rx-+1,rx-1", "rx-00,rx-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, names string) {
		listed := strings.Split(names, ",")
		dirs, err := RxQueues(listFS{names: listed}, netns.Iface{Name: "eth1"})
		want := kernelQueueNames(listed)
		if err != nil {
			if len(want) != 0 {
				t.Fatalf("listing %q: %v, with queues %v listed", names, err, want)
			}
			return
		}
		var nums []int
		for _, d := range dirs {
			n, err := strconv.Atoi(strings.TrimPrefix(path.Base(d), "rx-"))
			if err != nil || path.Dir(d) != "class/net/eth1/queues" {
				t.Fatalf("listing %q: queue directory %q", names, d)
			}
			nums = append(nums, n)
		}
		if !slices.IsSorted(nums) {
			t.Errorf("listing %q: queues %v out of order", names, dirs)
		}
		if len(slices.Compact(slices.Clone(nums))) != len(nums) {
			t.Errorf("listing %q: a queue repeated in %v", names, dirs)
		}
		for _, d := range dirs {
			if !want[path.Base(d)] {
				t.Errorf("listing %q: %s is not a listed rx-%%u entry", names, d)
			}
		}
		if len(dirs) != len(want) {
			t.Errorf("listing %q: queues %v, want all of %v", names, dirs, want)
		}
	})
}

// kernelQueueNames returns the listed entries named as the kernel names
// receive queues, rx-%u: the number printed back is the name.
func kernelQueueNames(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		s, ok := strings.CutPrefix(n, "rx-")
		if !ok {
			continue
		}
		if i, err := strconv.Atoi(s); err == nil && i >= 0 && fmt.Sprint(i) == s {
			out[n] = true
		}
	}
	return out
}
