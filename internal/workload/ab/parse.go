package ab

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/workload"
)

// Report is what `ab -e /dev/stdout` printed: its summary plus the
// percentile table (0..100 % of requests served within T ms), which has
// sub-millisecond resolution where the summary's table is whole ms.
type Report struct {
	Seconds        float64 // Time taken for tests
	Complete       float64
	Failed         float64 // all kinds (connect, receive, length, exceptions)
	Non2xx         float64
	WriteErrors    float64 // "Write errors": requests ab could not send
	DocumentBytes  float64 // Document Length
	TotalBytes     float64 // Total transferred (headers included)
	RequestsPerSec float64
	MeanMs         float64 // Time per request (mean), per client
	// TransferBps is ab's "Transfer rate" in bit/s (ab's Kbytes are 1024 B).
	TransferBps float64
	Concurrency float64
	// Percent maps 0..100 to the latency (ms) that share of requests was
	// served within.
	Percent map[int]float64
	// TimedOut is set when ab gave up because no response came within
	// its -s timeout. ab then prints only "Total of N requests completed"
	// (Complete): no summary, no rates, no percentiles. Seconds,
	// RequestsPerSec, Timeouts, DocumentBytes and Concurrency are filled
	// in by the driver, which knows the wall time and the plan (Timeout);
	// TransferBps and MeanMs stay NaN because ab never said them.
	TimedOut bool
	// Timeouts is the number of requests abandoned at the timeout.
	Timeouts float64
}

// Errors is failed requests plus non-2xx responses plus timeouts.
func (r *Report) Errors() float64 { return r.Failed + r.Non2xx + r.Timeouts }

// Bad is what ab counted as complete but was no good response: failed
// requests (a reset, a wrong length, an exception; ab counts one attempt
// under several kinds at times, so this may exceed Complete), non-2xx
// answers and writes that failed. ab closes each such connection as a
// completed request, so its rate and timing table count them.
func (r *Report) Bad() float64 { return r.Failed + r.Non2xx + r.WriteErrors }

// CDF returns (latency ms, fraction) points from the percentile table.
func (r *Report) CDF() [][2]float64 {
	ps := make([]int, 0, len(r.Percent))
	for p := range r.Percent {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	out := make([][2]float64, 0, len(ps))
	for _, p := range ps {
		out = append(out, [2]float64{r.Percent[p], float64(p) / 100})
	}
	return out
}

// Kinds of ab failure.
var (
	// ErrConnect: nothing listened (ab gives up at the first refusal).
	ErrConnect = errors.New("ab could not connect to the server")
	// ErrTimeout: a response did not come within -s seconds before any
	// request completed. A timeout after some requests completed is not
	// an error: Parse returns a Report with TimedOut set.
	ErrTimeout = errors.New("ab timed out waiting for a response")
	// ErrOpenFiles: ab could not open a socket for a concurrent request
	// (EMFILE): the concurrency is above its open-file limit.
	ErrOpenFiles = errors.New("ab ran out of open files")
)

// emfile is EMFILE's number, as apr_err prints it ("(24)").
const emfile = "24"

// ToolError is an error ab printed.
type ToolError struct {
	Msg  string
	kind error
}

func (e *ToolError) Error() string { return "ab: " + e.Msg }

// Unwrap returns ErrConnect, ErrTimeout, ErrOpenFiles or nil.
func (e *ToolError) Unwrap() error { return e.kind }

var (
	pctRE = regexp.MustCompile(`^([0-9]{1,3}),([0-9.]+)$`)
	// aprRE is an error ab printed on stderr before exiting: apr_err's
	// "WHAT: MESSAGE (CODE)" (support/ab.c), WHAT an APR call
	// ("apr_socket_recv", "apr_socket_connect()") or what ab was doing
	// ("socket", "socket nonblock", "bind"). ab's summary lines start
	// with a capital and end in no code. With -q, stdout ends in "(be
	// patient)..." without a newline, so when stdout and stderr are
	// joined the error follows on the same line.
	aprRE = regexp.MustCompile(`(?:^|\.\.\.)([a-z_][a-z_ ]*(?:\(\))?): (.*\((-?[0-9]+)\))$`)
	// totalRE is what ab prints on stdout when it exits on an error after
	// some requests completed. With -q it follows "(be patient)..." on the
	// same line, so it is not anchored.
	totalRE = regexp.MustCompile(`Total of ([0-9]+) requests completed`)
	numRE   = regexp.MustCompile(`^([0-9.]+)`)
	fields  = map[string]func(r *Report, v float64){
		"Time taken for tests":     func(r *Report, v float64) { r.Seconds = v },
		"Complete requests":        func(r *Report, v float64) { r.Complete = v },
		"Failed requests":          func(r *Report, v float64) { r.Failed = v },
		"Non-2xx responses":        func(r *Report, v float64) { r.Non2xx = v },
		"Write errors":             func(r *Report, v float64) { r.WriteErrors = v },
		"Document Length":          func(r *Report, v float64) { r.DocumentBytes = v },
		"Total transferred":        func(r *Report, v float64) { r.TotalBytes = v },
		"Requests per second":      func(r *Report, v float64) { r.RequestsPerSec = v },
		"Transfer rate":            func(r *Report, v float64) { r.TransferBps = v * 1024 * 8 },
		"Concurrency Level":        func(r *Report, v float64) { r.Concurrency = v },
		"Time per request (first)": func(r *Report, v float64) { r.MeanMs = v },
	}
)

// Parse reads ab's stdout and stderr (in that order, or combined).
//
// When ab gave up on a response timeout (apr_pollset_poll: The timeout
// specified has expired) after N > 0 requests completed, the result is a
// Report with TimedOut set and Complete = N; with none completed it is a
// ToolError wrapping ErrTimeout. Every other ab error is a ToolError.
func Parse(out []byte) (*Report, error) {
	r := &Report{Percent: map[int]float64{}, RequestsPerSec: math.NaN()}
	seen := map[string]bool{}
	var timeout *ToolError
	total := -1.0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := totalRE.FindStringSubmatch(line); m != nil {
			total = workload.Num(m[1])
			continue
		}
		if m := aprRE.FindStringSubmatch(line); m != nil {
			te := &ToolError{Msg: m[1] + ": " + m[2]}
			switch {
			case strings.Contains(m[2], "timeout"):
				// Keep scanning: the completed count may come after it
				// when stdout and stderr were combined.
				te.kind = ErrTimeout
				timeout = te
				continue
			case strings.Contains(m[2], "refused"):
				te.kind = ErrConnect
			case m[3] == emfile:
				te.kind = ErrOpenFiles
				te.Msg += ": ab holds a socket per concurrent request, more than its open-file limit (RLIMIT_NOFILE) allows: lower concurrency or raise the client's limit"
			}
			return nil, te
		}
		if timeout != nil {
			continue
		}
		if m := pctRE.FindStringSubmatch(line); m != nil {
			p, _ := strconv.Atoi(m[1])
			if p <= 100 {
				r.Percent[p] = workload.Num(m[2])
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if k == "Time per request" {
			if seen[k] {
				continue // the second one is across all concurrent requests
			}
			k = "Time per request (first)"
			seen["Time per request"] = true
		}
		set, ok := fields[k]
		if !ok {
			continue
		}
		m := numRE.FindStringSubmatch(strings.TrimSpace(v))
		if m == nil {
			return nil, fmt.Errorf("ab: %s: no number in %q", k, v)
		}
		set(r, workload.Num(m[1]))
		seen[k] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ab output: %w", err)
	}
	if timeout != nil {
		return timedOut(timeout, total)
	}
	if err := r.check(out, seen); err != nil {
		return nil, err
	}
	r.pastEnd()
	return r, nil
}

// pastEnd replaces the percentiles ab read past the end of its table.
// ab prints percentile p (0 < p < 100) as stats[(int)(0.5 +
// done*p/100.0)] (support/ab.c, output_results), an index that reaches
// done, one past the slowest request, for the top percentiles of a run
// of few requests (p99 at 50 requests or fewer): ab then prints a
// time-bounded run's unused, zeroed record (98,0.000) or whatever lies
// past the end of an -n run's table (98,0.257). Those percentiles are
// the slowest request, stats[done-1], which ab prints as 100.
func (r *Report) pastEnd() {
	done := int(r.Complete)
	slowest, ok := r.Percent[100]
	if !ok || done <= 0 {
		return
	}
	for p := 1; p < 100; p++ {
		if _, ok := r.Percent[p]; ok && int(0.5+float64(done)*float64(p)/100) >= done {
			r.Percent[p] = slowest
		}
	}
}

// timedOut is the report of a run ab gave up on (see the package's
// notes): the completed requests, or the timeout when none completed.
func timedOut(timeout *ToolError, total float64) (*Report, error) {
	if !(total > 0) || !workload.Finite(total) {
		timeout.Msg += " before any request completed"
		return nil, timeout
	}
	return &Report{Complete: total, TimedOut: true, Percent: map[int]float64{},
		RequestsPerSec: math.NaN(), TransferBps: math.NaN(), MeanMs: math.NaN()}, nil
}

// check rejects a report that lacks a summary line (seen names those
// read), has invalid numbers, or got no response at all.
func (r *Report) check(out []byte, seen map[string]bool) error {
	for _, k := range []string{"Complete requests", "Time taken for tests", "Requests per second", "Transfer rate"} {
		if !seen[k] {
			if len(bytes.TrimSpace(out)) == 0 {
				return errors.New("ab printed nothing")
			}
			return fmt.Errorf("ab output lacks %q: %q", k, workload.Clip(string(out), 200))
		}
	}
	if !workload.Finite(r.Seconds, r.Complete, r.RequestsPerSec, r.TransferBps, r.MeanMs) || !(r.Seconds > 0) {
		return fmt.Errorf("ab reported invalid numbers (%v requests in %v s)", r.Complete, r.Seconds)
	}
	if r.Complete == 0 {
		return errors.New("ab completed no request")
	}
	// With -r (which the driver passes so one reset does not end the
	// test) a refused connection is not fatal to ab: it counts every
	// attempt as a failed "complete" request and prints a summary with
	// nothing transferred. No request got a response, so that is the
	// connect failure it would have been without -r.
	if seen["Total transferred"] && r.TotalBytes == 0 && r.Failed > 0 {
		return &ToolError{Msg: fmt.Sprintf("no response to any of %v requests (%v failed, nothing transferred)", r.Complete, r.Failed), kind: ErrConnect}
	}
	return nil
}
