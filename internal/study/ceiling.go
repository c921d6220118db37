package study

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Loss-ceiling search defaults (CeilingSearch's empty fields). High is
// above what one iperf3 UDP sender reaches on common hardware, so an
// unsaturated path shows as "at high" rather than as a made-up bound;
// Step is 1% of the failing rate (a resolution relative to the answer,
// which may be anywhere from Low to High); each probe is two seconds, the first of which
// already counts (no warm-up: loss at a fixed offered rate settles
// within a queue's length).
const (
	DefaultCeilingLow   = "1M"
	DefaultCeilingHigh  = "10G"
	DefaultCeilingProbe = 2 * time.Second
	DefaultCeilingStep  = "1%"
	// SenderIperf3 and SenderPktgen are the senders a search can use.
	SenderIperf3 = "iperf3"
	SenderPktgen = "pktgen"
	// MinPktgenPayload and MaxPktgenPayload bound the UDP payload
	// (length) the pktgen sender sends: its smallest frame is 60 bytes,
	// 18 after the 42 of Ethernet, IPv4 and UDP headers, and its largest
	// what a 16-bit length holds (package pktgen's Flow refuses the
	// same; a test there keeps the two equal).
	MinPktgenPayload = 18
	MaxPktgenPayload = 65535 - 42
	// MaxCeilingProbe bounds a probe. A search runs up to
	// 2 + log2((high-low)/step) probes per trial, so a probe is a small
	// part of a trial: an hour drains any queue (docs/workloads.md) and
	// keeps a typo ("2000h") from holding the machine for months, or the
	// probe's iperf3 -t from overflowing.
	MaxCeilingProbe = time.Hour
)

// Ceiling is a workload's resolved loss-ceiling search, per stream.
type Ceiling struct {
	// Pct is the loss allowed, percent (0 < Pct < 100).
	Pct             float64
	Low, High, Step float64 // bit/s per stream
	// Rel is a step relative to the failing rate (0.01: 1%), where the
	// study gave one ("1%", the default); Step is then 0.
	Rel    float64
	Probe  time.Duration
	Sender string
}

// ParseCeiling reads a loss ceiling ("3%", "0.5%", "3") in percent.
func ParseCeiling(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a loss ceiling like 3%% or 0.5%%", s)
	}
	if !(v > 0 && v < 100) {
		return 0, fmt.Errorf("loss ceiling %q must be above 0%% and below 100%%", s)
	}
	return v, nil
}

// MostProbes is how many probes the search can take (CeilingProbes).
func (c Ceiling) MostProbes() float64 { return float64(CeilingProbes(c.Low, c.High, c.Step, c.Rel)) }

// CeilingProbes is how many probes a loss-ceiling search from low to
// high can take with a step (bit/s) or a step relative to the failing
// rate (rel; step 0): high, low, and the halvings from high-low down to
// the step, the finest a relative one gets being at a failing rate just
// above low. The search stops there (package ceiling) and a study's
// planned time counts it (bounds.go): one formula for both.
func CeilingProbes(low, high, step, rel float64) int {
	finest := step
	if rel > 0 {
		finest = rel * low
	}
	return 2 + int(math.Ceil(math.Log2((high-low)/finest)))
}

// Ceiling resolves the workload's search with defaults; ok is false when
// the workload has no loss ceiling.
func (w Workload) Ceiling() (c Ceiling, ok bool, err error) {
	if w.LossCeiling == "" {
		return c, false, nil
	}
	if c.Pct, err = ParseCeiling(w.LossCeiling); err != nil {
		return c, true, err
	}
	var cs CeilingSearch
	if w.CeilingSearch != nil {
		cs = *w.CeilingSearch
	}
	low, high, step := cs.Low, cs.High, cs.Step
	if low == "" {
		low = DefaultCeilingLow
	}
	if high == "" {
		high = DefaultCeilingHigh
	}
	rate := func(name, v string) float64 {
		r, good := ParseRate(v)
		if !good && err == nil {
			err = fmt.Errorf("ceilingSearch.%s: %q is not a bitrate like 10M or 1.5G", name, v)
		}
		return r
	}
	c.Low, c.High = rate("low", low), rate("high", high)
	if step == "" {
		step = DefaultCeilingStep
	}
	if pct, ok := strings.CutSuffix(strings.TrimSpace(step), "%"); ok {
		v, perr := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if (perr != nil || !(v >= 0.1 && v <= 50)) && err == nil {
			err = fmt.Errorf("ceilingSearch.step: %q: a step relative to the rate found is from 0.1%% to 50%%", step)
		}
		c.Rel = v / 100
	} else {
		c.Step = rate("step", step)
	}
	if err != nil {
		return c, true, err
	}
	switch {
	case c.Low >= c.High:
		return c, true, fmt.Errorf("ceilingSearch: low %s must be below high %s", low, high)
	case c.Rel == 0 && c.Step > c.High-c.Low:
		return c, true, fmt.Errorf("ceilingSearch.step: %g bit/s is more than high-low", c.Step)
	}
	c.Probe = cs.Probe.Duration
	if c.Probe == 0 {
		c.Probe = DefaultCeilingProbe
	}
	if c.Probe < time.Second || c.Probe%time.Second != 0 || c.Probe > MaxCeilingProbe {
		return c, true, fmt.Errorf("ceilingSearch.probe: %v must be whole seconds, from 1s (iperf3 -t) to %s", c.Probe, ShortDuration(MaxCeilingProbe))
	}
	// The sender is the workload's (validateSender checks it).
	c.Sender = w.UDPSender()
	return c, true, nil
}

// UDPSender is what offers the workload's UDP load: sender, else the
// loss-ceiling search's sender, else iperf3.
func (w Workload) UDPSender() string {
	switch {
	case w.Sender != "":
		return w.Sender
	case w.CeilingSearch != nil && w.CeilingSearch.Sender != "":
		return w.CeilingSearch.Sender
	}
	return SenderIperf3
}

// SenderField names the field UDPSender comes from, for errors:
// "sender", or "ceilingSearch.sender" where only the search names one.
func (w Workload) SenderField() string {
	if w.Sender == "" && w.CeilingSearch != nil && w.CeilingSearch.Sender != "" {
		return OptCeilingSrch + ".sender"
	}
	return OptSender
}

// validateSender checks the workload's sender: a known one, one place
// to name it (sender and ceilingSearch.sender agree), and for pktgen a
// load it can offer: at a set rate or a searched one, each of parallel
// streams at that rate (iperf3's -b is per stream), server to client
// with reverse as iperf3 -R.
func validateSender(w *Workload, f string, bad badFunc) {
	if w.Sender != "" && w.CeilingSearch != nil && w.CeilingSearch.Sender != "" && w.CeilingSearch.Sender != w.Sender {
		bad(f+"."+OptCeilingSrch+".sender", "%q differs from the workload's sender %q; give one", w.CeilingSearch.Sender, w.Sender)
		return
	}
	s, field := w.UDPSender(), f+"."+w.SenderField()
	if s != SenderIperf3 && s != SenderPktgen {
		bad(field, "%q is not %s or %s", s, SenderIperf3, SenderPktgen)
		return
	}
	if s != SenderPktgen {
		return
	}
	checkPktgenLengths(w, f, bad)
	// iperf3 -R sends back over the connection the client opened, which a
	// Service translated; pktgen's packets belong to no connection, so
	// sent from the server they would skip the translation back.
	if w.Reverse && (w.Target == TargetService || w.Target == TargetHairpin) {
		bad(field, "pktgen sending from the server (reverse) addresses the client pod itself: its packets belong to no connection a Service translated; use target pod, or the iperf3 sender")
	}
}

// validateCeiling checks the loss ceiling and its search.
func validateCeiling(w *Workload, f string, bad badFunc) {
	if w.LossCeiling == "" {
		if w.CeilingSearch != nil {
			bad(f+"."+OptCeilingSrch, "ceilingSearch tunes a lossCeiling search; give lossCeiling too")
		}
		return
	}
	if w.Rate != "" || len(w.Rates) > 0 {
		bad(f+"."+OptLossCeiling, "lossCeiling finds the offered rate itself; drop rate/rates (bound the search with ceilingSearch.high)")
	}
	if _, err := ParseCeiling(w.LossCeiling); err != nil {
		bad(f+"."+OptLossCeiling, "%v", err)
		return
	}
	_, _, err := w.Ceiling()
	if err != nil {
		field := f + "." + OptCeilingSrch
		if i := strings.Index(err.Error(), ":"); strings.HasPrefix(err.Error(), "ceilingSearch.") && i > 0 {
			field = f + "." + err.Error()[:i]
		}
		bad(field, "%v", err)
	}
}

// checkPktgenLengths refuses a length the pktgen sender cannot send as
// its UDP payload, which its trials would refuse after the nodes are
// built. A malformed size is validateFormats'.
func checkPktgenLengths(w *Workload, f string, bad badFunc) {
	for i, l := range append([]string{w.Length}, w.Lengths...) {
		field := f + "." + OptLength
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptLengths, i-1)
		}
		if n, ok := ParseBytes(l); ok && (n < MinPktgenPayload || n > MaxPktgenPayload) {
			bad(field, "the pktgen sender sends a UDP payload of %d to %d bytes (its smallest frame is 60 bytes, its largest what an IP length holds), got %s",
				MinPktgenPayload, MaxPktgenPayload, l)
		}
	}
}
