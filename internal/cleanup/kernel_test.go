package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/nsprocs"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// hostLink is the name of the host veth the "apply" helper creates: at most
// 15 characters with a 9-character run ID.
func hostLink(run string) string { return "cnb-" + run + "-h" }

// helperApply is a run on a real kernel: it makes a node and a pod, a host
// veth pair, starts sleeps in the pod (journaled), the node (not
// journaled: found by its namespace) and on the host (journaled), and
// applies rfs+. Ready line: pod, node and host sleep pids.
func helperApply(dir, run string) (string, func(), error) {
	j, err := journal.Open(dir, run, "cnb-")
	if err != nil {
		return "", nil, err
	}
	var undos []func()
	undo := func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
		j.Close()
	}
	record := func(o journal.Object) error { _, err := j.RecordObject(o); return err }
	bed, err := tunetest.Create(run, record)
	undos = append(undos, func() { bed.Destroy() })
	if err != nil {
		return "", undo, err
	}

	if err := record(journal.Object{Kind: journal.KindLink, Name: hostLink(run)}); err != nil {
		return "", undo, err
	}
	h, err := netns.Handle("")
	if err != nil {
		return "", undo, err
	}
	defer h.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hostLink(run)}, PeerName: "cnb-" + run + "-p"}
	if err := h.LinkAdd(veth); err != nil {
		return "", undo, fmt.Errorf("add host veth: %w", err)
	}
	undos = append(undos, func() { netlink.LinkDel(veth) })

	var pids []string
	for _, ns := range []string{bed.Pod, bed.Node, ""} {
		cmd := exec.Command("sleep", "600")
		if err := netns.Start(ns, nil, cmd); err != nil {
			return "", undo, err
		}
		undos = append(undos, func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		if ns != bed.Node {
			if err := record(journal.Object{Kind: journal.KindProcess, Netns: ns, Name: "sleep", PID: cmd.Process.Pid}); err != nil {
				return "", undo, err
			}
		}
	}

	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "", undo, err
	}
	cpus, err := cpuset.Parse(string(b))
	if err != nil {
		return "", undo, err
	}
	tu, _ := study.BuiltinTuning("rfs+")
	a, err := tune.Apply(j, tune.LocalFS{}, tu, tune.Target{NodeIfaces: bed.NodeIfaces, PodIfaces: bed.PodIfaces, CPUs: cpus, SoftIRQCore: -1})
	if err != nil {
		return "", undo, err
	}
	undos = append(undos, func() { a.Revert() })
	return fmt.Sprint(pids[0], " ", pids[1], " ", pids[2]), undo, nil
}

// checkFS reads every value back right after cleanup writes it, so the
// test sees namespace values restored before the namespaces go away.
type checkFS struct {
	tune.LocalFS
	mu   sync.Mutex
	back map[string]string
}

func (c *checkFS) Write(ns, kind, p, v string) error {
	err := c.LocalFS.Write(ns, kind, p, v)
	if err == nil {
		got, rerr := c.LocalFS.Read(ns, kind, p)
		if rerr != nil {
			got = "error: " + rerr.Error()
		}
		c.mu.Lock()
		c.back[ns+"|"+p] = got
		c.mu.Unlock()
	}
	return err
}

// pendingSets are the values the killed run's journal still holds to
// restore. They must include what the run was seen to change (pod's
// rx-1 rps_cpus, the host's RFS table): the test checks the restore of
// the journal's sets only, and so nothing of a journal that holds none.
// A host whose table already held rfs+'s 32768 (scaling.rst's value, and
// advise's) is not written, so not journaled.
func pendingSets(t *testing.T, path, pod, hostEntries string) []journal.Set {
	t.Helper()
	r, err := journal.ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	var sets []journal.Set
	for _, e := range r.Pending() {
		if e.Set != nil {
			sets = append(sets, *e.Set)
		}
	}
	wants := []journal.Set{{Netns: pod, Path: "class/net/eth0/queues/rx-1/rps_cpus"}}
	if hostEntries != "32768" {
		wants = append(wants, journal.Set{Path: tune.SockFlowEntriesPath})
	}
	for _, want := range wants {
		if !slices.ContainsFunc(sets, func(s journal.Set) bool { return s.Netns == want.Netns && s.Path == want.Path }) {
			t.Fatalf("the journal has no pending set of %q %s: %+v", want.Netns, want.Path, sets)
		}
	}
	return sets
}

// TestKernelCrashCleanup: a run applies rfs+ with a journal and is killed
// with SIGKILL; cleanup must restore every value, kill its processes and
// delete its namespaces and host link.
func TestKernelCrashCleanup(t *testing.T) {
	tunetest.RequireKernel(t)
	hostEntries := tunetest.GuardSockFlowEntries(t)
	dir := t.TempDir()
	run := tunetest.NewID()
	node, pod := "cnb-"+run+"-node", "cnb-"+run+"-pod0"
	t.Cleanup(func() { leftovers(t, run, node, pod) })

	h := startHelper(t, "apply", dir, run)
	var pids []nsprocs.Proc
	for _, f := range h.ready {
		pid, _ := strconv.Atoi(f)
		start, err := journal.ProcessStart(pid)
		if err != nil {
			t.Fatalf("helper's sleep %d: %v", pid, err)
		}
		pids = append(pids, nsprocs.Proc{PID: pid, Start: start})
	}
	if len(pids) != 3 {
		t.Fatalf("ready %v", h.ready)
	}
	t.Cleanup(func() { // the sleeps outlive a failed test otherwise
		if err := nsprocs.Kill(pids, nsprocs.DefaultTimeout); err != nil {
			t.Error(err)
		}
	})
	// The run really changed things.
	if got := tunetest.ReadSockFlowEntries(t); got != "32768" {
		t.Fatalf("rps_sock_flow_entries = %s during the run", got)
	}
	if v, err := (tune.LocalFS{}).Read(pod, tune.FSSysfs, "class/net/eth0/queues/rx-1/rps_cpus"); err != nil || tune.Equal("rps_cpus", v, "0") {
		t.Fatalf("pod rx-1 rps_cpus = %q, %v during the run", v, err)
	}

	h.crash(t)
	sets := pendingSets(t, filepath.Join(dir, run+journal.Ext), pod, hostEntries)

	// A dry run changes nothing.
	fs := &checkFS{back: map[string]string{}}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fs, DryRun: true})
	if err != nil || len(fs.back) != 0 || !netns.Exists(pod) || tunetest.ReadSockFlowEntries(t) != "32768" || !journal.ProcessAlive(pids[0].PID, pids[0].Start) {
		t.Fatalf("dry run changed something: %v, %v", err, rep.Actions)
	}

	rep, err = Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fs})
	for _, a := range rep.Actions {
		t.Log(a)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		got, ok := fs.back[s.Netns+"|"+s.Path]
		if !ok || !tune.Equal(s.Path, got, s.Old) {
			t.Errorf("%s %s: read back %q after cleanup (written: %v), want %q", s.Netns, s.Path, got, ok, s.Old)
		}
	}
	if got := tunetest.ReadSockFlowEntries(t); got != hostEntries {
		t.Errorf("rps_sock_flow_entries = %s after cleanup, want %s", got, hostEntries)
	}
	for _, p := range pids {
		if journal.ProcessAlive(p.PID, p.Start) {
			t.Errorf("pid %d still alive", p.PID)
		}
	}
	for _, ns := range []string{node, pod} {
		if netns.Exists(ns) {
			t.Errorf("netns %s still exists", ns)
		}
	}
	if _, err := netlink.LinkByName(hostLink(run)); err == nil {
		t.Errorf("host link %s still exists", hostLink(run))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("journal dir holds %v", ents)
	}
}

// TestKernelSweep: namespaces of a run with no journal are reported, and
// swept with their processes when Orphans asks; a live run's and
// unprefixed ones are not touched. The
// prefix is unique to the test, so nothing else on the machine is seen.
func TestKernelSweep(t *testing.T) {
	tunetest.RequireKernel(t)
	dir := t.TempDir()
	id := tunetest.NewID()
	prefix := "cnb-" + id // runs "o" (orphan) and "l" (live): cnb-<id>o-ns
	orphan, live, other := prefix+"o-ns", prefix+"l-ns", "cnbx-"+id
	for _, ns := range []string{orphan, live, other} {
		if err := netns.Add(ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nsprocs.KillAllIn(ns, nsprocs.DefaultTimeout); netns.Delete(ns) })
	}
	j, err := journal.Open(dir, "l", prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	sleeps := map[string]*exec.Cmd{}
	for _, ns := range []string{orphan, live, other} {
		cmd := exec.Command("sleep", "600")
		if err := netns.Start(ns, nil, cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sleeps[ns] = cmd
	}
	orphanStart, _ := journal.ProcessStart(sleeps[orphan].Process.Pid)

	rep, err := Run(context.Background(), Options{JournalDir: dir, Prefix: prefix})
	if err != nil || count(rep, ActNetns) != 0 || count(rep, ActSkip) != 1 || !netns.Exists(orphan) {
		t.Fatalf("without Orphans: %v, actions %v; want the orphan reported and kept", err, rep.Actions)
	}
	rep, err = Run(context.Background(), Options{JournalDir: dir, Prefix: prefix, Orphans: true})
	for _, a := range rep.Actions {
		t.Log(a)
	}
	if err != nil {
		t.Fatal(err)
	}
	sleeps[orphan].Wait() // reap: the test is its parent
	if netns.Exists(orphan) || journal.ProcessAlive(sleeps[orphan].Process.Pid, orphanStart) {
		t.Errorf("orphan namespace or its process survived")
	}
	for _, ns := range []string{live, other} {
		if !netns.Exists(ns) {
			t.Errorf("%s was deleted", ns)
		}
		if sleeps[ns].ProcessState != nil || !pidAlive(sleeps[ns].Process.Pid) {
			t.Errorf("process in %s was killed", ns)
		}
	}
	if count(rep, ActNetns) != 1 || count(rep, ActKill) != 1 {
		t.Errorf("actions %v", rep.Actions)
	}
}

func pidAlive(pid int) bool {
	_, err := journal.ProcessStart(pid)
	return err == nil
}

// leftovers removes whatever a failed crash test left: processes and
// namespaces of the run, the host link.
func leftovers(t *testing.T, run string, nss ...string) {
	for _, ns := range nss {
		if netns.Exists(ns) {
			nsprocs.KillAllIn(ns, nsprocs.DefaultTimeout)
			if err := netns.Delete(ns); err == nil {
				t.Errorf("test left netns %s (removed)", ns)
			}
		}
	}
	if l, err := netlink.LinkByName(hostLink(run)); err == nil {
		netlink.LinkDel(l)
		t.Errorf("test left link %s (removed)", hostLink(run))
	} else if !errors.As(err, new(netlink.LinkNotFoundError)) {
		t.Errorf("check link %s: %v", hostLink(run), err)
	}
}
