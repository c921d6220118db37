package inspect

import (
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
	// Absent on kernels without CPU isolation support: none isolated.
	if iso, err := r.read("sys/devices/system/cpu/isolated"); err == nil {
		r.in.IsolatedCPUs = iso
	}
	r.in.NodeCPUs = map[int]string{}
	for n, set := range nodes {
		r.in.NodeCPUs[n] = set.String()
	}
}
