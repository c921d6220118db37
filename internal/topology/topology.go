// Package topology reads which CPUs share a physical core and a NUMA node
// (sysfs: this machine's, or a cluster node's through its agent), and
// resolves placement names ("same-numa", "other-core", ...) into CPU
// lists, as seed 001 bound its receiver to the sender's NUMA node or
// another one. The resolution is recorded with the run, so a report
// says which CPUs "same-numa" meant on that machine.
package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// CPU is one online logical CPU.
type CPU struct {
	ID int
	// Node is its NUMA node (0 where the kernel has no NUMA).
	Node int
	// Package and Core identify the physical core (SMT siblings share
	// both) where Siblings is nil.
	Package, Core int
	// Siblings are the CPUs of its physical core, itself included (sysfs
	// thread_siblings_list); nil where sysfs does not say. The kernel's
	// own list is preferred: on packages of several dies core_id may
	// repeat within one package, and (Package, Core) would then take two
	// cores for one.
	Siblings cpuset.Set
}

// physCore identifies a CPU's physical core: by its siblings' list where
// read, else by package and core id.
type physCore struct{ pkg, core, first int }

func (c CPU) physCore() physCore {
	if len(c.Siblings) > 0 {
		return physCore{pkg: -1, core: -1, first: c.Siblings[0]}
	}
	return physCore{pkg: c.Package, core: c.Core, first: -1}
}

// Topology is the machine's online CPUs.
type Topology struct{ CPUs []CPU }

// Read reads the topology under sysRoot ("/sys" on a real machine).
func Read(sysRoot string) (Topology, error) { return ReadFrom(sysfs.Dir(sysRoot)) }

// ReadFrom reads the topology through r: this machine's sysfs, or a
// cluster node's through its agent.
func ReadFrom(r sysfs.Reader) (Topology, error) {
	ids, err := Online(r)
	if err != nil {
		return Topology{}, err
	}
	nodeOf, err := numaNodes(r)
	if err != nil {
		return Topology{}, err
	}
	var t Topology
	for _, id := range ids {
		dir := path.Join(cpuDir, fmt.Sprintf("cpu%d", id), "topology")
		pkg, err := readInt(r, path.Join(dir, "physical_package_id"))
		if err != nil {
			return Topology{}, err
		}
		core, err := readInt(r, path.Join(dir, "core_id"))
		if err != nil {
			return Topology{}, err
		}
		sib, err := siblings(r, dir)
		if err != nil {
			return Topology{}, err
		}
		t.CPUs = append(t.CPUs, CPU{ID: id, Node: nodeOf[id], Package: pkg, Core: core, Siblings: sib})
	}
	return t, nil
}

// siblings reads a CPU's thread_siblings_list; nil where the kernel (or
// a fixture, or an older agent's sysfs) has none, which leaves the core
// to (physical_package_id, core_id).
func siblings(r sysfs.Reader, dir string) (cpuset.Set, error) {
	p := path.Join(dir, "thread_siblings_list")
	s, err := r.Read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	set, err := cpuset.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return set, nil
}

// Online reads the online CPUs through r. They need not be 0..n-1: a CPU
// taken offline (SMT siblings under nosmt, on machines that number them
// next to each other) leaves a gap.
func Online(r sysfs.Reader) (cpuset.Set, error) {
	online, err := r.Read(path.Join(cpuDir, "online"))
	if err != nil {
		return nil, fmt.Errorf("read online CPUs: %w", err)
	}
	ids, err := cpuset.Parse(online)
	if err != nil {
		return nil, fmt.Errorf("online CPUs %q: %w", online, err)
	}
	return ids, nil
}

// Where the CPUs and the NUMA nodes are, relative to the sysfs root.
const (
	cpuDir  = "devices/system/cpu"
	nodeDir = "devices/system/node"
)

// numaNodes maps CPUs to NUMA nodes; a kernel without NUMA has no node
// directory and every CPU is on node 0.
func numaNodes(r sysfs.Reader) (map[int]int, error) {
	m := map[int]int{}
	names, err := r.List(nodeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read NUMA nodes: %w", err)
	}
	for _, name := range names {
		n, err := strconv.Atoi(strings.TrimPrefix(name, "node"))
		if err != nil || !strings.HasPrefix(name, "node") {
			continue
		}
		list, err := r.Read(path.Join(nodeDir, name, "cpulist"))
		if err != nil {
			return nil, fmt.Errorf("NUMA node %d: %w", n, err)
		}
		if strings.TrimSpace(list) == "" {
			// A node of memory only (CXL, a GPU's or PMEM's memory
			// onlined as a node, or every CPU of it offline): no CPU
			// to map, and no placement lands there.
			continue
		}
		set, err := cpuset.Parse(list)
		if err != nil {
			return nil, fmt.Errorf("NUMA node %d cpulist: %w", n, err)
		}
		for _, c := range set {
			m[c] = n
		}
	}
	return m, nil
}

func readInt(r sysfs.Reader, p string) (int, error) {
	s, err := r.Read(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// Within is the topology of the CPUs of allowed alone (nil allowed: all):
// the CPUs a process may be pinned to where its affinity or its cgroup's
// cpuset leaves it fewer than are online.
func (t Topology) Within(allowed cpuset.Set) Topology {
	if allowed == nil {
		return t
	}
	var out Topology
	for _, c := range t.CPUs {
		if allowed.Contains(c.ID) {
			out.CPUs = append(out.CPUs, c)
		}
	}
	return out
}

// Nodes is the number of NUMA nodes with online CPUs.
func (t Topology) Nodes() int {
	seen := map[int]bool{}
	for _, c := range t.CPUs {
		seen[c.Node] = true
	}
	return len(seen)
}

// Placement names, relative to a reference CPU set (the peer process's).
const (
	None      = "none"
	SameNUMA  = "same-numa"
	OtherNUMA = "other-numa"
	SameCore  = "same-core"
	OtherCore = "other-core"
)

// Names lists the placement names Resolve takes besides a CPU list.
var Names = []string{None, SameNUMA, OtherNUMA, SameCore, OtherCore}

// ErrNotPossible is wrapped by Resolve when the machine (this one, or a
// cluster node) has no CPU that fits the name (one NUMA node, no SMT):
// the placement cannot be told apart from another there.
var ErrNotPossible = errors.New("placement not possible")

// IsName reports whether s is a placement name (not a CPU list).
func IsName(s string) bool {
	for _, n := range Names {
		if s == n {
			return true
		}
	}
	return false
}

// Resolve turns a placement into CPUs, relative to ref (the CPUs of the
// process it is placed against; its first CPU where ref has several):
// same-numa, the other CPUs of ref's NUMA node; other-numa, the CPUs of
// the next NUMA node; same-core, ref's SMT siblings; other-core, the CPUs
// of ref's NUMA node on other physical cores. A CPU list is taken as is
// (each CPU must be online). none gives nil: the scheduler decides.
func (t Topology) Resolve(name string, ref cpuset.Set) (cpuset.Set, error) {
	if name == None || name == "" {
		return nil, nil
	}
	if !IsName(name) {
		set, err := cpuset.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("placement %q: not one of %s nor a CPU list: %w", name, strings.Join(Names, ", "), err)
		}
		for _, c := range set {
			if _, ok := t.cpu(c); !ok {
				return nil, fmt.Errorf("placement %q: CPU %d is not online", name, c)
			}
		}
		return set, nil
	}
	if len(ref) == 0 {
		return nil, fmt.Errorf("placement %s: needs the peer's CPUs to be placed against", name)
	}
	r, ok := t.cpu(ref[0])
	if !ok {
		return nil, fmt.Errorf("placement %s: reference CPU %d is not online", name, ref[0])
	}
	// "other" means other than every reference CPU's core or node, not
	// only the first's: a peer pinned to CPUs 0 and 1 must not get CPU
	// 1's SMT sibling as "other-core".
	refCores, refNodes := map[physCore]bool{}, map[int]bool{}
	for _, id := range ref {
		if c, ok := t.cpu(id); ok {
			refCores[c.physCore()], refNodes[c.Node] = true, true
		}
	}
	var out cpuset.Set
	switch name {
	case SameNUMA:
		out = t.filter(func(c CPU) bool { return c.Node == r.Node && !ref.Contains(c.ID) })
	case OtherNUMA:
		out = t.filter(func(c CPU) bool { return c.Node == t.nextNode(r.Node) && !refNodes[c.Node] })
	case SameCore:
		out = t.filter(func(c CPU) bool { return c.physCore() == r.physCore() && !ref.Contains(c.ID) })
	case OtherCore:
		out = t.filter(func(c CPU) bool { return c.Node == r.Node && !refCores[c.physCore()] })
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s of CPU %d: %s", ErrNotPossible, name, r.ID, t.why(name))
	}
	return out, nil
}

func (t Topology) why(name string) string {
	switch name {
	case OtherNUMA:
		return fmt.Sprintf("this machine has %d NUMA node(s)", t.Nodes())
	case SameCore:
		return "no SMT sibling (one thread per core)"
	}
	return "no other CPU there"
}

func (t Topology) cpu(id int) (CPU, bool) {
	for _, c := range t.CPUs {
		if c.ID == id {
			return c, true
		}
	}
	return CPU{}, false
}

func (t Topology) filter(keep func(CPU) bool) cpuset.Set {
	var s cpuset.Set
	for _, c := range t.CPUs {
		if keep(c) {
			s = append(s, c.ID)
		}
	}
	sort.Ints(s)
	return s
}

// nextNode is the NUMA node after n (wrapping), among nodes with CPUs.
func (t Topology) nextNode(n int) int {
	var nodes []int
	seen := map[int]bool{}
	for _, c := range t.CPUs {
		if !seen[c.Node] {
			seen[c.Node] = true
			nodes = append(nodes, c.Node)
		}
	}
	sort.Ints(nodes)
	for _, x := range nodes {
		if x > n {
			return x
		}
	}
	return nodes[0]
}
