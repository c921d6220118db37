package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// journalNetns journals namespace name in j as the local engine does
// before it makes it (its error as addNetns says it), with the file
// allowed to grow by less than a line (RLIMIT_FSIZE, so write(2) fails
// with EFBIG, as on a full file system) for that write alone.
func journalNetns(t *testing.T, j *journal.Journal, name string) error {
	t.Helper()
	st, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(st.Size()) + 20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	err = j.RecordNetns(name)
	if serr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); serr != nil {
		t.Fatal(serr)
	}
	if err != nil {
		return fmt.Errorf("journal netns %s: %w", name, err)
	}
	return nil
}

// A set-up that fails on the run's journal ends the run at once, as a
// trial's failed write does: the journal stays failed (journal.ErrFailed
// on every later write), so nothing more can be set up. Before, the
// first failed write (the local engine journals each namespace before
// making it) was a set-up failure like any other: retried, failing on
// journal.ErrFailed, then given up, and every later datapath and
// replica count with it, cell by cell, the run "going on" to an exit 0.
// An error that wraps journal.ErrFailed ends it too, whatever journal
// failed (isFatal).
func TestSetUpEndsTheRunOnAFailedJournal(t *testing.T) {
	for _, own := range []bool{true, false} {
		s := datapathsStudy(t, "datapaths=[bridge, macvlan]", "trials=3")
		e := newSetUpEngine()
		r, _, _ := setUpRun(t, s, e, nil)
		if own {
			j, err := journal.Open(t.TempDir(), "jfail1", "cnb-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { j.Close() })
			r.journal = j
			e.upErr = func(dp string, _ int) error { return journalNetns(t, j, "cnb-jfail1-node-"+dp) }
		} else {
			e.upErr = func(dp string, _ int) error {
				return fmt.Errorf("journal netns cnb-jfail2-node-%s: %w: EIO", dp, journal.ErrFailed)
			}
		}
		err := r.execute(context.Background())
		if err == nil || !strings.Contains(err.Error(), "journal") {
			t.Fatalf("own journal %v: %v; want the run ended on the journal's error", own, err)
		}
		if e.ups["bridge"] != 1 || e.ups["macvlan"] != 0 {
			t.Errorf("own journal %v: Up calls %v; want bridge's one, then none", own, e.ups)
		}
		if run := loadRun(t, r); len(run.Marked) != 0 || len(run.Stops) != 0 {
			t.Errorf("own journal %v: marked %+v, stops %+v; want no cell given up", own, run.Marked, run.Stops)
		}
	}
}

// A set-up whose last attempt failed for the nodes' passing state
// (engine.ErrTransient: the kube engine's agent pod not ready yet, "run
// again once it is ready") ends the run, to be resumed, rather than give
// its cells up: given up, a --resume kept them so, and with another
// datapath measured the run exited 0 with a report. A passing failure
// at the first attempt is retried as any other.
func TestTransientSetUpEndsTheRun(t *testing.T) {
	notReady := engine.Transient(errors.New("agent not running on node w1 after 2m0s: an agent pod, not ready yet, on node w1: " +
		"pending; run again once it is ready"))
	for _, tc := range []struct {
		name string
		fail func(call int) error
		ups  int
		end  bool
	}{
		{"twice", func(int) error { return notReady }, 2, true},
		{"lasting, then passing", func(call int) error {
			if call == 1 {
				return errors.New("macvlan: operation not supported")
			}
			return notReady
		}, 2, true},
		{"once", func(call int) error {
			if call == 1 {
				return notReady
			}
			return nil
		}, 4, false},
	} {
		s := datapathsStudy(t, "datapaths=[bridge, macvlan]", "trials=3")
		e := newSetUpEngine()
		e.upErr = func(dp string, call int) error {
			if dp == "macvlan" {
				return tc.fail(call)
			}
			return nil
		}
		r, _, _ := setUpRun(t, s, e, nil)
		err := r.execute(context.Background())
		if tc.end != errors.Is(err, engine.ErrTransient) || !tc.end && err != nil {
			t.Fatalf("%s: %v; want the run ended on the passing failure: %v", tc.name, err, tc.end)
		}
		if e.ups["macvlan"] != tc.ups {
			t.Errorf("%s: %d Up calls of macvlan, want %d", tc.name, e.ups["macvlan"], tc.ups)
		}
		run := loadRun(t, r)
		if tc.end && (len(run.Marked) != 0 || len(run.Stops) != 0) {
			t.Errorf("%s: marked %+v, stops %+v; want no cell given up", tc.name, run.Marked, run.Stops)
		}
		if !tc.end {
			checkGivenUpAtSetUp(t, s, run, func(results.Cell) bool { return false }, "", 3)
		}
	}
}

// A replica count's set-up that failed deletes the cluster's pods before
// it is tried again and after it is given up, so that a pod it left
// broken (a kube pod in a terminal state fails Scale at once) fails
// neither the retry nor the next, larger count. Before, Scale kept the
// pods it had: the retry met the same broken pod, and so did every
// larger count, each given up. A deletion that fails ends the run: the
// next pods would be made beside what it left.
func TestFailedReplicaCountStartsFromFreshPods(t *testing.T) {
	const dp = "calico-vxlan"
	for _, tc := range []struct {
		name    string
		broken  func(pods, call int) bool
		dropErr error
		drops   int
		lost    func(results.Cell) bool
		end     string
	}{
		{name: "retried", broken: func(pods, call int) bool { return pods == 4 && call == 1 }, drops: 1,
			lost: func(results.Cell) bool { return false }},
		{name: "given up", broken: func(pods, _ int) bool { return pods == 4 }, drops: 2,
			lost: func(c results.Cell) bool { return c.Replicas == 4 }},
		{name: "deletion failed", broken: func(pods, _ int) bool { return pods == 4 }, dropErr: errors.New("delete pods: unreachable"),
			drops: 1, end: dp + ": delete the pods of a failed set-up: delete pods: unreachable"},
	} {
		s := roundsStudy(t, "trials=3", "budget=0s", "replicas=[1, 4, 16]")
		e := newSetUpEngine()
		e.brokenPod = func(_ string, pods, call int) bool { return tc.broken(pods, call) }
		e.scaleErr = func(_ string, pods, _ int) error {
			if pods == 0 {
				return tc.dropErr
			}
			return nil
		}
		r, _, _ := setUpRun(t, s, e, nil)
		err := r.execute(context.Background())
		if e.scales[dp+"/0"] != tc.drops {
			t.Errorf("%s: %d Scale calls to 0 pods, want %d; Scale calls %v", tc.name, e.scales[dp+"/0"], tc.drops, e.scales)
		}
		if tc.end != "" {
			if err == nil || !strings.Contains(err.Error(), tc.end) {
				t.Errorf("%s: %v; want the run ended with %q", tc.name, err, tc.end)
			}
			if e.scales[dp+"/16"] != 0 {
				t.Errorf("%s: Scale calls %v; want none to 16 pods after the run ended", tc.name, e.scales)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkGivenUpAtSetUp(t, s, loadRun(t, r), tc.lost, dp+": scale to 4 pod pairs: pod srv3: terminated (Error)", 3)
	}
}

// A resumed run sets up no replica count whose cells the interrupted run
// all gave up at their set-up (it replays them, as a datapath left
// nothing to measure is replayed without its cluster), whether its
// datapath's cluster is built for another count (one datapath) or, in
// shared rounds, for another count's trials of the round. Before, it
// made that count's pods again, for no trial, and as the failure that
// gave them up was likely lasting, to fail again (a failure left behind
// ending the run).
func TestResumeSetsUpNoLostReplicaCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *study.Study
		dp   string
		stop int
	}{
		{"one datapath", roundsStudy(t, "trials=3", "budget=0s"), "calico-vxlan", 1},
		{"shared rounds", datapathsStudy(t, "datapaths=[bridge, macvlan]", "replicas=[1, 4]", "trials=3"), "macvlan", 2},
	} {
		s := tc.s
		e := newSetUpEngine()
		e.scaleErr = func(dp string, pods, _ int) error {
			if dp == tc.dp && pods == 1 {
				return errors.New("cannot allocate memory")
			}
			return nil
		}
		cut, f, _ := setUpRun(t, s, e, nil)
		f.stop = tc.stop // killed in tc.dp's first trial at 4 replicas
		if err := cut.execute(context.Background()); !errors.Is(err, errInterrupted) {
			t.Fatalf("%s: the interrupted run: %v", tc.name, err)
		}
		e2 := newSetUpEngine()
		res := resumeSetUp(t, s, cut, e2)
		if err := res.execute(context.Background()); err != nil {
			t.Fatalf("%s: the resumed run: %v", tc.name, err)
		}
		if n := e2.scales[tc.dp+"/1"]; n != 0 || e2.ups[tc.dp] == 0 {
			t.Errorf("%s: the resumed run built %s %d times and scaled it to 1 pod %d times; want it built, and no pods made for the count given up",
				tc.name, tc.dp, e2.ups[tc.dp], n)
		}
		checkGivenUpAtSetUp(t, s, loadRun(t, res), func(c results.Cell) bool { return c.Datapath == tc.dp && c.Replicas == 1 },
			tc.dp+": scale to 1 pod pairs: cannot allocate memory", 3)
	}
}

// resumeSetUp is a run of s on e resuming the interrupted run cut.
func resumeSetUp(t *testing.T, s *study.Study, cut *run, e *setUpEngine) *run {
	t.Helper()
	old := loadRun(t, cut)
	w, err := results.Reopen(cut.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	res, _, _ := setUpRun(t, s, e, nil)
	res.out.Close()
	res.out, res.opt.Resume, res.opt.OutDir = w, true, w.Dir()
	if err := res.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	return res
}

// On remote nodes (a cluster) a set-up's second attempt waits
// remoteSetUpPause after the first failed, as a kubelet's image pull
// back-off or an API server's restart lasts longer than a moment; a
// run stopped meanwhile ends at once, with no second attempt. On the
// local engine the second attempt follows at once. Before, it always
// did: a kube agent's image pull retried 10 s later failed both
// attempts within a second.
func TestRemoteSetUpPausesBeforeRetry(t *testing.T) {
	saved := remoteSetUpPause
	t.Cleanup(func() { remoteSetUpPause = saved })
	const dp = "calico-vxlan"
	for _, remote := range []bool{false, true} {
		remoteSetUpPause = 200 * time.Millisecond
		s := roundsStudy(t, "trials=3", "budget=0s")
		e := newSetUpEngine()
		var first time.Time
		var gap time.Duration
		e.upErr = func(_ string, call int) error {
			if call == 1 {
				first = time.Now()
				return errors.New("Get \"https://10.0.0.1:6443/api\": connection refused")
			}
			gap = time.Since(first)
			return nil
		}
		r, _, log := setUpRun(t, s, e, nil)
		r.plan.remote = remote
		if err := r.execute(context.Background()); err != nil {
			t.Fatalf("remote %v: %v", remote, err)
		}
		if e.ups[dp] != 2 || remote != (gap >= remoteSetUpPause) {
			t.Errorf("remote %v: %d Up calls, the second %v after the first; want 2, and %v apart only on remote nodes", remote, e.ups[dp], gap, remoteSetUpPause)
		}
		if said := strings.Contains(log.String(), "connection refused; trying again in 200ms"); said != remote {
			t.Errorf("remote %v: log %q; want the pause said only on remote nodes", remote, log)
		}
	}
	// Stopped during the pause: the run ends, no second attempt.
	remoteSetUpPause = time.Hour
	s := roundsStudy(t, "trials=3", "budget=0s")
	e := newSetUpEngine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.upErr = func(string, int) error {
		time.AfterFunc(50*time.Millisecond, cancel)
		return errors.New("connection refused")
	}
	r, _, _ := setUpRun(t, s, e, nil)
	r.plan.remote = true
	start := time.Now()
	if err := r.execute(ctx); !errors.Is(err, context.Canceled) || e.ups[dp] != 1 || time.Since(start) > 30*time.Second {
		t.Errorf("stopped during the pause: %v after %v, %d Up calls; want context.Canceled at once, after one", err, time.Since(start), e.ups[dp])
	}
}
