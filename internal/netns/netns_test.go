package netns

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create network namespaces")
	}
}

func scratch(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := "cnb-t" + hex.EncodeToString(b) + "-ns"
	if err := Add(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Delete(name); err != nil {
			t.Error(err)
		}
		if Exists(name) {
			t.Errorf("%s left behind", name)
		}
	})
	return name
}

// WithSysfs must show the namespace's own devices, and leave no mount
// visible to the rest of the process.
func TestWithSysfsSeesNamespaceDevices(t *testing.T) {
	requireRoot(t)
	ns := scratch(t)
	h, err := Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "cnbdummy0"
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "cnbdummy1"}); err != nil {
		t.Fatalf("veth in scratch namespace: %v", err)
	}
	var seen bool
	err = WithSysfs(ns, Read, func(root string) error {
		_, err := os.Stat(filepath.Join(root, "class/net/cnbdummy0"))
		seen = err == nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Error("namespace sysfs does not show the namespace's device")
	}
	if _, err := os.Stat("/sys/class/net/cnbdummy0"); err == nil {
		t.Error("host /sys shows the namespace's device: the mount leaked")
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Count(string(mounts), " /sys ") > 1 {
		t.Errorf("extra /sys mount visible to the process:\n%s", mounts)
	}
}

func TestDeleteIsIdempotent(t *testing.T) {
	requireRoot(t)
	if err := Delete("cnb-tnonexistent-ns"); err != nil {
		t.Fatalf("deleting a missing namespace: %v", err)
	}
}

func TestDumpRetriesInterrupted(t *testing.T) {
	calls := 0
	v, err := Dump(func() (int, error) {
		calls++
		if calls < 3 {
			return -1, netlink.ErrDumpInterrupted
		}
		return 42, nil
	})
	if v != 42 || err != nil || calls != 3 {
		t.Errorf("Dump = %d, %v after %d calls; want 42, nil after 3", v, err, calls)
	}
	calls = 0
	_, err = Dump(func() (int, error) { calls++; return 0, netlink.ErrDumpInterrupted })
	if !errors.Is(err, netlink.ErrDumpInterrupted) || calls != dumpTries {
		t.Errorf("always interrupted: %v after %d calls", err, calls)
	}
	other := errors.New("boom")
	calls = 0
	if _, err := Dump(func() (int, error) { calls++; return 0, other }); err != other || calls != 1 {
		t.Errorf("other error: %v after %d calls, want it at once", err, calls)
	}
}

// TestDoNeverParksTheLeaderInANamespace: after many Do calls the
// process's leader thread (what /proc/self/ns/net shows) is still in the
// namespace it started in. Go parks, rather than ends, the leader when a
// locked goroutine exits on it; the package's init keeps Do off it.
func TestDoNeverParksTheLeaderInANamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create network namespaces")
	}
	ns := scratch(t)
	var st0 unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &st0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = Do(ns, func() error { runtime.Gosched(); return nil })
			}
		}()
	}
	wg.Wait()
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &st); err != nil {
		t.Fatal(err)
	}
	if st.Ino != st0.Ino {
		t.Errorf("the leader thread is in namespace %d after Do, was %d", st.Ino, st0.Ino)
	}
}

// InitRef names nothing where the caller is in the init namespace and
// PID 1's (or, where PID 1 cannot be inspected, kthreadd's) namespace
// file inside another one; the cookie of a namespace
// differs from the host's and is stable.
func TestInitRefAndCookie(t *testing.T) {
	requireRoot(t)
	if InitRef("/proc") != "" {
		t.Skip("skipped: this process is not in PID 1's network namespace (a container)")
	}
	ns := scratch(t)
	var ref string
	if err := Do(ns, func() error { ref = InitRef("/proc"); return nil }); err != nil {
		t.Fatal(err)
	}
	if ref != "/proc/1/ns/net" && ref != "/proc/2/ns/net" {
		t.Errorf("inside %s: InitRef = %q, want PID 1's (or kthreadd's) namespace file", ns, ref)
	}
	host, err := Cookie("")
	if errors.Is(err, unix.ENOPROTOOPT) { // a kernel before 5.14: no such option
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	c1, err := Cookie(ns)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := Cookie(ns)
	if c1 == host || c1 != c2 {
		t.Errorf("cookies: host %d, %s %d then %d; want a stable cookie of its own", host, ns, c1, c2)
	}
}

// A failed Add leaves no file behind (iproute2's netns_add removes it
// too): a name that is no namespace would make every later delete of it
// fail and every entry into it fail with EINVAL. A name that exists is
// someone else's and is not touched.
func TestAddRemovesFileWhenBindFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cnb-x-node")
	boom := errors.New("mount: boom")
	if err := add(p, func(string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("add = %v, want the bind's error", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed add left %s (%v)", p, err)
	}
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := add(p, func(string) error { called = true; return nil }); !errors.Is(err, os.ErrExist) || called {
		t.Fatalf("add over an existing name = %v (bind called: %v), want ErrExist and no bind", err, called)
	}
	if _, err := os.Lstat(p); err != nil {
		t.Fatalf("add over an existing name removed it: %v", err)
	}
}

// remove unlinks a file that no namespace is bound to (a creation killed
// between the file and its bind mount leaves one) instead of failing on
// its umount; a missing file is already removed.
func TestRemovePlainFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cnb-x-node")
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if isNamespace(p) {
		t.Fatal("a plain file taken for a namespace")
	}
	if err := remove(p); err != nil {
		t.Fatalf("remove of a plain file: %v", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s left (%v)", p, err)
	}
	if err := remove(p); err != nil {
		t.Fatalf("remove of a missing file: %v", err)
	}
}

// TestHalfMadeNamespace: a file under /var/run/netns that no namespace is
// bound to (what a run killed inside `ip netns add` leaves) is no
// namespace (Exists is false, so a value journaled inside it counts as
// gone), is reported as half-made, and Delete removes it; a real one
// exists and is not half-made.
func TestHalfMadeNamespace(t *testing.T) {
	requireRoot(t)
	real := scratch(t)
	if !Exists(real) || HalfMade(real) {
		t.Fatalf("namespace %s: Exists %v, HalfMade %v; want true, false", real, Exists(real), HalfMade(real))
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	half := "cnb-t" + hex.EncodeToString(b) + "-half"
	if err := os.WriteFile(Path(half), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(Path(half)) })
	if Exists(half) || !HalfMade(half) {
		t.Errorf("plain file %s: Exists %v, HalfMade %v; want false, true", half, Exists(half), HalfMade(half))
	}
	if err := Do(half, func() error { return nil }); err == nil {
		t.Error("entering a plain file succeeded")
	}
	if err := Delete(half); err != nil {
		t.Fatalf("Delete of a half-made namespace: %v", err)
	}
	if _, err := os.Lstat(Path(half)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s left behind (%v)", half, err)
	}
}

// InInit proves the init namespace where InitRef's "" cannot tell (no
// PID 1 to compare with), and never holds inside another namespace.
func TestInInit(t *testing.T) {
	requireRoot(t)
	if InitRef("/proc") != "" {
		t.Skip("skipped: this process is not in PID 1's network namespace (a container)")
	}
	if _, err := os.Stat("/proc/1/ns/net"); err == nil && !InInit("/proc") {
		t.Error("in the init namespace: InInit = false")
	}
	ns := scratch(t)
	var in, inBlind bool
	if err := Do(ns, func() error { in, inBlind = InInit("/proc"), InInit(t.TempDir()); return nil }); err != nil {
		t.Fatal(err)
	}
	if in || inBlind {
		t.Errorf("inside %s: InInit = %v, with no PID 1 to see %v; want false", ns, in, inBlind)
	}
}
