package study

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

var rateRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[KMG]?$`)

// badFunc records one problem of a field.
type badFunc func(field, format string, a ...any)

// validateWorkload checks one workload's options against its tool's
// description and each other. f is the field path ("spec.workloads[2]").
func validateWorkload(w *Workload, f string, cat Catalog, bad badFunc) {
	t, known := cat.Tool(w.Tool)
	if known {
		validateOptions(w, f, t, bad)
	}
	validateSweeps(w, f, bad)
	validateFormats(w, f, bad)
	validatePin(w, f, bad)
	validateSender(w, f, bad)
	validateCeiling(w, f, bad)
	if w.Background != nil {
		validateBackground(w, f, t, bad)
	}
	validateWorkloadBounds(w, f, t, bad)
}

// validateSweeps rejects a scalar given with its list, and two sweeps.
func validateSweeps(w *Workload, f string, bad badFunc) {
	pairs := []struct {
		one, many string
		a, b      bool
	}{
		{OptLength, OptLengths, w.Length != "", len(w.Lengths) > 0},
		{OptRate, OptRates, w.Rate != "", len(w.Rates) > 0},
		{OptParallel, OptParallels, w.Parallel != 0, len(w.Parallels) > 0},
		{OptMessageSize, OptMsgSizes, w.MessageSize != 0, len(w.MessageSizes) > 0},
		{OptMSS, OptMSSes, w.MSS != 0, len(w.MSSes) > 0},
	}
	for _, p := range pairs {
		if p.a && p.b {
			bad(f+"."+p.many, "give %s or %s (a sweep), not both", p.one, p.many)
		}
	}
	if sw := w.sweeps(); len(sw) > 1 {
		bad(f+"."+sw[1], "a workload sweeps one parameter; it sweeps %s; split it into one workload per sweep", strings.Join(sw, " and "))
	}
}

// validateFormats checks the syntax of sizes, bitrates and the placement.
func validateFormats(w *Workload, f string, bad badFunc) {
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
	if w.Size != "" && !lengthRE.MatchString(w.Size) {
		bad(f+"."+OptSize, "%q is not a size like 5M, 64K or 1000", w.Size)
	}
	if w.Placement != PlacementInterNode && w.Placement != PlacementIntraNode {
		bad(f+"."+OptPlacement, "%q is not %s or %s", w.Placement, PlacementInterNode, PlacementIntraNode)
	}
	if !contains([]string{"", TargetPod, TargetService, TargetHairpin}, w.Target) {
		bad(f+"."+OptTarget, "%q is not %s, %s or %s", w.Target, TargetPod, TargetService, TargetHairpin)
	}
	if w.Target == TargetHairpin && w.Background != nil {
		bad(f+"."+OptTarget, "hairpin runs the client inside the server pod; background load needs pairs of pods: drop one")
	}
}

// validatePin checks pin's CPU lists and placement names. Names are
// resolved at run time against the other end, so at most one end may be
// a name other than none.
func validatePin(w *Workload, f string, bad badFunc) {
	if w.Pin == nil {
		return
	}
	if w.Pin.Server == "" && w.Pin.Client == "" {
		bad(f+"."+OptPin, "give server and/or client CPU lists or placement names")
	}
	names := 0
	for _, x := range []struct{ k, v string }{{"server", w.Pin.Server}, {"client", w.Pin.Client}} {
		if x.v == "" {
			continue
		}
		if topology.IsName(x.v) {
			if x.v != topology.None {
				names++
			}
			continue
		}
		if _, err := cpuset.Parse(x.v); err != nil {
			bad(f+".pin."+x.k, "%q is neither a placement name (%s) nor a CPU list: %v", x.v, strings.Join(topology.Names, ", "), err)
		}
	}
	if names > 1 {
		bad(f+".pin.client", "only one end may be placed by name (the other is what it is placed against); give the client a CPU list or leave it out")
	}
	switch w.Pin.Fallback {
	case "", PinRefuse, PinMark:
	default:
		bad(f+".pin.fallback", "%q is not %s or %s", w.Pin.Fallback, PinRefuse, PinMark)
	}
}

// validateMSS bounds a TCP MSS by what the study's largest pod MTU
// allows (MTU - 40: IPv4 and TCP headers). A datapath whose pod MTU is
// below the underlay's (a tunnel's overhead) is checked against its own
// MTU at preflight (workload.CheckMSS), where the datapath is built.
func validateMSS(w *Workload, f string, sp *Spec, bad badFunc) {
	mtu := sp.Nodes.UnderlayMTU
	for _, d := range sp.Datapaths {
		mtu = max(mtu, d.MTU)
	}
	check := func(field string, v int) {
		if v > mtu-MSSHeaders {
			bad(field, "mss %d is above what the largest pod MTU of this study allows (%d - %d = %d bytes)", v, mtu, MSSHeaders, mtu-MSSHeaders)
		}
	}
	if w.MSS != 0 {
		check(f+"."+OptMSS, w.MSS)
	}
	for i, v := range w.MSSes {
		check(fmt.Sprintf("%s.%s[%d]", f, OptMSSes, i), v)
	}
}

// MSS bounds: Linux refuses TCP_MAXSEG below 88 (TCP_MIN_MSS); a segment
// carries MTU - MSSHeaders bytes at most (IPv4 20 + TCP 20).
const (
	MinMSS     = 88
	MSSHeaders = 40
)

// validateBackground checks the background load. Its connections are
// streams of the tool's clients, so the tool's bound on parallel streams
// bounds connections per pair.
func validateBackground(w *Workload, f string, t spec.Tool, bad badFunc) {
	b := w.Background
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
	streams, _ := t.Option(OptParallel)
	for i, k := range b.Connections {
		field := fmt.Sprintf("%s.background.connections[%d]", f, i)
		if k < 0 {
			bad(field, "must be >= 0, got %d", k)
		} else if b.Pairs > 0 && streams.Max > 0 && (k+b.Pairs-1)/b.Pairs > streams.Max {
			bad(field, "%d connections over %d pairs is %d streams per %s client; %s allows %d: add pairs",
				k, b.Pairs, (k+b.Pairs-1)/b.Pairs, w.Tool, w.Tool, streams.Max)
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
	if len(w.MSSes) > 0 {
		s = append(s, OptMSSes)
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
		v.Lengths, v.Rates, v.Parallels, v.MessageSizes, v.MSSes = nil, nil, nil, nil, nil
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
	case len(w.MSSes) > 0:
		for _, m := range w.MSSes {
			out = append(out, mk("mss"+strconv.Itoa(m), func(v *Workload) { v.MSS = m }))
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

// Pins reports whether a workload pins an end to CPUs, which must then
// be among those its machine lets it run on (checked at preflight).
func (s *Study) Pins() bool {
	return slices.ContainsFunc(s.Spec.Workloads, func(w Workload) bool { return w.Pin != nil })
}

// PinsByName reports whether a workload pins an end by placement name,
// which needs the CPU topology of the server's machine at preflight.
func (s *Study) PinsByName() bool {
	for _, w := range s.Spec.Workloads {
		if w.Pin != nil && (topology.IsName(w.Pin.Server) || topology.IsName(w.Pin.Client)) {
			return true
		}
	}
	return false
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
	if err != nil || n > math.MaxInt64/mult {
		return 0, false // overflows int64
	}
	return n * mult, true
}

// nameDefaults fills what a workload's name defaults to: protocol tcp,
// then the name tool-protocol ("iperf3-tcp"). The file's names are read
// before Defaults runs too (writtenNames), by the same rule.
func (w *Workload) nameDefaults() {
	if w.Protocol == "" {
		w.Protocol = "tcp"
	}
	if w.Name == "" {
		w.Name = w.Tool + "-" + w.Protocol
	}
}
