package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// memFS is a tune.FS over a map: "NETNS|FS|PATH" -> value.
type memFS struct {
	mu   sync.Mutex
	vals map[string]string
	gone map[string]bool
}

func newMemFS() *memFS { return &memFS{vals: map[string]string{}, gone: map[string]bool{}} }

func (f *memFS) Read(ns, fs, p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[ns] {
		return "", fmt.Errorf("netns %s: %w", ns, tune.ErrGone)
	}
	v, ok := f.vals[key(ns, fs, p)]
	if !ok {
		return "", fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	return v, nil
}

func (f *memFS) Write(ns, fs, p, v string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[ns] {
		return fmt.Errorf("netns %s: %w", ns, tune.ErrGone)
	}
	if _, ok := f.vals[key(ns, fs, p)]; !ok {
		return fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	f.vals[key(ns, fs, p)] = v
	return nil
}

func (f *memFS) List(ns, fs, dir string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for k := range f.vals {
		if rest, ok := strings.CutPrefix(k, key(ns, fs, dir)+"/"); ok {
			seen[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

type fakePods map[string]string

func (p fakePods) Netns(pod string) (string, error) {
	if n, ok := p[pod]; ok {
		return n, nil
	}
	return "", fmt.Errorf("pod %s: %w", pod, tune.ErrGone)
}

func testNode() *memFS {
	fs := newMemFS()
	fs.vals[key("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus")] = "0"
	fs.vals[key("", "sysfs", "class/net/eth1/ifindex")] = "2"
	fs.vals[key("", "sysfs", "class/net/veth1234/ifindex")] = "7"
	fs.vals[key("", "sysfs", "class/net/veth1234/iflink")] = "3" // the pod's eth0: a veth pair
	fs.vals[key("", "sysfs", "class/net/veth1234/queues/rx-0/rps_cpus")] = "0"
	fs.vals[key("", "proc", tune.SockFlowEntriesPath)] = "0"
	fs.vals[key("podns1", "sysfs", "class/net/eth0/ifindex")] = "3"
	fs.vals[key("podns1", "sysfs", "class/net/eth0/iflink")] = "7"
	fs.vals[key("podns1", "sysfs", "class/net/eth0/queues/rx-0/rps_cpus")] = "0"
	return fs
}

// session runs a Server on pipes and returns a Client and a wait func
// that returns Serve's error once the client is closed.
func session(t *testing.T, cfg Config) (*Client, func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := NewServer(cfg)
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(inR, outW)
		outW.Close()
		errc <- err
	}()
	c := NewClient(inW, outR)
	c.SetRun(NewServer(cfg).cfg.Run)
	return c, func() error { return <-errc }
}

func TestProtocolReadWriteRevertOnEOF(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "node-1") // as DefaultJournalDir/NODE
	c, wait := session(t, Config{Run: "r1", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: dir})

	if v, err := c.Read("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus"); err != nil || v != "0" {
		t.Fatalf("read = %q, %v", v, err)
	}
	if err := c.Write("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus", "3"); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(PodNetns("ns", "srv-0"), "sysfs", "class/net/eth0/queues/rx-0/rps_cpus", "3"); err != nil {
		t.Fatal(err)
	}
	if err := c.Write("", "proc", tune.SockFlowEntriesPath, "32768"); err != nil {
		t.Fatal(err)
	}
	// A write of the old value closes its entry.
	if err := c.Write("", "proc", tune.SockFlowEntriesPath, "0"); err != nil {
		t.Fatal(err)
	}
	if got := fs.vals[key("podns1", "sysfs", "class/net/eth0/queues/rx-0/rps_cpus")]; got != "3" {
		t.Fatalf("pod knob = %q", got)
	}
	// The node journal holds the two open changes.
	files, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext))
	if len(files) != 1 {
		t.Fatalf("journals: %v", files)
	}
	r, err := journal.ReadReplay(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Pending()); n != 2 {
		t.Errorf("pending entries = %d, want 2", n)
	}
	// The controller goes away: the session reverts.
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		key("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus"):       "0",
		key("podns1", "sysfs", "class/net/eth0/queues/rx-0/rps_cpus"): "0",
		key("", "proc", tune.SockFlowEntriesPath):                     "0",
	} {
		if fs.vals[k] != want {
			t.Errorf("%s = %q after session end, want %q", k, fs.vals[k], want)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext)); len(files) != 0 {
		t.Errorf("journal not retired: %v", files)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left after a clean session: %v", err)
	}
}

// The directory stays while another (live) session's journal is in it:
// one that has opened its journal and not yet taken the node.
func TestJournalDirKeptForOtherSessions(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "node-1")
	oj, err := journal.Open(dir, "other_1", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer oj.Close()
	other := oj.Path()
	c, wait := session(t, Config{Run: "r1", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := c.Write("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus", "3"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the other session's journal: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "r1_*"+journal.Ext)); len(files) != 0 {
		t.Errorf("own journal not retired: %v", files)
	}
}

// The daemon reverts what a dead session left, and on exit removes the
// then empty directory.
func TestDaemonRemovesEmptyJournalDir(t *testing.T) {
	fs := testNode()
	dir := filepath.Join(t.TempDir(), "node-1")
	os.MkdirAll(dir, 0o700)
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	fs.vals[key("", "sysfs", p)] = "3"
	writeDeadJournal(t, dir, journal.Set{Netns: "", FS: "sysfs", Path: p, Old: "0", New: "3"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Daemon(ctx, Config{FS: fs, Pods: fakePods{}, JournalDir: dir}, time.Hour, t.Logf)
	}()
	// The start-up replay reverts the dead session's value.
	deadline := time.Now().Add(10 * time.Second)
	for {
		fs.mu.Lock()
		v := fs.vals[key("", "sysfs", p)]
		fs.mu.Unlock()
		if v == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead session's value not reverted: %q", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory left after the daemon ended: %v", err)
	}
}

func TestProtocolErrors(t *testing.T) {
	fs := testNode()
	c, wait := session(t, Config{Run: "r2", FS: fs, Pods: fakePods{}, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()

	_, err := c.Read(PodNetns("ns", "gone"), "sysfs", "class/net/eth0/queues/rx-0/rps_cpus")
	if !errors.Is(err, tune.ErrGone) {
		t.Errorf("missing pod: %v, want ErrGone", err)
	}
	// A missing file stays missing across the wire (a node without
	// cpuidle states: cpuidle.ErrNone).
	_, err = c.Read("", "sysfs", "devices/system/cpu/cpu0/cpuidle/state0/latency")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	_, err = c.Read("cnb-xyz", "sysfs", "class/net/eth0/mtu")
	if !errors.Is(err, tune.ErrBadPath) {
		t.Errorf("foreign netns name: %v, want ErrBadPath", err)
	}
	if _, err := c.Call(Request{Op: "nope"}); err == nil || !strings.Contains(err.Error(), "unknown op") {
		t.Errorf("unknown op: %v", err)
	}
	if _, err := c.SampleStop(); err == nil {
		t.Error("sample-stop before start succeeded")
	}
	// A trace needs addresses, parsed ones, and a start before its stop;
	// each refusal changes nothing on the node.
	for _, args := range [][]string{nil, {"10.0.0.1", "not-an-address"}} {
		if _, err := c.Call(Request{Op: OpTraceStart, Args: args}); err == nil {
			t.Errorf("trace-start %q succeeded", args)
		}
	}
	if _, err := c.TraceStop(); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("trace-stop before start: %v", err)
	}
	if r, err := c.Call(Request{Op: OpPing}); err != nil || r.Value != "pong" {
		t.Errorf("ping after errors: %+v %v", r, err)
	}
}

func TestHostVethAndLinks(t *testing.T) {
	fs := testNode()
	c, wait := session(t, Config{Run: "r3", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	v, err := c.HostVeth(PodNetns("ns", "srv-0"), "eth0")
	if err != nil || v != "veth1234" {
		t.Fatalf("host veth = %q, %v", v, err)
	}
	links, err := c.Links("")
	if err != nil || strings.Join(links, ",") != "eth1,veth1234" {
		t.Fatalf("links = %v, %v", links, err)
	}
}

// The device holding a node's address comes with the devices it is
// stacked on (a bond's ports), where the tunings' RPS masks go: on a
// bond's own queues they steered nothing.
func TestAddrDevStackedOn(t *testing.T) {
	cfg := Config{Run: "r4", FS: testNode(), JournalDir: t.TempDir(),
		AddrDev: func(ip string) (string, error) { return "bond0", nil },
		StackedOn: func(dev string) []string {
			if dev == "bond0" {
				return []string{"ens1", "ens2"}
			}
			return nil
		}}
	c, wait := session(t, cfg)
	defer func() { c.Close(); wait() }()
	dev, below, err := c.AddrDev("10.0.0.1")
	if err != nil || dev != "bond0" || strings.Join(below, ",") != "ens1,ens2" {
		t.Fatalf("addr dev = %q on %v, %v", dev, below, err)
	}
}

func TestMissingPrograms(t *testing.T) {
	c, wait := session(t, Config{Run: "r5", FS: newMemFS(), JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	got, err := c.Missing("sh", "cnibench-no-such-tool", "ls")
	if err != nil || strings.Join(got, ",") != "cnibench-no-such-tool" {
		t.Fatalf("missing = %v, %v", got, err)
	}
}

// Device counters of the node and of pods, read where the agent runs:
// pod devices are resolved to the pod's namespace first.
func TestIfStatsOverProtocol(t *testing.T) {
	var asked []netns.Iface
	cfg := Config{Run: "r6", FS: newMemFS(), Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir(),
		IfStats: func(ifc netns.Iface) (ifstats.Counters, error) {
			asked = append(asked, ifc)
			if ifc.Netns == "" {
				return ifstats.Read(ifc) // this process's own namespace
			}
			return ifstats.Counters{RxPackets: 7, MTU: 1450}, nil
		}}
	c, wait := session(t, cfg)
	defer func() { c.Close(); wait() }()
	got, err := c.IfStats([]netns.Iface{{Name: "lo"}, {Netns: PodNetns("ns", "srv-0"), Name: "eth0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].MTU != 65536 || got[1].RxPackets != 7 || got[1].MTU != 1450 {
		t.Errorf("counters %+v", got)
	}
	if asked[1] != (netns.Iface{Netns: "podns1", Name: "eth0"}) {
		t.Errorf("pod device read as %+v", asked[1])
	}
	if _, err := c.IfStats([]netns.Iface{{Netns: PodNetns("ns", "gone"), Name: "eth0"}}); !errors.Is(err, tune.ErrGone) {
		t.Errorf("device of a gone pod: %v", err)
	}
}

func TestMemoryOverProtocol(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "meminfo"), []byte("MemTotal:       1000 kB\nMemAvailable:    400 kB\n"), 0o644)
	c, wait := session(t, Config{Run: "r7", FS: newMemFS(), ProcRoot: root, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	if v, err := c.MemoryPercent(); err != nil || v != 60 {
		t.Errorf("memory = %v, %v", v, err)
	}
}

type fakeCPP struct {
	ifs                                []netns.Iface
	procs                              []string
	started, stopped, reported, closed int
}

func (f *fakeCPP) Start(context.Context) error { f.started++; return nil }
func (f *fakeCPP) Stop(context.Context) error  { f.stopped++; return nil }
func (f *fakeCPP) Report(context.Context) (cpp.Result, error) {
	f.reported++
	return cpp.Result{Metrics: map[string]float64{cpp.MetricTotal: 900, cpp.MetricPackets: 1000},
		Event: cpp.CPUClock, Breakdown: cpp.Breakdown{Total: 9e5, ByComponent: map[string]float64{"veth": 9e5}}}, nil
}
func (f *fakeCPP) Close() { f.closed++ }

// A CPU-cost window runs in the agent (perf on the node) and its result
// crosses the protocol intact: cpp-stop ends the recording, cpp-report
// (perf report, after the other collectors' windows) returns it. A
// window the controller abandons, running or stopped and not reported,
// is closed (perf ended, its data dropped) when the session ends or the
// next window starts.
func TestCPPOverProtocol(t *testing.T) {
	var recs []*fakeCPP
	cfg := Config{Run: "r8", FS: newMemFS(), Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir(),
		CPP: func(ifs []netns.Iface, procs []string) (CPPRecorder, error) {
			r := &fakeCPP{ifs: ifs, procs: procs}
			recs = append(recs, r)
			return r, nil
		}}
	c, wait := session(t, cfg)
	if err := c.CPPStop(); err == nil {
		t.Error("stop before start succeeded")
	}
	ifs := []netns.Iface{{Netns: PodNetns("ns", "srv-0"), Name: "eth0"}}
	if err := c.CPPStart(ifs, "flanneld"); err != nil {
		t.Fatal(err)
	}
	// The datapath's per-packet processes reach the node's recorder.
	if !slices.Equal(recs[0].procs, []string{"flanneld"}) {
		t.Errorf("the node's recorder counts the samples of %q, want flanneld's", recs[0].procs)
	}
	if err := c.CPPStart(ifs); err == nil {
		t.Error("a second window opened")
	}
	if _, err := c.CPPReport(); err == nil {
		t.Error("a running window reported")
	}
	if err := c.CPPStop(); err != nil {
		t.Fatal(err)
	}
	if recs[0].reported != 0 {
		t.Error("cpp-stop ran the report")
	}
	res, err := c.CPPReport()
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics[cpp.MetricTotal] != 900 || res.Event.Unit != cpp.UnitNs || res.Breakdown.ByComponent["veth"] != 9e5 {
		t.Errorf("result %+v", res)
	}
	if recs[0].ifs[0] != (netns.Iface{Netns: "podns1", Name: "eth0"}) {
		t.Errorf("packets counted on %+v", recs[0].ifs)
	}
	// Stopped, not reported: the next window drops it.
	for range 2 {
		if err := c.CPPStart(ifs); err != nil {
			t.Fatal(err)
		}
		if err := c.CPPStop(); err != nil {
			t.Fatal(err)
		}
	}
	if r := recs[1]; r.closed != 1 || r.reported != 0 {
		t.Errorf("stopped window not reported: closed %d, reported %d", r.closed, r.reported)
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.started != 1 || last.closed != 1 || last.reported != 0 {
		t.Errorf("abandoned window: started %d closed %d reported %d", last.started, last.closed, last.reported)
	}
}

func TestSampleOverProtocol(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "net"), 0o755)
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\n"), 0o644)
	os.WriteFile(filepath.Join(root, "softirqs"), []byte("                    CPU0\n      NET_RX:         5\n"), 0o644)
	os.WriteFile(filepath.Join(root, "net/softnet_stat"), []byte("00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"), 0o644)
	c, wait := session(t, Config{Run: "r4", FS: newMemFS(), ProcRoot: root, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	if err := c.SampleStart(); err != nil {
		t.Fatal(err)
	}
	w, err := c.SampleStop()
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Cores) != 1 || w.Cores[0].CPU != 0 {
		t.Fatalf("window cores = %+v", w.Cores)
	}
}

// A session killed outright leaves a journal with a dead owner; Replay
// reverts it.
func TestReplayDeadSession(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	fs.vals[key("", "sysfs", p)] = "3" // the dead session's value
	writeDeadJournal(t, dir, journal.Set{Netns: "", FS: "sysfs", Path: p, Old: "0", New: "3"})
	sum, err := Replay(dir, &nodeFS{base: fs, pods: fakePods{}})
	if err != nil || sum.Restored != 1 {
		t.Fatalf("replay = %+v, %v", sum, err)
	}
	if fs.vals[key("", "sysfs", p)] != "0" {
		t.Errorf("not reverted: %q", fs.vals[key("", "sysfs", p)])
	}
}

func TestFindPodPID(t *testing.T) {
	f := newFakeProc(t)
	for pid, env := range map[string]string{
		"10": "PATH=/bin\x00HOSTNAME=x\x00",
		"42": "PATH=/bin\x00" + PodEnv + "=cnibench/srv-1\x00",
		"43": PodEnv + "=cnibench/srv-1\x00",
		"44": PodEnv + "=cnibench/srv-10\x00",
	} {
		f.proc(pid, env, "podA")
	}
	f.proc("self", "", "podA")
	if pid, err := FindPodPID(f.root, "cnibench/srv-1"); err != nil || pid != 42 {
		t.Errorf("FindPodPID = %d, %v; want 42", pid, err)
	}
	if _, err := FindPodPID(f.root, "cnibench/srv-2"); !errors.Is(err, tune.ErrGone) {
		t.Errorf("missing pod: %v", err)
	}
}

func TestCountIptables(t *testing.T) {
	out := []byte("# Generated\n*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:KUBE-FORWARD - [0:0]\n-A FORWARD -j KUBE-FORWARD\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-SERVICES -j RETURN\nCOMMIT\n")
	m, err := CountIptables(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"filter/chains": 3, "filter/rules": 1, "nat/chains": 1, "nat/rules": 2, "chains": 4, "rules": 3}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %d, want %d", k, m[k], v)
		}
	}
}

// A line longer than the scanner takes stops the count: that is an
// error naming the line, not a short count.
func TestCountIptablesLongLine(t *testing.T) {
	long := "-A INPUT -m comment --comment " + strings.Repeat("x", 2<<20) + " -j ACCEPT\n"
	out := []byte("*filter\n:INPUT ACCEPT [0:0]\n" + long + "-A INPUT -j DROP\nCOMMIT\n")
	m, err := CountIptables(out)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("CountIptables = %v, %v; want an error naming line 3", m, err)
	}
}

func FuzzCountIptables(f *testing.F) {
	f.Add([]byte("*filter\n:INPUT ACCEPT\n-A INPUT -j ACCEPT\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _ := CountIptables(b)
		if m["rules"] < 0 || m["chains"] < 0 {
			t.Fatal("negative count")
		}
	})
}

// A node's CPU count is its online CPUs, not the agent pod's share, and
// its allowed CPUs are the cpuset its pods may be pinned in.
func TestNodeInfoCPUs(t *testing.T) {
	online, err := hostcpus.Online()
	if err != nil {
		t.Skipf("no online CPU list here: %v", err)
	}
	// The agent's thread narrowed to one CPU, as a pod's share may be:
	// the count is still the node's. The thread is discarded after.
	runtime.LockOSThread()
	var one unix.CPUSet
	one.Set(online[0])
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	info, err := nodeInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.CPUs != len(online) {
		t.Errorf("CPUs = %d, want the %d online (%s)", info.CPUs, len(online), online)
	}
	if allowed, _, err := hostcpus.Allowed(); err == nil && info.AllowedCPUs != allowed.String() {
		t.Errorf("AllowedCPUs = %q, want %q", info.AllowedCPUs, allowed)
	}
}
