package iperf3

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// fakePod answers Start with canned output, so Run's orchestration
// (retries, error mapping, aggregation, stopping) is tested without root.
type fakePod struct {
	name string
	ip   net.IP
	// reply gives the output of the n-th start (from 1); block makes the
	// process run until it is stopped or its context ends.
	reply func(n int, argv []string) (out []byte, block bool, startErr error)

	mu    sync.Mutex
	argvs [][]string
	procs []*fakeProc
}

func (p *fakePod) Name() string { return p.name }
func (p *fakePod) Node() string { return "node-" + p.name }
func (p *fakePod) IP() net.IP   { return p.ip }

func (p *fakePod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.argvs = append(p.argvs, argv)
	out, block, err := p.reply(len(p.argvs), argv)
	if err != nil {
		return nil, err
	}
	fp := &fakeProc{out: out, done: make(chan struct{})}
	if !block {
		fp.finish()
	} else {
		go func() {
			select {
			case <-ctx.Done():
				fp.finish()
			case <-fp.done:
			}
		}()
	}
	p.procs = append(p.procs, fp)
	return fp, nil
}

func (p *fakePod) starts() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.argvs)
}

type fakeProc struct {
	out  []byte
	once sync.Once
	done chan struct{}
}

// ended reports whether the process was stopped, cancelled or finished.
func (f *fakeProc) ended() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

func (f *fakeProc) finish() { f.once.Do(func() { close(f.done) }) }

func (f *fakeProc) Wait() ([]byte, []byte, error) { <-f.done; return f.out, nil, nil }

func (f *fakeProc) Stop() { f.finish() }

func fixed(tb testing.TB, file string) func(int, []string) ([]byte, bool, error) {
	b := readTestdata(tb, file)
	return func(int, []string) ([]byte, bool, error) { return b, false, nil }
}

func fastDriver() *Driver {
	d := New()
	d.ConnectAttempts = 3
	d.ConnectBackoff = time.Millisecond
	return d
}

func trial(pairs ...workload.Pair) workload.Trial {
	return workload.Trial{
		Pairs:    pairs,
		Spec:     study.Workload{Tool: "iperf3", Protocol: "tcp", Length: "128K"},
		Duration: 3 * time.Second,
		Warmup:   time.Second,
		BasePort: 5201,
	}
}

func pair(i int, server, client func(int, []string) ([]byte, bool, error)) (workload.Pair, *fakePod, *fakePod) {
	s := &fakePod{name: "s" + string(rune('0'+i)), ip: net.IPv4(10, 0, 0, byte(i+1)), reply: server}
	c := &fakePod{name: "c" + string(rune('0'+i)), ip: net.IPv4(10, 0, 1, byte(i+1)), reply: client}
	return workload.Pair{Server: s, Client: c}, s, c
}

func TestRunFake(t *testing.T) {
	p0, s0, c0 := pair(0, fixed(t, "tcp-server.json"), fixed(t, "tcp-client.json"))
	p1, _, _ := pair(1, fixed(t, "tcp-p2-server.json"), fixed(t, "tcp-p2-client.json"))
	tr := trial(p0, p1)
	var calls int
	tr.Started = func(time.Time) { calls++ }
	res, err := fastDriver().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Started called %d times", calls)
	}
	if got, want := s0.starts()[0], []string{"iperf3", "-s", "-1", "-J", "-p", "5201"}; !slices.Equal(got, want) {
		t.Errorf("server argv %q, want %q", got, want)
	}
	want := []string{"iperf3", "-c", "10.0.0.1", "-p", "5201", "-J", "-t", "2", "-O", "1", "-l", "128K", "--connect-timeout", "3000"}
	if got := c0.starts()[0]; !slices.Equal(got, want) {
		t.Errorf("client argv %q, want %q", got, want)
	}
	b0 := res.PerReplica[0][results.MetricBitrate]
	b1 := res.PerReplica[1][results.MetricBitrate]
	if !near(b0, 19497473766.906845) || !near(b1, 20850467064.319183) {
		t.Errorf("per-replica bitrates %v %v", b0, b1)
	}
	if m := res.Metrics; !near(m[results.MetricBitrateSum], b0+b1) || !near(m[results.MetricBitrate], (b0+b1)/2) || m[results.MetricRetransmits] != 22+106 {
		t.Errorf("trial metrics %v", m)
	}
	if res.PerReplica[0][MetricSenderBitrate] != 19482886277.65757 {
		t.Errorf("sender bitrate %v", res.PerReplica[0][MetricSenderBitrate])
	}
}

func TestRunRetriesRefused(t *testing.T) {
	refused, ok := readTestdata(t, "err-client-refused.json"), readTestdata(t, "tcp-client.json")
	p0, _, c0 := pair(0, fixed(t, "tcp-server.json"), func(n int, _ []string) ([]byte, bool, error) {
		if n < 3 {
			return refused, false, nil
		}
		return ok, false, nil
	})
	if _, err := fastDriver().Run(context.Background(), trial(p0)); err != nil {
		t.Fatal(err)
	}
	if n := len(c0.starts()); n != 3 {
		t.Errorf("client started %d times, want 3", n)
	}
}

func TestRunClientErrors(t *testing.T) {
	tests := []struct {
		file     string
		kind     error
		attempts int
	}{
		{"err-client-refused.json", ErrConnect, 3}, // gave up after ConnectAttempts
		{"err-client-busy.json", ErrServerBusy, 1}, // not retried
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p0, _, _ := pair(0, fixed(t, "tcp-server.json"), fixed(t, "tcp-client.json"))
			// The server of the failing pair never gets a client: it
			// blocks until Run stops it.
			p1, s1, c1 := pair(1, func(int, []string) ([]byte, bool, error) {
				return readTestdata(t, "err-server-idle-interrupt.json"), true, nil
			}, fixed(t, tt.file))
			_, err := fastDriver().Run(context.Background(), trial(p0, p1))
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want %v", err, tt.kind)
			}
			if msg := err.Error(); !strings.Contains(msg, "pair 1 (client c1") || strings.Contains(msg, "pair 0") {
				t.Errorf("error does not name just the failing pair: %v", err)
			}
			if n := len(c1.starts()); n != tt.attempts {
				t.Errorf("client started %d times, want %d", n, tt.attempts)
			}
			if !s1.procs[0].ended() {
				t.Error("the failing pair's server was not stopped")
			}
		})
	}
}

// When the server could not listen, the error says so, not only that the
// client was refused.
func TestRunServerCannotListen(t *testing.T) {
	p0, _, _ := pair(0, fixed(t, "err-server-bind.json"), fixed(t, "err-client-refused.json"))
	_, err := fastDriver().Run(context.Background(), trial(p0))
	if !errors.Is(err, ErrConnect) || !errors.Is(err, ErrListen) || !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error %v", err)
	}
}

func TestRunStartFailure(t *testing.T) {
	p0, s0, _ := pair(0, func(int, []string) ([]byte, bool, error) { return nil, true, nil }, func(int, []string) ([]byte, bool, error) {
		return nil, false, errors.New("exec: no such file")
	})
	tr := trial(p0)
	tr.Started = func(time.Time) { t.Error("Started called although no client started") }
	_, err := fastDriver().Run(context.Background(), tr)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("error %v", err)
	}
	if !s0.procs[0].ended() {
		t.Error("server not stopped")
	}
}

func TestRunCancelled(t *testing.T) {
	block := func(int, []string) ([]byte, bool, error) { return nil, true, nil }
	p0, s0, c0 := pair(0, block, block)
	ctx, cancel := context.WithCancel(context.Background())
	tr := trial(p0)
	tr.Started = func(time.Time) { cancel() }
	_, err := fastDriver().Run(ctx, tr)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	for _, p := range []*fakePod{s0, c0} {
		if !p.procs[0].ended() {
			t.Errorf("%s still running after Run returned", p.name)
		}
	}
}

func TestPlanRejects(t *testing.T) {
	p0, _, _ := pair(0, nil, nil)
	for name, mod := range map[string]func(*workload.Trial){
		"no pairs":        func(t *workload.Trial) { t.Pairs = nil },
		"udp":             func(t *workload.Trial) { t.Spec.Protocol = "udp" },
		"fractional":      func(t *workload.Trial) { t.Warmup = 1500 * time.Millisecond },
		"all warm-up":     func(t *workload.Trial) { t.Warmup = t.Duration },
		"negative warmup": func(t *workload.Trial) { t.Warmup = -time.Second },
		"port":            func(t *workload.Trial) { t.BasePort = 65536 },
		"no port":         func(t *workload.Trial) { t.BasePort = 0 },
	} {
		tr := trial(p0)
		mod(&tr)
		if _, err := New().plan(tr); err == nil {
			t.Errorf("%s: plan accepted %+v", name, tr)
		}
	}
	tr := trial(p0)
	tr.Spec.Length = ""
	if argv := New().clientArgv(plan{seconds: 2, omit: 1}, "fd00::1", 5201); slices.Contains(argv, "-l") || argv[2] != "fd00::1" {
		t.Errorf("client argv %q", argv)
	}
}

// frontedPod is a server behind a Service (the kube engine's pods).
type frontedPod struct {
	*fakePod
	addr  string
	front net.IP
}

func (p frontedPod) Addr() string    { return p.addr }
func (p frontedPod) FrontIP() net.IP { return p.front }

// A server behind a Service is reached by the name the engine gives
// clients, and still listens on its own port.
func TestRunFrontedServer(t *testing.T) {
	p0, s0, c0 := pair(0, fixed(t, "tcp-server.json"), fixed(t, "tcp-client.json"))
	p0.Server = frontedPod{fakePod: s0, addr: "cnb-r-srv-0.cnibench.svc.cluster.local", front: net.IPv4(10, 96, 0, 20)}
	if _, err := fastDriver().Run(context.Background(), trial(p0)); err != nil {
		t.Fatal(err)
	}
	if got := c0.starts()[0][2]; got != "cnb-r-srv-0.cnibench.svc.cluster.local" {
		t.Errorf("client connects to %q, want the Service name", got)
	}
}
