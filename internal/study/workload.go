package study

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Workload option names as written in study files; toolOptions says which
// tool accepts which, so a study asking a tool for something it cannot do
// (UDP ab, concurrency on iperf3, rates on sockperf) is rejected with the
// field's line before anything runs.
const (
	OptLength      = "length"
	OptLengths     = "lengths"
	OptRate        = "rate"
	OptRates       = "rates"
	OptParallel    = "parallel"
	OptParallels   = "parallels"
	OptReverse     = "reverse"
	OptPlacement   = "placement"
	OptPin         = "pin"
	OptMessageSize = "messageSize"
	OptMsgSizes    = "messageSizes"
	OptConcurrency = "concurrency"
	OptSize        = "size"
	OptBackground  = "background"
	OptCPP         = "cpp"
	OptCounters    = "counters"
)

// DefaultToolOptions are the options each built-in tool's driver accepts;
// a Catalog without Options uses them.
var DefaultToolOptions = map[string][]string{
	"iperf3":   {OptLength, OptLengths, OptRate, OptRates, OptParallel, OptParallels, OptReverse, OptPlacement, OptPin, OptBackground, OptCPP, OptCounters},
	"sockperf": {OptMessageSize, OptMsgSizes, OptPlacement, OptPin, OptCPP, OptCounters},
	"ab":       {OptConcurrency, OptSize, OptPlacement, OptPin, OptCPP, OptCounters},
}

// Bounds of workload options.
const (
	// MaxParallel is iperf3's limit on -P.
	MaxParallel = 128
	// MaxMessageSize bounds sockperf --msg-size (its own limit is 65000).
	MaxMessageSize = 65000
	// MaxConcurrency bounds ab -c (ab's own limit is 20000).
	MaxConcurrency = 20000
	// DefaultHTTPSize is seed 004's response body.
	DefaultHTTPSize = "5M"
	// SockperfMinMessage is sockperf's smallest message.
	SockperfMinMessage = 14
	// DefaultMessageSize is seed 001's request/response size.
	DefaultMessageSize = 64
)

var rateRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[KMG]?$`)

// setOptions lists the options a workload sets, in field order.
func (w Workload) setOptions() []string {
	var o []string
	add := func(set bool, name string) {
		if set {
			o = append(o, name)
		}
	}
	add(w.Length != "", OptLength)
	add(len(w.Lengths) > 0, OptLengths)
	add(w.Rate != "", OptRate)
	add(len(w.Rates) > 0, OptRates)
	add(w.Parallel != 0, OptParallel)
	add(len(w.Parallels) > 0, OptParallels)
	add(w.Reverse, OptReverse)
	add(w.Placement != "" && w.Placement != PlacementInterNode, OptPlacement)
	add(w.Pin != nil, OptPin)
	add(w.MessageSize != 0, OptMessageSize)
	add(len(w.MessageSizes) > 0, OptMsgSizes)
	add(len(w.Concurrency) > 0, OptConcurrency)
	add(w.Size != "", OptSize)
	add(w.Background != nil, OptBackground)
	add(w.CPP, OptCPP)
	add(w.Counters, OptCounters)
	return o
}

// workloadDefaults fills a workload's tool-specific defaults.
func workloadDefaults(w *Workload) {
	if w.Placement == "" {
		w.Placement = PlacementInterNode
	}
	switch w.Tool {
	case "ab":
		if w.Size == "" {
			w.Size = DefaultHTTPSize
		}
		if len(w.Concurrency) == 0 {
			w.Concurrency = []int{1}
		}
	case "sockperf":
		if w.MessageSize == 0 && len(w.MessageSizes) == 0 {
			w.MessageSize = DefaultMessageSize
		}
	}
}

// validateWorkload checks one workload's options against its tool and
// each other. f is the field path ("spec.workloads[2]").
func validateWorkload(w Workload, f string, cat Catalog, bad func(field, format string, a ...any)) {
	opts := cat.Options
	if opts == nil {
		opts = DefaultToolOptions
	}
	if allowed, ok := opts[w.Tool]; ok {
		for _, o := range w.setOptions() {
			if !contains(allowed, o) {
				bad(f+"."+o, "tool %s has no option %s (%s takes: %s)", w.Tool, o, w.Tool, strings.Join(allowed, ", "))
			}
		}
	}
	pairs := []struct {
		one, many string
		a, b      bool
	}{
		{OptLength, OptLengths, w.Length != "", len(w.Lengths) > 0},
		{OptRate, OptRates, w.Rate != "", len(w.Rates) > 0},
		{OptParallel, OptParallels, w.Parallel != 0, len(w.Parallels) > 0},
		{OptMessageSize, OptMsgSizes, w.MessageSize != 0, len(w.MessageSizes) > 0},
	}
	for _, p := range pairs {
		if p.a && p.b {
			bad(f+"."+p.many, "give %s or %s (a sweep), not both", p.one, p.many)
		}
	}
	if sw := w.sweeps(); len(sw) > 1 {
		bad(f+"."+sw[1], "a workload sweeps one parameter; it sweeps %s; split it into one workload per sweep", strings.Join(sw, " and "))
	}
	for i, l := range append([]string{w.Length}, w.Lengths...) {
		field := f + "." + OptLength
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptLengths, i-1)
		}
		if l != "" && !lengthRE.MatchString(l) {
			bad(field, "%q is not a size like 128K, 4M or 1400", l)
		}
	}
	for i, r := range append([]string{w.Rate}, w.Rates...) {
		field := f + "." + OptRate
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptRates, i-1)
		}
		if r != "" && (!rateRE.MatchString(r) || parseSize(r) <= 0) {
			bad(field, "%q is not a bitrate like 500M, 1G or 1.5G (bit/s, iperf3 -b)", r)
		}
	}
	for i, p := range append([]int{w.Parallel}, w.Parallels...) {
		field := f + "." + OptParallel
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptParallels, i-1)
		}
		if (i > 0 || p != 0) && (p < 1 || p > MaxParallel) {
			bad(field, "streams must be between 1 and %d, got %d", MaxParallel, p)
		}
	}
	for i, m := range append([]int{w.MessageSize}, w.MessageSizes...) {
		field := f + "." + OptMessageSize
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptMsgSizes, i-1)
		}
		if (i > 0 || m != 0) && (m < 1 || m > MaxMessageSize) {
			bad(field, "message size must be between 1 and %d bytes, got %d", MaxMessageSize, m)
		} else if w.Tool == "sockperf" && (i > 0 || m != 0) && m < SockperfMinMessage {
			bad(field, "sockperf's smallest message is %d B (its sequence number and timestamp); use %d for netperf's 1 B TCP_RR, got %d", SockperfMinMessage, SockperfMinMessage, m)
		}
	}
	for i, c := range w.Concurrency {
		if c < 1 || c > MaxConcurrency {
			bad(fmt.Sprintf("%s.%s[%d]", f, OptConcurrency, i), "concurrency must be between 1 and %d, got %d", MaxConcurrency, c)
		}
	}
	if w.Size != "" && !lengthRE.MatchString(w.Size) {
		bad(f+"."+OptSize, "%q is not a size like 5M, 64K or 1000", w.Size)
	}
	if w.Placement != PlacementInterNode && w.Placement != PlacementIntraNode {
		bad(f+"."+OptPlacement, "%q is not %s or %s", w.Placement, PlacementInterNode, PlacementIntraNode)
	}
	if w.Pin != nil {
		if w.Pin.Server == "" && w.Pin.Client == "" {
			bad(f+"."+OptPin, "give server and/or client CPU lists")
		}
		for _, x := range []struct{ k, v string }{{"server", w.Pin.Server}, {"client", w.Pin.Client}} {
			if x.v == "" {
				continue
			}
			if _, err := cpuset.Parse(x.v); err != nil {
				bad(f+".pin."+x.k, "%v", err)
			}
		}
	}
	if w.Protocol == "udp" && w.Tool == "iperf3" && w.Rate == "" && len(w.Rates) == 0 {
		bad(f+"."+OptRate, "a UDP test needs an offered bitrate (rate or rates): iperf3's UDP default of 1 Mbit/s measures nothing")
	}
	if b := w.Background; b != nil {
		if w.Protocol != "tcp" {
			bad(f+".background", "background load is TCP connections; the measured workload must be tcp too")
		}
		if len(b.Connections) == 0 {
			bad(f+".background.connections", "list at least one connection count (0 = no background)")
		}
		if b.Pairs < 1 || b.Pairs > MaxReplicas-1 {
			bad(f+".background.pairs", "must be between 1 and %d, got %d", MaxReplicas-1, b.Pairs)
		}
		if !rateRE.MatchString(b.Rate) || parseSize(b.Rate) <= 0 {
			bad(f+".background.rate", "%q is not a per-connection bitrate like 10M", b.Rate)
		}
		for i, k := range b.Connections {
			field := fmt.Sprintf("%s.background.connections[%d]", f, i)
			if k < 0 {
				bad(field, "must be >= 0, got %d", k)
			} else if b.Pairs > 0 && (k+b.Pairs-1)/b.Pairs > MaxParallel {
				bad(field, "%d connections over %d pairs is %d streams per iperf3 client; iperf3 allows %d: add pairs",
					k, b.Pairs, (k+b.Pairs-1)/b.Pairs, MaxParallel)
			}
		}
	}
}

// sweeps names the list options a workload sweeps.
func (w Workload) sweeps() []string {
	var s []string
	if len(w.Lengths) > 0 {
		s = append(s, OptLengths)
	}
	if len(w.Rates) > 0 {
		s = append(s, OptRates)
	}
	if len(w.Parallels) > 0 {
		s = append(s, OptParallels)
	}
	if len(w.MessageSizes) > 0 {
		s = append(s, OptMsgSizes)
	}
	if len(w.Concurrency) > 1 {
		s = append(s, OptConcurrency)
	}
	if w.Background != nil && len(w.Background.Connections) > 1 {
		s = append(s, "background.connections")
	}
	return s
}

// Variants expands a workload's sweep into one workload per value, each
// with scalar fields only and named "NAME@VALUE" (Base = NAME, Param =
// VALUE). A workload without a sweep is its own single variant.
func (w Workload) Variants() []Workload {
	mk := func(param string, set func(*Workload)) Workload {
		v := w
		v.Lengths, v.Rates, v.Parallels, v.MessageSizes = nil, nil, nil, nil
		if w.Background != nil {
			b := *w.Background
			v.Background = &b
		}
		set(&v)
		v.Base, v.Param = w.Name, param
		v.Name = w.Name + "@" + param
		return v
	}
	var out []Workload
	switch {
	case len(w.Lengths) > 0:
		for _, l := range w.Lengths {
			out = append(out, mk(l, func(v *Workload) { v.Length = l }))
		}
	case len(w.Rates) > 0:
		for _, r := range w.Rates {
			out = append(out, mk(r, func(v *Workload) { v.Rate = r }))
		}
	case len(w.Parallels) > 0:
		for _, p := range w.Parallels {
			out = append(out, mk("P"+strconv.Itoa(p), func(v *Workload) { v.Parallel = p }))
		}
	case len(w.MessageSizes) > 0:
		for _, m := range w.MessageSizes {
			out = append(out, mk(strconv.Itoa(m)+"B", func(v *Workload) { v.MessageSize = m }))
		}
	case len(w.Concurrency) > 1:
		for _, c := range w.Concurrency {
			out = append(out, mk("c"+strconv.Itoa(c), func(v *Workload) { v.Concurrency = []int{c} }))
		}
	case w.Background != nil && len(w.Background.Connections) > 1:
		for _, k := range w.Background.Connections {
			out = append(out, mk("bg"+strconv.Itoa(k), func(v *Workload) { v.Background.Connections = []int{k} }))
		}
	default:
		out = []Workload{w}
	}
	return out
}

// Variants returns every workload of the study expanded, in study order.
func (s *Study) Variants() []Workload {
	var out []Workload
	for _, w := range s.Spec.Workloads {
		out = append(out, w.Variants()...)
	}
	return out
}

// Concurrent is the single HTTP concurrency of a variant (1 if unset).
func (w Workload) Concurrent() int {
	if len(w.Concurrency) == 0 {
		return 1
	}
	return w.Concurrency[0]
}

// BackgroundConnections is the single background connection count of a
// variant (0 without background).
func (w Workload) BackgroundConnections() int {
	if w.Background == nil || len(w.Background.Connections) == 0 {
		return 0
	}
	return w.Background.Connections[0]
}

// parseSize reads "128K", "1.5G", "1400" with K/M/G as powers of 1000
// (bitrates) — only used for sanity checks here.
func parseSize(s string) float64 {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1e3, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return v * mult
}

// ParseRate reads an iperf3-style bitrate ("500M", "1.5G") in bit/s
// (K, M, G are powers of 1000, as iperf3 -b reads them).
func ParseRate(s string) (float64, bool) {
	if !rateRE.MatchString(s) {
		return 0, false
	}
	v := parseSize(s)
	return v, v > 0
}

// ParseBytes reads a size ("128K", "5M") in bytes with K, M, G as powers
// of 1024, as iperf3 -l reads them.
func ParseBytes(s string) (int64, bool) {
	if !lengthRE.MatchString(s) {
		return 0, false
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	}
	n, err := strconv.ParseInt(strings.TrimRight(s, "KMG"), 10, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
}
