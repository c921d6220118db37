// Package iperf3 drives iperf3 (https://iperf.fr) as a cnibench workload.
//
// Design notes: each pair runs a one-off server (iperf3 -s -1) in the
// server pod and a client in the client pod. All clients start together.
// The bitrate is the one the papers report: read at the server, from its
// own per-interval byte counts, over the measured window (warm-up omitted
// with -O, the few-ms drain after the client stops left out). The client's
// report gives what the sender wrote and TCP retransmits. Both ends print
// JSON (-J); iperf3 3.12 exits 0 after some errors, so the JSON's "error"
// field decides success, and parsing is kept apart from running so it is
// tested against captured output in testdata/.
package iperf3

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/workload"
)

// Metric names this driver adds to those of the results package.
const (
	// MetricSenderBitrate is the client's end.sum_sent bit/s.
	MetricSenderBitrate = "sender_bitrate"
)

// Defaults of a Driver built by New.
const (
	DefaultConnectAttempts = 5
	DefaultConnectBackoff  = 100 * time.Millisecond
	// connectTimeoutMs bounds each control-connection attempt
	// (--connect-timeout), so an unreachable server fails in seconds, not
	// after the kernel's SYN retries (two minutes).
	connectTimeoutMs = 3000
	// serverGrace is how long a server may take to print its report and
	// exit after its client finished before it is stopped.
	serverGrace = 5 * time.Second
	// trialSlack is added to the trial duration for the deadline after
	// which hung processes are stopped: connect attempts plus reports.
	trialSlack = 30 * time.Second
)

// Driver runs iperf3. The zero value is not ready; use New.
type Driver struct {
	// TrialSlack overrides trialSlack (tests with a program that hangs).
	TrialSlack time.Duration
	// Bin is the program started in the pods.
	Bin string
	// ConnectAttempts is how many times a client is started when it
	// cannot connect; ConnectBackoff is the first pause between
	// attempts, doubled each time.
	ConnectAttempts int
	ConnectBackoff  time.Duration
	// Output, when set, receives the raw JSON of each pair's server and
	// client once a trial has ended, failed or not (nil where there is
	// none; not called when ctx was cancelled), so a runner can keep the
	// tool's own record beside the samples.
	Output func(pair int, server, client []byte)
}

var _ workload.Driver = (*Driver)(nil)

// New returns a driver with the defaults.
func New() *Driver {
	return &Driver{Bin: "iperf3", ConnectAttempts: DefaultConnectAttempts, ConnectBackoff: DefaultConnectBackoff}
}

// Check reports whether iperf3 is installed on this machine (the local
// engine runs it from here; the kube engine runs it from an image).
func (d *Driver) Check() error {
	_, err := workload.LookProgram(d.Bin, d.Describe().Programs[0])
	return err
}

// plan is a validated trial turned into command lines.
type plan struct {
	seconds, omit int
	length        string
	udp, reverse  bool
	rate          string
	parallel      int
	mss           int
	pinServer     string
	pinClient     string
}

func (d *Driver) plan(t workload.Trial) (plan, error) {
	var p plan
	if len(t.Pairs) == 0 {
		return p, errors.New("iperf3 trial has no pairs")
	}
	if proto := strings.ToLower(t.Spec.Protocol); proto != "" && proto != "tcp" && proto != "udp" {
		return p, fmt.Errorf("iperf3 driver runs %s, not %q", strings.Join(d.Describe().Protocols, ", "), t.Spec.Protocol)
	}
	if t.Duration%time.Second != 0 || t.Warmup%time.Second != 0 {
		return p, fmt.Errorf("iperf3 counts whole seconds: duration %v and warm-up %v must be whole seconds", t.Duration, t.Warmup)
	}
	if t.Warmup < 0 || t.Duration-t.Warmup < time.Second {
		return p, fmt.Errorf("iperf3 trial of %v with warm-up %v leaves no measured second", t.Duration, t.Warmup)
	}
	if t.BasePort < 1 || t.BasePort+len(t.Pairs)-1 > 65535 {
		return p, fmt.Errorf("iperf3 ports %d..%d are out of range", t.BasePort, t.BasePort+len(t.Pairs)-1)
	}
	for i, pr := range t.Pairs {
		if pr.Server == nil || pr.Client == nil || pr.Server.IP() == nil {
			return p, fmt.Errorf("iperf3 pair %d lacks a server, a client or the server's address", i)
		}
	}
	p.seconds = int((t.Duration - t.Warmup) / time.Second)
	p.omit = int(t.Warmup / time.Second)
	p.length = t.Spec.Length
	p.udp = strings.EqualFold(t.Spec.Protocol, "udp")
	p.reverse = t.Spec.Reverse
	p.rate = t.Spec.Rate
	p.parallel = t.Spec.Parallel
	p.mss = t.Spec.MSS
	if p.mss != 0 && p.udp {
		return p, errors.New("iperf3 sets a maximum segment size (mss) for TCP only")
	}
	if p.udp && p.rate == "" && t.Spec.LossCeiling == "" {
		return p, errors.New("iperf3 UDP trial needs an offered bitrate (rate)")
	}
	if t.Spec.Pin != nil {
		p.pinServer, p.pinClient = t.Spec.Pin.Server, t.Spec.Pin.Client
	}
	return p, nil
}

// serverArgv is the server's command line: one test, JSON report.
func (d *Driver) serverArgv(p plan, port int) []string {
	return workload.Pinned([]string{d.Bin, "-s", "-1", "-J", "-p", strconv.Itoa(port)}, p.pinServer)
}

func (d *Driver) clientArgv(p plan, server string, port int) []string {
	argv := []string{d.Bin, "-c", server, "-p", strconv.Itoa(port), "-J",
		"-t", strconv.Itoa(p.seconds), "-O", strconv.Itoa(p.omit)}
	if p.length != "" {
		argv = append(argv, "-l", p.length)
	}
	if p.udp {
		argv = append(argv, "-u")
	}
	if p.rate != "" {
		argv = append(argv, "-b", p.rate)
	}
	if p.mss > 0 {
		argv = append(argv, "-M", strconv.Itoa(p.mss))
	}
	if p.parallel > 1 {
		argv = append(argv, "-P", strconv.Itoa(p.parallel))
	}
	if p.reverse {
		argv = append(argv, "-R")
	}
	argv = append(argv, "--connect-timeout", strconv.Itoa(connectTimeoutMs))
	return workload.Pinned(argv, p.pinClient)
}

// slack is the time past the trial's duration after which its processes
// (measured and background) are stopped as hung.
func (d *Driver) slack() time.Duration {
	if d.TrialSlack > 0 {
		return d.TrialSlack
	}
	return trialSlack
}
