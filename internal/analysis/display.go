package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/stats"
)

// Scale is how a metric is shown to people (summary.md, report.html):
// bitrates in Gbit/s instead of the bit/s stored in summary.csv, sizes
// in MiB instead of bytes.
type Scale struct {
	Factor   float64 // shown value = stored value × Factor
	Unit     string
	Decimals int // -1: 4 significant digits
	// MinSig is the fewest significant digits shown of a value that is
	// not zero, with more decimals where Decimals would show fewer (0:
	// one, so that no such value reads "0.0").
	MinSig int
}

// Display returns the display scale of a metric.
func Display(metric string) Scale {
	switch metric {
	case "message_bytes", "mss_bytes":
		// A message or segment size (1, 64, 1460 bytes) is read in bytes;
		// 64 B in MiB read "6.104e-05".
		return Scale{Factor: 1, Unit: "B"}
	}
	return ScaleOf(Unit(metric))
}

// WithUnit is a metric's label with its unit in parentheses, "bitrate
// (Gbit/s)", and the bare label for a metric without a unit (a 0/1 flag
// such as ceiling_at_high), where "()" would read as a unit left out.
// The report's labels and compare's table share it.
func WithUnit(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}

// Labeled is the metric's name with its display unit (WithUnit):
// "bitrate (Gbit/s)", a table's row or column head.
func Labeled(metric string) string { return WithUnit(metric, Display(metric).Unit) }

// ScaleOf returns the display scale of a stored unit ("bit/s", "B").
func ScaleOf(u string) Scale {
	switch u {
	case "bit/s":
		// Three significant digits at least: an impaired TCP cell's 0.7
		// Mbit/s (the seed-003 paper's 0.0007 Gbit/s) read "0.00",
		// 32.1 Mbit/s "0.03" beside the paper's "0.0321", and its
		// backends' 923.0 and 937.8 Mbit/s "0.92" and "0.94": below
		// 1 Gbit/s a table resolves 1 Mbit/s.
		return Scale{Factor: 1e-9, Unit: "Gbit/s", Decimals: 2, MinSig: 3}
	case "%":
		return Scale{Factor: 1, Unit: "%", Decimals: 1}
	case "softirqs/s", "1/s":
		return Scale{Factor: 1, Unit: u}
	case "count":
		return Scale{Factor: 1, Unit: u, Decimals: 1}
	case "B":
		// Memory and windows: 1.106e+08 B reads better as 105.5 MiB.
		return Scale{Factor: 1.0 / (1 << 20), Unit: "MiB", Decimals: -1}
	}
	return Scale{Factor: 1, Unit: u, Decimals: -1}
}

// Format shows a stored value in display units, "—" when undefined.
func (s Scale) Format(v float64) string {
	if !Finite(v) {
		return "—"
	}
	v *= s.Factor
	if v == 0 {
		return s.zero()
	}
	if s.Decimals < 0 {
		// Four significant digits, but a round-trip time of 11368 us
		// reads as such, not as 1.137e+04: from 10^4 on, whole numbers.
		if a := math.Abs(v); a >= 9999.5 && a < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', s.decimalsFor(v), 64)
}

// zero is how the scale shows 0 (a mean, an interval's bound raised to
// 0, an SD), wherever it is shown: at the scale's own decimals, as its
// values of ordinary size are ("0.0" among "1.5 [0.0, 3.9]" in %), not at
// the extra ones a small mean earns its bounds ("0.03 [0.00, 0.08]" beside
// that); "0" where the values have no fixed decimals (four significant
// digits), none (softirqs/s, where "0.3 [0.0, 0.9]" stood beside "1500
// [0, 3200]") or are counts, whose whole values show none (whole). Also
// no "-0".
func (s Scale) zero() string {
	if s.Decimals <= 0 || s.Unit == "count" {
		return "0"
	}
	return strconv.FormatFloat(0, 'f', s.Decimals, 64)
}

// sigDecimals are the decimals of a four-significant-digit scale's mean
// and bounds (factor: the scale's, to display units): four significant digits of the mean, or of the interval's
// half-width where that is larger (a mean near 0 in a wide interval), so
// that all three have the same: "50.50 [45.55, 55.45]", not each at its
// own four digits, "50.5 [45.55, 55.45]", which read as a mean known to
// fewer digits than its bounds; from 10^4 on, whole numbers, as Format.
func sigDecimals(d stats.Summary, factor float64) int {
	a := math.Abs(d.Mean * factor)
	if hw := math.Abs(d.CI95High-d.CI95Low) * factor / 2; Finite(hw) && hw > a {
		a = hw
	}
	if a == 0 || !Finite(a) {
		return 0
	}
	n := 3 - int(math.Floor(math.Log10(a)))
	// Rounding can carry into another digit (9.9996 at 3 decimals is
	// 10.000): one decimal fewer then shows four digits.
	if r := math.Abs(roundTo(a, n)); r >= math.Pow10(4-n) {
		n--
	}
	return min(max(n, 0), maxDecimals)
}

// maxDecimals bounds the decimals a tiny value gets (1e-300 is not
// printed with 300 zeros).
const maxDecimals = 12

// decimalsFor is the scale's decimals for v (in display units), or more
// where they would show fewer than MinSig significant digits of it: in
// Gbit/s 0.0007 -> "0.00070", 0.032 -> "0.032", 0.91 -> "0.91"; in %
// 0.0001 -> "0.0001", 0.84 -> "0.8".
func (s Scale) decimalsFor(v float64) int {
	sig := max(s.MinSig, 1)
	a := math.Abs(v)
	if a == 0 || !Finite(a) || a >= math.Pow10(sig-1-s.Decimals) {
		return s.Decimals
	}
	d := sig - 1 - int(math.Floor(math.Log10(a)))
	// Rounding can carry into another digit (0.0999 at 3 decimals is
	// 0.100): one decimal fewer then shows as many digits.
	if r := math.Abs(roundTo(v, d)); r >= math.Pow10(sig-d) {
		d--
	}
	return min(max(d, s.Decimals), maxDecimals)
}

// roundTo rounds v to d decimals as strconv would print it.
func roundTo(v float64, d int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', d, 64), 64)
	return r
}

// Published shows a published number in display units as the paper gave
// it: "91.5" requests/s, "11.1" Gbit/s and Table II's "3168.911" ms, not
// Format's "92", "11.10" and "3169" (nor six digits' "3168.91"). Rounding
// to the significant digits of the stored number's shortest form (the
// study's, but for trailing zeros a float does not keep) hides the float
// error of the unit factor; six at least, as B to MiB adds digits.
func (s Scale) Published(v float64) string {
	if !Finite(v) {
		return "—"
	}
	d := min(max(sigDigits(v), 6), 15)
	v *= s.Factor
	if math.Abs(v) >= math.Pow10(d) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', d, 64), 64)
	if err != nil {
		return s.Format(v / s.Factor)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// sigDigits counts the significant digits of v's shortest form: 7 of
// 3168.911, 3 of 9.23e8.
func sigDigits(v float64) int {
	m, _, _ := strings.Cut(strconv.FormatFloat(math.Abs(v), 'e', -1, 64), "e")
	return len(strings.Replace(m, ".", "", 1))
}

// PublishedNormalized shows a published normalized value as the source
// gave it: "1.24", "1.085" (Published's rule: 'f' with 2 decimals read
// 1.085, stored as 1.08499..., as "1.08").
func PublishedNormalized(v float64) string { return Scale{Factor: 1}.Published(v) }

// whole is Format, but a count that is a whole number (one trial's, or
// the same in every trial) without decimals: "142", not "142.0"; 0 is
// the scale's zero, as everywhere.
func (s Scale) whole(v float64) string {
	if s.Unit == "count" && v != 0 && v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return s.Format(v)
}

// MeanCI shows a row's mean and interval ("9.51 [9.40, 9.62]"); "missing"
// when the cell has no data, and no interval when N < 2.
func (s Scale) MeanCI(r Row) string {
	return s.SummaryCI(stats.Summary{N: r.N, Mean: r.Mean, CI95Low: r.CI95Low, CI95High: r.CI95High})
}

// SummaryCI is MeanCI of a stats.Summary (`cnibench compare` shows its
// cells with it).
func (s Scale) SummaryCI(d stats.Summary) string {
	switch {
	case d.N == 0:
		return "missing"
	case d.N < 2:
		return fmt.Sprintf("%s (n=%d, no CI)", s.whole(d.Mean), d.N)
	case !HasInterval(d):
		// No spread: a configured value (a UDP trial's offered rate) or
		// a count that stayed 0. "[1.50, 1.50]" would read as a
		// measurement precise to the last digit.
		return fmt.Sprintf("%s (same in all %d trials)", s.whole(d.Mean), d.N)
	}
	f := s.Format
	if Finite(d.Mean) {
		// The bounds at the mean's decimals: "0.0013 [0.0007, 0.0019]",
		// not "0.0013 [0.00070, 0.0019]".
		n := s.decimalsFor(d.Mean * s.Factor)
		if s.Decimals < 0 {
			n = sigDecimals(d, s.Factor)
		}
		f = func(v float64) string {
			if !Finite(v) || v == 0 {
				return s.Format(v) // "—", or the scale's zero
			}
			return strconv.FormatFloat(v*s.Factor, 'f', n, 64)
		}
	}
	return fmt.Sprintf("%s [%s, %s]", f(d.Mean), f(d.CI95Low), f(d.CI95High))
}

// HasInterval reports whether SummaryCI shows d with an interval: two
// trials at least, not all alike. A caption that says "[95% CI]" over
// cells none of which has one would describe another run.
func HasInterval(d stats.Summary) bool { return d.N >= 2 && d.CI95Low != d.CI95High }

// RowHasInterval is HasInterval of a row's mean (MeanCI).
func RowHasInterval(r Row) bool {
	return HasInterval(stats.Summary{N: r.N, Mean: r.Mean, CI95Low: r.CI95Low, CI95High: r.CI95High})
}

// NormCI shows a row's normalized value and interval, "missing" without.
// A row whose interval could not be estimated shows the value and "no
// CI": its stored bounds then equal the value, and "[0.900, 0.900]" would
// read as a measured interval of zero width.
func NormCI(r Row) string {
	if !r.HasNorm {
		return "missing"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	if NormHasCI(r) {
		return fmt.Sprintf("%s [%s, %s]", f(r.Normalized), f(r.NormCI95Low), f(r.NormCI95High))
	}
	switch {
	case r.N < 2:
		return fmt.Sprintf("%s (n=%d, no CI)", f(r.Normalized), r.N)
	case r.NormMethod == string(stats.MethodNone):
		// stats.Ratio has no interval only with fewer than two values on
		// a side, and this row has two: the baseline has fewer.
		return f(r.Normalized) + " (baseline n<2, no CI)"
	}
	return f(r.Normalized) + " (no CI)"
}

// NormHasCI reports whether a normalized row's interval was estimated:
// its method is a real one (not none, nor empty as in a row without a
// method), and for the baseline's own row its mean had an interval.
func NormHasCI(r Row) bool {
	switch {
	case !r.HasNorm || r.NormMethod == "" || r.NormMethod == string(stats.MethodNone):
		return false
	case r.NormMethod == NormOwn && r.N < 2:
		return false
	}
	return Finite(r.NormCI95Low) && Finite(r.NormCI95High)
}

// hasInterval reports whether a ratio interval was estimated; with
// MethodNone its bounds are NaN or collapsed to the point estimate.
func hasInterval(c stats.RatioCI) bool {
	return c.Method != "" && c.Method != stats.MethodNone && Finite(c.Low) && Finite(c.High)
}

// FormatP shows a p value with its relation: "<0.001" or "=0.042"; ""
// when undefined.
func FormatP(p float64) string {
	switch {
	case !Finite(p):
		return ""
	case p < 0.001:
		return "<0.001"
	}
	return "=" + strconv.FormatFloat(p, 'f', 3, 64)
}

// Dims are the distinct values of each dimension in a set of rows: names in
// order of first appearance (the study's order), numbers ascending.
type Dims struct {
	Datapaths, Workloads, Tunings []string
	Replicas, CPUs                []int
}

// DimsOf collects the dimensions of rows.
func DimsOf(rows []Row) Dims {
	var d Dims
	seen := map[string]bool{}
	addS := func(list *[]string, kind, v string) {
		if !seen[kind+"\x00"+v] {
			seen[kind+"\x00"+v] = true
			*list = append(*list, v)
		}
	}
	reps, cpus := map[int]bool{}, map[int]bool{}
	for _, r := range rows {
		addS(&d.Datapaths, "d", r.Datapath)
		addS(&d.Workloads, "w", r.Workload)
		addS(&d.Tunings, "t", r.Tuning)
		reps[r.Replicas] = true
		if r.CPU >= 0 {
			cpus[r.CPU] = true
		}
	}
	d.Replicas, d.CPUs = sortedInts(reps), sortedInts(cpus)
	return d
}

// Group is the rows of one datapath and workload, the unit a figure or a
// table shows.
type Group struct {
	Datapath, Workload string
	// Impairment is the rows' impairment ("" none).
	Impairment string
	Rows       []Row
	Dims       Dims
	// Metrics lists the group's metrics in row order.
	Metrics []string
}

// Groups splits rows by datapath, workload and impairment, keeping row
// order.
func Groups(rows []Row) []Group {
	var out []Group
	idx := map[[3]string]int{}
	for _, r := range rows {
		k := [3]string{r.Datapath, r.Workload, r.Impairment}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Datapath: r.Datapath, Workload: r.Workload, Impairment: r.Impairment})
		}
		out[i].Rows = append(out[i].Rows, r)
	}
	for i := range out {
		g := &out[i]
		g.Dims = DimsOf(g.Rows)
		seen := map[string]bool{}
		for _, r := range g.Rows {
			if !seen[r.Metric] {
				seen[r.Metric] = true
				g.Metrics = append(g.Metrics, r.Metric)
			}
		}
	}
	return out
}

// Has reports whether the group has rows of the metric.
func (g Group) Has(metric string) bool {
	for _, m := range g.Metrics {
		if m == metric {
			return true
		}
	}
	return false
}

// AllZero reports whether the group has rows of metric with trials and
// every one of them averaged 0 (for a share that cannot be negative, such
// as core_poll: every trial was 0 on every core).
func (g Group) AllZero(metric string) bool {
	any := false
	for _, r := range g.Rows {
		if r.Metric != metric || r.N == 0 {
			continue
		}
		if r.Mean != 0 {
			return false
		}
		any = true
	}
	return any
}

// CPUsOf are the cores the group has rows of a per-core metric for,
// ascending: the server node's for a core metric, the client node's for
// a ClientCore one (Dims.CPUs is the union).
func (g Group) CPUsOf(metric string) []int {
	cpus := map[int]bool{}
	for _, r := range g.Rows {
		if r.Metric == metric && r.CPU >= 0 {
			cpus[r.CPU] = true
		}
	}
	return sortedInts(cpus)
}

// Measured reports whether some cell of the group has a value of the
// metric (Has also counts rows of cells without samples).
func (g Group) Measured(metric string) bool {
	for _, r := range g.Rows {
		if r.Metric == metric && r.N > 0 {
			return true
		}
	}
	return false
}

// BitrateMetric is the metric the normalized-bitrate view shows: the
// per-replica average (the paper's), else the aggregate; "" if neither.
func (g Group) BitrateMetric() string {
	for _, m := range NormalizedMetrics {
		if g.Has(m) {
			return m
		}
	}
	return ""
}

// Name is the group's title: "datapath / workload", with the impairment
// when there is one.
func (g Group) Name() string {
	n := g.Datapath + " / " + g.Workload
	if g.Impairment != "" {
		n += " / " + g.Impairment
	}
	return n
}
