// Package sockperf drives sockperf (https://github.com/Mellanox/sockperf)
// ping-pong as cnibench's request/response latency workload, the
// counterpart of netperf TCP_RR in seeds 001 and 004.
//
// Design notes: netperf is not in Debian main; sockperf is, and unlike
// qperf it prints RTT percentiles (p50 ... p99.999) and counts
// transactions of a measured window. In ping-pong mode one message is in
// flight per client, like TCP_RR, so transactions/s is 1/mean RTT. The
// differences from TCP_RR (see docs/workloads.md): sockperf's smallest
// message is 14 B (it carries a sequence number and timestamp), so
// netperf's 1 B test becomes 14 B; sockperf leaves out its own 400 ms
// warm-up and the tail of the run; the server echoes with its own loop
// rather than netperf's netserver. sockperf cannot open a connection per
// transaction (TCP_CRR); the HTTP workload (ab without keep-alive) is the
// connect/request/response test. sockperf exits 0 after errors, so its
// text decides success.
package sockperf

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload"
)

// Metric names (units by analysis.Unit's suffix rules).
const (
	MetricTPS      = results.MetricTransactions
	MetricTPSSum   = "transactions_sum_per_s"
	MetricMean     = "rtt_mean_us"
	MetricP50      = "rtt_p50_us"
	MetricP90      = "rtt_p90_us"
	MetricP99      = "rtt_p99_us"
	MetricP999     = "rtt_p999_us"
	MetricMin      = "rtt_min_us"
	MetricMax      = "rtt_max_us"
	MetricMsgBytes = "message_bytes"
	// CDF series per replica: RTT µs and cumulative fraction.
	SeriesCDFRTT  = "cdf_rtt_us"
	SeriesCDFFrac = "cdf_fraction"
)

// MinMessage is sockperf's smallest message (its header).
const MinMessage = 14

const (
	serverSettle = 300 * time.Millisecond
	trialSlack   = 20 * time.Second
)

// Driver runs sockperf ping-pong.
type Driver struct {
	Bin             string
	ConnectAttempts int
	ConnectBackoff  time.Duration
}

var _ workload.Driver = (*Driver)(nil)

// New returns a driver with defaults.
func New() *Driver {
	return &Driver{Bin: "sockperf", ConnectAttempts: 5, ConnectBackoff: 100 * time.Millisecond}
}

// Check reports whether sockperf is installed.
func (d *Driver) Check() error {
	_, err := workload.LookProgram(d.Bin, d.Describe().Programs[0])
	return err
}

type plan struct {
	tcp                  bool
	seconds, msg         int
	pinServer, pinClient string
}

func (d *Driver) plan(t workload.Trial) (plan, error) {
	p := plan{tcp: !strings.EqualFold(t.Spec.Protocol, "udp"), msg: t.Spec.MessageSize}
	if len(t.Pairs) == 0 {
		return p, errors.New("sockperf trial has no pairs")
	}
	if p.msg == 0 {
		p.msg = DefaultMessage
	}
	if p.msg < MinMessage {
		return p, fmt.Errorf("sockperf's smallest message is %d B (its header); %d B cannot be sent (use %d for netperf's 1 B TCP_RR)", MinMessage, p.msg, MinMessage)
	}
	if t.Duration%time.Second != 0 || t.Duration < MinDuration {
		return p, fmt.Errorf("sockperf runs whole seconds, at least %v (its warm-up is 400 ms): got %v", MinDuration, t.Duration)
	}
	p.seconds = int(t.Duration / time.Second)
	if t.Spec.Pin != nil {
		p.pinServer, p.pinClient = t.Spec.Pin.Server, t.Spec.Pin.Client
	}
	for i, pr := range t.Pairs {
		if pr.Server == nil || pr.Client == nil || pr.Server.IP() == nil {
			return p, fmt.Errorf("sockperf pair %d lacks a server, a client or an address", i)
		}
	}
	return p, nil
}

func (d *Driver) serverArgv(p plan, ip string, port int) []string {
	argv := []string{d.Bin, "server"}
	if p.tcp {
		argv = append(argv, "--tcp")
	}
	// --uc-reuseaddr: the previous trial's connections on this port may
	// still be in TIME_WAIT, and sockperf does not set SO_REUSEADDR itself.
	return workload.Pinned(append(argv, "-i", ip, "-p", strconv.Itoa(port), "--uc-reuseaddr"), p.pinServer)
}

func (d *Driver) clientArgv(p plan, ip string, port int) []string {
	argv := []string{d.Bin, "ping-pong"}
	if p.tcp {
		argv = append(argv, "--tcp")
	}
	argv = append(argv, "-i", ip, "-p", strconv.Itoa(port), "-t", strconv.Itoa(p.seconds),
		"-m", strconv.Itoa(p.msg), "--full-rtt")
	return workload.Pinned(argv, p.pinClient)
}

// Run runs one trial: servers, a short settle, then all clients at once.
func (d *Driver) Run(ctx context.Context, t workload.Trial) (workload.Result, error) {
	p, err := d.plan(t)
	if err != nil {
		return workload.Result{}, err
	}
	limit := t.Duration + trialSlack
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("trial did not finish within %v", limit))
	defer cancel()
	n := len(t.Pairs)
	servers := make([]engine.Process, 0, n)
	stopServers := func() [][]byte {
		outs := make([][]byte, len(servers))
		for i, s := range servers {
			s.Stop()
			outs[i], _, _ = s.Wait()
		}
		return outs
	}
	for i, pr := range t.Pairs {
		s, err := pr.Server.Start(runCtx, d.serverArgv(p, pr.Server.IP().String(), t.BasePort+i))
		if err != nil {
			stopServers()
			return workload.Result{}, fmt.Errorf("pair %d: start server: %w", i, err)
		}
		servers = append(servers, s)
	}
	// A server cannot say it is listening through engine.Process; UDP
	// clients cannot detect a missing server until the end, so wait a
	// moment (TCP clients also retry a refused connection).
	select {
	case <-time.After(serverSettle):
	case <-runCtx.Done():
		stopServers()
		return workload.Result{}, context.Cause(runCtx)
	}
	measuring := make(chan error, n)
	reps := make([]*Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, pr := range t.Pairs {
		// sockperf 3.7 takes addresses only (`-i localhost` is "Invalid
		// address"), so a server behind a Service is given by the
		// address its name resolves to.
		argv := d.clientArgv(p, engine.AddrIP(pr.Server).String(), t.BasePort+i)
		wg.Go(func() { reps[i], errs[i] = d.runChecked(runCtx, p, pr.Client, argv, measuring) })
	}
	// The window opens when every client measures: a pair that failed
	// (its error is returned below) opens it too, as its peers still run.
	var startErr error
	for range n {
		startErr = errors.Join(startErr, <-measuring)
	}
	if startErr != nil {
		cancel()
	} else if t.Started != nil {
		t.Started(time.Now())
	}
	wg.Wait()
	srvOut := stopServers()
	if err := ctx.Err(); err != nil {
		return workload.Result{}, fmt.Errorf("sockperf trial stopped: %w", err)
	}
	var all []error
	for i := range n {
		if errs[i] != nil {
			e := fmt.Errorf("pair %d (%s -> %s): %w", i, t.Pairs[i].Client.Name(), t.Pairs[i].Server.Name(), errs[i])
			if serr := ParseServerError(srvOut[i]); serr != nil {
				e = fmt.Errorf("%w; server: %w", e, serr)
			}
			all = append(all, e)
		}
	}
	if len(all) > 0 {
		return workload.Result{}, errors.Join(all...)
	}
	return result(reps, p.msg), nil
}

// runChecked is runClient, failing a client whose window ended early
// (checkWindow).
func (d *Driver) runChecked(ctx context.Context, p plan, pod engine.Pod, argv []string, measuring chan<- error) (*Report, error) {
	r, err := d.runClient(ctx, pod, argv, measuring)
	if err != nil {
		return nil, err
	}
	return r, p.checkWindow(r)
}

// validWindowShare is the least share of the window sockperf measures
// at a normal end (the -t seconds less its 400 ms warm-up and 50 ms
// cool-down) a client's valid RunTime may cover, give or take its round
// trips (checkWindow).
const validWindowShare = 0.9

// checkWindow fails a client whose valid window ended early. In
// ping-pong its client waits for each reply and never sends again
// (client.cpp, client_receive_burst), and its statistics end 50 ms
// before the last message it sent: a lost UDP datagram stalls it for
// the rest of the test, and it then prints the half-second before the
// loss ("RunTime=0.527 sec" of a 4-s test, "# dropped messages = 0")
// as a valid result whose rate is of that half-second only.
//
// One message is in flight at a time, so a normal end may lose up to a
// round trip at each edge of the window (the first message after 400 ms,
// the reply to the last sent 50 ms before the end): with round trips of
// half a second (netem delay) or TCP's retransmit stalls the shortfall
// allowed grows with the slowest round trip seen. A stalled UDP client
// saw no round trip of its lost message, so its slowest is short.
func (p plan) checkWindow(r *Report) error {
	want := float64(p.seconds) - 0.45
	short := max((1-validWindowShare)*want, 0.05+2*r.MaxUs/1e6)
	if r.RunTime >= want-short {
		return nil
	}
	why := "its client stalled"
	if !p.tcp {
		why = "a lost or corrupted datagram stalled its client, which waits for each reply and never resends"
	}
	return fmt.Errorf("sockperf measured %.3g s of a %d-s test (about %.3g s at a normal end): %s", r.RunTime, p.seconds, want, why)
}

// testStarts is the line sockperf's client prints when its measured test
// begins. It connects and sends its warm-up messages, then sleeps two
// seconds before it (client.cpp: `sleep(2)` after `warmup()`, in 3.7 as
// now), so its start is not the test's.
const testStarts = "sockperf: Starting test..."

// runClient runs one client, again after a refused connection, and says
// on measuring, once, when its test began: at the line testStarts where
// the pod's output can be watched (engine.Watcher), else when it started.
// A client that fails before says so with its start error, or nil: the
// error is what runClient returns.
func (d *Driver) runClient(ctx context.Context, pod engine.Pod, argv []string, measuring chan<- error) (*Report, error) {
	var once sync.Once
	say := func(err error) { once.Do(func() { measuring <- err }) }
	defer say(nil)
	backoff := d.ConnectBackoff
	for a := 1; ; a++ {
		proc, watched, err := engine.StartWatched(ctx, pod, argv, func(line string) {
			if strings.HasSuffix(line, testStarts) {
				say(nil)
			}
		})
		if err != nil || !watched {
			say(err)
		}
		if err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		out, _, werr := proc.Wait()
		rep, perr := ParseClient(out)
		if perr == nil {
			return rep, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
		if !errors.Is(perr, ErrConnect) || a >= max(d.ConnectAttempts, 1) {
			if werr != nil {
				return nil, fmt.Errorf("%w (%w)", perr, werr)
			}
			return nil, perr
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// result aggregates pairs: rates are averaged (and summed), latencies
// averaged over pairs.
func result(reps []*Report, msg int) workload.Result {
	res := workload.Result{Metrics: map[string]float64{}}
	n := float64(len(reps))
	for _, r := range reps {
		m := map[string]float64{
			MetricTPS: r.TransactionsPerSec(), MetricMean: r.MeanUs,
			MetricMin: r.MinUs, MetricMax: r.MaxUs, MetricMsgBytes: float64(msg),
		}
		for name, p := range map[string]float64{MetricP50: 50, MetricP90: 90, MetricP99: 99, MetricP999: 99.9} {
			if v, ok := r.Percentile(p); ok {
				m[name] = v
			}
		}
		res.PerReplica = append(res.PerReplica, m)
		var xs, fs []float64
		for _, pt := range r.CDF() {
			xs, fs = append(xs, pt[0]), append(fs, pt[1])
		}
		res.Series = append(res.Series, map[string][]float64{SeriesCDFRTT: xs, SeriesCDFFrac: fs})
		for k, v := range m {
			res.Metrics[k] += v / n
		}
		res.Metrics[MetricTPSSum] += r.TransactionsPerSec()
	}
	return res
}
