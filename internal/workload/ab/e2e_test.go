package ab

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestHTTPAcrossNodes fetches a 1 MiB body at concurrency 4 across two
// emulated nodes. Tolerance: ab's transfer rate counts headers too (~240
// B per 1 MiB response) and partial responses at the end, so it equals
// requests/s x body size within 2%.
func TestHTTPAcrossNodes(t *testing.T) {
	d := New()
	if err := d.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "ab", Protocol: "tcp", Size: "1M", Concurrency: []int{4}},
		Duration: 3 * time.Second, Warmup: time.Second, BasePort: 8080}
	res, err := d.Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("%v", m)
	if x := m[MetricTransfer] / (m[MetricRPS] * m[MetricBody] * 8); math.Abs(x-1) > 0.02 {
		t.Errorf("transfer %v bit/s vs requests/s x body %v (ratio %v)", m[MetricTransfer], m[MetricRPS]*m[MetricBody]*8, x)
	}
	if m[MetricBody] != 1<<20 || m[MetricErrors] != 0 || m[MetricConc] != 4 {
		t.Errorf("metrics %v", m)
	}
	if !(m[MetricP50] <= m[MetricP90] && m[MetricP90] <= m[MetricP99]) {
		t.Errorf("percentiles %v", m)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	if len(after) > len(before) {
		t.Errorf("nginx directories left behind: %v", after)
	}
}

// TestHTTPRequestBound: with requests set the measured ab stops at the
// count, well before the trial's 20 s (64 KiB bodies take milliseconds
// each here), and reports the count it was asked for.
func TestHTTPRequestBound(t *testing.T) {
	d := New()
	if err := d.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "bridge", 1)
	tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "ab", Protocol: "tcp", Size: "64K", Concurrency: []int{4}, Requests: 300},
		Duration: 21 * time.Second, Warmup: time.Second, BasePort: 8080}
	start := time.Now()
	res, err := d.Run(context.Background(), tr)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("%v in %v", m, took)
	if m[MetricRequests] != 300 || m[MetricTarget] != 300 || m[MetricErrors] != 0 {
		t.Errorf("requests %v of %v, errors %v: want all 300", m[MetricRequests], m[MetricTarget], m[MetricErrors])
	}
	if took > 15*time.Second {
		t.Errorf("the trial took %v: the request count did not end the measured run", took)
	}
}

// TestHTTPTimeoutCounted: nginx hangs (hangingPod) 1.5 s after the
// measured ab (of 4 s) starts, ab (-s 1) gives up a second later, and
// the trial still succeeds with what completed: the timed-out requests
// (one per concurrent connection) are counted, requests/s is over ab's
// wall time (about 2.5 s: 1.5 s of traffic plus the 1 s wait; 2 to 4 s
// allowed for process exits and a loaded machine), and no transfer rate
// or latency is reported because ab printed none. The hang is timed
// from the measured ab's own start, not from Started: a loaded machine
// can start it late (a warm-up ab that ends late), and its 1.5 s of
// traffic would shrink.
func TestHTTPTimeoutCounted(t *testing.T) {
	d := New()
	if err := d.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	d.ResponseTimeout = time.Second
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	h := hangPairs(t, pairs)
	stalled := make(chan error, 1)
	var once sync.Once
	pairs[0].Client = &abClient{Pod: pairs[0].Client, onStart: func(argv []string) {
		if runsFor(argv) == "4" { // the warm-up's is 1
			once.Do(func() { h.freezeAfter(1500*time.Millisecond, stalled) })
		}
	}}
	tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "ab", Protocol: "tcp", Size: "1M", Concurrency: []int{4}},
		Duration: 5 * time.Second, Warmup: time.Second, BasePort: 8080}
	res, err := d.Run(context.Background(), tr)
	select {
	case serr := <-stalled:
		if serr != nil {
			t.Fatalf("freeze nginx: %v", serr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the measured ab never started (%v)", err)
	}
	if err != nil {
		t.Fatalf("a run with completed requests failed: %v", err)
	}
	m := res.Metrics
	t.Logf("%v", m)
	if m[MetricTimeouts] != 4 || m[MetricErrors] < 4 || !(m[MetricRequests] > 0) {
		t.Errorf("timeouts %v errors %v requests %v, want 4 timeouts among the errors and some requests", m[MetricTimeouts], m[MetricErrors], m[MetricRequests])
	}
	if secs := m[MetricRequests] / m[MetricRPS]; !(secs >= 2 && secs <= 4) {
		t.Errorf("requests/s %v over %v requests is %v s of ab, want 2..4", m[MetricRPS], m[MetricRequests], secs)
	}
	for _, k := range []string{MetricTransfer, MetricMean, MetricP50, MetricP99} {
		if v, ok := m[k]; ok {
			t.Errorf("%s = %v reported for a run ab gave up on", k, v)
		}
	}
	if m[MetricBody] != 1<<20 || m[MetricConc] != 4 {
		t.Errorf("metrics %v", m)
	}
}

// TestHTTPTimeoutNothingCompleted: nginx hangs 0.5 s into the warm-up, so the measured ab completes no request before its -s
// timeout: that, and only that, fails the trial, with ErrTimeout. The
// measured ab starts when the warm-up was planned to end, not earlier
// (with -s 1 the warm-up ab gives up by itself after 1.5 s) and not
// later (with -s 8 it is stopped at its end plus warmupGrace), so the
// trial takes the warm-up (or warm-up plus grace) plus one timeout plus
// nginx's start: none less. Process starts and exits on a loaded
// machine or the emulated VM can add seconds to the trial, so "not
// later" is timed from the first ab's start to the measured one's
// (2 s of slack; a warm-up left to its -s 8 would start it 4.5 s late),
// and the trial gets 5 s of slack above.
func TestHTTPTimeoutNothingCompleted(t *testing.T) {
	d := New()
	if err := d.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	for _, tc := range []struct {
		name           string
		timeout, start time.Duration // -s; when the measured ab should start
	}{
		{"warm-up gives up by itself", time.Second, 2 * time.Second},
		{"warm-up stopped after its grace", 8 * time.Second, 2*time.Second + warmupGrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.ResponseTimeout = tc.timeout
			_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
			h := hangPairs(t, pairs)
			cli := &abClient{Pod: pairs[0].Client}
			pairs[0].Client = cli
			stalled := make(chan error, 1)
			tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "ab", Protocol: "tcp", Size: "1M", Concurrency: []int{2}},
				Duration: 4 * time.Second, Warmup: 2 * time.Second, BasePort: 8080,
				Started: func(time.Time) { h.freezeAfter(500*time.Millisecond, stalled) }}
			t0 := time.Now()
			_, err := d.Run(context.Background(), tr)
			took := time.Since(t0)
			if serr := <-stalled; serr != nil {
				t.Fatalf("freeze nginx: %v", serr)
			}
			t.Logf("%v after %v", err, took)
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("error %v, want ErrTimeout", err)
			}
			if first, last := cli.firstLast(); last.Sub(first) > tc.start+2*time.Second {
				t.Errorf("the measured ab started %v after the first, want %v (+2 s)", last.Sub(first), tc.start)
			}
			if want := serverSettle + tc.start + tc.timeout; took < want || took > want+5*time.Second {
				t.Errorf("trial took %v, want %v (+5 s)", took, want)
			}
		})
	}
}

// abClient is a client pod that records when each program (an ab) was
// started in it, and hands its argv to onStart, when set, as it starts.
type abClient struct {
	engine.Pod
	onStart func(argv []string)
	mu      sync.Mutex
	starts  []time.Time
}

func (c *abClient) Start(ctx context.Context, argv []string) (engine.Process, error) {
	c.mu.Lock()
	c.starts = append(c.starts, time.Now())
	c.mu.Unlock()
	if c.onStart != nil {
		c.onStart(argv)
	}
	return c.Pod.Start(ctx, argv)
}

// firstLast is when the first ab started and when the last did: the
// measured one, never started again (only a refused warm-up is, before
// it).
func (c *abClient) firstLast() (first, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.starts) == 0 {
		return time.Time{}, time.Time{}
	}
	return c.starts[0], c.starts[len(c.starts)-1]
}

// runsFor is ab's -t in argv.
func runsFor(argv []string) string {
	if i := slices.Index(argv, "-t"); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}
