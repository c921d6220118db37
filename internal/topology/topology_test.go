package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// fakeSys writes a sysfs tree: cpus[i] = {node, package, core}.
func fakeSys(t *testing.T, cpus [][3]int, numa bool) string {
	t.Helper()
	root := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("devices/system/cpu/online", fmt.Sprintf("0-%d", len(cpus)-1))
	nodes := map[int]cpuset.Set{}
	for i, c := range cpus {
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", i), fmt.Sprint(c[1]))
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", i), fmt.Sprint(c[2]))
		nodes[c[0]] = append(nodes[c[0]], i)
	}
	if numa {
		for n, s := range nodes {
			write(fmt.Sprintf("devices/system/node/node%d/cpulist", n), s.String())
		}
	}
	return root
}

// A Dell R730 of seed 001 in small: 2 NUMA nodes x 2 cores x 2 threads;
// Linux numbers siblings n and n+4.
var r730 = [][3]int{{0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}, {0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}}

func TestResolveTwoNodes(t *testing.T) {
	top, err := Read(fakeSys(t, r730, true))
	if err != nil {
		t.Fatal(err)
	}
	if top.Nodes() != 2 {
		t.Fatalf("nodes %d, want 2", top.Nodes())
	}
	ref := cpuset.Set{0}
	for name, want := range map[string]cpuset.Set{
		SameNUMA:  {1, 4, 5},
		OtherNUMA: {2, 3, 6, 7},
		SameCore:  {4},
		OtherCore: {1, 5},
		"3,7":     {3, 7},
		None:      nil,
	} {
		got, err := top.Resolve(name, ref)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s of CPU 0: %v %v, want %v", name, got, err, want)
		}
	}
	// Placed against a CPU of node 1, other-numa wraps to node 0.
	if got, _ := top.Resolve(OtherNUMA, cpuset.Set{6}); !reflect.DeepEqual(got, cpuset.Set{0, 1, 4, 5}) {
		t.Errorf("other-numa of CPU 6: %v", got)
	}
	// Against several CPUs, "other" is other than all of them: CPUs 0
	// and 1 hold both cores of node 0 (5 is CPU 1's sibling), and 0 and 2
	// both nodes.
	for _, tc := range []struct {
		name string
		ref  cpuset.Set
	}{{OtherCore, cpuset.Set{0, 1}}, {OtherNUMA, cpuset.Set{0, 2}}} {
		if got, err := top.Resolve(tc.name, tc.ref); !errors.Is(err, ErrNotPossible) {
			t.Errorf("%s of CPUs %v: %v %v, want none on this machine", tc.name, tc.ref, got, err)
		}
	}
	if got, _ := top.Resolve(OtherCore, cpuset.Set{0, 4}); !reflect.DeepEqual(got, cpuset.Set{1, 5}) {
		t.Errorf("other-core of CPUs 0 and 4 (one core's threads): %v, want [1 5]", got)
	}
}

// Within keeps the allowed CPUs alone, so names resolve among them: with
// CPUs 0-3 allowed (one thread of each core), CPU 0's same-core sibling
// is gone and same-numa is CPU 1 alone.
func TestWithin(t *testing.T) {
	top, err := Read(fakeSys(t, r730, true))
	if err != nil {
		t.Fatal(err)
	}
	if got := top.Within(nil); len(got.CPUs) != 8 {
		t.Errorf("Within(nil) kept %d CPUs, want all 8", len(got.CPUs))
	}
	in := top.Within(cpuset.Set{0, 1, 2, 3})
	if got, err := in.Resolve(SameNUMA, cpuset.Set{0}); err != nil || !reflect.DeepEqual(got, cpuset.Set{1}) {
		t.Errorf("same-numa of CPU 0 within 0-3: %v %v, want [1]", got, err)
	}
	if got, err := in.Resolve(SameCore, cpuset.Set{2}); !errors.Is(err, ErrNotPossible) {
		t.Errorf("same-core of CPU 2 within 0-3: %v %v, want none", got, err)
	}
	if got, err := in.Resolve("5", cpuset.Set{0}); err == nil {
		t.Errorf("CPU list 5 within 0-3: %v, want refused", got)
	}
}

// A NUMA node without CPUs (memory only: CXL, a GPU's or PMEM's memory
// onlined as a node, or a node whose CPUs are all offline) has an empty
// cpulist; it holds no CPU to place on, and the machine's other nodes
// still resolve.
func TestReadMemoryOnlyNode(t *testing.T) {
	root := fakeSys(t, r730, true)
	if err := os.MkdirAll(filepath.Join(root, "devices/system/node/node2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "devices/system/node/node2/cpulist"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := Read(root)
	if err != nil {
		t.Fatalf("Read with a memory-only node2: %v", err)
	}
	if len(top.CPUs) != 8 || top.Nodes() != 2 {
		t.Errorf("with a memory-only node2: %d CPUs on %d nodes, want 8 on 2", len(top.CPUs), top.Nodes())
	}
	if got, err := top.Resolve(OtherNUMA, cpuset.Set{1}); err != nil || !reflect.DeepEqual(got, cpuset.Set{2, 3, 6, 7}) {
		t.Errorf("other-numa of CPU 1 beside a memory-only node: %v %v, want [2 3 6 7]", got, err)
	}
	// A cpulist that says something unreadable is still an error.
	if err := os.WriteFile(filepath.Join(root, "devices/system/node/node2/cpulist"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root); err == nil {
		t.Error("an unreadable cpulist was taken")
	}
}

// On a package of two dies core_id repeats (each die numbers its cores
// from 0): the kernel's thread_siblings_list tells the cores apart, so
// same-core of CPU 0 is its own sibling alone and the other die's core
// is other-core; without the lists (package, core_id) stands.
func TestSiblingsListOverCoreID(t *testing.T) {
	// One package, one NUMA node; CPUs 0-1 one core of die 0, 2-3 one of
	// die 1, all with core_id 0.
	root := fakeSys(t, [][3]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, true)
	top, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := top.Resolve(SameCore, cpuset.Set{0}); !reflect.DeepEqual(got, cpuset.Set{1, 2, 3}) {
		t.Errorf("same-core of CPU 0 without sibling lists: %v, want [1 2 3] (core_id alone)", got)
	}
	for cpu, list := range []string{"0-1", "0-1", "2-3", "2-3"} {
		p := filepath.Join(root, fmt.Sprintf("devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu))
		if err := os.WriteFile(p, []byte(list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if top, err = Read(root); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]cpuset.Set{SameCore: {1}, OtherCore: {2, 3}} {
		if got, err := top.Resolve(name, cpuset.Set{0}); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s of CPU 0 with sibling lists: %v %v, want %v", name, got, err, want)
		}
	}
	// A list that says something unreadable is an error, not core_id.
	if err := os.WriteFile(filepath.Join(root, "devices/system/cpu/cpu3/topology/thread_siblings_list"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root); err == nil {
		t.Error("an unreadable thread_siblings_list was taken")
	}
}

func TestResolveOneNodeRefuses(t *testing.T) {
	// This machine's shape: 2 CPUs, one node, no SMT; no node directory
	// at all, as a kernel without NUMA has.
	top, err := Read(fakeSys(t, [][3]int{{0, 0, 0}, {0, 0, 1}}, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{OtherNUMA, SameCore} {
		if _, err := top.Resolve(name, cpuset.Set{0}); !errors.Is(err, ErrNotPossible) {
			t.Errorf("%s on one node without SMT: %v, want ErrNotPossible", name, err)
		}
	}
	if got, err := top.Resolve(SameNUMA, cpuset.Set{0}); err != nil || !reflect.DeepEqual(got, cpuset.Set{1}) {
		t.Errorf("same-numa: %v %v", got, err)
	}
	for _, bad := range []string{"same-socket", "9", "1-x"} {
		if _, err := top.Resolve(bad, cpuset.Set{0}); err == nil {
			t.Errorf("%q resolved", bad)
		}
	}
	if _, err := top.Resolve(SameNUMA, nil); err == nil {
		t.Error("a relative placement without a reference resolved")
	}
}

// TestReadThisMachine reads the real sysfs: every online CPU has a node
// and a core.
func TestReadThisMachine(t *testing.T) {
	top, err := Read("/sys")
	if err != nil {
		if _, serr := os.Stat("/sys/devices/system/cpu"); serr != nil {
			t.Skipf("skipped: no sysfs CPUs: %v", serr)
		}
		t.Fatal(err)
	}
	if len(top.CPUs) == 0 || top.Nodes() < 1 {
		t.Errorf("topology of this machine: %+v", top)
	}
}
