package netns

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// vethIn creates a veth pair DEV/DEV-p inside namespace ns.
func vethIn(t *testing.T, ns, dev string) {
	t.Helper()
	h, err := Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = dev
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: dev + "p"}); err != nil {
		t.Fatalf("veth in %s: %v", ns, err)
	}
}

// rpsFile is rx-0's RPS mask of dev, relative to the sysfs root.
func rpsFile(dev string) string { return filepath.Join("class/net", dev, "queues/rx-0/rps_cpus") }

// readMask reads a hex CPU mask (rps_cpus) of namespace ns.
func readMask(t *testing.T, ns, p string) uint64 {
	t.Helper()
	var v uint64
	err := WithSysfs(ns, Read, func(root string) error {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return err
		}
		v, err = strconv.ParseUint(strings.ReplaceAll(strings.TrimSpace(string(b)), ",", ""), 16, 64)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func writeFile(ns string, access Access, p, v string) error {
	return WithSysfs(ns, access, func(root string) error {
		return os.WriteFile(filepath.Join(root, p), []byte(v), 0)
	})
}

func requireRPS(t *testing.T, ns, dev string) {
	t.Helper()
	err := WithSysfs(ns, Read, func(root string) error {
		_, err := os.Stat(filepath.Join(root, rpsFile(dev)))
		return err
	})
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("skipped: a veth has no queues/rx-0/rps_cpus (kernel built without CONFIG_RPS)")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A namespace's own sysfs is read and written through WithSysfs; a
// device of the same name in another namespace and the host keep theirs.
func TestWithSysfsWritesOnlyThatNamespace(t *testing.T) {
	requireRoot(t)
	a, b := scratch(t), scratch(t)
	const dev = "cnbt0"
	vethIn(t, a, dev)
	vethIn(t, b, dev)
	requireRPS(t, a, dev)
	if got := readMask(t, a, rpsFile(dev)); got != 0 {
		t.Fatalf("new veth has rps_cpus %x, want 0", got)
	}
	if err := writeFile(a, Write, rpsFile(dev), "1"); err != nil {
		t.Fatal(err)
	}
	if got := readMask(t, a, rpsFile(dev)); got != 1 {
		t.Errorf("rps_cpus in %s = %x after writing 1", a, got)
	}
	if got := readMask(t, b, rpsFile(dev)); got != 0 {
		t.Errorf("rps_cpus of the same-named device in %s = %x: the write reached another namespace", b, got)
	}
	if _, err := os.Stat(filepath.Join("/sys", "class/net", dev)); err == nil {
		t.Errorf("the host's /sys shows %s: the mount leaked", dev)
	}
	// The same through a path reference, as the agent names pods.
	if err := writeFile(Path(a), Write, rpsFile(dev), "0"); err != nil {
		t.Fatal(err)
	}
	if got := readMask(t, Path(a), rpsFile(dev)); got != 0 {
		t.Errorf("rps_cpus through %s = %x after writing 0", Path(a), got)
	}
}

// holdReadOnlySysfs mounts ns's sysfs read-only in a private mount
// namespace of a thread that stays until the test ends, as a container
// runtime's first, read-only mount: the namespace's one sysfs superblock
// is then read-only for every later mount.
func holdReadOnlySysfs(t *testing.T, ns string) {
	t.Helper()
	ready, done := make(chan error, 1), make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		h, err := netns.GetFromPath(Path(ns))
		if err == nil {
			err = netns.Set(h)
			h.Close()
		}
		if err == nil {
			err = unix.Unshare(unix.CLONE_NEWNS)
		}
		if err == nil {
			err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		}
		if err == nil {
			err = unix.Mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|sysfsFlags, "")
		}
		ready <- err
		<-done
	}()
	if err := <-ready; err != nil {
		t.Fatalf("read-only sysfs of %s: %v", ns, err)
	}
}

// A pod's sysfs superblock mounted read-only by its runtime: Read leaves
// it so (writes fail with EROFS), Write makes it writable.
func TestWithSysfsWriteRemountsReadOnlySuperblock(t *testing.T) {
	requireRoot(t)
	ns := scratch(t)
	// First, as the runtime's: a sysfs mounted before would leave a
	// read-write superblock behind until its thread's mounts are gone.
	holdReadOnlySysfs(t, ns)
	const dev = "cnbt0"
	vethIn(t, ns, dev)
	requireRPS(t, ns, dev)
	if err := writeFile(ns, Read, rpsFile(dev), "1"); !errors.Is(err, unix.EROFS) {
		t.Fatalf("write with Read access to a read-only sysfs: %v, want EROFS (the test did not make it read-only)", err)
	}
	if err := writeFile(ns, Write, rpsFile(dev), "1"); err != nil {
		t.Fatalf("write with Write access: %v", err)
	}
	if got := readMask(t, ns, rpsFile(dev)); got != 1 {
		t.Errorf("rps_cpus = %x after writing 1", got)
	}
}

// nsIDs returns the network and mount namespaces of the calling thread.
func nsIDs() (string, error) {
	n, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		return "", err
	}
	m, err := os.Readlink("/proc/thread-self/ns/mnt")
	return n + " " + m, err
}

// No goroutine ever runs on a thread left in a foreign namespace: while
// many switches happen, every other goroutine sees the process's own
// namespaces, and each thread that switched ends with its goroutine.
func TestThreadsNeverReturnInForeignNamespace(t *testing.T) {
	requireRoot(t)
	ns := scratch(t)
	home, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	mnt, _ := os.Readlink("/proc/self/ns/mnt")
	home += " " + mnt

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	checks := 0
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := nsIDs()
				mu.Lock()
				checks++
				if err == nil && got != home && len(bad) < 5 {
					bad = append(bad, got)
				}
				mu.Unlock()
				runtime.Gosched()
			}
		})
	}
	var tids []int
	for i := range 200 {
		inside := func() error {
			got, err := nsIDs()
			if err == nil && got == home {
				err = errors.New("fn runs in the process's own namespaces")
			}
			tids = append(tids, unix.Gettid())
			return err
		}
		if i%2 == 0 {
			err = Do(ns, inside)
		} else {
			err = WithSysfs(ns, Read, func(string) error { return inside() })
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d checks; goroutines ran in foreign namespaces %v (process: %s)", checks, bad, home)
	}
	// A locked goroutine that exits takes its thread with it; the runtime
	// does that right after fn's result is sent, so wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for _, tid := range tids {
		task := filepath.Join("/proc/self/task", strconv.Itoa(tid))
		for {
			if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				n, _ := os.Readlink(filepath.Join(task, "ns/net"))
				t.Fatalf("thread %d that entered %s still exists (in %s)", tid, ns, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// roSysEnv marks the child of TestWithSysfsWriteReadOnlySysMount.
const roSysEnv = "CNIBENCH_TEST_RO_SYS"

// The process's own /sys mounted read-only, as in a node agent's
// container: Read leaves it so, Write reaches the same sysfs writable.
// The test runs itself again in fresh network and mount namespaces
// (unshare(1)) whose /sys is a read-write sysfs bind-remounted
// read-only, and writes its loopback device's RPS mask.
func TestWithSysfsWriteReadOnlySysMount(t *testing.T) {
	if os.Getenv(roSysEnv) != "" {
		roSysChild(t)
		return
	}
	requireRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("skipped: needs unshare(1) to make a read-only /sys apart from the host")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--net", "--propagation", "private", "sh", "-ec",
		`mount -t sysfs sysfs /sys; mount -o remount,bind,ro /sys; exec "$0" -test.run '^TestWithSysfsWriteReadOnlySysMount$' -test.v`, self)
	runChild(t, roSysEnv, cmd)
}

// runChild runs cmd, which runs this test binary again (in namespaces
// of its own) with the environment variable env set, and passes the
// child's verdict on.
func runChild(t *testing.T, env string, cmd *exec.Cmd) {
	t.Helper()
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("child skipped:\n%s", out)
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child did not run the test:\n%s", out)
	}
}

func roSysChild(t *testing.T) {
	if !readOnly("/sys") {
		t.Fatal("child's /sys is not read-only")
	}
	lo := rpsFile("lo")
	if err := writeFile("", Read, lo, "1"); !errors.Is(err, unix.EROFS) {
		t.Fatalf("write with Read access: %v, want EROFS", err)
	}
	if err := writeFile("", Write, lo, "1"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.Skip("skipped: lo has no rps_cpus (kernel built without CONFIG_RPS)")
		}
		t.Fatalf("write with Write access: %v", err)
	}
	if got := readMask(t, "", lo); got != 1 {
		t.Errorf("lo's rps_cpus = %x after writing 1", got)
	}
	if !readOnly("/sys") {
		t.Error("the write left the process's /sys writable")
	}
}
