package study

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Bounds on every number and list a study may give, checked before the
// host is touched: a value past them is a typo or an attack (a study runs
// as root), never an experiment. Each bound is in the error message and in
// docs/study-format.md. A tool's own option bounds (streams, message
// sizes, HTTP body size) are in its driver's description (spec.Option).
const (
	// MaxNameLen bounds every name. Study names become the default run
	// directory (results/NAME-TIMESTAMP), datapath names file names.
	MaxNameLen = 64
	// MaxListLen bounds each list: datapaths, tunings, workloads, replica
	// counts, a sweep's values, a datapath's offloads.
	MaxListLen = 64
	// MaxReferences bounds spec.reference.
	MaxReferences = 1000
	// MaxTrials bounds spec.trials.
	MaxTrials = 1000
	// MaxCells bounds the expanded matrix (datapaths x replica counts x
	// workload variants x tunings).
	MaxCells = 10000
	// MaxDuration bounds duration, warm-up and cooldown each.
	MaxDuration = 24 * time.Hour
	// MaxPlanned bounds the planned run time: cells x trials x
	// (duration + cooldown).
	MaxPlanned = 30 * 24 * time.Hour
	// MaxRFSEntries bounds sockFlowEntries and flowCnt. The kernel rounds
	// both up to a power of two (Documentation/networking/scaling.rst) and
	// refuses rps_sock_flow_entries above 2^29 (4 bytes an entry, 2 GiB);
	// rps_flow_cnt is per receive queue (8 bytes an entry) with no cap
	// below 2^32. scaling.rst calls 32768 good for a moderately loaded
	// server; 2^20 (4 MiB global, 8 MiB per queue) leaves room for 32 times
	// that and keeps a typo from asking the kernel for gigabytes.
	MaxRFSEntries = 1 << 20
	// MaxBitrate bounds a per-stream bitrate (rate, rates,
	// background.rate), as the link rate is bounded: 1 Tbit/s.
	MaxBitrate = 1e12
	// MaxNoteLen bounds free text (description, source, reference notes).
	MaxNoteLen = 1000
	// MinMTU and MaxMTU bound a datapath's mtu: IPv4's minimum datagram
	// every host must take (RFC 791), and the 16-bit length field.
	MinMTU, MaxMTU = 576, 65535
	// MinUnderlayMTU bounds nodes.underlayMTU: IPv6's minimum link MTU
	// (RFC 8200), which an underlay that may carry IPv6 needs.
	MinUnderlayMTU = 1280
)

// maxFeatureLen is the longest ethtool feature name the kernel has a
// string for (ETH_GSTRING_LEN 32, less the terminating NUL).
const maxFeatureLen = 31

// tuningNameRE is nameRE plus '+', the built-in "rps+" and "rfs+".
var tuningNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// checkName reports a name that does not match re or is too long. Names
// start with a letter or digit, so ".", ".." and "-x" never match; '/'
// and non-ASCII letters never do either.
func checkName(field, name string, re *regexp.Regexp, chars string, bad badFunc) {
	switch {
	case name == "":
		bad(field, "missing")
	case len(name) > MaxNameLen:
		bad(field, "name is %d bytes long; at most %d", len(name), MaxNameLen)
	case !re.MatchString(name):
		bad(field, "%q: use ASCII letters, digits and %s, starting with a letter or digit", name, chars)
	}
}

// ValidName reports whether name may name a study, a datapath or a file
// derived from them: it matches the name pattern and is at most MaxNameLen
// bytes. Validate refuses a study whose metadata.name is not; callers that
// build paths from a name check it again.
func ValidName(name string) bool { return len(name) <= MaxNameLen && nameRE.MatchString(name) }

// checkLen reports a list longer than max.
func checkLen(field string, n, max int, bad badFunc) {
	if n > max {
		bad(field, "%d entries; at most %d", n, max)
	}
}

// validateStudyBounds checks the bounds that are not a tool's: names, list
// lengths, trials, durations, RFS sizes, the matrix size, references.
// Validate calls it after the per-section checks.
func validateStudyBounds(s *Study, bad badFunc) {
	checkValueBounds(s, bad)
	checkPlanned(s, bad)
	checkReferences(&s.Spec, bad)
}

// checkValueBounds are validateStudyBounds' checks of one value or list
// each, the references' aside: those that no other field, nor a --set
// of one, can make right (checkProfiles runs them on every profile).
func checkValueBounds(s *Study, bad badFunc) {
	checkName("metadata.name", s.Metadata.Name, nameRE, "'.', '_', '-'", bad)
	if n := len(s.Metadata.Description); n > MaxNoteLen {
		bad("metadata.description", "%d bytes; at most %d", n, MaxNoteLen)
	}
	if n := len(s.Metadata.Source); n > MaxNoteLen {
		bad("metadata.source", "%d bytes; at most %d", n, MaxNoteLen)
	}
	sp := &s.Spec
	checkLen("spec.datapaths", len(sp.Datapaths), MaxListLen, bad)
	for i, d := range sp.Datapaths {
		f := fmt.Sprintf("spec.datapaths[%d]", i)
		if len(d.Name) > MaxNameLen {
			bad(f+".name", "name is %d bytes long; at most %d", len(d.Name), MaxNameLen)
		}
		// podOffloads are ethtool features too, written on every pod's
		// devices: the same bounds as offloads.
		for _, o := range []struct {
			key string
			m   map[string]string
		}{{"offloads", d.Offloads}, {"podOffloads", d.PodOffloads}} {
			checkLen(f+"."+o.key, len(o.m), MaxListLen, bad)
			for _, k := range sortedKeys(o.m) {
				if len(k) > maxFeatureLen {
					bad(f+"."+o.key, "feature name %q is %d bytes; ethtool's are at most %d", k[:maxFeatureLen]+"...", len(k), maxFeatureLen)
				}
			}
		}
	}
	checkLen("spec.tunings", len(sp.Tunings), MaxListLen, bad)
	for i, t := range sp.Tunings {
		f := fmt.Sprintf("spec.tunings[%d]", i)
		if t.Name != "" {
			checkName(f+".name", t.Name, tuningNameRE, "'.', '_', '+', '-'", bad)
		}
		if n := len(t.Sysctls); n > MaxSysctls {
			bad(f+".sysctls", "%d sysctls; at most %d", n, MaxSysctls)
		}
		if t.RFS != nil {
			checkRFSBounds(f+".rfs", *t.RFS, bad)
		}
	}
	checkLen("spec.workloads", len(sp.Workloads), MaxListLen, bad)
	// Impairments are one more axis of cells, bounded like the others.
	checkLen("spec.impairments", len(sp.Impairments), MaxListLen, bad)
	for i, m := range sp.Impairments {
		if len(m.Name) > MaxNameLen {
			bad(fmt.Sprintf("spec.impairments[%d].name", i), "name is %d bytes long; at most %d", len(m.Name), MaxNameLen)
		}
	}
	checkLen("spec.replicas", len(sp.Replicas), MaxListLen, bad)
	seen := map[int]int{}
	for i, r := range sp.Replicas {
		if j, dup := seen[r]; dup {
			bad(fmt.Sprintf("spec.replicas[%d]", i), "replica count %d listed twice (also spec.replicas[%d])", r, j)
		}
		seen[r] = i
	}
	if sp.Trials.Max > MaxTrials {
		bad("spec.trials", "must be between 1 and %d, got %d", MaxTrials, sp.Trials.Max)
	}
	for _, d := range []struct {
		f string
		v time.Duration
	}{{"spec.duration", sp.Duration.Duration}, {"spec.warmup", sp.Warmup.Duration}, {"spec.cooldown", sp.Cooldown.Duration}} {
		if d.v > MaxDuration {
			bad(d.f, "must be at most %s, got %s", ShortDuration(MaxDuration), d.v)
		}
	}
	if sp.Cooldown.Duration < 0 {
		bad("spec.cooldown", "must be >= 0, got %s", sp.Cooldown.Duration)
	}
}

// checkPlanned bounds the matrix and the planned run time. It counts in
// float64 so that no product of bounded factors overflows. Impairments
// multiply the cells as Cells does; a loss-ceiling search adds its probes
// to each trial of its variants.
func checkPlanned(s *Study, bad badFunc) {
	sp := &s.Spec
	p := s.Plan()
	if p.Cells > MaxCells {
		bad("spec", "%.0f cells (datapaths x replica counts x workload variants x tunings x impairments); at most %d", p.Cells, MaxCells)
		return
	}
	d, c := sp.Duration.Duration, sp.Cooldown.Duration
	if d <= 0 || d > MaxDuration || c < 0 || c > MaxDuration || sp.Trials.Min < 1 || sp.Trials.Max > MaxTrials {
		return // reported above
	}
	if p.MaxSeconds > MaxPlanned.Seconds() {
		bad("spec.trials", "%.0f cells x %d trials x (duration %s + cooldown %s)%s plan %.0f h; at most %s",
			p.Cells, sp.Trials.Max, d, c, ceilingNote(p.SearchSeconds), p.MaxSeconds/3600, ShortDuration(MaxPlanned))
	}
}

// ceilingSeconds is the longest a trial of w spends in its loss-ceiling
// search, in seconds: the search's most probes (Ceiling.MostProbes)
// times the probe; 0 without a search or when
// the search is invalid (reported by validateCeiling).
func ceilingSeconds(w Workload) float64 {
	c, ok, err := w.Ceiling()
	if !ok || err != nil || c.Probe > MaxDuration {
		return 0
	}
	return c.MostProbes() * c.Probe.Seconds()
}

// ceilingNote names the search's share of a planned run time, if any.
func ceilingNote(search float64) string {
	if search == 0 {
		return ""
	}
	return fmt.Sprintf(" + loss-ceiling probes (%.0f h)", search/3600)
}

// validateWorkloadBounds checks a workload's list lengths, duplicate sweep
// values, bitrates, and the byte bounds its tool gives its size options
// (length, size).
func validateWorkloadBounds(w *Workload, f string, t spec.Tool, bad badFunc) {
	lists := []struct {
		name string
		n    int
		keys []string
	}{
		{OptLengths, len(w.Lengths), w.Lengths},
		{OptRates, len(w.Rates), w.Rates},
		{OptParallels, len(w.Parallels), itoas(w.Parallels)},
		{OptMsgSizes, len(w.MessageSizes), itoas(w.MessageSizes)},
		{OptMSSes, len(w.MSSes), itoas(w.MSSes)},
		{OptConcurrency, len(w.Concurrency), itoas(w.Concurrency)},
	}
	if w.Background != nil {
		lists = append(lists, struct {
			name string
			n    int
			keys []string
		}{"background.connections", len(w.Background.Connections), itoas(w.Background.Connections)})
	}
	for _, l := range lists {
		checkLen(f+"."+l.name, l.n, MaxListLen, bad)
		// Two equal values make two variants of the same name.
		seen := map[string]int{}
		for i, k := range l.keys {
			if j, dup := seen[k]; dup {
				bad(fmt.Sprintf("%s.%s[%d]", f, l.name, i), "%s listed twice (also %s[%d])", k, l.name, j)
			}
			seen[k] = i
		}
	}
	rates := append([]string{w.Rate}, w.Rates...)
	for i, r := range rates {
		field := f + "." + OptRate
		if i > 0 {
			field = fmt.Sprintf("%s.%s[%d]", f, OptRates, i-1)
		}
		checkBitrate(field, r, bad)
	}
	if w.Background != nil {
		checkBitrate(f+".background.rate", w.Background.Rate, bad)
	}
	// Pods bounds how many start at once (a burst of 10 cannot start 20
	// at a time); a request count bounds ab's concurrency the same way
	// (ab refuses -c above -n).
	for i, c := range w.Concurrency {
		field := fmt.Sprintf("%s.%s[%d]", f, OptConcurrency, i)
		if w.Pods != 0 && c > w.Pods {
			bad(field, "%d pods at once is more than the %d pods the trial starts (pods)", c, w.Pods)
		}
		if w.Requests != 0 && c > w.Requests {
			bad(field, "%d requests in flight is more than the %d requests the trial makes (requests)", c, w.Requests)
		}
	}
	if !strings.ContainsAny(w.Name, "@/ ") { // else reported by validateWorkloads
		checkName(f+".name", w.Name, tuningNameRE, "'.', '_', '+', '-'", bad)
	}
	checkSizes(w, f, t, bad)
}

// checkBitrate reports a well-formed bitrate above MaxBitrate (format
// errors are validateFormats').
func checkBitrate(field, r string, bad badFunc) {
	if v, ok := ParseRate(r); ok && v > MaxBitrate {
		bad(field, "%s is above %s per stream", r, "1000G (1 Tbit/s)")
	}
}

// sizeOptions are the options whose values are byte sizes ("128K"): the
// bounds of their spec.Option are in bytes.
var sizeOptions = map[string]func(w *Workload) (names []string, vals []string){
	OptLength: func(w *Workload) ([]string, []string) {
		names, vals := []string{OptLength}, []string{w.Length}
		for i, l := range w.Lengths {
			names, vals = append(names, fmt.Sprintf("%s[%d]", OptLengths, i)), append(vals, l)
		}
		return names, vals
	},
	OptSize: func(w *Workload) ([]string, []string) { return []string{OptSize}, []string{w.Size} },
}

// checkSizes checks each size value: that it fits in bytes at all, and
// the byte bounds of its option in the tool's description, if any.
func checkSizes(w *Workload, f string, t spec.Tool, bad badFunc) {
	for _, name := range []string{OptLength, OptSize} {
		o, _ := t.Option(name)
		names, vals := sizeOptions[name](w)
		for i, v := range vals {
			if v == "" || !lengthRE.MatchString(v) {
				continue // unset, or reported by validateFormats
			}
			n, ok := ParseBytes(v)
			switch {
			case !ok:
				bad(f+"."+names[i], "%s is not a size below 8E bytes", v)
			case o.Max > 0 && (n < int64(o.MinOf(w.Protocol)) || n > int64(o.MaxOf(w.Protocol))):
				bad(f+"."+names[i], "%s must be between %s and %s for %s (%s), got %s",
					o.Name, fmtBytes(int64(o.MinOf(w.Protocol))), fmtBytes(int64(o.MaxOf(w.Protocol))), w.Protocol, o.Note, v)
			}
		}
	}
}

// checkRange reports an integer outside [lo, hi].
func checkRange(field string, v, lo, hi int, why string, bad badFunc) {
	if v < lo || v > hi {
		bad(field, "must be between %d and %d (%s), got %d", lo, hi, why, v)
	}
}

func itoas(v []int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.Itoa(x)
	}
	return out
}

// fmtBytes writes a byte count the way study files do ("1M", "1400").
func fmtBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// ShortDuration is d as a user writes it, and as a study file or a flag
// takes it back: "24h", "8m", "1h30m" and "1m30s", not Go's "24h0m0s",
// "8m0s" and "1h30m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// checkPowerOfTwo refuses an RFS table size the kernel would round up:
// the tuning reads back what it wrote to journal and revert it exactly,
// so it takes the size the kernel keeps (scaling.rst's 32768 / N per
// queue is rounded so), not a trial failing on it after the nodes are
// built.
func checkPowerOfTwo(field string, n int, bad badFunc) {
	if n <= 0 || n&(n-1) == 0 {
		return
	}
	p := 1
	for p < n {
		p <<= 1
	}
	bad(field, "%d is not a power of two: the kernel would round it up to %d; write %d", n, p, p)
}
