package iperf3

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// Run runs one trial: a server per pair, then every client at once. It
// returns after every process it started has exited.
func (d *Driver) Run(ctx context.Context, t workload.Trial) (workload.Result, error) {
	p, err := d.plan(t)
	if err != nil {
		return workload.Result{}, err
	}
	// The search runs before any background load: a loss ceiling is a
	// UDP option and background load is TCP-only (study validation).
	p, ceil, found, err := d.ceilingFirst(ctx, t, p)
	if err != nil {
		return workload.Result{}, err
	}
	bg, err := d.startBackground(ctx, t, p)
	if err != nil {
		return workload.Result{}, err
	}
	var res workload.Result
	if p.udp && t.Spec.UDPSender() == study.SenderPktgen {
		// The measured trial offers the rate found, or the one set, with
		// the same sender as the search's probes.
		rate, ok := study.ParseRate(p.rate)
		if found != nil {
			rate, ok = found.Rate, true
		}
		if ok {
			res, err = d.pktgenRun(ctx, t, p, rate, t.Duration, t.Started)
		} else {
			err = fmt.Errorf("pktgen sender: rate %q: want a bitrate like 500M", p.rate)
		}
	} else {
		res, err = d.run(ctx, t, p)
	}
	bgm, bgErr := bg.wait(err == nil)
	if err != nil {
		return res, err
	}
	if bgErr != nil {
		return workload.Result{}, fmt.Errorf("background load: %w", bgErr)
	}
	if t.Spec.Background != nil && bgm == nil {
		// K = 0: the sweep's point without background.
		bgm = map[string]float64{MetricBackgroundConns: 0, MetricBackgroundBitrate: 0}
	}
	for k, v := range bgm {
		res.Metrics[k] = v
	}
	if found != nil {
		addCeiling(&res, *ceil, *found)
	}
	return res, nil
}

func (d *Driver) run(ctx context.Context, t workload.Trial, p plan) (workload.Result, error) {
	// runCtx bounds the trial so a hung tool cannot hang the run, and its
	// cancellation stops whatever is still running when Run returns.
	limit := t.Duration + d.slack()
	timeCtx, cancelTime := context.WithTimeoutCause(ctx, limit, fmt.Errorf("trial did not finish within %v", limit))
	defer cancelTime()
	runCtx, cancel := context.WithCancelCause(timeCtx)
	defer cancel(nil)

	servers, err := d.startServers(runCtx, t, p)
	if err != nil {
		return workload.Result{}, err
	}
	clients := d.runClients(runCtx, cancel, t, p)
	srvOut, srvErr := waitServers(servers, clients)
	if err := ctx.Err(); err != nil {
		return workload.Result{}, fmt.Errorf("iperf3 trial stopped: %w", err)
	}
	return d.collect(t, p, clients, srvOut, srvErr)
}

// startServers starts one server per pair; when one fails to start, those
// already started are stopped.
func (d *Driver) startServers(ctx context.Context, t workload.Trial, p plan) ([]engine.Process, error) {
	servers := make([]engine.Process, 0, len(t.Pairs))
	for i, pr := range t.Pairs {
		s, err := pr.Server.Start(ctx, d.serverArgv(p, t.BasePort+i))
		if err != nil {
			for _, s := range servers {
				s.Stop()
			}
			return nil, fmt.Errorf("%s: start server: %w", pairName(t, i), err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// runClients starts every client at once, reports the start through
// t.Started once all of them started, and waits for all. A pair that
// fails (or fails to start) ends the others through cancel: no partial
// trial.
func (d *Driver) runClients(ctx context.Context, cancel context.CancelCauseFunc, t workload.Trial, p plan) []clientResult {
	n := len(t.Pairs)
	started := make(chan error, n)
	clients := make([]clientResult, n)
	var wg sync.WaitGroup
	for i, pr := range t.Pairs {
		argv := d.clientArgv(p, engine.Addr(pr.Server), t.BasePort+i)
		wg.Go(func() {
			clients[i] = d.runClient(ctx, pr.Client, argv, started)
			if clients[i].err != nil && ctx.Err() == nil {
				cancel(errAborted) // a failed pair fails the trial: end it now
			}
		})
	}
	var startErr error
	for range n {
		startErr = errors.Join(startErr, <-started)
	}
	if startErr != nil {
		cancel(errAborted)
	} else if t.Started != nil {
		t.Started(time.Now())
	}
	wg.Wait()
	return clients
}

// waitServers waits for every server (see waitServer), in parallel.
func waitServers(servers []engine.Process, clients []clientResult) ([][]byte, []error) {
	out := make([][]byte, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { out[i], errs[i] = waitServer(s, clients[i].err == nil) })
	}
	wg.Wait()
	return out, errs
}

// collect turns the pairs' outputs into the trial's result. When pairs
// failed, the errors of those that failed first are returned, not those
// of the pairs stopped because of them (errAborted).
func (d *Driver) collect(t workload.Trial, p plan, clients []clientResult, srvOut [][]byte, srvErr []error) (workload.Result, error) {
	n := len(t.Pairs)
	var errs, aborted []error
	res := workload.Result{Metrics: map[string]float64{}, PerReplica: make([]map[string]float64, n)}
	for i := range n {
		c := clients[i]
		if d.Output != nil {
			d.Output(i, srvOut[i], c.out)
		}
		if c.err != nil {
			err := fmt.Errorf("%s: client: %w", pairName(t, i), c.err)
			if _, serr := ParseServer(srvOut[i]); errors.Is(c.err, ErrConnect) && errors.Is(serr, ErrListen) {
				err = fmt.Errorf("%w; server: %w", err, serr) // why nothing listened
			}
			if errors.Is(err, errAborted) {
				aborted = append(aborted, err) // the pair that failed says why
			} else {
				errs = append(errs, err)
			}
			continue
		}
		s, err := serverReport(srvOut[i], srvErr[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: server: %w", pairName(t, i), err))
			continue
		}
		m, series, err := pairMetrics(s, c.rep)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pairName(t, i), err))
			continue
		}
		res.PerReplica[i] = m
		res.Series = append(res.Series, series)
	}
	if len(errs) == 0 {
		errs = aborted
	}
	if len(errs) > 0 {
		return workload.Result{}, errors.Join(errs...)
	}
	res.Metrics = trialMetrics(res.PerReplica)
	if p.mss > 0 {
		res.Metrics[MetricMSS] = float64(p.mss)
	}
	if p.rate != "" {
		if r, ok := study.ParseRate(p.rate); ok {
			res.Metrics[MetricOffered] = r * float64(max(p.parallel, 1))
			if p.udp && fellBehind(res.PerReplica, MetricSenderBitrate, res.Metrics[MetricOffered]) {
				res.Warnings = append(res.Warnings, iperf3Behind)
			}
		}
	}
	return res, nil
}

// errAborted ends the other pairs of a trial one of whose pairs failed.
var errAborted = errors.New("stopped because another pair failed")

type clientResult struct {
	rep *Client
	out []byte // stdout of the last attempt
	err error
}

// runClient starts the client, retrying when it could not connect: the
// servers were started just before, and a server process that has been
// forked may not be listening yet (there is no portable way to ask it
// without spending its one test, since -1 serves the first connection).
// A refused connection costs milliseconds, so the retried client starts
// well within the warm-up. It sends the first attempt's start error (or
// nil) on started exactly once.
func (d *Driver) runClient(ctx context.Context, pod engine.Pod, argv []string, started chan<- error) clientResult {
	attempts := max(d.ConnectAttempts, 1)
	backoff := d.ConnectBackoff
	for a := 1; ; a++ {
		proc, err := pod.Start(ctx, argv)
		if a == 1 {
			started <- err
		}
		if err != nil {
			return clientResult{err: fmt.Errorf("start: %w", err)}
		}
		out, rep, err := waitClient(ctx, proc)
		if err == nil || !errors.Is(err, ErrConnect) || a >= attempts {
			if err != nil && a > 1 {
				err = fmt.Errorf("after %d attempts: %w", a, err)
			}
			return clientResult{rep: rep, out: out, err: err}
		}
		select {
		case <-ctx.Done():
			return clientResult{err: fmt.Errorf("stopped: %w", context.Cause(ctx))}
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func waitClient(ctx context.Context, proc engine.Process) ([]byte, *Client, error) {
	stdout, _, werr := proc.Wait()
	rep, perr := ParseClient(stdout)
	switch {
	case werr == nil && perr == nil:
		return stdout, rep, nil
	case ctx.Err() != nil:
		return stdout, nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
	case isToolError(perr):
		return stdout, nil, perr // what iperf3 said beats its exit status
	case werr != nil:
		return stdout, nil, werr // keeps stderr (engine.ExitError)
	}
	return stdout, nil, perr
}

var errServerHung = fmt.Errorf("did not exit within %v after its client finished", serverGrace)

// waitServer waits for a server and returns its stdout and exit error. A
// server whose client failed would wait forever, so it is stopped at once;
// one whose client succeeded exits by itself (-1) once it has printed its
// report, and is stopped (errServerHung) only if it does not.
func waitServer(s engine.Process, clientOK bool) ([]byte, error) {
	if !clientOK {
		s.Stop()
		out, _, err := s.Wait()
		return out, err
	}
	var hung atomic.Bool
	tm := time.AfterFunc(serverGrace, func() { hung.Store(true); s.Stop() })
	out, _, err := s.Wait()
	tm.Stop()
	if hung.Load() {
		err = errServerHung
	}
	return out, err
}

// serverReport parses a server's output; when that fails it says why the
// most useful way: hung, iperf3's own message, the exit status and stderr,
// or the parse error.
func serverReport(out []byte, waitErr error) (*Server, error) {
	s, err := ParseServer(out)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(waitErr, errServerHung), waitErr != nil && !isToolError(err):
		return nil, waitErr
	}
	return nil, err
}

func isToolError(err error) bool {
	var te *ToolError
	return errors.As(err, &te)
}

func pairName(t workload.Trial, i int) string {
	pr := t.Pairs[i]
	return fmt.Sprintf("pair %d (client %s on %s -> server %s on %s, %s port %d)",
		i, pr.Client.Name(), pr.Client.Node(), pr.Server.Name(), pr.Server.Node(), engine.Addr(pr.Server), t.BasePort+i)
}
