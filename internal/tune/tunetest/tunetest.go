// Package tunetest builds throw-away server nodes for kernel tests of
// tune and cleanup: a node namespace with an underlay veth, a VXLAN device
// (when the kernel has it) and a host-side veth whose other end is eth0 of
// a pod namespace, like one Calico VXLAN pod on the paper's server node.
// Names are "cnb-<id>-node" and "cnb-<id>-pod0", id "t<random>", so a
// leftover is recognisable. New journals a bed's namespaces in
// journal.DefaultDir, as a run does: while the test lives `cnibench
// cleanup` leaves them alone, and once it is gone (kill -9, go test's
// timeout, where no t.Cleanup runs) plain `cnibench cleanup` removes
// them. Create journals through the caller's record, where the caller
// says (cleanup's crash tests: their own directory, which only they
// replay; a bed of theirs left by a killed test is swept by `cnibench
// cleanup --orphans`).
package tunetest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// Prefix is the project's name prefix.
const Prefix = "cnb-"

// SockFlowEntries is the host's global RFS sysctl.
const SockFlowEntries = "/proc/sys/net/core/rps_sock_flow_entries"

// Bed is one emulated server node with one pod.
type Bed struct {
	ID         string
	Node, Pod  string
	NodeIfaces []netns.Iface
	PodIfaces  []netns.Iface
}

var (
	idsMu sync.Mutex
	ids   []string
)

// NewID returns a fresh run ID "t<8 hex>" and remembers it for Leaks.
func NewID() string {
	b := make([]byte, 4)
	rand.Read(b)
	id := "t" + hex.EncodeToString(b)
	idsMu.Lock()
	ids = append(ids, id)
	idsMu.Unlock()
	return id
}

// Leaks lists namespaces and host links named after any ID this process
// got from NewID that still exist, for a TestMain to fail on: a kernel
// test must leave nothing behind, even when it fails.
func Leaks() []string {
	idsMu.Lock()
	defer idsMu.Unlock()
	var out []string
	links, _ := netlink.LinkList()
	for _, id := range ids {
		ns, _ := netns.List(Prefix + id)
		out = append(out, ns...)
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Name, Prefix+id) {
				out = append(out, "link "+l.Attrs().Name)
			}
		}
	}
	return out
}

// RequireKernel skips the test unless it runs as root on a kernel with
// RPS (the knobs under test).
func RequireKernel(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping kernel test: needs root to create network namespaces and write sysfs")
	}
	if _, err := os.Stat(SockFlowEntries); err != nil {
		t.Skipf("skipping kernel test: kernel without RPS/RFS (%v)", err)
	}
}

// GuardSockFlowEntries takes the machine's lock (LockMachine), records
// the host's rps_sock_flow_entries and, when the test ends (pass or
// fail), puts it back, failing the test if it had to, and unlocks.
func GuardSockFlowEntries(t testing.TB) string {
	t.Helper()
	LockMachine(t) // its cleanup runs last: after the restore
	before := ReadSockFlowEntries(t)
	t.Cleanup(func() {
		now, err := os.ReadFile(SockFlowEntries)
		if err == nil && strings.TrimSpace(string(now)) == before {
			return
		}
		if werr := os.WriteFile(SockFlowEntries, []byte(before), 0); werr != nil {
			t.Errorf("restore %s to %s: %v", SockFlowEntries, before, werr)
			return
		}
		t.Errorf("%s was %q at the end of the test, not %q (restored)", SockFlowEntries, strings.TrimSpace(string(now)), before)
	})
	return before
}

// machineLockWait bounds how long a kernel test waits for the machine's
// lock: another package's kernel test holds it for seconds, a real run
// for as long as it runs.
const machineLockWait = 10 * time.Minute

// LockMachine takes the machine's lock (journal.HostLockPath), as a run
// and a cleanup do, waiting for another holder up to machineLockWait (go
// test runs packages side by side), and lets go when the test ends. A
// kernel test that changes the machine's own values (rps_sock_flow_entries,
// the CPUs' idle limits) takes it, so that no run, cleanup or other test
// changes them meanwhile. Take it once per test: a second flock of one
// process is refused like another's.
func LockMachine(t testing.TB) {
	t.Helper()
	l, err := journal.WaitHost(journal.HostLockPath, machineLockWait)
	if err != nil {
		t.Fatalf("machine's lock: %v", err)
	}
	t.Cleanup(l.Release)
}

// HostJournal opens a journal for a test's changes of the machine's own
// values in journal.DefaultDir, as a run does, so that if the test is
// killed (kill -9, go test's timeout) `cnibench cleanup` finds it and puts
// the values back: a journal in t.TempDir() was never seen, and the host
// kept the test's values. It closes the journal when the test ends,
// failing the test if a change is still pending then. Hold the machine's
// lock (LockMachine) first.
func HostJournal(t testing.TB) *journal.Journal {
	t.Helper()
	id := NewID()
	j, err := journal.Open(journal.DefaultDir, id, Prefix)
	if err != nil {
		t.Fatalf("journal of test run %s: %v", id, err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Errorf("test run %s: %v", id, err)
		}
	})
	return j
}

// ReadSockFlowEntries returns the host's rps_sock_flow_entries.
func ReadSockFlowEntries(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(SockFlowEntries)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// OnlineCPUs returns the machine's online CPUs.
func OnlineCPUs(t testing.TB) cpuset.Set {
	t.Helper()
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	s, err := cpuset.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bedJournalDir is where New journals (journal.DefaultDir; this
// package's own test uses its own).
var bedJournalDir = journal.DefaultDir

// New creates a bed for a test, its namespaces journaled in
// journal.DefaultDir under the run ID id, and removes it when the test
// ends: before, a bed of a test killed by go test's timeout was unknown
// to `cnibench cleanup` but for --orphans. The journal closes last,
// failing the test if a namespace could not be removed.
func New(t testing.TB, id string) *Bed {
	t.Helper()
	j, err := journal.Open(bedJournalDir, id, Prefix)
	if err != nil {
		t.Fatalf("journal of test bed %s: %v", id, err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Errorf("test bed %s: %v", id, err)
		}
	})
	b, err := Create(id, func(o journal.Object) error { _, err := j.RecordObject(o); return err })
	t.Cleanup(func() {
		for _, ns := range []string{b.Pod, b.Node} {
			if err := netns.Delete(ns); err != nil {
				t.Errorf("remove test bed: %v", err)
			} else if err := j.RemovedNetns(ns); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Create builds a bed, calling record (if not nil) before each namespace
// is created, as a run journals objects. On error the returned Bed still
// names what may exist, for Destroy.
func Create(id string, record func(journal.Object) error) (*Bed, error) {
	b := &Bed{ID: id, Node: Prefix + id + "-node", Pod: Prefix + id + "-pod0"}
	for _, ns := range []string{b.Node, b.Pod} {
		if record != nil {
			if err := record(journal.Object{Kind: journal.KindNetns, Name: ns}); err != nil {
				return b, err
			}
		}
		if err := netns.Add(ns); err != nil {
			return b, err
		}
	}
	h, err := netns.Handle(b.Node)
	if err != nil {
		return b, err
	}
	defer h.Close()
	pod, err := netns.Handle(b.Pod)
	if err != nil {
		return b, err
	}
	defer pod.Close()
	// Underlay: its peer stays in the node, where the client node would be.
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth1"}, PeerName: "eth1p"}); err != nil {
		return b, fmt.Errorf("add underlay veth: %w", err)
	}
	b.NodeIfaces = append(b.NodeIfaces, netns.Iface{Netns: b.Node, Name: "eth1"})
	vx := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "vxlan.calico"}, VxlanId: 4096, Port: 4789}
	if err := h.LinkAdd(vx); err == nil {
		b.NodeIfaces = append(b.NodeIfaces, netns.Iface{Netns: b.Node, Name: "vxlan.calico"})
	}
	// Two receive queues on each end of the pod's veth: every queue must
	// be tuned, not just rx-0.
	v := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: "cali0", NumRxQueues: 2},
		PeerName:  "eth0", PeerNumRxQueues: 2, PeerNamespace: netlink.NsFd(pod.NsFd()),
	}
	if err := h.LinkAdd(v); err != nil {
		return b, fmt.Errorf("add pod veth: %w", err)
	}
	b.NodeIfaces = append(b.NodeIfaces, netns.Iface{Netns: b.Node, Name: "cali0"})
	b.PodIfaces = []netns.Iface{{Netns: b.Pod, Name: "eth0"}}
	return b, nil
}

// Destroy deletes the bed's namespaces (their devices go with them).
func (b *Bed) Destroy() error {
	if b == nil {
		return nil
	}
	var errs []error
	for _, ns := range []string{b.Pod, b.Node} {
		if err := netns.Delete(ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Ifaces returns node and pod devices.
func (b *Bed) Ifaces() []netns.Iface {
	return append(append([]netns.Iface{}, b.NodeIfaces...), b.PodIfaces...)
}
