package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

const rps = "class/net/eth1/queues/rx-0/rps_cpus"

// nodeHolderEnv makes the test binary a session of another process that
// changes a node ("DIR RUN": its journal directory and run), or only
// claims it ("DIR RUN claim": a run that measures), and holds it until
// its stdin closes (then it ends as a session does) or it is killed.
const nodeHolderEnv = "CNIBENCH_AGENT_NODE_HOLDER"

func TestMain(m *testing.M) {
	// A refused session waits this long for the node first; the tests
	// that refuse need not wait seconds.
	nodeLockWait = 300 * time.Millisecond
	if v := os.Getenv(nodeHolderEnv); v != "" {
		dir, run, _ := strings.Cut(v, " ")
		run, mode, _ := strings.Cut(run, " ")
		srv := NewServer(Config{Run: run, Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
		take := func() error { return srv.write("", "sysfs", rps, "3") }
		if mode == "claim" {
			take = srv.claim
		}
		if err := take(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		holdTerm(srv)
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		if err := srv.end(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHolder starts a session of run in another process that has
// changed the node of dir; closing the returned writer ends it.
func startHolder(t *testing.T, dir, run string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nodeHolderEnv+"="+dir+" "+run)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("holder: %q", line)
	}
	return cmd, stdin
}

// killedHolder is a node whose session of run r1 wrote rps_cpus 3 and
// was killed before it put it back: the node and its journal directory.
func killedHolder(t *testing.T) (*memFS, string) {
	t.Helper()
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1")
	fs.vals[key("", "sysfs", rps)] = "3" // what the holder wrote (in its own memFS)
	cmd.Process.Kill()
	cmd.Wait()
	return fs, dir
}

// journals lists the journal files in dir.
func journals(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext))
	return files
}

// TestNodeLockRefusesAnotherRun: while one run's session changes a node,
// another run's session may read it but its first change is refused,
// naming the node and the run (as KindBusy across the wire), and it
// leaves nothing behind; once the first session has ended (and put the
// node back) the second one changes the node, and its clean end leaves
// no directory.
func TestNodeLockRefusesAnotherRun(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1") // as DefaultJournalDir/NODE
	a, waitA := session(t, Config{Run: "a", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	b, waitB := session(t, Config{Run: "b", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := a.Write("", "sysfs", rps, "3"); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Read("", "sysfs", rps); err != nil || v != "3" {
		t.Fatalf("read beside the holder = %q, %v; reads are never refused", v, err)
	}
	other := "class/net/veth1234/queues/rx-0/rps_cpus"
	err := b.Write("", "sysfs", other, "3")
	if !errors.Is(err, ErrNodeBusy) {
		t.Fatalf("another run's write = %v; want ErrNodeBusy", err)
	}
	want := "agent on node w1: write: node w1 is in use by run a (agent session pid " + strconv.Itoa(os.Getpid()) + "), measuring or changing it: one run uses a node at a time"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("refusal:\n%v\nwant it to start %q", err, want)
	}
	// A dead run's session can outlive its runner for hours: the
	// refusal says what ends it, not only to wait.
	if !strings.Contains(err.Error(), "if its run is dead (its runner gone, its Lease stale), `cnibench cleanup --kube` ends the session") {
		t.Errorf("refusal does not say how a dead run's session is ended:\n%v", err)
	}
	if fs.vals[key("", "sysfs", other)] != "0" {
		t.Errorf("refused write changed %s", other)
	}
	if files := journals(dir); len(files) != 1 || !strings.Contains(files[0], "a_") {
		t.Errorf("journals beside the holder: %v; want the holder's alone", files)
	}
	a.Close()
	if err := waitA(); err != nil {
		t.Fatal(err)
	}
	if fs.vals[key("", "sysfs", rps)] != "0" {
		t.Fatalf("the holder's end left %s = %q", rps, fs.vals[key("", "sysfs", rps)])
	}
	if err := b.Write("", "sysfs", other, "3"); err != nil {
		t.Fatalf("write once the holder ended = %v", err)
	}
	b.Close()
	if err := waitB(); err != nil {
		t.Fatal(err)
	}
	if fs.vals[key("", "sysfs", other)] != "0" {
		t.Errorf("%s = %q after the second session", other, fs.vals[key("", "sysfs", other)])
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left after clean sessions: %v", err)
	}
}

// TestNodeLockRefusesNetem: a netem is a change like a write, refused
// before the device's qdisc is read or anything installed.
func TestNodeLockRefusesNetem(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	holder := NewServer(Config{Run: "a", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := holder.write("", "sysfs", rps, "3"); err != nil {
		t.Fatal(err)
	}
	defer holder.end()
	srv := NewServer(Config{Run: "b", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	_, err := srv.impair(netns.Iface{Name: "eth1"}, &ImpairArgs{})
	if !errors.Is(err, ErrNodeBusy) || !strings.Contains(err.Error(), "run a") {
		t.Fatalf("netem beside the holder = %v; want ErrNodeBusy naming run a", err)
	}
	if r := srv.Handle(Request{Op: OpImpair, Run: "b", Ifaces: []netns.Iface{{Name: "eth1"}}, Impair: &ImpairArgs{}}); r.Kind != KindBusy || r.Node != "w1" {
		t.Errorf("response = %+v; want kind %q from node w1", r, KindBusy)
	}
}

// TestNodeLockOtherProcess: the holder is another process, as every
// `agent serve` is: named by its pid (from /proc/locks) and its run (from
// its journal); a session of the same run is refused too, saying so,
// since two sessions of one run would journal each other's values just
// the same. Its clean end frees the node and leaves no directory.
func TestNodeLockOtherProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, stdin := startHolder(t, dir, "r1")
	pid := strconv.Itoa(cmd.Process.Pid)
	for run, want := range map[string]string{
		"r2": "node w1 is in use by run r1 (agent session pid " + pid + ")",
		"r1": "node w1 is in use by another session of this run r1 (pid " + pid + ")",
	} {
		srv := NewServer(Config{Run: run, Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
		err := srv.write("", "sysfs", rps, "3")
		var be *NodeBusyError
		if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("run %s beside run r1's session: %v; want it to start %q", run, err, want)
		}
		if err := srv.end(); err != nil {
			t.Errorf("end of a refused session: %v", err)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left after the holder's clean end: %v", err)
	}
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	if err := srv.write("", "sysfs", rps, "3"); err != nil {
		t.Fatalf("write once the holder ended = %v", err)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}

// TestNodeLockDeadHolder: a replay beside a live holder leaves its journal
// alone; a holder killed outright keeps nothing (the kernel drops its
// lock), and its journal is replayed as before, after which another run
// changes the node.
func TestNodeLockDeadHolder(t *testing.T) {
	fs := testNode()
	node := &nodeFS{base: fs, pods: fakePods{}}
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1")
	fs.vals[key("", "sysfs", rps)] = "3" // what the holder wrote (in its own memFS)
	if sum, err := Replay(dir, node); err != nil || !sum.Empty() {
		t.Fatalf("replay beside a live holder = %+v, %v; want nothing done", sum, err)
	}
	if files := journals(dir); len(files) != 1 {
		t.Fatalf("the live holder's journal: %v", files)
	}
	cmd.Process.Kill()
	cmd.Wait()
	sum, err := Replay(dir, node)
	if err != nil || sum.Restored != 1 || fs.vals[key("", "sysfs", rps)] != "0" {
		t.Fatalf("replay of the killed holder = %+v, %v; %s = %q", sum, err, rps, fs.vals[key("", "sysfs", rps)])
	}
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := srv.write("", "sysfs", rps, "f"); err != nil {
		t.Fatalf("write after the holder died = %v", err)
	}
	if err := srv.end(); err != nil || fs.vals[key("", "sysfs", rps)] != "0" {
		t.Fatalf("end = %v; %s = %q", err, rps, fs.vals[key("", "sysfs", rps)])
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left: %v", err)
	}
}

// TestNodeLockRace: sessions of many runs start and end on one node at
// once. At most one of them holds it at any time, every change is put
// back, and the last end leaves no directory: a session's end removing
// the then empty directory never lets two sessions hold two directories.
func TestNodeLockRace(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	var holders, held atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				srv := NewServer(Config{Run: fmt.Sprintf("g%d_%d", g, i), Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
				err := srv.write("", "sysfs", rps, "3")
				if err == nil {
					if n := holders.Add(1); n != 1 {
						t.Errorf("%d sessions hold the node at once", n)
					}
					held.Add(1)
					time.Sleep(50 * time.Microsecond)
					holders.Add(-1)
				} else if !errors.Is(err, ErrNodeBusy) {
					t.Errorf("write: %v", err)
				}
				if err := srv.end(); err != nil {
					t.Errorf("end: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if held.Load() == 0 {
		t.Fatal("no session ever held the node")
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after every session ended", rps, v)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left: %v (%v)", err, journals(dir))
	}
}

// TestNodeLockKeptWithChangesLeft: a session that could not put a value
// back keeps its journal, and the node with it until its process ends,
// so no other session journals that value as its old one.
func TestNodeLockKeptWithChangesLeft(t *testing.T) {
	mem := testNode()
	dir := t.TempDir()
	srv := NewServer(Config{Run: "a", Node: "w1", FS: refuseFS{mem, "0"}, Pods: fakePods{}, JournalDir: dir})
	// srv is the live session that kept its changes: unreachable, the
	// collector would close its lock's file and let the node go (the CI
	// run of 2026-12-06 saw other's write pass).
	defer runtime.KeepAlive(srv)
	if err := srv.write("", "sysfs", rps, "3"); err != nil {
		t.Fatal(err)
	}
	var pe *journal.PendingError
	if err := srv.end(); !errors.As(err, &pe) {
		t.Fatalf("end with a value it cannot put back = %v; want the journal kept", err)
	}
	other := NewServer(Config{Run: "b", Node: "w1", FS: mem, Pods: fakePods{}, JournalDir: dir})
	if err := other.write("", "sysfs", rps, "f"); !errors.Is(err, ErrNodeBusy) || !strings.Contains(err.Error(), "run a") {
		t.Errorf("write beside a session that kept changes = %v; want ErrNodeBusy naming run a", err)
	}
	if v := mem.vals[key("", "sysfs", rps)]; v != "3" {
		t.Errorf("%s = %q; want the kept session's 3", rps, v)
	}
}

// TestNodeLockReplaysBeforeFirstChange: a session that takes the node
// right after another was killed, before the daemon's periodic replay
// came round, first puts back the dead session's values. It journaled
// them as its own old values before, and its end left the node at the
// dead session's value with nothing pending.
func TestNodeLockReplaysBeforeFirstChange(t *testing.T) {
	fs, dir := killedHolder(t)
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := srv.write("", "sysfs", rps, "f"); err != nil {
		t.Fatalf("write after the holder was killed = %v", err)
	}
	if files := journals(dir); len(files) != 1 {
		t.Errorf("journals after the first change: %v; want this session's alone (the dead one's replayed)", files)
	}
	if err := srv.end(); err != nil {
		t.Fatalf("end = %v", err)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after the session ended; want the node's own 0, not the killed session's 3", rps, v)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left: %v", err)
	}
}

// TestNodeLockRefusesOverUntrustedJournal: a file in the node's journal
// directory that cannot be read as a journal may record changes still on
// the node; a session's first change is refused, naming it, and changes
// nothing (as a local run refuses: journal.BeginRun).
func TestNodeLockRefusesOverUntrustedJournal(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	os.MkdirAll(dir, 0o700)
	bad := filepath.Join(dir, "r0_1"+journal.Ext)
	if err := os.WriteFile(bad, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	err := srv.write("", "sysfs", rps, "f")
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "could not be put back") {
		t.Fatalf("write beside an untrusted journal = %v; want a refusal naming %s", err, bad)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after the refusal; want it unchanged", rps, v)
	}
	if err := srv.end(); err != nil {
		t.Fatalf("end = %v", err)
	}
	if files := journals(dir); len(files) != 1 || files[0] != bad {
		t.Errorf("journals after the refused session: %v; want the untrusted file alone", files)
	}
}

// TestNodeLockWaitsForReplay: a session's first change while a replay
// (the daemon's) holds the node waits for it, instead of skipping the
// dead journal the replay held (it then journaled the dead session's
// value as its old one and put it back at its end) or being refused for
// a moment's overlap (a refusal stops its run).
func TestNodeLockWaitsForReplay(t *testing.T) {
	waitLonger(t)
	fs, dir := killedHolder(t)
	node := &nodeFS{base: fs, pods: fakePods{}}

	// The daemon's replay, in flight: it holds the node and the dead
	// journal.
	l, err := journal.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := journal.Dead(dir, false)
	if err != nil || len(stale) != 1 {
		t.Fatalf("dead journals %v, %v", stale, err)
	}
	srv := NewServer(Config{Run: "r2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	wrote := make(chan error, 1)
	go func() { wrote <- srv.write("", "sysfs", rps, "f") }()
	time.Sleep(30 * time.Millisecond) // the session is waiting for the node
	if _, err := tune.RevertReplayOutcomes(stale[0], node, false); err != nil {
		t.Fatal(err)
	}
	stale[0].Remove()
	l.Release()
	if err := <-wrote; err != nil {
		t.Fatalf("first change after the replay = %v", err)
	}
	if err := srv.end(); err != nil {
		t.Fatalf("end = %v", err)
	}
	if v := fs.vals[key("", "sysfs", rps)]; v != "0" {
		t.Errorf("%s = %q after the session ended; want the node's own 0", rps, v)
	}
}

// TestReplaySkipsAHeldNode: a replay while a live session holds the node
// looks at nothing and says so: the holder replayed what dead sessions
// left before its first change, and no journal dies while it holds it.
func TestReplaySkipsAHeldNode(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "w1")
	startHolder(t, dir, "r1")
	daemon := NewServer(Config{Run: "daemon", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	sum, err := daemon.replay()
	if err != nil || !sum.Held || !strings.Contains(sum.String(), "a live session holds the node") {
		t.Errorf("replay beside a holder = %+v (%s), %v; want Held", sum, sum, err)
	}
	if files := journals(dir); len(files) != 1 {
		t.Errorf("the holder's journal: %v", files)
	}
}

// TestUncleanNodeStopsTheRun: a first change refused because a dead
// session's journal cannot be put back carries tune.ErrNodeUnclean
// across the wire (kind unclean), which stops the run rather than
// failing each trial and giving up each cell.
func TestUncleanNodeStopsTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "r0_1"+journal.Ext), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, wait := session(t, Config{Run: "r2", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	err := c.Write("", "sysfs", rps, "f")
	var re *RemoteError
	if !errors.As(err, &re) || re.Kind != KindUnclean || !errors.Is(err, tune.ErrNodeUnclean) {
		t.Errorf("write beside an untrusted journal = %v; want kind %s matching tune.ErrNodeUnclean", err, KindUnclean)
	}
	c.Close()
	wait()
}
