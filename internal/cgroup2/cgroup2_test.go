package cgroup2

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"
)

// own finds the cgroup on a unified host, a hybrid one, in a container
// with a cgroup namespace of its own and in one without (its cgroup
// mounted as the mount's root), and falls back to the mount for a path it
// cannot see.
func TestOwnUnderMounts(t *testing.T) {
	m := func(point, root string) *mountinfo.Info {
		return &mountinfo.Info{Mountpoint: point, Root: root, FSType: "cgroup2"}
	}
	v2 := func(p string) []procfs.Cgroup {
		return []procfs.Cgroup{{HierarchyID: 4, Controllers: []string{"cpuset"}, Path: "/x"}, {HierarchyID: 0, Path: p}}
	}
	for _, c := range []struct {
		name   string
		cgs    []procfs.Cgroup
		mounts []*mountinfo.Info
		dirs   []string
		want   string
		bad    string
	}{
		{"unified host", v2("/user.slice/session-3.scope"), []*mountinfo.Info{m("/sys/fs/cgroup", "/")},
			[]string{"/sys/fs/cgroup/user.slice/session-3.scope"}, "/sys/fs/cgroup/user.slice/session-3.scope", ""},
		{"hybrid host", v2("/user.slice"), []*mountinfo.Info{m("/sys/fs/cgroup/unified", "/")},
			[]string{"/sys/fs/cgroup/unified/user.slice"}, "/sys/fs/cgroup/unified/user.slice", ""},
		{"container, own namespace", v2("/"), []*mountinfo.Info{m("/sys/fs/cgroup", "/")}, []string{"/sys/fs/cgroup"}, "/sys/fs/cgroup", ""},
		{"container, host namespace", v2("/system.slice/docker-1.scope"), []*mountinfo.Info{m("/sys/fs/cgroup", "/system.slice/docker-1.scope")},
			[]string{"/sys/fs/cgroup"}, "/sys/fs/cgroup", ""},
		{"moved to a child cgroup", v2("/system.slice/docker-1.scope/init"), []*mountinfo.Info{m("/sys/fs/cgroup", "/system.slice/docker-1.scope")},
			[]string{"/sys/fs/cgroup/init"}, "/sys/fs/cgroup/init", ""},
		{"path not visible", v2("/../elsewhere"), []*mountinfo.Info{m("/sys/fs/cgroup", "/")}, nil, "/sys/fs/cgroup", ""},
		{"no v2 line", []procfs.Cgroup{{HierarchyID: 3, Controllers: []string{"cpu"}, Path: "/a"}}, []*mountinfo.Info{m("/sys/fs/cgroup", "/")}, nil, "", "no cgroup v2 line"},
		{"relative", v2("a"), []*mountinfo.Info{m("/sys/fs/cgroup", "/")}, nil, "", "not absolute"},
	} {
		got, err := own(c.cgs, c.mounts, func(d string) bool { return slices.Contains(c.dirs, d) })
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%s: %q, %v; want an error containing %q", c.name, got, err, c.bad)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct{ p, root, want string }{
		{"/a/b", "/", "/a/b"}, {"/docker/1", "/docker/1", "/"}, {"/docker/1/x", "/docker/1", "/x"},
		{"/docker/10", "/docker/1", "/docker/10"}, {"/", "/", "/"},
	} {
		if got := Within(c.p, c.root); got != c.want {
			t.Errorf("Within(%q, %q) = %q, want %q", c.p, c.root, got, c.want)
		}
	}
}

// TestOwn reads this machine's own cgroup; it needs a cgroup v2 mount,
// which a machine without one (pure cgroup v1) lacks: skipped there.
func TestOwn(t *testing.T) {
	if _, err := Mount(); err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	dir, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/cgroup.procs"); err != nil {
		t.Fatalf("Own() = %s, not a cgroup: %v", dir, err)
	}
}
