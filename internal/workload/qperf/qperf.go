// Package qperf drives qperf (Debian qperf, https://github.com/linux-rdma/qperf)
// tcp_lat and udp_lat as cnibench's 1-byte request/response workload: the
// message size of netperf TCP_RR in seed 004, which sockperf (14 B at
// least) cannot send.
//
// Design notes: qperf's tcp_lat is a ping-pong of -m bytes, one message
// in flight, like TCP_RR. It reports "latency" as the client's time over
// the messages both ends received (qperf.c calc_results), which is half
// the mean round trip, and "msg_rate" as those messages per second, twice
// the round trips per second. The driver reports the round trip and
// transactions/s under sockperf's metric names (rtt_mean_us,
// transactions_per_s), and qperf's own number as half_rtt_mean_us. qperf
// prints a mean only: no percentiles, no minimum or maximum.
//
// A qperf server (`qperf -lp PORT`, run under timeout(1), see
// serverArgv) listens for its control connection on the listen port; the
// client then asks it to open the test socket on the data port (-ip) and
// connects to the same address there. Pair i uses
// listen port BasePort+i; its UDP data port is the same number (UDP, so
// no clash), its TCP data port that + engine.SecondPortOffset (a second
// TCP listener cannot share the first's port), which the kube engine's
// Services forward too. The client waits up to -ws
// seconds for the server itself (retrying once a second), so there is no
// retry loop here; the servers get a short settle first so the first
// attempt normally succeeds. The whole -t is measured: qperf has no
// warm-up of its own.
package qperf

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

// Metric names: those of sockperf where the meaning is the same (units by
// analysis.Unit's suffix rules).
const (
	MetricTPS      = results.MetricTransactions
	MetricTPSSum   = "transactions_sum_per_s"
	MetricMean     = "rtt_mean_us"
	MetricMsgBytes = "message_bytes"
	// MetricHalfRTT is what qperf prints as latency: half the mean RTT.
	MetricHalfRTT = "half_rtt_mean_us"
)

const (
	// waitServer is qperf's -ws: how long a client retries connecting.
	waitServer = 5
	// serverSettle: a qperf client that finds no server yet retries only
	// a second later, which would shift the measured window.
	serverSettle = 300 * time.Millisecond
	trialSlack   = 20 * time.Second
)

// Driver runs qperf tcp_lat / udp_lat.
type Driver struct {
	Bin string
}

var _ workload.Driver = (*Driver)(nil)

// New returns a driver with defaults.
func New() *Driver { return &Driver{Bin: "qperf"} }

// Check reports whether qperf is installed.
func (d *Driver) Check() error {
	_, err := workload.LookProgram(d.Bin, d.Describe().Programs[0])
	return err
}

type plan struct {
	tcp                  bool
	seconds, msg, pairs  int
	pinServer, pinClient string
}

func (d *Driver) plan(t workload.Trial) (plan, error) {
	p := plan{tcp: !strings.EqualFold(t.Spec.Protocol, "udp"), msg: t.Spec.MessageSize, pairs: len(t.Pairs)}
	if len(t.Pairs) == 0 {
		return p, errors.New("qperf trial has no pairs")
	}
	if p.msg == 0 {
		p.msg = DefaultMessage
	}
	if p.msg < MinMessage || p.msg > MaxMessage {
		return p, fmt.Errorf("qperf message size %d B is outside %d..%d", p.msg, MinMessage, MaxMessage)
	}
	if t.Duration%time.Second != 0 || t.Duration < time.Second {
		return p, fmt.Errorf("qperf runs whole seconds, at least 1: got %v", t.Duration)
	}
	p.seconds = int(t.Duration / time.Second)
	if last := t.BasePort + engine.SecondPortOffset + len(t.Pairs) - 1; t.BasePort < 1 || last > 65535 {
		return p, fmt.Errorf("qperf ports %d..%d are out of range", t.BasePort, last)
	}
	if t.Spec.Pin != nil {
		p.pinServer, p.pinClient = t.Spec.Pin.Server, t.Spec.Pin.Client
	}
	for i, pr := range t.Pairs {
		if pr.Server == nil || pr.Client == nil || pr.Server.IP() == nil {
			return p, fmt.Errorf("qperf pair %d lacks a server, a client or an address", i)
		}
	}
	return p, nil
}

// ports returns pair i's listen (control) port and data port: the
// server's second port for TCP (a front forwards it beside the first).
func (p plan) ports(base, i int) (listen, data int) {
	if p.tcp {
		return base + i, base + i + engine.SecondPortOffset
	}
	return base + i, base + i
}

// serverArgv runs the server under coreutils' timeout: a qperf server
// forks a child per test, which the engine's Stop (a signal to the
// server alone) would leave running when a trial is cancelled; timeout
// puts itself and the server in a process group of their own and sends
// the signal it gets to the whole group. The limit also bounds a server
// whose stop is lost.
func (d *Driver) serverArgv(p plan, listen int, limit time.Duration) []string {
	secs := strconv.Itoa(int((limit + time.Second - 1) / time.Second))
	return workload.Pinned([]string{"timeout", secs, d.Bin, "-lp", strconv.Itoa(listen)}, p.pinServer)
}

func (d *Driver) clientArgv(p plan, addr string, listen, data int) []string {
	test := "tcp_lat"
	if !p.tcp {
		test = "udp_lat"
	}
	// -e 6: six significant digits (default 3); -uu: fixed units (ns,
	// /sec); -vs prints msg_rate, -vu the parameters used.
	argv := []string{d.Bin, addr, "-lp", strconv.Itoa(listen), "-ip", strconv.Itoa(data),
		"-m", strconv.Itoa(p.msg), "-t", strconv.Itoa(p.seconds), "-ws", strconv.Itoa(waitServer),
		"-e", "6", "-uu", "-vs", "-vu", test}
	return workload.Pinned(argv, p.pinClient)
}

// Run runs one trial: a server per pair, then all clients at once.
func (d *Driver) Run(ctx context.Context, t workload.Trial) (workload.Result, error) {
	p, err := d.plan(t)
	if err != nil {
		return workload.Result{}, err
	}
	limit := t.Duration + trialSlack + waitServer*time.Second
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("trial did not finish within %v", limit))
	defer cancel()
	n := len(t.Pairs)
	servers := make([]engine.Process, 0, n)
	stopServers := func() [][]byte {
		errs := make([][]byte, len(servers))
		for i, s := range servers {
			s.Stop()
			_, errs[i], _ = s.Wait()
		}
		return errs
	}
	for i, pr := range t.Pairs {
		listen, _ := p.ports(t.BasePort, i)
		s, err := pr.Server.Start(runCtx, d.serverArgv(p, listen, limit))
		if err != nil {
			stopServers()
			return workload.Result{}, fmt.Errorf("pair %d: start server: %w", i, err)
		}
		servers = append(servers, s)
	}
	select {
	case <-time.After(serverSettle):
	case <-runCtx.Done():
		stopServers()
		return workload.Result{}, context.Cause(runCtx)
	}
	started := make(chan error, n)
	reps := make([]*Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, pr := range t.Pairs {
		listen, data := p.ports(t.BasePort, i)
		argv := d.clientArgv(p, engine.Addr(pr.Server), listen, data)
		wg.Go(func() { reps[i], errs[i] = runClient(runCtx, pr.Client, argv, started) })
	}
	var startErr error
	for range n {
		startErr = errors.Join(startErr, <-started)
	}
	if startErr != nil {
		cancel()
	} else if t.Started != nil {
		t.Started(time.Now())
	}
	wg.Wait()
	srvErr := stopServers()
	if err := ctx.Err(); err != nil {
		return workload.Result{}, fmt.Errorf("qperf trial stopped: %w", err)
	}
	var all []error
	for i := range n {
		if errs[i] != nil {
			e := fmt.Errorf("pair %d (%s -> %s): %w", i, t.Pairs[i].Client.Name(), t.Pairs[i].Server.Name(), errs[i])
			if s := strings.TrimSpace(string(srvErr[i])); s != "" {
				e = fmt.Errorf("%w; server: %s", e, strings.ReplaceAll(s, "\n", "; "))
			}
			all = append(all, e)
		}
	}
	if len(all) > 0 {
		return workload.Result{}, errors.Join(all...)
	}
	return result(reps, p.msg), nil
}

func runClient(ctx context.Context, pod engine.Pod, argv []string, started chan<- error) (*Report, error) {
	proc, err := pod.Start(ctx, argv)
	started <- err
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	out, stderr, werr := proc.Wait()
	rep, perr := ParseClient(out, stderr)
	if perr == nil {
		return rep, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	if werr != nil {
		return nil, fmt.Errorf("%w (%w)", perr, werr)
	}
	return nil, perr
}

// result aggregates pairs: rates and latencies averaged over pairs,
// transactions/s also summed.
func result(reps []*Report, msg int) workload.Result {
	res := workload.Result{Metrics: map[string]float64{}}
	n := float64(len(reps))
	for _, r := range reps {
		m := map[string]float64{
			MetricTPS: r.TransactionsPerSec(), MetricMean: r.RTTUs(), MetricHalfRTT: r.HalfRTTUs(),
			MetricMsgBytes: float64(msg),
		}
		res.PerReplica = append(res.PerReplica, m)
		for k, v := range m {
			res.Metrics[k] += v / n
		}
		res.Metrics[MetricTPSSum] += r.TransactionsPerSec()
	}
	return res
}
