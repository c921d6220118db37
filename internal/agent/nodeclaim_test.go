package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestClaimHoldsTheNodeForAMeasuringRun: a run's session that claims its
// node and changes nothing (baseline cells: it only measures) holds the
// node against another run's session, whose claim and first change are
// both refused, naming the run (KindBusy across the wire); once the
// holder has ended, its directory is gone and the other run claims.
// Before the claim, a measuring run took no lock and a second run could
// measure on the node beside it, skewing both runs' numbers.
func TestClaimHoldsTheNodeForAMeasuringRun(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	a, waitA := session(t, Config{Run: "a", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	b, waitB := session(t, Config{Run: "b", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := a.Claim(); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Read("", "sysfs", rps); err != nil || v != "0" {
		t.Fatalf("holder's read = %q, %v", v, err)
	}
	err := b.Claim()
	var re *RemoteError
	if !errors.Is(err, ErrNodeBusy) || !errors.As(err, &re) || re.Kind != KindBusy {
		t.Fatalf("another run's claim beside a measuring run = %v; want ErrNodeBusy of kind %s", err, KindBusy)
	}
	want := "agent on node w1: claim: node w1 is in use by run a (agent session pid " + strconv.Itoa(os.Getpid()) +
		"), measuring or changing it: one run uses a node at a time, since two runs' numbers on one node skew each other"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("refusal:\n%v\nwant it to start %q", err, want)
	}
	if err := b.Write("", "sysfs", rps, "3"); !errors.Is(err, ErrNodeBusy) {
		t.Errorf("another run's write beside a measuring run = %v; want ErrNodeBusy", err)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("refused write left %s = %q", rps, v)
	}
	a.Close()
	if err := waitA(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left after a measuring run's end: %v (%v)", err, journals(dir))
	}
	if err := b.Claim(); err != nil {
		t.Fatalf("claim once the holder ended = %v", err)
	}
	b.Close()
	if err := waitB(); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlySessionTakesNoLock: a session that only reads (preflight's
// probes, advise's inspection) never claims the node: a run claims it
// while that session is open, and the session still reads beside the
// run, leaving no journal.
func TestReadOnlySessionTakesNoLock(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	ro, waitRO := session(t, Config{Run: "preflight", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if _, err := ro.Hello("test"); err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Links(""); err != nil {
		t.Fatal(err)
	}
	run, waitRun := session(t, Config{Run: "r1", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := run.Claim(); err != nil {
		t.Fatalf("a run's claim beside a read-only session = %v", err)
	}
	if v, err := ro.Read("", "sysfs", rps); err != nil || v != "0" {
		t.Errorf("read-only session's read beside the run = %q, %v", v, err)
	}
	if files := journals(dir); len(files) != 1 || !strings.Contains(files[0], "r1_") {
		t.Errorf("journals: %v; want the run's alone", files)
	}
	ro.Close()
	run.Close()
	if err := errors.Join(waitRO(), waitRun()); err != nil {
		t.Fatal(err)
	}
}

// TestClaimOtherProcess: a run's session in another process (as every
// `agent serve` is) that only claimed holds the node, named by its pid
// and its run; killed, it keeps nothing (the kernel drops its lock) and
// the next claim replays its journal and holds the node alone.
func TestClaimOtherProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1 claim")
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	err := srv.claim()
	var be *NodeBusyError
	if want := "node w1 is in use by run r1 (agent session pid " + strconv.Itoa(cmd.Process.Pid) + ")"; !errors.As(err, &be) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("claim beside run r1's measuring session = %v; want it to start %q", err, want)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := srv.claim(); err != nil {
		t.Fatalf("claim after the holder was killed = %v", err)
	}
	if files := journals(dir); len(files) != 1 || !strings.Contains(files[0], "r2_") {
		t.Errorf("journals after the claim: %v; want this session's alone", files)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}

// TestClaimReplaysBeforeFirstChange: a claim right after a session was
// killed, before the daemon's replay came round, puts the dead session's
// values back as it takes the node, so before this session's first
// change; a later change (and claim) in the session holds the node
// already, and its end leaves the node's own value.
func TestClaimReplaysBeforeFirstChange(t *testing.T) {
	fs, dir := killedHolder(t)
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := srv.claim(); err != nil {
		t.Fatalf("claim after the holder was killed = %v", err)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after the claim; want the killed session's 3 put back", rps, v)
	}
	if files := journals(dir); len(files) != 1 || !strings.Contains(files[0], "r2_") {
		t.Errorf("journals after the claim: %v; want this session's alone (the dead one's replayed)", files)
	}
	if err := errors.Join(srv.write("", "sysfs", rps, "f"), srv.claim()); err != nil {
		t.Fatalf("change and claim again in the claimed session = %v", err)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after the session ended; want the node's own 0", rps, v)
	}
}

// TestClaimRefusedOverUntrustedJournal: a claim, like a first change,
// refuses while a dead session's journal cannot be put back (kind
// unclean), so the run stops before it measures.
func TestClaimRefusedOverUntrustedJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "r0_1"+journal.Ext), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, wait := session(t, Config{Run: "r2", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	if err := c.Claim(); !errors.Is(err, tune.ErrNodeUnclean) {
		t.Errorf("claim beside an untrusted journal = %v; want tune.ErrNodeUnclean", err)
	}
	c.Close()
	wait()
}

// waitLonger lets a session wait 10 s for the node in this test instead
// of TestMain's 300 ms: the test holds the node across a sleep and a
// replay, which a loaded machine can stretch past 300 ms. A session
// that refuses instead of waiting still fails at once.
func waitLonger(t *testing.T) {
	old := nodeLockWait
	nodeLockWait = 10 * time.Second
	t.Cleanup(func() { nodeLockWait = old })
}

// TestClaimWaitsForReplay: a claim while a replay holds the node for a
// moment waits for it (nodeLockWait) rather than being refused.
func TestClaimWaitsForReplay(t *testing.T) {
	waitLonger(t)
	dir := filepath.Join(t.TempDir(), "w1")
	l, err := journal.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	claimed := make(chan error, 1)
	go func() { claimed <- srv.claim() }()
	time.Sleep(30 * time.Millisecond) // the claim is waiting for the node
	l.Release()
	if err := <-claimed; err != nil {
		t.Fatalf("claim after a moment's replay = %v", err)
	}
	// The claim holds the node now: another locker is refused at once.
	if l2, err := journal.LockDir(dir); err == nil {
		l2.Release()
		t.Error("the node was free after the claim returned")
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}
