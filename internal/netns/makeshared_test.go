package netns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountCall is one mount(2) of makeShared, as `mount` would name it.
func mountCall(source, target string, flags uintptr) string {
	what := map[uintptr]string{
		unix.MS_SHARED | unix.MS_REC:  "rshared",
		unix.MS_BIND | unix.MS_REC:    "rbind",
		unix.MS_PRIVATE | unix.MS_REC: "rprivate",
	}[flags]
	if what == "" {
		what = fmt.Sprintf("flags %#x", flags)
	}
	return strings.Join(strings.Fields(what+" "+source+" "+target), " ")
}

// TestMakeSharedDoesWhatIproute2Does: before a namespace is bound under
// Dir, Dir is made a shared mount, first made a mount point of its own
// (bind mount of itself, made private, then shared) when it is none, as
// iproute2's netns_add does; cnibench skipped it, so a namespace bound
// under a Dir that was no shared mount did not propagate to other mount
// namespaces (and a copy there kept it alive after Delete).
func TestMakeSharedDoesWhatIproute2Does(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		fail  map[int]error // the Nth call (0-based) fails so
		calls []string
		err   string
	}{
		{"already a mount point", nil, []string{"rshared " + dir}, ""},
		{"no mount point yet", map[int]error{0: unix.EINVAL},
			[]string{"rshared " + dir, "rbind " + dir + " " + dir, "rprivate " + dir + " " + dir, "rshared " + dir}, ""},
		{"still refused after the upgrade", map[int]error{0: unix.EINVAL, 3: unix.EINVAL},
			[]string{"rshared " + dir, "rbind " + dir + " " + dir, "rprivate " + dir + " " + dir, "rshared " + dir}, "mount --make-shared"},
		{"not permitted", map[int]error{0: unix.EPERM}, []string{"rshared " + dir}, "mount --make-shared"},
		{"bind refused", map[int]error{0: unix.EINVAL, 1: unix.EPERM}, []string{"rshared " + dir, "rbind " + dir + " " + dir}, "mount --bind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			mount := func(source, target, fstype string, flags uintptr, data string) error {
				calls = append(calls, mountCall(source, target, flags))
				return tc.fail[len(calls)-1]
			}
			err := makeShared(dir, mount)
			if strings.Join(calls, "; ") != strings.Join(tc.calls, "; ") {
				t.Errorf("mounts:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(tc.calls, "\n"))
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("makeShared = %v, want %q", err, tc.err)
			}
			if tc.err != "" && !errors.Is(err, tc.fail[len(calls)-1]) {
				t.Errorf("makeShared = %v, want it to wrap the mount's error", err)
			}
		})
	}
}

// TestKernelAddMakesDirShared: after Add, Dir is a mount point in a
// shared peer group, as after `ip netns add`.
func TestKernelAddMakesDirShared(t *testing.T) {
	requireRoot(t)
	scratch(t)
	dir, err := filepath.EvalSymlinks(Dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	// mountinfo(5): ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - ...
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[4] != dir {
			continue
		}
		tags := strings.Join(f[6:], " ")
		if !strings.Contains(tags[:strings.Index(tags+" -", " -")], "shared:") {
			t.Errorf("%s is a mount point but not shared: %s", dir, line)
		}
		return
	}
	t.Errorf("%s is no mount point after Add", dir)
}
