package cgroup2

import (
	"os"
	"strings"
	"testing"
)

func TestParseUnified(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{in: "0::/user.slice/user-0.slice/session-3.scope\n", want: "/user.slice/user-0.slice/session-3.scope"},
		// hybrid: v1 controllers first, the unified line last
		{in: "12:cpuset:/\n11:memory:/user.slice\n1:name=systemd:/user.slice/x\n0::/user.slice/x\n", want: "/user.slice/x"},
		{in: "0::/\n", want: "/"},
		{in: "1:name=systemd:/x\n", bad: true},
		{in: "0::relative\n", bad: true},
		{in: "", bad: true},
		// a v1 hierarchy 0 with controllers is not the unified one
		{in: "0:cpu:/a\n", bad: true},
	} {
		got, err := ParseUnified([]byte(c.in))
		if c.bad {
			if err == nil {
				t.Errorf("ParseUnified(%q) = %q, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseUnified(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func FuzzParseUnified(f *testing.F) {
	f.Add([]byte("0::/user.slice\n"))
	f.Add([]byte("12:cpuset:/\n0::/\n"))
	f.Add([]byte("0::\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseUnified(data)
		if err == nil && !strings.HasPrefix(p, "/") {
			t.Fatalf("ParseUnified(%q) = %q: not absolute", data, p)
		}
	})
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
