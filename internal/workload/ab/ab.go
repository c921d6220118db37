// Package ab is cnibench's HTTP workload, as in seed 004: nginx in the
// server pod serves one file of the study's size (5 MB by default) and
// ApacheBench (ab) in the client pod fetches it at a given concurrency.
//
// Design notes: ab is the paper's own client, is in Debian main
// (apache2-utils) and prints, with -e, every percentile 0..100 of request
// latency at microsecond resolution, which is what the CDF figure needs;
// wrk would give higher request rates from one core but prints a coarser
// latency distribution and is not what the paper ran. ab opens a new
// connection per request (no -k), so each request is a full
// connect/request/response/close, the TCP_CRR-like test. nginx is started
// per trial from a private prefix (nginx.go) and stopped with SIGTERM when
// the trial ends, failed or not; its directory is removed. ab has no
// warm-up, so the driver runs a throw-away ab for the study's warm-up
// first and measures the rest.
//
// Timeouts: when no response comes within -s seconds, ab gives up on the
// whole test and prints only how many requests completed. That is a
// result, not a failure: the pair reports the completed requests over
// ab's wall time, and every request that was in flight (one per
// concurrent connection: ab keeps -c requests open and the timeout fires
// only when none of them moved) counts in timeouts_count and
// errors_count. Only a run where no request completed fails the trial.
// A warm-up that stalls is cut at the end of the warm-up (plus a grace)
// so the measured run still starts when the runner's CPU window does.
package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// Metric names.
const (
	MetricRPS      = results.MetricRequests
	MetricTransfer = "transfer_bps"
	MetricMean     = "latency_mean_ms"
	MetricP50      = "latency_p50_ms"
	MetricP90      = "latency_p90_ms"
	MetricP99      = "latency_p99_ms"
	MetricErrors   = "errors_count"
	MetricTimeouts = "timeouts_count"
	MetricRequests = "requests_count"
	MetricBody     = "body_bytes"
	MetricConc     = "concurrency"
	// MetricTarget is the study's request count for the measured run
	// (option requests); requests_count below it means the trial's end
	// came first.
	MetricTarget  = "requests_target"
	SeriesCDFMs   = "cdf_latency_ms"
	SeriesCDFFrac = "cdf_fraction"
)

const (
	// DefaultResponseTimeout is ab -s: how long ab waits for any of its
	// open requests to make progress before it gives up.
	DefaultResponseTimeout = 30 * time.Second
	serverSettle           = 300 * time.Millisecond
	// trialSlack is added to the duration and one response timeout for
	// the trial's deadline (nginx start, connect retries, the warm-up's
	// grace, process exits).
	trialSlack = 15 * time.Second
	// warmupGrace is how long after the end of the warm-up a stalled
	// warm-up ab is stopped.
	warmupGrace     = 2 * time.Second
	connectAttempts = 5
	// maxRequestsPerSec sizes ab -n: ab allocates its per-request table
	// up front (~40 B a request), and stops at -n even before -t ends, so
	// -n must be above what one ab can reach (tens of thousands/s).
	maxRequestsPerSec = 50000
)

// Driver runs nginx + ab.
type Driver struct {
	AB, Nginx string
	// ResponseTimeout is ab -s, in whole seconds (at least 1); zero means
	// DefaultResponseTimeout. Tests shorten it.
	ResponseTimeout time.Duration
}

func (d *Driver) timeout() time.Duration {
	if d.ResponseTimeout <= 0 {
		return DefaultResponseTimeout
	}
	return max(d.ResponseTimeout.Truncate(time.Second), time.Second)
}

var _ workload.Driver = (*Driver)(nil)

// New returns a driver using ab and nginx from PATH.
func New() *Driver { return &Driver{AB: "ab", Nginx: "nginx"} }

// Check reports whether both programs are installed.
func (d *Driver) Check() error {
	if _, err := workload.LookProgram(d.AB, programAB); err != nil {
		return err
	}
	if _, err := workload.LookProgram(d.Nginx, programNginx); err != nil {
		// /usr/sbin is outside a non-root PATH on Debian.
		if _, err2 := exec.LookPath("/usr/sbin/" + d.Nginx); err2 == nil {
			d.Nginx = "/usr/sbin/" + d.Nginx
			return nil
		}
		return fmt.Errorf("%w; its service need not run", err)
	}
	return nil
}

type plan struct {
	conc           int
	size           int64
	warm, measured int
	// requests bounds the measured run's requests (ab -n); 0: only its
	// time does.
	requests   int
	pinS, pinC string
}

// requestLimit is ab -n for a run of secs seconds: the study's request count for
// the measured run, else more than one ab can make in that time, so only
// -t ends it.
func (p plan) requestLimit(secs int, measured bool) int {
	if measured && p.requests > 0 {
		return p.requests
	}
	return maxRequestsPerSec * max(secs, 1)
}

func (d *Driver) plan(t workload.Trial) (plan, error) {
	p := plan{conc: t.Spec.Concurrent(), requests: t.Spec.Requests}
	if len(t.Pairs) == 0 {
		return p, errors.New("HTTP trial has no pairs")
	}
	size := t.Spec.Size
	if size == "" {
		size = DefaultSize
	}
	n, ok := study.ParseBytes(size)
	if !ok || n <= 0 {
		return p, fmt.Errorf("HTTP body size %q is not a size", size)
	}
	p.size = n
	if t.Duration%time.Second != 0 || t.Warmup%time.Second != 0 || t.Duration-t.Warmup < time.Second {
		return p, fmt.Errorf("ab runs whole seconds: duration %v, warm-up %v", t.Duration, t.Warmup)
	}
	p.warm, p.measured = int(t.Warmup/time.Second), int((t.Duration-t.Warmup)/time.Second)
	if t.Spec.Pin != nil {
		p.pinS, p.pinC = t.Spec.Pin.Server, t.Spec.Pin.Client
	}
	return p, nil
}

// abArgv runs ab for seconds and at most n requests: ab stops at
// whichever comes first (-n after -t overrides the 50000 that -t
// implies).
func (d *Driver) abArgv(p plan, url string, seconds, n int) []string {
	return workload.Pinned([]string{d.AB, "-q", "-c", strconv.Itoa(p.conc), "-t", strconv.Itoa(seconds),
		"-n", strconv.Itoa(n), "-s", strconv.Itoa(int(d.timeout() / time.Second)), "-r", "-e", "/dev/stdout", url}, p.pinC)
}

// Run starts nginx in every server pod, then ab in every client pod.
func (d *Driver) Run(ctx context.Context, t workload.Trial) (workload.Result, error) {
	p, err := d.plan(t)
	if err != nil {
		return workload.Result{}, err
	}
	limit := t.Duration + d.timeout() + trialSlack
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("trial did not finish within %v", limit))
	defer cancel()

	n := len(t.Pairs)
	var servers []*server
	// stopAll ends every nginx (idempotent) and returns the tails of
	// their error logs, for failure messages.
	stopAll := func() []string {
		logs := make([]string, n)
		for i, s := range servers {
			logs[i] = s.stop()
		}
		return logs
	}
	defer stopAll()
	servers, urls, err := d.startServers(runCtx, t, p)
	if err != nil {
		return workload.Result{}, err
	}
	select {
	case <-time.After(serverSettle):
	case <-runCtx.Done():
		return workload.Result{}, context.Cause(runCtx)
	}

	reps := make([]*Report, n)
	errs := make([]error, n)
	started := make(chan error, n)
	var wg sync.WaitGroup
	for i, pr := range t.Pairs {
		wg.Go(func() { reps[i], errs[i] = d.client(runCtx, pr.Client, p, urls[i], started) })
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
	if err := ctx.Err(); err != nil {
		return workload.Result{}, fmt.Errorf("HTTP trial stopped: %w", err)
	}
	for i, r := range reps {
		if errs[i] == nil {
			errs[i] = checkGood(r)
		}
	}
	if !slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return result(reps, p.requests), nil
	}
	logs := stopAll()
	var all []error
	for i, err := range errs {
		if err != nil {
			if logs[i] != "" {
				err = fmt.Errorf("%w; nginx: %s", err, logs[i])
			}
			all = append(all, fmt.Errorf("pair %d (%s -> %s): %w", i, t.Pairs[i].Client.Name(), t.Pairs[i].Server.Name(), err))
		}
	}
	return workload.Result{}, errors.Join(all...)
}

// server is one pair's nginx.
type server struct {
	proc engine.Process
	site *site // nil when the site lives in the pod (Serve)
	once sync.Once
	log  string
}

// startServers starts each pair's nginx and returns them with the URL
// each pair's client fetches; on an error, with the servers started
// before it, which the caller stops.
func (d *Driver) startServers(ctx context.Context, t workload.Trial, p plan) ([]*server, []string, error) {
	servers := make([]*server, 0, len(t.Pairs))
	urls := make([]string, len(t.Pairs))
	body := "" // the first local site's, which the others link
	for i, pr := range t.Pairs {
		port := strconv.Itoa(t.BasePort + i)
		s, err := d.startServer(ctx, pr.Server, net.JoinHostPort(pr.Server.IP().String(), port), p, body)
		if err != nil {
			return servers, nil, fmt.Errorf("pair %d: %w", i, err)
		}
		servers = append(servers, s)
		if s.site != nil && body == "" {
			body = s.site.body()
		}
		// Clients use the address the engine gives them (a Service name
		// on kube); nginx listens on the pod's own.
		urls[i] = "http://" + net.JoinHostPort(engine.Addr(pr.Server), port) + BodyPath
	}
	return servers, urls, nil
}

// startServer starts nginx in pod on listen. A pod with its own
// filesystem (engine.Helper: kube) gets the site written and nginx run
// by `cnibench agent nginx` inside it; otherwise the site is written on
// this machine, which the pod shares, and nginx started directly; body
// is a site's body to link ("" for none: newSite).
func (d *Driver) startServer(ctx context.Context, pod engine.Pod, listen string, p plan, body string) (*server, error) {
	if h, ok := pod.(engine.Helper); ok {
		argv := h.HelperArgv("nginx", "--listen", listen, "--size", strconv.FormatInt(p.size, 10), "--nginx", d.Nginx)
		proc, err := pod.Start(ctx, workload.Pinned(argv, p.pinS))
		if err != nil {
			return nil, fmt.Errorf("start nginx: %w", err)
		}
		return &server{proc: proc}, nil
	}
	st, err := newSite(listen, p.size, body)
	if err != nil {
		return nil, fmt.Errorf("nginx site: %w", err)
	}
	proc, err := pod.Start(ctx, workload.Pinned(st.argv(d.Nginx), p.pinS))
	if err != nil {
		_ = st.remove()
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	return &server{proc: proc, site: st}, nil
}

// stop ends nginx (SIGTERM), removes a local site and returns the tail
// of nginx's error log; later calls return the same.
func (s *server) stop() string {
	s.once.Do(func() {
		s.proc.Stop()
		_, stderr, _ := s.proc.Wait()
		if s.site != nil {
			s.log = s.site.errorLog()
			_ = s.site.remove()
			return
		}
		s.log = tailString(stderr, 400)
	})
	return s.log
}

func tailString(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// client waits until nginx answers (a refused first attempt is retried),
// runs the warm-up ab, then the measured one. It signals started as soon
// as its first ab is running (or could not be started): the runner's
// metric window opens Warmup after that signal, which is when the
// measured ab starts.
func (d *Driver) client(ctx context.Context, pod engine.Pod, p plan, url string, started chan<- error) (*Report, error) {
	first := true
	var startErr error
	var t0 time.Time
	signal := func(err error) {
		if first {
			started <- err
			first, startErr, t0 = false, err, time.Now()
		}
	}
	if p.warm == 0 {
		return d.runAB(ctx, pod, p, url, p.measured, true, signal)
	}
	backoff := 100 * time.Millisecond
	for a := 1; ; a++ {
		_, err := d.warmup(ctx, pod, p, url, signal)
		if startErr != nil {
			return nil, startErr
		}
		// A warm-up that timed out is not measured; the measured run
		// says whether the server answers.
		if err == nil || errors.Is(err, ErrTimeout) {
			break
		}
		if !errors.Is(err, ErrConnect) {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if a >= connectAttempts || ctx.Err() != nil {
			break // the measured run reports the refusal
		}
		time.Sleep(backoff)
		backoff *= 2
	}
	// A warm-up that timed out ends early; the measured run still starts
	// when the warm-up was planned to end, where the runner's window is.
	select {
	case <-time.After(time.Until(t0.Add(time.Duration(p.warm) * time.Second))):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return d.runAB(ctx, pod, p, url, p.measured, true, nil)
}

// warmup runs the throw-away ab, stopped warmupGrace after its -t if it
// is still waiting for a stalled server (then the result is ErrTimeout).
func (d *Driver) warmup(ctx context.Context, pod engine.Pod, p plan, url string, onStart func(error)) (*Report, error) {
	wctx, cancel := context.WithTimeout(ctx, time.Duration(p.warm)*time.Second+warmupGrace)
	defer cancel()
	rep, err := d.runAB(wctx, pod, p, url, p.warm, false, onStart)
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("warm-up stopped after %v: %w", time.Duration(p.warm)*time.Second+warmupGrace, ErrTimeout)
	}
	return rep, err
}

// runAB runs one ab for secs seconds and parses what it printed. A run
// that timed out after some requests completed is a Report (TimedOut)
// completed here with what ab did not print: the wall time, the rate
// over it, the abandoned requests (one per concurrent connection) and
// the plan's body size and concurrency.
//
// onStart, when not nil, is called once ab has been started, or with the
// error when it could not be.
func (d *Driver) runAB(ctx context.Context, pod engine.Pod, p plan, url string, secs int, measured bool, onStart func(error)) (*Report, error) {
	t0 := time.Now()
	proc, err := pod.Start(ctx, d.abArgv(p, url, secs, p.requestLimit(secs, measured)))
	if onStart != nil {
		onStart(err)
	}
	if err != nil {
		return nil, err
	}
	out, stderr, werr := proc.Wait()
	elapsed := time.Since(t0)
	rep, perr := Parse(append(out, stderr...))
	switch {
	case perr == nil && rep.TimedOut:
		// ab exits with 70007 & 0xff = 119 here; the exit status says
		// nothing Parse did not.
		rep.Seconds = elapsed.Seconds()
		rep.RequestsPerSec = rep.Complete / rep.Seconds
		rep.Timeouts = float64(p.conc)
		rep.Concurrency = float64(p.conc)
		rep.DocumentBytes = float64(p.size)
		return rep, nil
	case perr != nil && werr != nil && !isTool(perr):
		return nil, werr
	}
	return rep, perr
}

func isTool(err error) bool {
	var te *ToolError
	return errors.As(err, &te)
}
