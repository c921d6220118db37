package inspect

import (
	"context"
	"testing"
)

// The CPUs' NUMA nodes and physical cores: a queue's RPS CPUs come from
// its node (rfs), its interrupt goes to one thread of a physical core
// (irq-spread). CPU 0 and 2 are one core's threads, as are 1 and 3;
// each node has one core.
func TestInspectNodesAndCores(t *testing.T) {
	f := map[string]string{
		"sys/devices/system/cpu/online":         "0-3\n",
		"sys/devices/system/node/node0/cpulist": "0,2\n",
		"sys/devices/system/node/node1/cpulist": "1,3\n",
	}
	for _, c := range []struct{ id, core, siblings string }{{"0", "0", "0,2"}, {"1", "1", "1,3"}, {"2", "0", "0,2"}, {"3", "1", "1,3"}} {
		f["sys/devices/system/cpu/cpu"+c.id+"/topology/physical_package_id"] = "0\n"
		f["sys/devices/system/cpu/cpu"+c.id+"/topology/core_id"] = c.core + "\n"
		f["sys/devices/system/cpu/cpu"+c.id+"/topology/thread_siblings_list"] = c.siblings + "\n"
	}
	in := Inspect(context.Background(), Env{Root: tree(t, f)})
	if in.NUMANodes != 2 || in.NodeCPUs[0] != "0,2" || in.NodeCPUs[1] != "1,3" || in.CoreCPUs != "0-1" {
		t.Errorf("nodes %d %v, cores %q; want node 0 0,2, node 1 1,3, cores 0-1", in.NUMANodes, in.NodeCPUs, in.CoreCPUs)
	}
}

// The CPUs isolated from the scheduler are read (irq-spread leaves them
// out of its cores); a kernel without the file has none.
func TestInspectIsolatedCPUs(t *testing.T) {
	f := map[string]string{"sys/devices/system/cpu/online": "0-3\n", "sys/devices/system/cpu/isolated": "2-3\n"}
	for _, c := range []string{"0", "1", "2", "3"} {
		f["sys/devices/system/cpu/cpu"+c+"/topology/physical_package_id"] = "0\n"
		f["sys/devices/system/cpu/cpu"+c+"/topology/core_id"] = c + "\n"
	}
	if in := Inspect(context.Background(), Env{Root: tree(t, f)}); in.IsolatedCPUs != "2-3" {
		t.Errorf("isolated %q, want 2-3", in.IsolatedCPUs)
	}
}

// irqbalance bans nohz_full CPUs as well as isolated ones; only the
// isolated file was read, so irq-spread pinned queues to adaptive-tick
// CPUs. Both are read now and joined; nohz_full's "(null)" (none asked
// for) and a missing file add nothing.
func TestInspectNohzFullCPUs(t *testing.T) {
	for _, c := range []struct{ isolated, nohz, want string }{
		{"2-3", "3,5", "2-3,5"},
		{"", "4-5", "4-5"},
		{"2", "(null)", "2"},
		{"", "", ""},
	} {
		f := map[string]string{"sys/devices/system/cpu/online": "0-7\n"}
		for _, id := range []string{"0", "1", "2", "3", "4", "5", "6", "7"} {
			f["sys/devices/system/cpu/cpu"+id+"/topology/physical_package_id"] = "0\n"
			f["sys/devices/system/cpu/cpu"+id+"/topology/core_id"] = id + "\n"
		}
		if c.isolated != "" {
			f["sys/devices/system/cpu/isolated"] = c.isolated + "\n"
		}
		if c.nohz != "" {
			f["sys/devices/system/cpu/nohz_full"] = c.nohz + "\n"
		}
		if in := Inspect(context.Background(), Env{Root: tree(t, f)}); in.IsolatedCPUs != c.want {
			t.Errorf("isolated %q, nohz_full %q: got %q, want %q", c.isolated, c.nohz, in.IsolatedCPUs, c.want)
		}
	}
}
