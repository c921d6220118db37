package sockperf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/workload"
)

// Report is what a sockperf ping-pong client printed (--full-rtt), for
// its valid window (sockperf leaves out its own warm-up and the tail).
type Report struct {
	Version string
	// RunTime is the valid window, seconds; Sent and Received count the
	// messages in it. Transactions/s is Received/RunTime.
	RunTime, Sent, Received float64
	// MeanUs and StdDevUs are the mean round trip and its deviation, µs.
	MeanUs, StdDevUs float64
	MinUs, MaxUs     float64
	// Percentiles maps percentile (50, 90, 99, 99.9, ...) to RTT in µs.
	Percentiles map[float64]float64
	// Dropped, Duplicated and OutOfOrder are sockperf's counters.
	Dropped, Duplicated, OutOfOrder float64
}

// TransactionsPerSec is round trips completed per second of the window.
func (r *Report) TransactionsPerSec() float64 { return r.Received / r.RunTime }

// Percentile returns the RTT at p (µs) and whether sockperf printed it.
func (r *Report) Percentile(p float64) (float64, bool) {
	v, ok := r.Percentiles[p]
	return v, ok
}

// CDF returns (RTT µs, cumulative fraction) points from the printed
// percentiles, min (0) and max (1), sorted by RTT.
func (r *Report) CDF() [][2]float64 {
	pts := [][2]float64{{r.MinUs, 0}}
	ps := make([]float64, 0, len(r.Percentiles))
	for p := range r.Percentiles {
		ps = append(ps, p)
	}
	sort.Float64s(ps)
	for _, p := range ps {
		pts = append(pts, [2]float64{r.Percentiles[p], p / 100})
	}
	return append(pts, [2]float64{r.MaxUs, 1})
}

// ErrConnect: the TCP client could not connect (nothing listening yet).
var ErrConnect = errors.New("sockperf could not connect to the server")

// ErrNoReplies: the client got no reply (UDP server down, or a window too
// short for any valid observation).
var ErrNoReplies = errors.New("sockperf got no valid round trips")

// ToolError is an error sockperf printed; it exits 0 after most of them.
type ToolError struct {
	Msg  string
	kind error
}

func (e *ToolError) Error() string { return "sockperf: " + e.Msg }

// Unwrap returns ErrConnect, ErrNoReplies or nil.
func (e *ToolError) Unwrap() error { return e.kind }

var (
	ansiRE  = regexp.MustCompile("\x1b\\[[0-9;]*m")
	validRE = regexp.MustCompile(`\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=([0-9]+); ReceivedMessages=([0-9]+)`)
	// sockperf 3.8 and later print more after std-dev (mean-ad=...,
	// median-ad=..., 99.0% ci=[...]) inside the same parentheses.
	avgRE     = regexp.MustCompile(`avg-rtt=([0-9.]+) \(std-dev=([0-9.]+)[,)]`)
	pctRE     = regexp.MustCompile(`---> percentile ([0-9.]+) =\s*([0-9.]+)`)
	minMaxRE  = regexp.MustCompile(`---> <(MIN|MAX)> observation =\s*([0-9.]+)`)
	countsRE  = regexp.MustCompile(`# dropped messages = ([0-9]+); # duplicated messages = ([0-9]+); # out-of-order messages = ([0-9]+)`)
	versionRE = regexp.MustCompile(`== version #(\S+)`)
)

// ParseClient reads a ping-pong client's output. Only the first server's
// statistics are read (cnibench runs one server per client).
func ParseClient(out []byte) (*Report, error) {
	text := ansiRE.ReplaceAll(out, nil)
	r := &Report{Percentiles: map[float64]float64{}}
	var got struct{ valid, avg, min, max bool }
	var errMsg string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "Printing statistics for Server No: 1"):
			goto done // one server only
		case versionRE.MatchString(line):
			r.Version = versionRE.FindStringSubmatch(line)[1]
		case strings.Contains(line, "ERROR:") && errMsg == "":
			errMsg = strings.TrimSpace(line[strings.Index(line, "ERROR:")+len("ERROR:"):])
		case strings.Contains(line, "Invalid message size") && errMsg == "":
			errMsg = strings.TrimSpace(strings.TrimPrefix(line, "sockperf:"))
		case strings.Contains(line, "No messages were received"), strings.Contains(line, "No valid observations"):
			return nil, &ToolError{Msg: strings.TrimSpace(strings.TrimPrefix(line, "sockperf:")), kind: ErrNoReplies}
		case validRE.MatchString(line):
			m := validRE.FindStringSubmatch(line)
			r.RunTime, r.Sent, r.Received = workload.Num(m[1]), workload.Num(m[2]), workload.Num(m[3])
			got.valid = true
		case avgRE.MatchString(line):
			m := avgRE.FindStringSubmatch(line)
			r.MeanUs, r.StdDevUs = workload.Num(m[1]), workload.Num(m[2])
			got.avg = true
		case pctRE.MatchString(line):
			m := pctRE.FindStringSubmatch(line)
			r.Percentiles[workload.Num(m[1])] = workload.Num(m[2])
		case minMaxRE.MatchString(line):
			m := minMaxRE.FindStringSubmatch(line)
			if m[1] == "MIN" {
				r.MinUs, got.min = workload.Num(m[2]), true
			} else {
				r.MaxUs, got.max = workload.Num(m[2]), true
			}
		case countsRE.MatchString(line):
			m := countsRE.FindStringSubmatch(line)
			r.Dropped, r.Duplicated, r.OutOfOrder = workload.Num(m[1]), workload.Num(m[2]), workload.Num(m[3])
		}
	}
done:
	if errMsg != "" {
		te := &ToolError{Msg: errMsg}
		if strings.Contains(errMsg, "connect") {
			te.kind = ErrConnect
		}
		return nil, te
	}
	if !got.valid || !got.avg || !got.min || !got.max || len(r.Percentiles) == 0 {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, errors.New("sockperf printed nothing")
		}
		return nil, fmt.Errorf("sockperf output has no ping-pong statistics: %q", workload.Clip(string(text), 200))
	}
	if !(r.RunTime > 0) || !(r.Received > 0) || !workload.Finite(r.RunTime, r.Received, r.MeanUs, r.MinUs, r.MaxUs) {
		return nil, fmt.Errorf("sockperf reported an empty or invalid window (%v messages in %v s)", r.Received, r.RunTime)
	}
	return r, nil
}

// ParseServerError returns the error a server printed, nil if none.
func ParseServerError(out []byte) error {
	text := ansiRE.ReplaceAll(out, nil)
	i := bytes.Index(text, []byte("ERROR:"))
	if i < 0 {
		return nil
	}
	msg := string(text[i+len("ERROR:"):])
	msg = strings.Join(strings.Fields(strings.SplitN(msg, "sockperf:", 2)[0]), " ")
	return &ToolError{Msg: msg}
}
