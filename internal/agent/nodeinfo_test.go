package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The node's CPU model and NUMA nodes come from the agent's node: its
// /proc/cpuinfo (under ProcRoot) and the host's sysfs through the
// session's FS. env.json of a kube run used to give the controller's,
// a laptop's CPU model and NUMA count as the server node's.
func TestNodeInfoCPUModelAndNUMA(t *testing.T) {
	root := t.TempDir()
	cpuinfo := "processor\t: 0\nmodel name\t: Node CPU @ 3.00GHz\n\nprocessor\t: 1\nmodel name\t: Node CPU @ 3.00GHz\n"
	if err := os.WriteFile(filepath.Join(root, "cpuinfo"), []byte(cpuinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := newMemFS()
	fs.vals[key("", "sysfs", "devices/system/cpu/online")] = "0-3"
	for cpu := range 4 {
		dir := fmt.Sprintf("devices/system/cpu/cpu%d/topology/", cpu)
		fs.vals[key("", "sysfs", dir+"physical_package_id")] = fmt.Sprint(cpu / 2)
		fs.vals[key("", "sysfs", dir+"core_id")] = fmt.Sprint(cpu % 2)
	}
	fs.vals[key("", "sysfs", "devices/system/node/node0/cpulist")] = "0-1"
	fs.vals[key("", "sysfs", "devices/system/node/node1/cpulist")] = "2-3"
	// A memory-only node (CXL) holds no CPU: not counted.
	fs.vals[key("", "sysfs", "devices/system/node/node2/cpulist")] = ""
	c, wait := session(t, Config{Run: "r8", FS: fs, ProcRoot: root, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.CPUModel != "Node CPU @ 3.00GHz" || info.NUMANodes != 2 {
		t.Errorf("CPU model %q, %d NUMA nodes; want the node's \"Node CPU @ 3.00GHz\" on 2", info.CPUModel, info.NUMANodes)
	}

	// Unreadable: blank and 0 (unknown), not a guess.
	c2, wait2 := session(t, Config{Run: "r9", FS: newMemFS(), ProcRoot: t.TempDir(), JournalDir: t.TempDir()})
	defer func() { c2.Close(); wait2() }()
	info, err = c2.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.CPUModel != "" || info.NUMANodes != 0 {
		t.Errorf("unreadable node: CPU model %q, %d NUMA nodes; want \"\" and 0", info.CPUModel, info.NUMANodes)
	}
}
