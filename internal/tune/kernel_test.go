package tune_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if leaks := tunetest.Leaks(); len(leaks) > 0 {
		fmt.Fprintln(os.Stderr, "kernel tests left behind:", leaks)
		code = 1
	}
	os.Exit(code)
}

// TestKernelApplyRevert applies every built-in tuning and an explicit CPU
// list to a real node and pod, reads back through sysfs that exactly the
// planned values are there (and nothing else changed), reverts, and checks
// every value is what it was.
func TestKernelApplyRevert(t *testing.T) {
	tunetest.RequireKernel(t)
	hostEntries := tunetest.GuardSockFlowEntries(t)
	bed := tunetest.New(t, tunetest.NewID())
	cpus := tunetest.OnlineCPUs(t)
	tgt := tune.Target{NodeIfaces: bed.NodeIfaces, PodIfaces: bed.PodIfaces, CPUs: cpus, SoftIRQCore: -1}
	fs := tune.LocalFS{}

	var tunings []study.Tuning
	for _, n := range []string{"rps", "rps+", "rfs", "rfs+", "rps-7"} {
		tu, _ := study.BuiltinTuning(n)
		tunings = append(tunings, tu)
	}
	tunings = append(tunings, study.Tuning{Name: "cpu0", RPS: &study.RPS{CPUs: "0"}, Pods: true},
		// RFS without RPS (get_rps_cpu steers by the flow table alone):
		// the masks stay as they were.
		study.Tuning{Name: "rfs-alone", RFS: &study.RFS{SockFlowEntries: 32768, FlowCnt: 32768}, Pods: true})

	for _, tu := range tunings {
		t.Run(tu.Name, func(t *testing.T) {
			if tu.Name == "rps-7" && len(cpus) < 2 {
				t.Skip("rps-7 needs at least 2 CPUs; this machine has 1")
			}
			before := tune.Snapshot(fs, bed.Ifaces())
			assertReadable(t, before)
			j := tunetest.HostJournal(t)
			a, err := tune.Apply(j, fs, tu, tgt)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Revert() }) // on failure below

			want := expected(t, tu, tgt, before)
			after := tune.Snapshot(fs, bed.Ifaces())
			for k, w := range want {
				if !tune.Equal(k, after[k], w) {
					t.Errorf("%s = %q, want %q", k, after[k], w)
				}
			}
			// The knobs are real: a tuned pod queue shows the mask.
			if tu.RPS != nil && tu.Pods {
				raw := readRaw(t, bed.Pod, "class/net/eth0/queues/rx-1/rps_cpus")
				set, err := cpuset.ParseMask(raw)
				if err != nil || len(set) == 0 {
					t.Errorf("pod eth0 rx-1 rps_cpus = %q", raw)
				}
			}

			if err := a.Revert(); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Errorf("journal after revert: %v", err)
			}
			if got := tune.Snapshot(fs, bed.Ifaces()); !maps.Equal(got, before) {
				t.Errorf("after revert:\n%v\nwant:\n%v", got, before)
			}
			if got := tunetest.ReadSockFlowEntries(t); got != hostEntries {
				t.Errorf("host rps_sock_flow_entries = %s after revert, want %s", got, hostEntries)
			}
		})
	}
}

// expected returns the whole snapshot the tuning should produce: before,
// with the planned keys changed. Computed independently of Plan.
func expected(t *testing.T, tu study.Tuning, tgt tune.Target, before map[string]string) map[string]string {
	t.Helper()
	want := maps.Clone(before)
	var cpus cpuset.Set
	switch {
	case tu.RPS == nil:
	case tu.RPS.CPUs == study.CPUsAll:
		cpus = tgt.CPUs
	case tu.RPS.CPUs == study.CPUsAllButSoftIRQ:
		cpus = tgt.CPUs.Without(tgt.CPUs[len(tgt.CPUs)-1])
	default:
		cpus, _ = cpuset.Parse(tu.RPS.CPUs)
	}
	if tu.RFS != nil {
		want["net.core.rps_sock_flow_entries"] = "32768"
	}
	for k := range want {
		ns, _, _ := strings.Cut(k, "/")
		isPod := strings.HasSuffix(ns, "-pod0")
		if ns == "net.core.rps_sock_flow_entries" || isPod && !tu.Pods {
			continue
		}
		switch path.Base(k) {
		case "rps_cpus":
			if cpus != nil {
				want[k] = cpus.Mask(len(tgt.CPUs))
			}
		case "rps_flow_cnt":
			if tu.RFS != nil {
				want[k] = "32768"
			}
		}
	}
	return want
}

func assertReadable(t *testing.T, snap map[string]string) {
	t.Helper()
	if len(snap) < 1+2*4 {
		t.Fatalf("snapshot has %d values: %v", len(snap), snap)
	}
	for k, v := range snap {
		if strings.HasPrefix(v, "error:") {
			t.Fatalf("%s: %s", k, v)
		}
	}
}

// readRaw reads a sysfs file of a namespace directly, bypassing LocalFS.
func readRaw(t *testing.T, ns, p string) string {
	t.Helper()
	var v string
	err := netns.WithSysfs(ns, netns.Read, func(root string) error {
		b, err := os.ReadFile(path.Join(root, p))
		v = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestKernelLocalFS checks the error mapping a revert relies on.
func TestKernelLocalFS(t *testing.T) {
	tunetest.RequireKernel(t)
	bed := tunetest.New(t, tunetest.NewID())
	fs := tune.LocalFS{}
	q := "class/net/cali0/queues/rx-1/rps_cpus"
	if _, err := fs.Read(bed.Node, tune.FSSysfs, q); err != nil {
		t.Fatal(err)
	}
	if err := fs.Write(bed.Node, tune.FSSysfs, "class/net/nodev/queues/rx-0/rps_cpus", "1"); !errors.Is(err, tune.ErrGone) {
		t.Errorf("write to missing device = %v, want ErrGone", err)
	}
	if err := fs.Write(bed.Node, tune.FSSysfs, "class/net/cali0/queues/rx-9/rps_cpus", "1"); err == nil || errors.Is(err, tune.ErrGone) {
		t.Errorf("write to missing queue of a live device = %v, want a plain error", err)
	}
	// /proc/sys as a namespace sees it: a global sysctl is not there, a
	// per-namespace one is the namespace's own, the host's left alone.
	if err := fs.Write(bed.Node, tune.FSProc, tune.SockFlowEntriesPath, "0"); !errors.Is(err, tune.ErrNoSysctl) {
		t.Errorf("global sysctl written in a netns = %v, want ErrNoSysctl", err)
	}
	const somaxconn = "/proc/sys/net/core/somaxconn"
	host, err := fs.Read("", tune.FSProc, somaxconn)
	if err != nil {
		t.Fatal(err)
	}
	mine := "1031"
	if host == mine {
		mine = "1032"
	}
	if err := fs.Write(bed.Node, tune.FSProc, somaxconn, mine); err != nil {
		t.Fatal(err)
	}
	if v, err := fs.Read(bed.Node, tune.FSProc, somaxconn); err != nil || v != mine {
		t.Errorf("somaxconn in the node namespace = %q, %v; want %s", v, err, mine)
	}
	if v, err := fs.Read("", tune.FSProc, somaxconn); err != nil || v != host {
		t.Errorf("the host's somaxconn = %q, %v; want it left at %s", v, err, host)
	}
	for _, p := range []string{"/sys/class/net", "../etc", "class/../../x"} {
		if _, err := fs.Read(bed.Node, tune.FSSysfs, p); !errors.Is(err, tune.ErrBadPath) {
			t.Errorf("Read(%q) = %v, want ErrBadPath", p, err)
		}
	}
	if _, err := fs.Read("", tune.FSProc, "/etc/passwd"); !errors.Is(err, tune.ErrBadPath) {
		t.Errorf("proc read outside /proc/sys = %v", err)
	}
	if err := bed.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Read(bed.Node, tune.FSSysfs, q); !errors.Is(err, tune.ErrGone) {
		t.Errorf("read in deleted netns = %v, want ErrGone", err)
	}
	if err := fs.Write(bed.Pod, tune.FSSysfs, "class/net/eth0/queues/rx-0/rps_cpus", "1"); !errors.Is(err, tune.ErrGone) {
		t.Errorf("write in deleted netns = %v, want ErrGone", err)
	}
	if _, err := fs.Read(bed.Node, tune.FSProc, somaxconn); !errors.Is(err, tune.ErrGone) {
		t.Errorf("sysctl read in deleted netns = %v, want ErrGone", err)
	}
}

// TestKernelIdleLimitReplay: a run killed while a cpuIdle tuning held the
// CPUs' idle latency limit leaves it set; replaying its journal, as
// `cnibench cleanup` does, puts every CPU's limit back.
func TestKernelIdleLimitReplay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping kernel test: needs root to write sysfs")
	}
	kerneltest.RequireIdleBound(t)
	tunetest.LockMachine(t)
	cpus := tunetest.OnlineCPUs(t)
	limits := func() []string { return kerneltest.IdleLimits(t, cpus) }
	before := limits()
	fs := tune.LocalFS{}
	j := tunetest.HostJournal(t)
	tu := study.Tuning{Name: "poll", CPUIdle: &study.CPUIdle{}}
	a, err := tune.Apply(j, fs, tu, tune.Target{CPUs: cpus, SoftIRQCore: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Revert() })
	if got := limits(); slices.ContainsFunc(got, func(v string) bool { return v != "n/a" }) {
		t.Fatalf("limits after Apply: %v, want n/a everywhere", got)
	}
	// The process dies here: no Revert. Cleanup replays the journal.
	rp, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tune.RevertReplayOutcomes(rp, fs, false); err != nil {
		t.Fatal(err)
	}
	if got := limits(); !slices.Equal(got, before) {
		t.Errorf("limits after the replay: %v, want %v", got, before)
	}
}
