package inspect

import (
	"slices"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/topology"
)

// cpus reads the online CPUs, their NUMA nodes and physical cores
// (internal/topology, sys/devices/system/{cpu,node}).
func (r reader) cpus() {
	t, err := topology.Read(r.path("sys"))
	if err != nil {
		r.unknown("cpus", err)
		return
	}
	r.in.CPUs, r.in.NUMANodes = len(t.CPUs), t.Nodes()
	ids := make(cpuset.Set, len(t.CPUs))
	nodes := map[int]cpuset.Set{}
	var cores cpuset.Set
	seen := map[[3]int]bool{}
	for i, c := range t.CPUs {
		ids[i] = c.ID
		nodes[c.Node] = append(nodes[c.Node], c.ID)
		// A physical core by its siblings' list where sysfs has one, else
		// by package and core id (as topology tells cores apart).
		key := [3]int{c.Package, c.Core, -1}
		if len(c.Siblings) > 0 {
			key = [3]int{-1, -1, c.Siblings[0]}
		}
		if !seen[key] {
			seen[key] = true
			cores = append(cores, c.ID)
		}
	}
	r.in.OnlineCPUs, r.in.CoreCPUs = ids.String(), cores.String()
	r.in.IsolatedCPUs = r.bannedCPUs()
	r.in.NodeCPUs = map[int]string{}
	for n, set := range nodes {
		r.in.NodeCPUs[n] = set.String()
	}
}

// bannedCPUs lists the CPUs irqbalance keeps interrupts off, and so
// irq-spread too: those isolated from the scheduler (isolcpus=) and the
// adaptive-tick ones (nohz_full=), both CPU lists in sysfs. Either file
// is absent on kernels built without the feature, and nohz_full reads
// "(null)" or nothing on some kernels where none was asked for: none of
// its CPUs then.
func (r reader) bannedCPUs() string {
	var out cpuset.Set
	for _, f := range []string{"isolated", "nohz_full"} {
		s, err := r.read("sys/devices/system/cpu/" + f)
		if err != nil || s == "" || s == "(null)" {
			continue
		}
		set, err := cpuset.Parse(s)
		if err != nil {
			continue
		}
		out = append(out, set...)
	}
	if len(out) == 0 {
		return ""
	}
	slices.Sort(out)
	return cpuset.Set(slices.Compact(out)).String()
}
