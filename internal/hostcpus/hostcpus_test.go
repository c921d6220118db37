package hostcpus

import (
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// The cpuset file is found for each layout: a hybrid machine's v1
// hierarchy, a container's v1 mount rooted at its own cgroup, cgroup v2
// walking up to the nearest cgroup with the controller; an empty v1 file
// and a machine without any cpuset are errors, not "no CPU".
func TestCgroupCPUs(t *testing.T) {
	v1 := &mountinfo.Info{Mountpoint: "/sys/fs/cgroup/cpuset", Root: "/", FSType: "cgroup", VFSOptions: "rw,cpuset"}
	v1cpu := &mountinfo.Info{Mountpoint: "/sys/fs/cgroup/cpu", Root: "/", FSType: "cgroup", VFSOptions: "rw,cpu,cpuacct"}
	v2 := &mountinfo.Info{Mountpoint: "/sys/fs/cgroup", Root: "/", FSType: "cgroup2", VFSOptions: "rw,nsdelegate"}
	hybrid := []procfs.Cgroup{{HierarchyID: 3, Controllers: []string{"cpuset"}, Path: "/"}, {HierarchyID: 0, Path: "/"}}
	pod := []procfs.Cgroup{{HierarchyID: 2, Controllers: []string{"cpuset"}, Path: "/kubepods/pod1/c1"}}
	session := []procfs.Cgroup{{HierarchyID: 0, Path: "/user.slice/user-0.slice/session-1.scope"}}
	for _, c := range []struct {
		name   string
		cgs    []procfs.Cgroup
		mounts []*mountinfo.Info
		files  map[string]string
		want   string // "" for an error
	}{
		{"hybrid", hybrid, []*mountinfo.Info{v1cpu, v1, v2}, map[string]string{
			"/sys/fs/cgroup/cpuset/cpuset.effective_cpus": "0-1\n", "/sys/fs/cgroup/cpuset.cpus.effective": "7"}, "0-1"},
		{"v1 container", pod, []*mountinfo.Info{{Mountpoint: "/sys/fs/cgroup/cpuset", Root: "/kubepods/pod1/c1", FSType: "cgroup", VFSOptions: "rw,cpuset"}},
			map[string]string{"/sys/fs/cgroup/cpuset/cpuset.effective_cpus": "2-3"}, "2-3"},
		{"v1 path", pod, []*mountinfo.Info{v1}, map[string]string{"/sys/fs/cgroup/cpuset/kubepods/pod1/c1/cpuset.effective_cpus": "1,3"}, "1,3"},
		{"v2 nearest", session, []*mountinfo.Info{v2}, map[string]string{
			"/sys/fs/cgroup/user.slice/cpuset.cpus.effective": "2-3", "/sys/fs/cgroup/cpuset.cpus.effective": "0-7"}, "2-3"},
		{"v2 root", session, []*mountinfo.Info{v2}, map[string]string{"/sys/fs/cgroup/cpuset.cpus.effective": "0-7"}, "0-7"},
		{"v2 none", session, []*mountinfo.Info{v2}, nil, ""},
		{"v1 empty", hybrid, []*mountinfo.Info{v1, v2}, map[string]string{"/sys/fs/cgroup/cpuset/cpuset.effective_cpus": "\n"}, ""},
		{"v1 unmounted", hybrid, []*mountinfo.Info{v1cpu}, nil, ""},
	} {
		read := func(p string) ([]byte, error) {
			if v, ok := c.files[p]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		}
		got, err := cgroupCPUs(c.cgs, c.mounts, read)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: %v, want an error", c.name, got)
		case c.want != "" && (err != nil || got.String() != c.want):
			t.Errorf("%s: %v %v, want %s", c.name, got, err, c.want)
		}
	}
}

// On this machine the cgroup's cpuset holds this process's affinity, and
// a child narrowed by taskset to one CPU still finds the whole cpuset, as
// what it may pin to and as the machine's CPUs (the case Allowed and
// Machine exist for).
func TestCgroupCPUsHere(t *testing.T) {
	got, err := CgroupCPUs()
	if err != nil {
		// Broken where a cgroup v2 or v1 cpuset hierarchy is mounted;
		// missing where none is (a bare chroot).
		mounts, _ := mountinfo.GetMounts(func(m *mountinfo.Info) (bool, bool) {
			return !(m.FSType == "cgroup2" || m.FSType == "cgroup" && strings.Contains(","+m.VFSOptions+",", ",cpuset,")), false
		})
		if len(mounts) > 0 {
			t.Fatalf("a cgroup cpuset hierarchy is mounted at %s, but: %v", mounts[0].Mountpoint, err)
		}
		t.Skipf("no cgroup cpuset hierarchy is mounted here: %v", err)
	}
	a, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if out := a.Outside(got); out != nil {
		t.Errorf("affinity %v has CPUs %v outside the cgroup's cpuset %v", a, out, got)
	}
	if on, err := Online(); err != nil || got.Outside(on) != nil {
		t.Errorf("online CPUs %v (%v) do not hold the cgroup's cpuset %v", on, err, got)
	}
	if len(a) < 2 {
		t.Skipf("one CPU here (%v): nothing to narrow", a)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skipf("no taskset: %v", err)
	}
	cmd := exec.Command(taskset, "-c", a[:1].String(), os.Args[0], "-test.run=^TestCgroupCPUsChild$")
	cmd.Env = append(os.Environ(), "CNIBENCH_CPUSET_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "allowed="+got.String()+" ") || !strings.Contains(string(out), "machine="+got.String()+"\n") {
		t.Errorf("child under taskset -c %v said %q, want allowed and machine %v", a[:1], out, got)
	}
}

// TestCgroupCPUsChild prints what Allowed finds in a child process.
func TestCgroupCPUsChild(t *testing.T) {
	if os.Getenv("CNIBENCH_CPUSET_CHILD") == "" {
		t.Skip("run by TestCgroupCPUsHere")
	}
	s, what, err := Allowed()
	a, _ := Affinity()
	t.Logf("allowed=%v affinity=%v (%s) %v", s, a, what, err)
	os.Stdout.WriteString("allowed=" + s.String() + " affinity=" + a.String() + " machine=" + Machine().String() + "\n")
}

// This process's affinity is a sorted CPU list of as many CPUs as Go's
// runtime counts (it reads the same affinity).
func TestAffinity(t *testing.T) {
	a, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != runtime.NumCPU() {
		t.Errorf("affinity %v: want %d CPUs", a, runtime.NumCPU())
	}
	if back, err := cpuset.Parse(a.String()); err != nil || back.String() != a.String() {
		t.Errorf("affinity %v is not a sorted CPU list: %v %v", a, back, err)
	}
}
