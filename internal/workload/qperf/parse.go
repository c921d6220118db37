package qperf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Report is what a qperf latency client printed (tcp_lat or udp_lat with
// -vs -vu). qperf's "latency" is not a round trip: it is the client's
// wall time divided by the messages received by both ends (qperf.c
// calc_results), so half the mean round trip; its "msg_rate" counts those
// messages per second, so twice the round trips per second.
type Report struct {
	// Test is the test qperf ran ("tcp_lat").
	Test string
	// LatencySec is qperf's latency as printed, seconds (half a round trip).
	LatencySec float64
	// MsgRate is qperf's msg_rate, messages per second, both directions.
	MsgRate float64
	// MsgSize is the message size qperf used, bytes (0 if not printed).
	MsgSize float64
	// TimeSec is the test's duration, seconds (0 if not printed).
	TimeSec float64
}

// RTTUs is the mean round trip in µs: twice qperf's latency.
func (r *Report) RTTUs() float64 { return 2 * r.LatencySec * 1e6 }

// HalfRTTUs is qperf's latency as it reports it, in µs.
func (r *Report) HalfRTTUs() float64 { return r.LatencySec * 1e6 }

// TransactionsPerSec is round trips per second: half qperf's msg_rate.
func (r *Report) TransactionsPerSec() float64 { return r.MsgRate / 2 }

// ErrConnect: the client could not reach the server's listen port
// within -ws seconds.
var ErrConnect = errors.New("qperf could not connect to the server")

// ErrNoResult: qperf printed no latency or message rate.
var ErrNoResult = errors.New("qperf printed no result")

// ParseClient reads a client's stdout (and stderr, for its errors). qperf
// exits 1 after an error, but a result is read only from its text.
func ParseClient(stdout, stderr []byte) (*Report, error) {
	r := &Report{}
	var latency, rate bool
	var other []string
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if name, ok := strings.CutSuffix(line, ":"); ok && !strings.ContainsAny(name, " =") {
			r.Test = name
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			other = append(other, line)
			continue
		}
		name = strings.TrimSpace(name)
		var err error
		switch name {
		case "latency":
			r.LatencySec, err = quantity(val, timeUnits)
			latency = err == nil
		case "msg_rate":
			r.MsgRate, err = quantity(val, rateUnits)
			rate = err == nil
		case "msg_size":
			r.MsgSize, err = quantity(val, sizeUnits)
		case "time":
			r.TimeSec, err = quantity(val, timeUnits)
		}
		if err != nil {
			return nil, fmt.Errorf("qperf %s: %w", name, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read qperf output: %w", err)
	}
	if latency && rate && r.LatencySec > 0 && r.MsgRate > 0 {
		return r, nil
	}
	for _, l := range strings.Split(string(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			other = append(other, l)
		}
	}
	msg := strings.Join(other, "; ")
	if strings.Contains(msg, "failed to connect") {
		return nil, fmt.Errorf("%w: %s", ErrConnect, msg)
	}
	if msg == "" {
		msg = "no latency and message rate in its output"
	}
	return nil, fmt.Errorf("%w: %s", ErrNoResult, msg)
}

// Units qperf prints (qperf.c view_time, view_rate, view_size), as
// multipliers to seconds, 1/s and bytes.
var (
	timeUnits = map[string]float64{"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "sec": 1}
	rateUnits = map[string]float64{"/sec": 1, "K/sec": 1e3, "M/sec": 1e6, "G/sec": 1e9, "T/sec": 1e12}
	sizeUnits = map[string]float64{"bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
)

// quantity parses "  36.4239 us" or "  29,766 K/sec": a number with
// qperf's thousands commas, then one unit of units.
func quantity(s string, units map[string]float64) (float64, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, fmt.Errorf("want a number and a unit, got %q", strings.TrimSpace(s))
	}
	mult, ok := units[f[1]]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", f[1])
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", ""), 64)
	if err != nil || v < 0 || v != v || v > 1e300 {
		return 0, fmt.Errorf("bad number %q", f[0])
	}
	return v * mult, nil
}
